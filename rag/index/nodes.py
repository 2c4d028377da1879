"""The chunk node: its metadata keys and its line in nodes.jsonl (a shard's and a generation's chunks)."""

from __future__ import annotations

import json
from pathlib import Path

from llama_index.core.schema import TextNode

# Node metadata that every chunk carries (see the ingestion issue); none of it is embedded separately: the
# chunk text already starts with a short header (company, form, fiscal year, Item).
NODE_META_KEYS = (
    "doc_id", "ticker", "company", "cik", "form", "fiscal_year", "fiscal_year_source", "fiscal_period", "period_end",
    "filing_date", "accession", "section", "section_title", "page_start", "page_end", "char_start", "char_end",
    "source", "url", "path", "chunk_index", "statement",
)


def make_node(node_id: str, text: str, metadata: dict) -> TextNode:
    keys = list(metadata)
    # The header is already in the text: keep metadata out of what is embedded, keyword-searched and prompted.
    return TextNode(
        id_=node_id, text=text, metadata=metadata,
        excluded_embed_metadata_keys=keys, excluded_llm_metadata_keys=keys,
    )


def node_to_json(node) -> str:
    return json.dumps({"id": node.node_id, "text": node.text, "metadata": node.metadata}, ensure_ascii=False)


def read_nodes(path: Path) -> list[TextNode]:
    nodes = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            nodes.append(make_node(row["id"], row["text"], row["metadata"]))
    return nodes
