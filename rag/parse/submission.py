"""EDGAR full-submission .txt (SGML): the header's bookkeeping and the <DOCUMENT> blocks."""

from __future__ import annotations

import re

from .cover import read_date
from .results import FullSubmission, SubmissionDocument


def read_full_submission(text: str) -> FullSubmission:
    """Split an EDGAR full-submission .txt into its SGML header and its <DOCUMENT> blocks."""
    first_doc = _DOC_OPEN_RE.search(text)
    header_text = text[: first_doc.start()] if first_doc else text[:20000]
    header = _read_sgml_header(header_text)
    documents = []
    for m in _DOC_RE.finditer(text):
        documents.append(_read_sgml_document(m.group(1)))
    form = header.get("form", "").upper()
    primary = next((d for d in documents if form and d.type.upper() == form), None)
    if primary is None and documents:
        primary = documents[0]
    return FullSubmission(header=header, documents=documents, primary=primary)


_DOC_OPEN_RE = re.compile(r"<DOCUMENT>", re.I)
_DOC_RE = re.compile(r"<DOCUMENT>(.*?)(?:</DOCUMENT>|\Z)", re.I | re.S)
_TEXT_RE = re.compile(r"<TEXT>(.*?)(?:</TEXT>|\Z)", re.I | re.S)
_WRAPPER_OPEN_RE = re.compile(r"\s*<(XBRL|PDF|XML)>", re.I)
_HEADER_FIELDS = {
    "COMPANY CONFORMED NAME": "company",
    "CENTRAL INDEX KEY": "cik",
    "CONFORMED SUBMISSION TYPE": "form",
    "CONFORMED PERIOD OF REPORT": "period_end",
    "FILED AS OF DATE": "filing_date",
    "ACCESSION NUMBER": "accession",
    "FISCAL YEAR END": "fiscal_year_end",
}
_HEADER_LINE_RE = re.compile(r"^\s*([A-Z][A-Z0-9 \-]+?):[ \t]*(\S.*?)\s*$", re.M)


def _read_sgml_header(header_text: str) -> dict:
    header: dict = {}
    for m in _HEADER_LINE_RE.finditer(header_text):
        key = _HEADER_FIELDS.get(m.group(1).strip())
        if key and key not in header:  # first one wins: the filer, not a former name or a second filer
            header[key] = m.group(2).strip()
    for key in ("period_end", "filing_date"):
        if key in header:
            iso = read_date(header[key])
            if iso:
                header[key] = iso
            else:
                del header[key]
    if "form" in header:
        header["form"] = header["form"].upper()
    return header


def _sgml_tag_value(body: str, tag: str) -> str:
    m = re.search(rf"<{tag}>[ \t]*([^\r\n<]*)", body, re.I)
    return m.group(1).strip() if m else ""


def _read_sgml_document(body: str) -> SubmissionDocument:
    m = _TEXT_RE.search(body)
    text = m.group(1) if m else ""
    wrapper = _WRAPPER_OPEN_RE.match(text)
    if wrapper:  # <XBRL>...</XBRL> around inline XBRL, <PDF>...</PDF> around a uuencoded PDF
        text = text[wrapper.end() :]
        close = text.upper().rfind(f"</{wrapper.group(1).upper()}>")
        if close != -1:
            text = text[:close]
    return SubmissionDocument(
        type=_sgml_tag_value(body, "TYPE"),
        sequence=_sgml_tag_value(body, "SEQUENCE"),
        filename=_sgml_tag_value(body, "FILENAME"),
        description=_sgml_tag_value(body, "DESCRIPTION"),
        text=text.strip("\r\n"),
    )
