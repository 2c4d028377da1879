"""Calendar words and fiscal-year rules shared by the parser, the question plan and the answer checks.

Imports nothing from rag: every stage that reads a date in filing text or in a question uses these, so a month
spelled one way is read the same way everywhere.
"""

from __future__ import annotations

import datetime as _dt
import re

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")

# A month as filings and analysts spell it: full, abbreviated ("Sept", "Dec") or with a period ("Dec.").
MONTH_PATTERN = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
                 r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")

_MONTH_BY_PREFIX = {m[:3]: i + 1 for i, m in enumerate(MONTHS)}
# A month as one word, spelt out or abbreviated ("december", "dec", "sept"): a date's word, never a name or a
# figure's qualifier.
MONTH_WORDS = frozenset(MONTHS) | frozenset(_MONTH_BY_PREFIX) | {"sept"}

# "June 28, 2025" / "June 28 2025", the way covers and questions name a period end.
MONTH_DAY_YEAR = re.compile(r"\b(" + MONTH_PATTERN + r")\.?\s+(\d{1,2}),?\s+((?:19|20)\d{2})\b", re.IGNORECASE)


# A fiscal year as written in a question or an answer: "FY24", "fiscal 2024", "fiscal year '24", or a bare "2024".
# "FY24", "fiscal 2024", "YE24" (the year end an analyst reads a balance at), or a year written out.
FISCAL_YEAR_MENTION = re.compile(r"\b(?:fy|ye|fiscal(?:\s+year)?)\s*'?(\d{2}|\d{4})\b|\b((?:19|20)\d{2})\b", re.IGNORECASE)


def mentioned_year(match: re.Match) -> int:
    """The four-digit year of a FISCAL_YEAR_MENTION match ("FY24" -> 2024)."""
    raw = match.group(1) or match.group(2)
    return int(raw) + (2000 if len(raw) == 2 else 0)


def month_number(name: str) -> int | None:
    """1-12 for a month name or abbreviation ("Sept" -> 9), None for anything else."""
    return _MONTH_BY_PREFIX.get(name.strip(". ").lower()[:3])


def iso_date(year: int | str, month: int | str | None, day: int | str) -> str | None:
    """'2025-06-28', or None when the parts do not make a real date."""
    try:
        return _dt.date(int(year), int(month or 0), int(day)).isoformat()
    except (TypeError, ValueError):
        return None


def dates_named(text: str) -> list[tuple[int, int, str]]:
    """(start, end, ISO date) for every "Month day, year" in the text, in order."""
    out = []
    for m in MONTH_DAY_YEAR.finditer(text):
        iso = iso_date(m.group(3), month_number(m.group(1)), m.group(2))
        if iso:
            out.append((m.start(), m.end(), iso))
    return out


def fiscal_year_from_period_end(period_end: str) -> int:
    """The fiscal year when no dei:DocumentFiscalYearFocus says it: the year the period ends in, except a 52/53-week
    year that ends in the first week of January (one filer's fiscal 2022 ended 2023-01-01), which is named
    for the year it ran through. Callers mark it fiscal_year_source="period_end": a fallback, not the company's
    own label."""
    year, month, day = int(period_end[:4]), int(period_end[5:7]), int(period_end[8:10])
    return year - 1 if month == 1 and day <= 7 else year


def fiscal_years_named(text: str, filings: list[dict]) -> list[int]:
    """Fiscal years a text names, dates first: a period-end date names the fiscal year of the filing whose period
    ends then (else its calendar year), then every FISCAL_YEAR_MENTION. `filings` are dicts with period_end and
    fiscal_year."""
    out = []
    for _start, _end, iso in dates_named(text):
        hit = [f for f in filings if f.get("period_end") == iso and f.get("fiscal_year")]
        out.append(int(hit[0]["fiscal_year"]) if hit else int(iso[:4]))
    out.extend(mentioned_year(m) for m in FISCAL_YEAR_MENTION.finditer(text))
    return out
