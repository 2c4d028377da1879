"""Parsed filings -> one persisted hybrid index (FAISS dense vectors + BM25) under storage/index/.

Layout:
    storage/index/CURRENT                 name of the live generation (replaced atomically)
    storage/index/generations/<name>/     a complete, self-contained index: manifest.json, nodes.jsonl,
                                          vectors.faiss (IndexFlatIP, row i == nodes.jsonl line i), bm25/
    storage/index/shards/<key>/           per filing: nodes.jsonl + vectors.npy + text.txt + sections.json,
                                          keyed by the file's sha256 and the chunking settings
    storage/index/.writer.lock            serialises writers (two app sessions, or the CLI beside the app)

Why generations: a writer builds the next index beside the live one and switches CURRENT with one os.replace,
so a crash or kill part-way leaves the previous index loadable, and readers keep answering from it meanwhile.
Why shards: they are the embedding cache. An unchanged filing (same bytes, same settings) costs no parse and
no embedding; adding one embeds only its chunks; removing one drops its shard, so no vector is left behind.
FAISS and BM25 are rebuilt from the shards on every change: flat inner-product search and bm25s indexing of a
few tens of thousands of chunks take seconds, far less than embedding.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from . import parse as parse_module
from .config import Settings, get_settings
from .parse import ParsedFiling, Section

log = logging.getLogger(__name__)

# Bump when the parsed text or the chunk layout changes: shards are rebuilt rather than mixed with new ones (only
# chunks whose text changed are embedded again).
CHUNKER_VERSION = "4"
# Node metadata that every chunk carries (see the ingestion issue); none of it is embedded separately: the
# chunk text already starts with a short header (company, form, fiscal year, Item).
NODE_META_KEYS = (
    "doc_id", "ticker", "company", "cik", "form", "fiscal_year", "fiscal_year_source", "period_end",
    "filing_date", "accession", "section", "section_title", "page_start", "page_end", "char_start", "char_end",
    "source", "url", "path", "chunk_index",
)
FILING_META_KEYS = (
    "doc_id", "ticker", "company", "cik", "form", "fiscal_year", "fiscal_year_source", "period_end",
    "filing_date", "accession", "source", "url", "path", "origin",
)

Progress = Callable[[str, str, float], None]  # (filing name, stage, fraction of this filing done)


class IndexError_(RuntimeError):
    """A problem with the index a user should read (named with a trailing _ to keep the builtin usable)."""


class IndexBusy(IndexError_):
    pass


# --------------------------------------------------------------------------------------------------------------
# Chunking


@dataclass
class _Unit:
    start: int
    end: int
    tokens: int
    table: int = -1  # index of the table block it belongs to, -1 for prose
    is_table_head: bool = False  # one of the table's header lines


_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[\"'(\[]?[A-Z0-9$])")


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        if stop > pos:
            spans.append((pos, stop))
        pos = stop + 1
    return spans


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for match in _SENTENCE_END.finditer(text, start, end):
        spans.append((pos, match.start()))
        pos = match.end()
    if pos < end:
        spans.append((pos, end))
    return [s for s in spans if s[1] > s[0]]


class FilingChunker:
    """Section-aware splitting sized with the embedding model's own tokenizer.

    A chunk never crosses an Item; prose breaks at paragraph, then sentence, then word-piece boundaries; a table
    breaks between rows, and a chunk that starts inside a table repeats the table's header line (the years).
    Every chunk text starts with a one-line header (company, form, fiscal year, Item) and stays within
    `chunk_tokens` word pieces, header included, so the embedder reads all of it.
    """

    MIN_SECTION_TOKENS = 40

    def __init__(self, tokenizer, chunk_tokens: int):
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        enc = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [len(ids) for ids in enc]

    @staticmethod
    def header(meta: dict, section: Section) -> str:
        who = meta.get("company") or meta.get("ticker") or "Unknown company"
        if meta.get("ticker") and meta.get("company"):
            who = f"{meta['company']} ({meta['ticker']})"
        parts = [who, meta.get("form") or "filing"]
        if meta.get("fiscal_year"):
            parts.append(f"FY{meta['fiscal_year']}")
        parts.append(f"{section.item}: {section.title}" if section.title else section.item)
        return " · ".join(parts)

    def split(self, parsed: ParsedFiling, meta: dict) -> list[dict]:
        """Chunks as dicts: text, section, section_title, char_start, char_end, page_start, page_end."""
        text = parsed.text
        sections = parsed.sections or [Section("Document", "", 0, len(text), 1, _page_at(parsed, len(text) - 1))]
        blocks = sorted(parsed.blocks, key=lambda b: b.char_start)
        chunks: list[dict] = []
        b = 0
        carried: tuple[Section, list] | None = None
        for n, section in enumerate(sections):
            section_blocks = []
            while b < len(blocks) and blocks[b].char_start < section.char_end:
                if blocks[b].char_end > section.char_start:
                    section_blocks.append(blocks[b])
                b += 1
            if carried:
                # A tiny Item ("Item 1B. Unresolved Staff Comments: None.") rides with the next one rather than
                # becoming a fragment chunk that neither search nor a reader can use.
                first, first_blocks = carried
                # Labelled as the substantial Item it joins, so a filter or a citation on that Item finds it.
                title = f"{section.title} (with {first.item}: {first.title})" if first.title else (
                    f"{section.title} (with {first.item})")
                section = Section(section.item, title, first.char_start, section.char_end, first.page_start,
                                  section.page_end)
                section_blocks = first_blocks + section_blocks
                carried = None
            if not section_blocks:
                continue
            size = sum(self.count([parsed.text[blk.char_start:blk.char_end] for blk in section_blocks]))
            if size < self.MIN_SECTION_TOKENS and n + 1 < len(sections):
                carried = (section, section_blocks)
                continue
            head = self.header(meta, section)
            budget = self.chunk_tokens - self.count([head])[0] - 1
            chunks.extend(self._pack(parsed, section, head, budget, section_blocks))
        return chunks

    def _units(self, text: str, section_blocks, budget: int) -> list[_Unit]:
        raw: list[tuple[int, int, int, bool]] = []
        for i, block in enumerate(section_blocks):
            if block.kind == "table":
                header_len = len(block.table_header)
                for start, end in _line_spans(text, block.char_start, block.char_end):
                    raw.append((start, end, i, start < block.char_start + header_len))
            else:
                raw.append((block.char_start, block.char_end, -1, False))
        counts = self.count([text[s:e] for s, e, _, _ in raw])
        units: list[_Unit] = []
        for (start, end, table, head), n in zip(raw, counts):
            if n <= budget:
                units.append(_Unit(start, end, n, table, head))
                continue
            # Too long for one chunk: sentences, and word-piece windows for a sentence that is still too long.
            pieces = _sentence_spans(text, start, end)
            for (ps, pe), pn in zip(pieces, self.count([text[s:e] for s, e in pieces])):
                if pn <= budget:
                    units.append(_Unit(ps, pe, pn, table, head))
                else:
                    units.extend(_Unit(ws, we, wn, table, head) for ws, we, wn in self._windows(text, ps, pe, budget))
        return units

    def _windows(self, text: str, start: int, end: int, budget: int):
        enc = self.tokenizer(text[start:end], add_special_tokens=False, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        for i in range(0, len(offsets), budget):
            window = offsets[i : i + budget]
            yield start + window[0][0], start + window[-1][1], len(window)

    def _pack(self, parsed: ParsedFiling, section: Section, head: str, budget: int, section_blocks) -> list[dict]:
        text = parsed.text
        units = self._units(text, section_blocks, budget)
        # What a chunk that starts inside a table repeats: the table's caption (statement title, "in millions")
        # and its column headers (the years).
        table_headers = {
            i: "\n".join(x for x in (getattr(blk, "caption", ""), blk.table_header) if x)
            for i, blk in enumerate(section_blocks)
            if blk.kind == "table" and (blk.table_header or getattr(blk, "caption", ""))
        }
        header_tokens = dict(zip(table_headers, self.count(list(table_headers.values()))))
        out: list[dict] = []
        current: list[_Unit] = []
        used = 0
        prefix = ""

        def flush():
            nonlocal current, used, prefix
            if current:
                start, end = current[0].start, current[-1].end
                body = text[start:end]
                out.append(
                    {
                        "text": f"{head}\n{prefix + chr(10) if prefix else ''}{body}",
                        "section": section.item,
                        "section_title": section.title,
                        "char_start": start,
                        "char_end": end,
                        "page_start": _page_at(parsed, start),
                        "page_end": _page_at(parsed, end - 1),
                    }
                )
            current, used, prefix = [], 0, ""

        for unit in units:
            if current and used + unit.tokens > budget:
                flush()
            if not current and unit.table >= 0 and not unit.is_table_head and unit.table in table_headers:
                # Starting inside a table: repeat its column headers so every number keeps its year.
                if header_tokens[unit.table] + unit.tokens <= budget:
                    prefix = table_headers[unit.table]
                    used = header_tokens[unit.table]
                elif section_blocks[unit.table].table_header:  # a long caption: the years alone still fit
                    prefix = section_blocks[unit.table].table_header
                    used = self.count([prefix])[0]
            current.append(unit)
            used += unit.tokens
        flush()
        return out


def _page_at(parsed: ParsedFiling, offset: int) -> int:
    import bisect

    if not parsed.page_starts:
        return 1
    return max(1, bisect.bisect_right(parsed.page_starts, max(offset, 0)))


# --------------------------------------------------------------------------------------------------------------
# Filing identity and metadata


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def filing_meta(path: Path, parsed: ParsedFiling, sha256: str, overrides: dict | None = None) -> dict:
    """The filing's metadata: what the download recorded beside the file (filing.json), then what the file
    itself says, then the caller's overrides for what neither knows."""
    meta: dict = {}
    sidecar = path.parent / "filing.json"
    if sidecar.is_file():
        try:
            meta.update({k: v for k, v in json.loads(sidecar.read_text()).items() if v not in (None, "")})
        except (OSError, ValueError):
            log.warning("ignoring unreadable %s", sidecar)
    for key, value in parsed.meta.items():
        meta.setdefault(key, value)
    for key, value in (overrides or {}).items():
        if value in (None, ""):
            continue
        if key == "fiscal_year" and "fiscal_year" not in meta:
            meta["fiscal_year_source"] = "caller"
        meta.setdefault(key, value)
    if meta.get("ticker"):
        meta["ticker"] = str(meta["ticker"]).upper()
    if meta.get("fiscal_year") not in (None, ""):
        meta["fiscal_year"] = int(meta["fiscal_year"])
    meta["doc_id"] = meta.get("accession") or f"local-{sha256[:16]}"
    meta["path"] = str(path.resolve())
    # A record's "source" says how it arrived (edgar/upload); a chunk's "source" is where to read it.
    meta["origin"] = meta.pop("source", None) or "path"
    meta["source"] = meta.get("url") or str(path.resolve())
    meta["sha256"] = sha256
    return meta


