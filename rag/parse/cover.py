"""Metadata read from the filing's own words: dates in the spellings filings use, and what the cover page says
(form, fiscal period end, the registrant's exact name) where the XBRL did not say it."""

from __future__ import annotations

import re

from ..dates import fiscal_year_from_period_end, iso_date, month_number
from .builder import WS_RE
from .period import FP_RELEASE, release_period, release_period_end
from .tables import LETTER_RE

_ISO_DATE_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_COMPACT_DATE_RE = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_MONTH_DAY_YEAR_RE = re.compile(r"([A-Za-z]{3,9})\.?\s+(\d{1,2})\s*(?:st|nd|rd|th)?\s*,?\s*(\d{4})")
_DAY_MONTH_YEAR_RE = re.compile(r"(\d{1,2})\s+([A-Za-z]{3,9})\.?\s*,?\s*(\d{4})")
_SLASH_DATE_RE = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")


def read_date(text: str) -> str | None:
    """'September 28, 2024', '2024-09-28', '20240928', '28 September 2024', '9/28/2024' -> '2024-09-28'."""
    text = WS_RE.sub(" ", text).strip()
    if m := _ISO_DATE_RE.search(text):
        return iso_date(m.group(1), m.group(2), m.group(3))
    if m := _COMPACT_DATE_RE.match(text):
        return iso_date(m.group(1), m.group(2), m.group(3))
    if m := _MONTH_DAY_YEAR_RE.search(text):
        return iso_date(m.group(3), month_number(m.group(1)), m.group(2))
    if m := _DAY_MONTH_YEAR_RE.search(text):
        return iso_date(m.group(3), month_number(m.group(2)), m.group(1))
    if m := _SLASH_DATE_RE.search(text):
        return iso_date(m.group(3), m.group(1), m.group(2))
    return None


# The form as its cover titles it: "FORM 10-Q", "Form 6-K", "FORM 20-F", "FORM 4", "Form C", "FORM N-CSR",
# "Form DEF 14A" (an EDGAR index page). The first one wins: a 6-K's cover later asks whether the issuer files
# "Form 20-F or Form 40-F", a 10-Q's refers to past "Form 10-K" reports.
_FORM_NAME = (r"((?:\d{1,3}-?[A-Za-z]{1,3}\d{0,3}(?:-[A-Z]{1,2})?|[A-Z]{1,2}-[A-Z0-9]{1,4}|(?:DEF|PRE)[AM]?\s14[AC]"
              r"|\d{1,2}|[CD])(?:/A)?)(?![\w-])")
_COVER_FORM_RE = re.compile(r"\b(?i:form)\s+" + _FORM_NAME)
# The title itself, as a cover sets it: "FORM 10-Q" in capitals, or "Form 6-K" opening a line.
_FORM_TITLE_RE = re.compile(r"(?:\bFORM|(?:^|\n)\W{0,3}Form)\s+" + _FORM_NAME)
# A prospectus names the rule it is filed under ("Filed Pursuant to Rule 424(b)(4)"), EDGAR's form "424B4".
_PROSPECTUS_RULE_RE = re.compile(r"\bRule\s+424\s*\(\s*b\s*\)\s*\(\s*(\d)\s*\)", re.I)
_SCHEDULE_RE = re.compile(r"\bSCHEDULE\s+(13[DG])\b")  # beneficial-ownership reports, EDGAR's "SC 13D"/"SC 13G"
# An exhibit filed with a report (an 8-K's earnings release, a 10-K's list of subsidiaries) is headed by its
# number: EDGAR's document type "EX-99.1", "EX-21.1".
_EXHIBIT_HEAD_RE = re.compile(r"^\W*(?:\S+\s+){0,3}?EXHIBIT\s+(\d{1,3}(?:\.\d{1,3})?)\b", re.I)
_COVER_PERIOD_RE = re.compile(
    r"for\s+the\s+(?:fiscal\s+)?(?:year|quarterly\s+period|quarter|period)\s+end(?:ed|ing)\s*:?\s*(.{6,40})", re.I
)
_EXACT_NAME_RE = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)


