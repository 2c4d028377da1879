"""One reader per kind of filing file (HTML, full submission, plain text, PDF) and parse_file choosing among them;
each ends in the same assembly: metadata completed from the cover page, sections found."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .builder import BuiltText
from .cover import fill_from_cover, has_cover_title
from .htmldoc import HTML_SNIFF_RE, decode, html_document
from .pdf import pdf_document
from .period import fill_fiscal_period
from .plaintext import text_document
from .results import Fact, NotAFiling, ParsedFiling, ParseError
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
        raise type(exc)(f"{path.name}: {exc}") from exc
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
        return parse_pdf(path, require_filing=True)
    head = data[:65536].decode("latin-1").lower()
    if "<document>" in head and "<type>" in head:
        return parse_submission(decode(data), require_filing=True)
    if suffix in (".htm", ".html", ".xhtml", ".xml") or HTML_SNIFF_RE.search(head):
        return parse_html(data, require_filing=True)
    return parse_text(decode(data), require_filing=True)


def parse_html(data: bytes | str, *, require_filing: bool = False) -> ParsedFiling:
    """Parse EDGAR HTML (inline XBRL or plain) into text, blocks, sections, pages, facts and metadata.
    require_filing (as parse_file sets it, for every reader): NotAFiling for a document that shows none of the
    signs of an SEC filing."""
    built, meta, facts = html_document(data)
    fill_from_cover(meta, built.text)
    fill_fiscal_period(meta, built.text)
    # An XBRL instance (.xml) carries its dei: cover tags as plain elements, which the HTML walk does not read.
    raw = data.encode("latin-1", "replace") if isinstance(data, str) else data
    return _assemble(built, meta, facts, require_filing and _DEI_ELEMENT_RE.search(raw) is None)


def parse_pdf(path: str | Path, *, require_filing: bool = False) -> ParsedFiling:
    """Parse a PDF filing: one page per PDF page, Items detected where the text shows them."""
    built, cover_lines = pdf_document(path)
    meta: dict = {}
    fill_from_cover(meta, built.text, cover_lines)
    fill_fiscal_period(meta, built.text)
    return _assemble(built, meta, [], require_filing)


def parse_submission(text: str, *, require_filing: bool = False) -> ParsedFiling:
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
    if "form" not in meta and doc.type:
        meta["form"] = doc.type.upper()  # a <DOCUMENT> without a submission header still names its type
    for key in ("company", "period_end"):
        if header.get(key) and key not in meta:
            meta[key] = header[key]
    fill_from_cover(meta, built.text)
    fill_fiscal_period(meta, built.text, header.get("fiscal_year_end"))
    if doc.filename:
        meta["primary_document"] = doc.filename
    return _assemble(built, meta, facts, require_filing and not (header.get("form") or doc.type))


def parse_text(text: str, *, require_filing: bool = False) -> ParsedFiling:
    """Parse a plain-text filing (1990s EDGAR): paragraphs by blank lines, pages by <PAGE> or form feeds."""
    built = text_document(text)
    meta: dict = {}
    fill_from_cover(meta, built.text)
    fill_fiscal_period(meta, built.text)
    return _assemble(built, meta, [], require_filing)


def _assemble(built: BuiltText, meta: dict, facts: list[Fact], check_signs: bool = False) -> ParsedFiling:
    """The parsed filing with its sections; with check_signs (no EDGAR markup, such as a submission's header or
    <TYPE> or XBRL dei: elements, vouches for the file), NotAFiling unless its first pages show it is one."""
    parsed = ParsedFiling(text=built.text, blocks=built.blocks, sections=[], page_starts=built.page_starts,
                          meta=meta, facts=facts)
    parsed.sections = find_sections(parsed)
    if check_signs:
        _check_is_filing(parsed)
    return parsed


# What every SEC filing shows on its first pages: the Commission's name on its cover, a form title ("FORM 10-Q"),
# a Commission File Number; an exhibit its "Exhibit 99.1" heading (read as the form); a periodic report its Items.
_SEC_NAME_RE = re.compile(r"securities\s+and\s+exchange\s+commission", re.I)
_FILE_NUMBER_RE = re.compile(r"commission\s+file\s+(?:number|no\b)", re.I)
# EDGAR's header fields, in a header saved alone or a dissemination (.nc) file.
_EDGAR_HEADER_RE = re.compile(r"ACCESSION[\s-]NUMBER\b|CONFORMED\s+SUBMISSION\s+TYPE|<SUBMISSION>")
_DEI_ELEMENT_RE = re.compile(rb"<dei:[A-Za-z]")
_FIRST_PAGES = 3
_FIRST_CHARS = 30000


def _check_is_filing(parsed: ParsedFiling) -> None:
    """NotAFiling when none of the signs of an SEC filing is there, so that nothing is indexed for a file that
    is not one (a password file, a letter, a web page)."""
    pages = parsed.page_starts
    head = parsed.text[: min(_FIRST_CHARS, pages[_FIRST_PAGES] if len(pages) > _FIRST_PAGES else _FIRST_CHARS)]
    if (any(f.concept.lower().startswith("dei:") for f in parsed.facts) or has_cover_title(head)
            or _SEC_NAME_RE.search(head) or _FILE_NUMBER_RE.search(head) or _EDGAR_HEADER_RE.search(head)
            or any(s.item.startswith(("Item", "Part")) for s in parsed.sections)):
        return
    raise NotAFiling(
        "this is not an SEC filing: its first pages have no dei: cover tags, no EDGAR header, no \"SECURITIES AND "
        "EXCHANGE COMMISSION\", no form title (\"FORM 10-K\", \"FORM 10-Q\", ...) or exhibit heading, no "
        "Commission File Number and no Item headings"
    )


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, hex: a filing's identity in its record and in the index."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