# --------------------------------------------------------------------------------------------------------------
# The loaded index (read side)


@dataclass
class LoadedIndex:
    """One generation, loaded: what retrieval searches."""

    generation: str
    manifest: dict
    nodes: list  # TextNode, row i of the FAISS index
    vectors: object  # faiss.IndexFlatIP
    bm25: object | None  # bm25s.BM25 (None when empty)
    root: Path
    columns: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def filings(self) -> dict[str, dict]:
        return self.manifest.get("filings", {})

    def __len__(self) -> int:
        return len(self.nodes)

    def subset(self, tickers=(), fiscal_years=(), forms=(), sections=(), doc_ids=(), statements=()) -> np.ndarray | None:
        """Row ids matching every given filter (None = no filter at all)."""
        mask = None
        for column, wanted in (
            ("statement", list(statements)),
            ("ticker", [str(t).upper() for t in tickers]),
            ("fiscal_year", [int(y) for y in fiscal_years]),
            ("form", [str(f).upper() for f in forms]),
            ("section", list(sections)),
            ("doc_id", list(doc_ids)),
        ):
            if not wanted:
                continue
            hit = np.isin(self.columns[column], np.array(wanted, dtype=self.columns[column].dtype))
            if column == "section":  # a tiny Item merged into the next one is found under its own name too
                hit |= np.isin(self.columns["merged_section"], np.array(wanted, dtype=object))
            mask = hit if mask is None else (mask & hit)
        return None if mask is None else np.flatnonzero(mask)

    def shard_dir(self, doc_id: str) -> Path | None:
        entry = self.filings.get(doc_id)
        return self.root / "shards" / entry["shard"] if entry else None

    def filing_text(self, doc_id: str) -> str:
        shard = self.shard_dir(doc_id)
        return (shard / "text.txt").read_text(encoding="utf-8") if shard else ""

    def filing_sections(self, doc_id: str) -> list[dict]:
        shard = self.shard_dir(doc_id)
        return json.loads((shard / "sections.json").read_text()) if shard else []