def has_cover_title(head: str) -> bool:
    """Whether a document's first pages carry a filing's title: a form ("FORM 10-Q"), a schedule, the rule a
    prospectus is filed under, or an exhibit's heading."""
    return bool(_EXHIBIT_HEAD_RE.match(head[:300]) or _FORM_TITLE_RE.search(head) or _SCHEDULE_RE.search(head)
                or _PROSPECTUS_RULE_RE.search(head[:3000]))


def cover_form(head: str) -> str | None:
    """The form a document's first page says it is, or None."""
    if m := _EXHIBIT_HEAD_RE.match(head[:300]):
        return f"EX-{m.group(1)}"
    found = []
    if m := _PROSPECTUS_RULE_RE.search(head[:3000]):
        found.append((m.start(), f"424B{m.group(1)}"))
    if m := _SCHEDULE_RE.search(head):
        found.append((m.start(), f"SC {m.group(1)}"))
    if m := _COVER_FORM_RE.search(head):
        found.append((m.start(), re.sub(r"\s+", " ", m.group(1)).upper()))
    return min(found)[1] if found else None


def fill_from_cover(meta: dict, text: str, lines: str | None = None) -> None:
    """Fill what the XBRL did not give from the cover page: form, fiscal period end, registrant's exact name and
    trading symbol; for an earnings release, its quarter. meta["cover_fields"] lists the keys filled here. `lines`: the first pages with their line breaks, where
    the text joined them (a PDF's paragraphs)."""
    cover = text[:20000]
    lines = (lines or cover)[:20000]
    known = set(meta)
    if "form" not in meta and (form := cover_form(cover)):
        meta["form"] = form
    if "period_end" not in meta and (m := _COVER_PERIOD_RE.search(cover)):
        iso = read_date(m.group(1))
        if iso:
            meta["period_end"] = iso
    if str(meta.get("form", "")).startswith("EX-99"):
        _fill_from_release(meta, text, lines)
    if "fiscal_year" not in meta and "period_end" in meta:
        meta["fiscal_year"] = fiscal_year_from_period_end(meta["period_end"])
        meta["fiscal_year_source"] = "period_end"
    if "company" not in meta and (name := _registrant_name(lines)):
        meta["company"] = name
    if "ticker" not in meta and (ticker := trading_symbol(lines)):
        meta["ticker"] = ticker
    # Which keys are the cover's reading rather than a tag's or a header's: a caller's own metadata beats these.
    if guessed := sorted(set(meta) - known - {"fiscal_year_source", "fiscal_period_source"}):
        meta["cover_fields"] = guessed


# Cover lines that are not the registrant's name: the form's title, the file number, the report-type check boxes.
_NOT_A_NAME_RE = re.compile(
    r"^(?:form\b|commission\b|\(?mark\s+one|for\s+the\s+)|file\s+n(?:o|umber)|pursuant\s+to\s+section"
    r"|washington,\s+d\.?\s?c\.?|:$",
    re.I,
)
_FILE_NUMBER_LINE_RE = re.compile(r"commission\s+file\s+(?:number|no\b)[^\n]*\n", re.I)
_RULE_RE = re.compile(r"^[\s_=\-–—*]+|[\s_=\-–—*]+$")  # the rules drawn around a name on typed covers


def _name_line(line: str) -> str | None:
    line = re.split(r"_{3,}", line.split(" | ")[0])[-1]  # "Commission file number 1-234. ____ NAME" on one line
    line = _RULE_RE.sub("", line).strip(" ,|")
    if len(LETTER_RE.findall(line)) >= 3 and len(line) <= 120 and not _NOT_A_NAME_RE.search(line):
        return line
    return None


def _registrant_name(lines: str) -> str | None:
    """The name printed just above '(Exact name of registrant as specified in its charter)', or, on covers that
    print no such caption, the line right after the Commission File Number."""
    if m := _EXACT_NAME_RE.search(lines):
        before = lines[: m.start()]
        line_start = before.rfind("\n") + 1
        candidates = [before[line_start:]] + list(reversed(before[:line_start].splitlines()))[:6]
        return next((name for ln in candidates if (name := _name_line(ln))), None)
    if m := _FILE_NUMBER_LINE_RE.search(lines):
        following = [ln for ln in lines[m.end():].splitlines()[:3] if ln.strip()]
        return _name_line(following[0]) if following else None
    return None


