"""The per-row columns of a loaded index (what filters match on) and the rows a filter selects.

Besides the chunk metadata (including the primary statement a chunk's page carries, found at parse time), one
column is derived: the tiny Item the chunker merged into a chunk's section.
"""

from __future__ import annotations

import re
from typing import Iterable

import numpy as np

# The columns a filter may name; "section" also matches the tiny Item merged into a section, and "exhibit_list"
# (True or False) tells the chunks of an exhibit index apart.
FILTER_COLUMNS = ("statement", "ticker", "fiscal_year", "fiscal_period", "form", "section", "doc_id", "exhibit_list")


def merged_item(section_title: str) -> str:
    """The tiny Item a chunk's section carries, from the chunker's title "Cybersecurity (with Item 1B: ...)"."""
    m = re.search(r"\(with (Item \w+)[:)]", section_title)
    return m.group(1) if m else ""


# The exhibit index (Item 15, sometimes under Item 16 or the signatures): numbered exhibits, each a document filed or
# incorporated by reference. It lists agreements and plans by title, so their words ("Employment Agreement",
# "Stock Incentive Plan") match questions about employees or stock that the index itself never answers.
_EXHIBIT_LINE = re.compile(r"^(?:exhibit\s+)?\d{1,3}(?:\.\d{1,3})+(?:\s*\([a-z0-9]+\))?\*?\s*(?:\||[A-Z†*])",
                           re.M | re.I)
# ... or the form an exhibit was first filed with, as a cell of the index's table ("| 8-K | 001-47813 | 10.1 |").
_EXHIBIT_REFERENCE = re.compile(
    r"incorporated\s+(?:herein\s+)?by\s+reference|\bexhibit\b|\bform\s+(?:8-K|10-K|10-Q|S-\d)\b"
    r"|\|\s*(?:8-K|10-K|10-Q|S-\d+|DEF\s*14A)(?:/A)?\s*\|", re.I)
_BY_REFERENCE = re.compile(r"by\s+reference\s+to\s+exhibit", re.I)


def is_exhibit_list(text: str) -> bool:
    """A chunk of the exhibit index: numbered exhibit lines and the words that file them (long descriptions leave
    room for only two lines in a chunk, or one that is itself incorporated by reference to an exhibit)."""
    body = text.split("\n", 1)[-1]
    lines = len(_EXHIBIT_LINE.findall(body))
    return bool(_EXHIBIT_REFERENCE.search(body)) and (lines >= 2 or (lines == 1 and bool(_BY_REFERENCE.search(body))))


# Forms that report a whole fiscal year: a chunk indexed before fiscal periods were recorded is "FY" when its
# filing is one of these.
ANNUAL_FORMS = ("10-K", "10-K/A", "10-KT", "20-F", "20-F/A", "40-F", "40-F/A")


def fiscal_period_of(meta: dict) -> str:
    """A chunk's fiscal period ("Q1".."Q3", "FY"), or "" when neither its metadata nor its form says."""
    period = str(meta.get("fiscal_period") or "").upper()
    if period:
        return period
    return "FY" if str(meta.get("form") or "").upper() in ANNUAL_FORMS else ""


def metadata_columns(nodes) -> dict[str, np.ndarray]:
    """Per-row arrays of what filters match on (row i == nodes[i]), so a filter is one vectorised comparison."""
    meta = [n.metadata for n in nodes]
    return {
        "statement": np.array([m.get("statement") or "" for m in meta], dtype=object),
        "ticker": np.array([str(m.get("ticker") or "").upper() for m in meta], dtype=object),
        "fiscal_year": np.array([int(m.get("fiscal_year") or 0) for m in meta], dtype=np.int64),
        "form": np.array([str(m.get("form") or "").upper() for m in meta], dtype=object),
        "fiscal_period": np.array([fiscal_period_of(m) for m in meta], dtype=object),
        "section": np.array([m.get("section") or "" for m in meta], dtype=object),
        "merged_section": np.array([merged_item(m.get("section_title") or "") for m in meta], dtype=object),
        "doc_id": np.array([m.get("doc_id") or "" for m in meta], dtype=object),
        "node_id": np.array([n.node_id for n in nodes], dtype=object),
        "exhibit_list": np.array([is_exhibit_list(n.text) for n in nodes], dtype=bool),
    }


def normalised(column: str, values: Iterable) -> list:
    """Filter values as the column holds them (tickers, forms and periods upper case, years as numbers)."""
    if column == "exhibit_list":
        return [bool(v) for v in values]
    if column in ("ticker", "form", "fiscal_period"):
        return [str(v).upper() for v in values]
    if column == "fiscal_year":
        return [int(v) for v in values]
    return list(values)


def filter_values(item) -> list:
    """The values a LlamaIndex MetadataFilter admits: one for ==, its list for `in`; any other operator cannot be
    applied exactly, so it is refused rather than ignored."""
    from llama_index.core.vector_stores.types import FilterOperator

    if item.operator == FilterOperator.EQ:
        return [item.value]
    if item.operator == FilterOperator.IN:
        return list(item.value or [])
    raise ValueError(f"filter operator {item.operator.value!r} is not supported here (only == and in)")


def column_mask(columns: dict[str, np.ndarray], column: str, values: Iterable) -> np.ndarray:
    """Which rows hold one of `values` in `column` (tickers and forms in any case, years as numbers)."""
    if column not in FILTER_COLUMNS:
        raise ValueError(f"no filter on {column!r}: filters apply to {', '.join(FILTER_COLUMNS)}")
    wanted = normalised(column, values)
    hit = np.isin(columns[column], np.array(wanted, dtype=columns[column].dtype))
    if column == "section":  # a tiny Item merged into the next one is found under its own name too
        hit |= np.isin(columns["merged_section"], np.array(wanted, dtype=object))
    return hit


def rows_matching(columns: dict[str, np.ndarray], wanted: dict[str, Iterable]) -> np.ndarray | None:
    """Row ids matching every non-empty filter in `wanted` (column -> accepted values); None = no filter at all."""
    mask = None
    for column, values in wanted.items():
        values = list(values)
        if not values:
            continue
        hit = column_mask(columns, column, values)
        mask = hit if mask is None else (mask & hit)
    return None if mask is None else np.flatnonzero(mask)