def _merged_item(section_title: str) -> str:
    """The tiny Item a chunk's section carries, from the chunker's title "Cybersecurity (with Item 1B: ...)"."""
    m = re.search(r"\(with (Item \w+)[:)]", section_title)
    return m.group(1) if m else ""


# The primary financial statements, as their captions read in 10-Ks, matched with spaces removed because PDF text
# layers split words ("Balance Shee t", "Cash Flow s").
STATEMENT_CAPTIONS = {
    "income statement": re.compile(r"statements?of(?:consolidated)?(?:operations|income|earnings)|incomestatements?"),
    "balance sheet": re.compile(r"balancesheets?|statements?offinancial(?:position|condition)"),
    "cash flow statement": re.compile(r"statements?ofcashflows?"),
}
_NUMBER = re.compile(r"(?<![\w.])\(?\$?\d[\d,]*(?:\.\d+)?\)?(?![\w])")
_WORD = re.compile(r"\S+")


def _is_tabular(text: str) -> bool:
    """Mostly figures: a statement's rows, not prose that mentions one."""
    numbers = len(_NUMBER.findall(text))
    return numbers >= 12 and numbers >= 0.2 * len(_WORD.findall(text))


def _statement_pages(nodes) -> list[str]:
    """Which primary statement each chunk belongs to ("" for none): a page where a chunk made mostly of figures
    carries a statement's caption is that statement's page, and every such chunk on it belongs to it (a
    statement's later rows no longer show the caption). A caption in prose has too few figures beside it."""
    def body(node) -> str:
        return node.text.split("\n", 1)[-1]  # without the chunk's own header line

    dense = [_is_tabular(body(n)) for n in nodes]
    page_kind: dict[tuple, str] = {}
    for node, is_dense in zip(nodes, dense):
        if not is_dense:
            continue
        squeezed = re.sub(r"\s+", "", body(node)).lower()
        hits = [(m.start(), kind) for kind, rx in STATEMENT_CAPTIONS.items() if (m := rx.search(squeezed))]
        if hits:
            kind = min(hits)[1]  # the caption that comes first names the page
            # Both pages of a chunk that runs onto the next one: its caption may open either.
            for page in {node.metadata.get("page_start"), node.metadata.get("page_end")}:
                page_kind.setdefault((node.metadata.get("doc_id"), page), kind)
    return [page_kind.get((n.metadata.get("doc_id"), n.metadata.get("page_start")), "") if d else ""
            for n, d in zip(nodes, dense)]