# The national securities exchanges registered under Section 6 of the Exchange Act, as covers name them in the
# "Name of each exchange on which registered" column.
_EXCHANGE_RE = re.compile(
    r"(?:\bThe\s+)?\b(?:New\s+York\s+Stock\s+Exchange|NYSE|Nasdaq|NASDAQ|Cboe|CBOE|BATS|Investors\s+Exchange|IEX"
    r"|MIAX|Long[\s-]Term\s+Stock\s+Exchange|(?:American|Boston|Chicago|Pacific|Philadelphia)\s+Stock\s+Exchange)\b"
)
_SYMBOL_HEAD_RE = re.compile(r"trading\s+symbol\(?s?\)?", re.I)
_SYMBOL_RE = re.compile(r"^[A-Z]{1,5}(?:[.\-][A-Z0-9]{1,4})?$")
_TABLE_END_RE = re.compile(r"^\W*(?:indicate\s+by|securities\s+registered\s+pursuant\s+to\s+section\s+12)", re.I)
_COMMON_RE = re.compile(r"\b(?:common|ordinary)\b", re.I)


def trading_symbol(lines: str) -> str | None:
    """The ticker in the cover's "Title of each class | Trading Symbol(s) | Name of each exchange" table (on
    covers since 2019): in each row the symbol stands just before the exchange's name; of several classes, the
    first common (or ordinary) stock listed, else the first class."""
    head = _SYMBOL_HEAD_RE.search(lines)
    if not head:
        return None
    header_end = lines.find("\n", head.end())
    after = lines[header_end + 1 if header_end >= 0 else len(lines):].splitlines()[:12]
    # Some covers print the column captions under the row: "(Title of each class) (Trading symbol) (Name ...)".
    before = list(reversed(lines[: lines.rfind("\n", 0, head.start()) + 1].splitlines()[-4:]))
    rows = _symbol_rows(after) or _symbol_rows(before)[:1]
    if not rows:
        return None
    return next((sym for cls, sym in rows if _COMMON_RE.search(cls)), rows[0][1])


def _symbol_rows(lines: list[str]) -> list[tuple[str, str]]:
    """(class, symbol) of each row that names an exchange, until the table ends."""
    rows: list[tuple[str, str]] = []
    for row in lines:
        if _TABLE_END_RE.match(row):
            break
        exchange = _EXCHANGE_RE.search(row)
        if not exchange:
            continue
        before = row[: exchange.start()]
        tokens = [t for t in re.split(r"[\s|]+", before) if t]
        if tokens and _SYMBOL_RE.match(tokens[-1]) and len(tokens) > 1:
            rows.append((" ".join(tokens[:-1]), tokens[-1]))
    return rows


# A news release names its company with its listing: "Example Corporation [NYSE: XYZ]", "Example Inc. (Nasdaq: XYZ)".
_LISTED_NAME_RE = re.compile(
    r"([A-Z][\w.&'’-]*(?:\s+(?:[A-Z][\w.&'’-]*|&|of|and))*),?\s*[\[(]\s*(?:NYSE|Nasdaq|NASDAQ|Cboe|CBOE)"
    r"[A-Za-z ]*:\s*([A-Z]{1,5}(?:\.[A-Z])?)\s*[\])]"
)


def _fill_from_release(meta: dict, text: str, lines: str) -> None:
    """An earnings release (exhibit 99 to an 8-K or 6-K) has no cover: its company and ticker are where it names
    its listing, its quarter in its title, its period end atop its tables' "Quarter Ended" columns."""
    if m := _LISTED_NAME_RE.search(lines[:5000]):
        meta.setdefault("company", m.group(1))
        meta.setdefault("ticker", m.group(2))
    if "fiscal_period" not in meta and (named := release_period(text)):
        meta["fiscal_period"], meta["fiscal_period_source"] = named[0], FP_RELEASE
        if "fiscal_year" not in meta:
            meta["fiscal_year"], meta["fiscal_year_source"] = named[1], FP_RELEASE
    if "period_end" not in meta and (iso := release_period_end(text)):
        meta["period_end"] = iso
