"""One reader per kind of filing file (HTML, full submission, plain text, PDF) and parse_file choosing among them;
each ends in the same assembly: metadata completed from the cover page, sections found."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .builder import BuiltText
from .cover import fill_from_cover
from .htmldoc import HTML_SNIFF_RE, decode, html_document
from .pdf import pdf_text
from .plaintext import text_document
from .results import Fact, ParsedFiling, ParseError
from .sections import find_sections
from .submission import read_full_submission

_ACCESSION_RE = re.compile(r"\d{10}-\d{2}-\d{6}")


def parse_file(path: str | Path) -> ParsedFiling:
    """Parse an EDGAR .htm/.html, a full-submission .txt, a plain-text filing or a PDF."""
    path = Path(path)
    try:
        parsed = _parse_path(path)
    except ParseError as exc:
        if path.name in str(exc):
            raise
        raise ParseError(f"{path.name}: {exc}") from exc
    # Older EDGAR documents are often saved under their accession number.
    if "accession" not in parsed.meta:
        m = _ACCESSION_RE.search(path.name)
        if m:
            parsed.meta["accession"] = m.group()
    return parsed


def _parse_path(path: Path) -> ParsedFiling:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ParseError(f"cannot read {path.name}: {exc.strerror or exc}") from exc
    if not data.strip():
        raise ParseError(f"{path.name} is empty")
    suffix = path.suffix.lower()
    if data.lstrip()[:5] == b"%PDF-" or suffix == ".pdf":
        return parse_pdf(path)
    head = data[:65536].decode("latin-1").lower()
    if "<document>" in head and "<type>" in head:
        return parse_submission(decode(data))
    if suffix in (".htm", ".html", ".xhtml", ".xml") or HTML_SNIFF_RE.search(head):
        return parse_html(data)
    return parse_text(decode(data))


def parse_html(data: bytes | str) -> ParsedFiling:
    """Parse EDGAR HTML (inline XBRL or plain) into text, blocks, sections, pages, facts and metadata."""
    built, meta, facts = html_document(data)
    fill_from_cover(meta, built.text)
    return _assemble(built, meta, facts)


def parse_pdf(path: str | Path) -> ParsedFiling:
    """Parse a PDF filing: one page per PDF page, Items detected where the text shows them."""
    built = pdf_text(path)
    meta: dict = {}
    fill_from_cover(meta, built.text)
    return _assemble(built, meta, [])


def parse_submission(text: str) -> ParsedFiling:
    """Parse a full-submission .txt: its main document, with metadata completed from the SGML header."""
    submission = read_full_submission(text)
    doc = submission.primary
    if doc is None:
        raise ParseError("the submission holds no <DOCUMENT>")
    if not doc.text.strip():
        raise ParseError(f"the main document ({doc.type} {doc.filename}) is empty")
    if HTML_SNIFF_RE.search(doc.text[:65536].lower()):
        built, meta, facts = html_document(doc.text)
    else:
        built, meta, facts = text_document(doc.text), {}, []
    header = submission.header
    # EDGAR's header is the authority on its own bookkeeping (the exact form type, e.g. 10-K405); what the inline
    # XBRL states comes next; a guess from the cover page text only fills what is still missing.
    for key in ("form", "cik", "accession", "filing_date"):
        if header.get(key):
            meta[key] = header[key]
    for key in ("company", "period_end"):
        if header.get(key) and key not in meta:
            meta[key] = header[key]
    fill_from_cover(meta, built.text)
    if doc.filename:
        meta["primary_document"] = doc.filename
    return _assemble(built, meta, facts)


def parse_text(text: str) -> ParsedFiling:
    """Parse a plain-text filing (1990s EDGAR): paragraphs by blank lines, pages by <PAGE> or form feeds."""
    built = text_document(text)
    meta: dict = {}
    fill_from_cover(meta, built.text)
    return _assemble(built, meta, [])


def _assemble(built: BuiltText, meta: dict, facts: list[Fact]) -> ParsedFiling:
    parsed = ParsedFiling(text=built.text, blocks=built.blocks, sections=[], page_starts=built.page_starts,
                          meta=meta, facts=facts)
    parsed.sections = find_sections(parsed)
    return parsed


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, hex: a filing's identity in its record and in the index."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
