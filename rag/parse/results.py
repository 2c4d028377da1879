"""What a parse produces: the filing's text with its blocks, sections, pages and XBRL facts, and the documents of
an EDGAR full submission. Imports nothing from the rest of the package, so every module of it can use these."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


class ParseError(ValueError):
    """The input cannot be read as a filing; the message says why in words a user understands."""


class NotAFiling(ParseError):
    """The file reads, but nothing in it is an SEC filing's: no dei: tags, no EDGAR header, no cover page, no
    Item headings. Callers show the message and write nothing."""


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
    text: str = field(default="", repr=False)  # the block's own text (a copy of the span, for convenience)
    # For tables: the short lines right above it (title and units: "CONSOLIDATED STATEMENTS OF OPERATIONS",
    # "(In millions, except ...)"), which a chunker may repeat with table_header. Empty for text.
    caption: str = field(default="", repr=False)


@dataclass
class Section:
    """A part of the filing between two Item headings (or the cover, signatures, appended statements)."""

    # "Cover", "Item 1", "Item 1A", ..., "Item 16", "Signatures"; 10-Q: "Part I Item 2", "Part II Item 1A";
    # 8-K: "Item 8.01"; "Financial Statements" for statements printed after Part IV where Item 8 points to them;
    # "Document" when no Item heading was found at all
    item: str
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
    text: str  # as displayed ("48,210")
    unit: str  # "usd", "shares", "usdPerShare", "" for non-numeric
    context_id: str
    period_start: str | None  # ISO date, None for an instant
    period_end: str | None  # ISO date (the instant for instant contexts)
    dimensions: dict[str, str] = field(default_factory=dict)  # axis -> member
    decimals: str | None = None
    scale: int = 0
    char_start: int = -1  # span in ParsedFiling.text, -1 where hidden (ix:header)
    char_end: int = -1
    # Where the figure was read: "xbrl" (an inline XBRL tag) or "pdf-table" (a PDF statement table's cell, read by
    # rag.facts.pdf_tables), which answers name as such.
    source: str = "xbrl"


@dataclass
class ParsedFiling:
    """A parsed filing: its text and everything located in it by character offset."""

    text: str
    blocks: list[Block]
    sections: list[Section]
    page_starts: list[int]  # page_starts[i] = char offset where page i+1 begins; page_starts[0] == 0
    # Read from the file itself: company, cik, form, fiscal_year (int), fiscal_year_source
    # ("dei:DocumentFiscalYearFocus" | "period_end" | "fiscal_period" | "caller"), fiscal_period ("Q1" | "Q2" |
    # "Q3" | "FY"), fiscal_period_source (see rag.parse.period), period_end (ISO), ticker, accession,
    # filing_date, shares_outstanding; cover_fields: the keys read from the cover's words rather than from dei:
    # tags or an EDGAR header; notes: what the file says that was not used, and why, in words for the user. Keys
    # absent when unknown.
    meta: dict
    facts: list[Fact] = field(default_factory=list)

    def page_at(self, offset: int) -> int:
        """1-based page holding character `offset`."""
        return max(1, bisect.bisect_right(self.page_starts, offset))

    def section_at(self, offset: int) -> Section | None:
        """The section whose span holds `offset` (the last one for offsets at or past the end)."""
        if not self.sections:
            return None
        starts = [s.char_start for s in self.sections]
        return self.sections[max(0, bisect.bisect_right(starts, offset) - 1)]


@dataclass
class SubmissionDocument:
    """One <DOCUMENT> of an EDGAR full submission."""

    type: str  # "10-K", "EX-21.1", "GRAPHIC", ...
    sequence: str
    filename: str
    description: str
    text: str  # the content of <TEXT>, without <XBRL>/<PDF> wrappers


@dataclass
class FullSubmission:
    """An EDGAR full-submission .txt: its SGML header and its documents."""

    header: dict  # company, cik, form, period_end (ISO), filing_date (ISO), accession, fiscal_year_end ("1231")
    documents: list[SubmissionDocument]
    primary: SubmissionDocument | None  # the document of the submission's own form, else the first
