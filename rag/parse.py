"""Filing file -> structured text: Items, pages, tables as rows, character offsets, XBRL facts.

(Data model fixed here; the parsers below are being written.)
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ParseError(ValueError):
    """The input cannot be read as a filing; the message says why in words a user understands."""


@dataclass
class Block:
    """A paragraph, heading or table of the filing's text. `text == ParsedFiling.text[char_start:char_end]`."""

    kind: str  # "text" | "table"
    char_start: int
    char_end: int
    page: int  # 1-based page the block starts on
    # For tables: the column-header line(s) (e.g. "| 2024 | 2023 | 2022"), repeated by the chunker in every
    # chunk of the table so that a number never travels without its year. Empty for text.
    table_header: str = ""


@dataclass
class Section:
    item: str  # "Cover", "Item 1", "Item 1A", ..., "Item 15", "Signatures"
    title: str  # "Risk Factors"
    char_start: int
    char_end: int
    page_start: int
    page_end: int


@dataclass
class Fact:
    """One inline XBRL fact (ix:nonFraction, or a dei: ix:nonNumeric) with where it sits in the text."""

    concept: str  # "us-gaap:Revenues"
    value: float | None  # scale and sign applied; None for non-numeric facts
    text: str  # as displayed ("391,035")
    unit: str  # "usd", "shares", "usdPerShare", "" for non-numeric
    context_id: str
    period_start: str | None  # ISO date, None for an instant
    period_end: str | None  # ISO date (the instant for instant contexts)
    dimensions: dict[str, str] = field(default_factory=dict)  # axis -> member
    decimals: str | None = None
    scale: int = 0
    char_start: int = -1  # span in ParsedFiling.text, -1 where hidden (ix:header)
    char_end: int = -1


@dataclass
class ParsedFiling:
    text: str
    blocks: list[Block]
    sections: list[Section]
    page_starts: list[int]  # page_starts[i] = char offset where page i+1 begins; page_starts[0] == 0
    # Read from the file itself: company, cik, form, fiscal_year (int), fiscal_year_source
    # ("dei:DocumentFiscalYearFocus" | "period_end" | "caller"), period_end (ISO), ticker, accession,
    # filing_date, shares_outstanding. Keys absent when unknown.
    meta: dict
    facts: list[Fact] = field(default_factory=list)
