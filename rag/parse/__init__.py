"""Filing file -> structured text: Items, pages, tables as rows, character offsets, XBRL facts.

A filing's text is a sequence of blocks (paragraphs, headings, list items, tables) joined by a blank line.
Tables read as one row per line, `label | v1 | v2`, with their column-header lines first; every block, section,
page and visible XBRL fact carries its character span in that text, so a citation can point at the exact passage.

Inputs: EDGAR HTML (inline XBRL or plain), EDGAR full-submission .txt (SGML), plain-text filings and PDF
(pypdfium2). The modules, from the entry points down:

    readers     parse_file and one reader per kind of input; file_sha256
    htmldoc     the HTML walk: visible text, page breaks, tables, inline XBRL
    xbrl        inline XBRL facts, contexts and the dei: metadata
    pdf         PDF page text grouped into paragraphs
    plaintext   plain-text filings and their fixed-width tables
    submission  the SGML of a full submission
    cover       dates as filings spell them, and what the cover page says (form, name, ticker)
    statements  the pages that carry the primary financial statements
    period      the fiscal period (Q1, Q2, Q3, FY) and a quarter's fiscal year where no dei: tag says them
    tables      table rows -> `label | v1 | v2` lines
    builder     blocks -> one text with offsets, pages and fact spans
    sections    Item headings -> sections
    results     the result types
"""

from .readers import file_sha256, parse_file, parse_html, parse_pdf, parse_submission, parse_text
from .results import (
    Block,
    Fact,
    FullSubmission,
    NotAFiling,
    ParsedFiling,
    ParseError,
    Section,
    SubmissionDocument,
)
from .statements import STATEMENT_CAPTIONS, statement_pages
from .submission import read_full_submission

__all__ = [
    "STATEMENT_CAPTIONS",
    "Block",
    "Fact",
    "FullSubmission",
    "NotAFiling",
    "ParseError",
    "ParsedFiling",
    "Section",
    "SubmissionDocument",
    "file_sha256",
    "parse_file",
    "parse_html",
    "parse_pdf",
    "parse_submission",
    "parse_text",
    "read_full_submission",
    "statement_pages",
]