def _columns(nodes) -> dict[str, np.ndarray]:
    meta = [n.metadata for n in nodes]
    return {
        "statement": np.array(_statement_pages(nodes), dtype=object),
        "ticker": np.array([str(m.get("ticker") or "").upper() for m in meta], dtype=object),
        "fiscal_year": np.array([int(m.get("fiscal_year") or 0) for m in meta], dtype=np.int64),
        "form": np.array([str(m.get("form") or "").upper() for m in meta], dtype=object),
        "section": np.array([m.get("section") or "" for m in meta], dtype=object),
        "merged_section": np.array([_merged_item(m.get("section_title") or "") for m in meta], dtype=object),
        "doc_id": np.array([m.get("doc_id") or "" for m in meta], dtype=object),
    }


# --------------------------------------------------------------------------------------------------------------
# The store (write side + loading)


@dataclass
class IndexReport:
    """What one indexing run did, per filing and in total (the benchmark prints it)."""

    rows: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    build_seconds: float = 0.0
    total_seconds: float = 0.0
    changed: bool = False

    @property
    def embed_seconds(self) -> float:
        return sum(r.get("embed_s", 0.0) for r in self.rows)


def _node_to_json(node) -> str:
    return json.dumps({"id": node.node_id, "text": node.text, "metadata": node.metadata}, ensure_ascii=False)


def _make_node(node_id: str, text: str, metadata: dict):
    from llama_index.core.schema import TextNode

    keys = list(metadata)
    # The header is already in the text: keep metadata out of what is embedded, keyword-searched and prompted.
    return TextNode(
        id_=node_id, text=text, metadata=metadata,
        excluded_embed_metadata_keys=keys, excluded_llm_metadata_keys=keys,
    )


