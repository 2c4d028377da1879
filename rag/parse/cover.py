"""Metadata read from the filing's own words: dates in the spellings filings use, and what the cover page says
(form, fiscal period end, the registrant's exact name) where the XBRL did not say it."""

from __future__ import annotations

import re

from ..dates import fiscal_year_from_period_end, iso_date, month_number
from .builder import WS_RE
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


_COVER_FORM_RE = re.compile(r"\bFORM\s+(10-K(?:405|SB|T)?(?:/A)?|10-Q(?:SB)?(?:/A)?|20-F|40-F|8-K)\b", re.I)
_COVER_PERIOD_RE = re.compile(
    r"for\s+the\s+(?:fiscal\s+)?(?:year|quarterly\s+period|quarter|period)\s+end(?:ed|ing)\s*:?\s*(.{6,40})", re.I
)
_EXACT_NAME_RE = re.compile(r"\(?\s*exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)


def fill_from_cover(meta: dict, text: str) -> None:
    """Fill what the XBRL did not give from the cover page: form, fiscal period end, registrant's exact name."""
    cover = text[:20000]
    if "form" not in meta and (m := _COVER_FORM_RE.search(cover)):
        meta["form"] = m.group(1).upper()
    if "period_end" not in meta and (m := _COVER_PERIOD_RE.search(cover)):
        iso = read_date(m.group(1))
        if iso:
            meta["period_end"] = iso
    if "fiscal_year" not in meta and "period_end" in meta:
        meta["fiscal_year"] = fiscal_year_from_period_end(meta["period_end"])
        meta["fiscal_year_source"] = "period_end"
    if "company" not in meta and (m := _EXACT_NAME_RE.search(cover)):
        name = _registrant_name(cover[: m.start()])
        if name:
            meta["company"] = name


def _registrant_name(before: str) -> str | None:
    """The name printed just above '(Exact name of registrant as specified in its charter)'."""
    line_start = before.rfind("\n") + 1
    same_line = before[line_start:].strip(" |")
    lines = [same_line] if len(LETTER_RE.findall(same_line)) >= 3 else []
    lines += [ln.strip(" |") for ln in reversed(before[:line_start].splitlines())]
    for line in lines[:6]:
        line = line.split(" | ")[0].strip(" ,|")
        if len(LETTER_RE.findall(line)) >= 3 and len(line) <= 120 and not line.lower().startswith("commission"):
            return line
    return None