def _read_nodes(path: Path) -> list:
    nodes = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            nodes.append(_make_node(row["id"], row["text"], row["metadata"]))
    return nodes


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_text_atomic(path: Path, content: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(content)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


class IndexStore:
    """The persisted index of one storage folder. Cheap to create; `load()` returns the live generation."""

    def __init__(self, settings: Settings | None = None):
        self.settings = settings or get_settings()
        self.root = self.settings.index_dir
        self._embed = None

    # ---- paths and identity
    @property
    def fingerprint(self) -> str:
        raw = f"{self.settings.embed_model}|{self.settings.chunk_tokens}|{CHUNKER_VERSION}"
        return hashlib.sha256(raw.encode()).hexdigest()[:10]

    def current_generation(self) -> str | None:
        """The live generation's name: a cheap check for 'has another process changed the index?'."""
        try:
            name = (self.root / "CURRENT").read_text().strip()
        except FileNotFoundError:
            return None
        return name or None

    def _lock(self, timeout: float):
        from filelock import FileLock

        self.root.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.root / ".writer.lock"), timeout=timeout)

    # ---- reading
    def load(self) -> LoadedIndex:
        """The last complete index (an empty one when nothing was indexed yet)."""
        import faiss

        for _ in range(3):
            name = self.current_generation()
            if name is None:
                return self._empty()
            gen = self.root / "generations" / name
            try:
                manifest = json.loads((gen / "manifest.json").read_text())
                nodes = _read_nodes(gen / "nodes.jsonl")
                vectors = faiss.read_index(str(gen / "vectors.faiss"))
                bm25 = self._load_bm25(gen / "bm25") if nodes else None
            except FileNotFoundError:
                # A writer replaced and pruned this generation while we read it: read the new one.
                time.sleep(0.05)
                continue
            if vectors.ntotal != len(nodes):
                raise IndexError_(f"index generation {name} is inconsistent: {vectors.ntotal} vectors, {len(nodes)} chunks")
            return LoadedIndex(name, manifest, nodes, vectors, bm25, self.root, _columns(nodes))
        raise IndexError_("the index kept changing while loading; try again")

    def _empty(self) -> LoadedIndex:
        import faiss

        return LoadedIndex("", {"filings": {}}, [], faiss.IndexFlatIP(1), None, self.root, _columns([]))

    @staticmethod
    def _load_bm25(path: Path):
        import bm25s

        return bm25s.BM25.load(str(path), load_corpus=False)

    def list_filings(self) -> list[dict]:
        manifest = self._manifest()
        return sorted(
            manifest.get("filings", {}).values(),
            key=lambda f: (str(f.get("ticker") or ""), str(f.get("form") or ""), -(f.get("fiscal_year") or 0)),
        )

    def _manifest(self) -> dict:
        name = self.current_generation()
        if not name:
            return {"filings": {}}
        try:
            return json.loads((self.root / "generations" / name / "manifest.json").read_text())
        except FileNotFoundError:
            return {"filings": {}}

    # ---- writing
    def embed_model(self):
        if self._embed is None:
            from .embedding import get_embed_model

            self._embed = get_embed_model(self.settings.embed_model, self.settings.embed_batch_size)
        return self._embed

    def chunker(self) -> FilingChunker:
        from .embedding import get_tokenizer, max_model_tokens

        limit = max_model_tokens(self.settings.embed_model) - 2  # [CLS] and [SEP]
        return FilingChunker(get_tokenizer(self.settings.embed_model), min(self.settings.chunk_tokens, limit))

    def add(
        self,
        paths: Iterable[str | Path],
        *,
        overrides: dict | None = None,
        progress: Progress | None = None,
        lock_timeout: float = 600.0,
        parsed: dict[str, ParsedFiling] | None = None,
    ) -> IndexReport:
        """Index files (folders are walked). Unchanged filings are skipped; failures are reported per filing and
        the others go on. Publishes one new generation at the end, if anything changed."""
        files = list(_expand(paths))
        report = IndexReport()
        started = time.perf_counter()
        try:
            lock = self._lock(lock_timeout)
            lock.acquire()
        except Exception as exc:  # filelock.Timeout
            raise IndexBusy("another indexing run holds the index; try again when it finishes") from exc
        try:
            manifest = self._manifest()
            filings = dict(manifest.get("filings", {}))
            by_hash = {f["sha256"]: doc_id for doc_id, f in filings.items() if f.get("fingerprint") == self.fingerprint}
            for path in files:
                name = path.name
                row = {"file": str(path), "status": "skipped", "parse_s": 0.0, "chunks": 0, "embed_s": 0.0}
                try:
                    t0 = time.perf_counter()
                    sha = file_sha256(path)
                    if sha in by_hash:
                        row.update(doc_id=by_hash[sha], chunks=filings[by_hash[sha]].get("chunks", 0))
                        self._facts_backfill(filings[by_hash[sha]])  # facts hook (rag/facts.py)
                        report.rows.append(row)
                        if progress:
                            progress(name, "unchanged", 1.0)
                        continue
                    if progress:
                        progress(name, "parsing", 0.05)
                    doc = (parsed or {}).get(str(path)) or parse_module.parse_file(path)
                    row["parse_s"] = time.perf_counter() - t0
                    meta = filing_meta(path, doc, sha, overrides)
                    old = filings.get(meta["doc_id"])
                    reuse = self._reusable_vectors(old, manifest)
                    entry = self._build_shard(doc, meta, row, progress=progress, name=name, reuse=reuse)
                    self._facts_record(doc, meta, entry)  # facts hook (rag/facts.py)
                    if old and old.get("sha256") in by_hash:
                        by_hash.pop(old["sha256"], None)
                    filings[meta["doc_id"]] = entry
                    by_hash[sha] = meta["doc_id"]
                    row.update(status="indexed", doc_id=meta["doc_id"])
                    report.changed = True
                    if progress:
                        progress(name, "indexed", 1.0)
                except Exception as exc:  # noqa: BLE001 - one bad filing must not stop the others
                    log.exception("indexing %s failed", path)
                    row.update(status="failed", error=str(exc))
                    report.errors.append({"file": str(path), "error": str(exc)})
                    if progress:
                        progress(name, f"failed: {exc}", 1.0)
                report.rows.append(row)
            if report.changed:
                t0 = time.perf_counter()
                self._publish(filings)
                report.build_seconds = time.perf_counter() - t0
        finally:
            lock.release()
        report.total_seconds = time.perf_counter() - started
        return report

    def remove(self, keys: Iterable[str], *, lock_timeout: float = 600.0) -> list[str]:
        """Remove filings by accession/doc id or by file path. Returns the doc ids removed."""
        keys = [str(k) for k in keys]
        with self._lock(lock_timeout):
            filings = dict(self._manifest().get("filings", {}))
            removed = []
            for doc_id, entry in list(filings.items()):
                paths = {entry.get("path") or ""}
                for key in keys:
                    as_path = str(Path(key).resolve()) if key else ""
                    if key == doc_id or key == entry.get("accession") or as_path in paths:
                        removed.append(doc_id)
                        filings.pop(doc_id)
                        break
            if removed:
                self._publish(filings)
                self._facts_forget(removed)  # facts hook (rag/facts.py)
        return removed

    # ---- facts hook (rag/facts.py): each filing's inline XBRL facts in storage/facts.sqlite3, mapped to chunks.
    # A failure here is logged and never stops indexing: answers then fall back to retrieval alone.
    def _facts_record(self, doc: ParsedFiling, meta: dict, entry: dict) -> None:
        try:
            from .facts import record_filing

            record_filing(self.settings, doc, meta, self.root / "shards" / entry["shard"])
        except Exception:  # noqa: BLE001
            log.exception("storing the XBRL facts of %s failed", meta.get("doc_id"))

    def _facts_backfill(self, entry: dict) -> None:
        """An unchanged filing indexed before facts were stored (or whose facts DB is gone) gets its facts."""
        try:
            from .facts import backfill_filing

            backfill_filing(self.settings, entry, self.root / "shards" / entry["shard"])
        except Exception:  # noqa: BLE001
            log.exception("storing the XBRL facts of %s failed", entry.get("doc_id"))

    def _facts_forget(self, doc_ids: list[str]) -> None:
        try:
            from .facts import forget_filings

            forget_filings(self.settings, doc_ids)
        except Exception:  # noqa: BLE001
            log.exception("removing the XBRL facts of %s failed", doc_ids)

    def _reusable_vectors(self, entry: dict | None, manifest: dict) -> dict[str, np.ndarray]:
        """Chunk text -> vector from the filing's previous shard, when the same embedding model made it. A chunker
        change or an amended file then re-embeds only the chunks whose text changed."""
        if not entry or not entry.get("shard"):
            return {}
        model = entry.get("embed_model") or manifest.get("embed_model")
        shard = self.root / "shards" / entry["shard"]
        if model != self.settings.embed_model or not (shard / "vectors.npy").exists():
            return {}
        try:
            nodes = _read_nodes(shard / "nodes.jsonl")
            vectors = np.load(shard / "vectors.npy")
        except (OSError, ValueError) as exc:  # a damaged old shard only costs its reuse
            log.warning("cannot reuse the vectors of %s: %s", shard, exc)
            return {}
        if len(nodes) != len(vectors):
            return {}
        return {node.text: vectors[i] for i, node in enumerate(nodes)}

    def _build_shard(self, doc: ParsedFiling, meta: dict, row: dict, *, progress, name,
                     reuse: dict[str, np.ndarray] | None = None) -> dict:
        from llama_index.core import Document
        from llama_index.core.ingestion import IngestionPipeline

        shards = self.root / "shards"
        key = f"{meta['sha256'][:16]}-{self.fingerprint}"
        final = shards / key
        if progress:
            progress(name, "chunking", 0.15)
        splitter = _ChunkTransform(chunker=self.chunker(), parsed=doc)
        document = Document(text=doc.text, id_=meta["doc_id"], metadata={k: meta.get(k) for k in FILING_META_KEYS})
        if not (final / "vectors.npy").exists():
            if progress:
                progress(name, "embedding", 0.3)
            t0 = time.perf_counter()
            embedder = _EmbedChangedChunks(self.embed_model(), reuse or {})
            pipeline = IngestionPipeline(transformations=[splitter, embedder], disable_cache=True)
            nodes = pipeline.run(documents=[document])
            row["embed_s"] = max(0.0, time.perf_counter() - t0 - splitter.seconds)
            row["reused"] = embedder.reused
            vectors = np.asarray([n.embedding for n in nodes], dtype="float32").reshape(len(nodes), -1)
            tmp = shards / f".tmp-{key}-{uuid.uuid4().hex[:8]}"
            tmp.mkdir(parents=True)
            try:
                with open(tmp / "nodes.jsonl", "w", encoding="utf-8") as fh:
                    for node in nodes:
                        fh.write(_node_to_json(node) + "\n")
                np.save(tmp / "vectors.npy", vectors)
                (tmp / "text.txt").write_text(doc.text, encoding="utf-8")
                (tmp / "sections.json").write_text(json.dumps([s.__dict__ for s in doc.sections]))
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
                _fsync_dir(shards)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            count = len(nodes)
        else:
            count = sum(1 for _ in open(final / "nodes.jsonl", encoding="utf-8"))
        row["chunks"] = count
        entry = {k: meta.get(k) for k in FILING_META_KEYS}
        entry.update(sha256=meta["sha256"], fingerprint=self.fingerprint, embed_model=self.settings.embed_model,
                     shard=key, chunks=count,
                     indexed_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
        return entry

    def _publish(self, filings: dict) -> None:
        """Build the next generation from the shards, then switch CURRENT to it in one atomic step."""
        import bm25s
        import faiss

        gens = self.root / "generations"
        gens.mkdir(parents=True, exist_ok=True)
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}"
        tmp = gens / f".tmp-{name}"
        tmp.mkdir()
        try:
            nodes, vectors = [], []
            for doc_id in sorted(filings):
                shard = self.root / "shards" / filings[doc_id]["shard"]
                nodes.extend(_read_nodes(shard / "nodes.jsonl"))
                vectors.append(np.load(shard / "vectors.npy"))
            dim = vectors[0].shape[1] if vectors and vectors[0].size else 384
            matrix = np.vstack(vectors).astype("float32") if vectors else np.zeros((0, dim), "float32")
            flat = faiss.IndexFlatIP(dim)
            if len(matrix):
                flat.add(matrix)
            faiss.write_index(flat, str(tmp / "vectors.faiss"))
            with open(tmp / "nodes.jsonl", "w", encoding="utf-8") as fh:
                for node in nodes:
                    fh.write(_node_to_json(node) + "\n")
            if nodes:
                tokens = bm25s.tokenize(
                    [n.text for n in nodes], stopwords="en", stemmer=keyword_stemmer(), show_progress=False
                )
                bm25 = bm25s.BM25()
                bm25.index(tokens, show_progress=False)
                bm25.save(str(tmp / "bm25"))
            manifest = {"version": 1, "embed_model": self.settings.embed_model, "dim": dim,
                        "chunks": len(nodes), "filings": filings}
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
            for path in tmp.rglob("*"):
                if path.is_file():
                    with open(path, "rb") as fh:
                        os.fsync(fh.fileno())
            os.replace(tmp, gens / name)
            _fsync_dir(gens)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _write_text_atomic(self.root / "CURRENT", name)
        self._prune(keep={name}, live_shards={f["shard"] for f in filings.values()})

    def _prune(self, keep: set[str], live_shards: set[str]) -> None:
        """Drop old generations (keeping the previous one for readers mid-load), leftovers of killed runs, and
        shards no filing uses any more."""
        gens = self.root / "generations"
        existing = sorted((p for p in gens.iterdir() if not p.name.startswith(".")), key=lambda p: p.name)
        for path in existing[:-2]:
            if path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)
        for path in gens.glob(".tmp-*"):
            shutil.rmtree(path, ignore_errors=True)
        shards = self.root / "shards"
        if shards.is_dir():
            for path in shards.iterdir():
                if path.name not in live_shards:
                    shutil.rmtree(path, ignore_errors=True)


def keyword_stemmer():
    """The stemmer BM25 uses at index and at query time (bm25s does not persist it)."""
    import Stemmer

    return Stemmer.Stemmer("english")


def _expand(paths: Iterable[str | Path]):
    """Files to index. In a folder, a filing that was downloaded or uploaded (a filing.json beside it) counts
    once, as the primary document the record names; hidden folders (a download in progress) are skipped."""
    suffixes = {".htm", ".html", ".txt", ".pdf"}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path).parts
                if any(part.startswith(".") for part in rel) or not child.is_file():
                    continue
                if child.name == "filing.json":
                    primary = _record_primary(child)
                    if primary is not None:
                        yield primary
                    continue
                if child.suffix.lower() in suffixes and not (child.parent / "filing.json").is_file():
                    yield child
        elif path.exists():
            yield path
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")


def _record_primary(record: Path) -> Path | None:
    try:
        name = json.loads(record.read_text()).get("path")
    except (OSError, ValueError):
        return None
    if not name:
        return None
    primary = (record.parent / name).resolve()
    # The record must name a file inside its own folder: a record's contents never choose another path.
    if primary.parent != record.parent.resolve() or not primary.is_file():
        return None
    return primary


from llama_index.core.schema import TransformComponent  # noqa: E402  (heavy import kept below the pure code)
from pydantic import PrivateAttr  # noqa: E402


class _ChunkTransform(TransformComponent):
    """The IngestionPipeline step that turns a filing Document into chunk nodes, using the parsed structure."""

    _chunker: FilingChunker = PrivateAttr()
    _parsed: ParsedFiling = PrivateAttr()
    _seconds: float = PrivateAttr(default=0.0)

    def __init__(self, chunker: FilingChunker, parsed: ParsedFiling):
        super().__init__()
        self._chunker = chunker
        self._parsed = parsed

    @property
    def seconds(self) -> float:
        return self._seconds

    def __call__(self, nodes, **kwargs):
        t0 = time.perf_counter()
        out = []
        for document in nodes:
            meta = dict(document.metadata)
            for i, chunk in enumerate(self._chunker.split(self._parsed, meta)):
                text = chunk.pop("text")
                node_meta = {**meta, **chunk, "chunk_index": i}
                node_meta = {k: node_meta.get(k) for k in NODE_META_KEYS}
                out.append(_make_node(f"{meta['doc_id']}:{i:05d}", text, node_meta))
        self._seconds += time.perf_counter() - t0
        return out


class _EmbedChangedChunks(TransformComponent):
    """The pipeline's embedding step: chunks whose exact text was embedded before by the same model keep that
    vector; only the others go through the model (the text embedded is the node text: metadata is excluded)."""

    _embed_model: object = PrivateAttr()
    _known: dict = PrivateAttr()
    _reused: int = PrivateAttr(default=0)

    def __init__(self, embed_model, known: dict[str, np.ndarray]):
        super().__init__()
        self._embed_model = embed_model
        self._known = known

    @property
    def reused(self) -> int:
        return self._reused

    def __call__(self, nodes, **kwargs):
        fresh = [node for node in nodes if node.text not in self._known]
        if fresh:
            self._embed_model(fresh)
        for node in nodes:
            if node.text in self._known:
                node.embedding = self._known[node.text].tolist()
                self._reused += 1
        return nodes
