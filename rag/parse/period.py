"""The fiscal period a filing covers (Q1, Q2, Q3 or FY) where no dei:DocumentFiscalPeriodFocus says it, and the
fiscal year a quarter belongs to: the year its fiscal year ends in, which for a company whose year ends in January
is the calendar year after most of its quarters."""

from __future__ import annotations

import datetime as _dt
import re

from ..dates import MONTH_DAY_YEAR, fiscal_year_from_period_end, iso_date, month_number

# fiscal_period_source values: how the period was found.
FP_DEI = "dei:DocumentFiscalPeriodFocus"
FP_FORM = "form"  # an annual report (10-K, 20-F, 40-F) covers the fiscal year by definition
FP_STATEMENTS = "statement_periods"  # the longest "N months ended" column of a 10-Q's statements
FP_FISCAL_YEAR_END = "fiscal_year_end"  # months from the last fiscal year end to the period end
FP_RELEASE = "release_title"  # an earnings release's "First Quarter 2023 Results"
FP_CALLER = "caller"
FY_FROM_FISCAL_PERIOD = "fiscal_period"  # fiscal_year_source: the year the quarter's fiscal year ends in

FISCAL_PERIODS = ("Q1", "Q2", "Q3", "FY")

# Annual reports: the SEC's 10-K family and the foreign private issuer's 20-F and 40-F.
_ANNUAL_FORM_RE = re.compile(r"^(?:10-K(?:405|SB)?|20-F|40-F)(?:/A)?$")
_QUARTERLY_FORM_RE = re.compile(r"^10-Q(?:SB)?(?:/A)?$")

_NUMBER_WORDS = {"three": 3, "six": 6, "nine": 9, "twelve": 12, "thirteen": 13, "sixteen": 16,
                 "twenty-four": 24, "twenty-six": 26, "twenty-eight": 28, "thirty-six": 36, "thirty-nine": 39,
                 "forty": 40}
_NUMBER = r"(?:\d{1,2}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)).replace("-", r"[\s-]") + ")"
# "Three Months Ended", "Three and Six Months Ended", "26 Weeks Ended", "Thirty-Nine Weeks Ending"
_DURATION_RE = re.compile(
    rf"\b({_NUMBER})(?:[\s-]+(?:months?|weeks?))?(?:\s*(?:and|&)\s*({_NUMBER}))?[\s-]+(months?|weeks?)"
    rf"\s+(?:period\s+)?end(?:ed|ing)\b",
    re.I,
)
_FISCAL_YEAR_ENDED_RE = re.compile(r"fiscal\s+year\s+end(?:ed|ing)\s*(?:on\s+)?", re.I)
# An earnings release names its quarter in its title: "Reports First Quarter 2023 Financial Results",
# "Fiscal 2024 Second Quarter Results", "Fourth Quarter and Full Year 2023".
_ORDINAL = {"first": "Q1", "second": "Q2", "third": "Q3", "fourth": "FY"}
_RELEASE_QUARTER_RE = re.compile(
    r"\b(?:(first|second|third|fourth)\s+quarter(?:\s+(?:and\s+)?(?:full[\s-]+year|fiscal(?:\s+year)?))*"
    r"\s+(?:of\s+)?(?:fiscal\s+(?:year\s+)?)?((?:19|20)\d{2})"
    r"|fiscal\s+(?:year\s+)?((?:19|20)\d{2})\s+(first|second|third|fourth)\s+quarter)\b",
    re.I,
)
_QUARTER_ENDED_RE = re.compile(r"\b(?:quarters?|three\s+months|13\s+weeks)\s+end(?:ed|ing)\b", re.I)


def _number(word: str) -> int:
    word = re.sub(r"[\s-]+", "-", word.lower())
    return int(word) if word.isdigit() else _NUMBER_WORDS.get(word, 0)


def _quarters(count: int, unit: str) -> int | None:
    """3/6/9 months or 12-16/24-28/36-40 weeks (13-week quarters and the 12/16-week ones of some retailers) ->
    the number of quarters elapsed; None for a year or anything else."""
    if unit.lower().startswith("month"):
        return {3: 1, 6: 2, 9: 3}.get(count)
    quarters = round(count / 13)
    return quarters if 1 <= quarters <= 3 and abs(count - 13 * quarters) <= 4 else None


def quarter_from_statements(text: str) -> int | None:
    """A 10-Q's quarter from its statements' own columns: the first quarter prints only "Three Months Ended",
    the second adds "Six Months Ended", the third "Nine Months Ended". The longest year-to-date column that recurs
    (two mentions at least, and a quarter as many as the three-month columns) wins, so a stray
    "six months ended" in a note does not move a first quarter."""
    counts: dict[int, int] = {}
    for m in _DURATION_RE.finditer(text):
        for group in (m.group(1), m.group(2)):
            if group and (q := _quarters(_number(group), m.group(3))):
                counts[q] = counts.get(q, 0) + 1
    if not counts:
        return None
    floor = max(2, counts.get(1, 0) // 4)
    for q in (3, 2):
        if counts.get(q, 0) >= floor:
            return q
    return 1 if counts.get(1) else None


def _add_months(iso: str, months: int) -> str:
    year, month, day = int(iso[:4]), int(iso[5:7]), int(iso[8:10])
    month += months
    year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
    return _dt.date(year, month, min(day, 28 if month == 2 else 30 if month in (4, 6, 9, 11) else 31)).isoformat()


def quarter_from_fiscal_year_end(period_end: str, month: int, day: int) -> int | None:
    """The quarter a period end falls in, counted from the fiscal year end (month, day) before it: 3, 6 or 9
    months on, within a week or two (52/53-week years end on a weekday, not a date)."""
    end = _dt.date.fromisoformat(period_end)
    for year in (end.year, end.year - 1):
        try:
            fye = _dt.date(year, month, min(day, 28) if month == 2 else day)
        except ValueError:
            return None
        if fye < end:
            break
    days = (end - fye).days
    quarters = round(days / 91.3)
    return quarters if 1 <= quarters <= 3 and abs(days - 91.3 * quarters) <= 20 else None


def fiscal_year_end_named(text: str, period_end: str) -> tuple[int, int] | None:
    """(month, day) of the latest "fiscal year ended <date>" a 10-Q names before its period end (its notes point
    at the last annual report: "...in our Form 10-K for the fiscal year ended December 2, 2022")."""
    best = None
    for m in _FISCAL_YEAR_ENDED_RE.finditer(text):
        date = MONTH_DAY_YEAR.match(text, m.end())
        if not date:
            continue
        iso = iso_date(date.group(3), month_number(date.group(1)), date.group(2))
        if iso and iso < period_end and (best is None or iso > best):
            best = iso
    return (int(best[5:7]), int(best[8:10])) if best else None


def fiscal_year_of_quarter(period_end: str, quarter: int) -> int:
    """The fiscal year a quarter belongs to: the year its fiscal year ends in (the quarter's end moved on by the
    quarters still to come), by the rule of rag.dates.fiscal_year_from_period_end."""
    return fiscal_year_from_period_end(_add_months(period_end, 3 * (4 - quarter)))


def release_period(text: str) -> tuple[str, int] | None:
    """(fiscal period, fiscal year) an earnings release names in its first lines: "First Quarter 2023" ->
    ("Q1", 2023); a fourth-quarter release reports the full year -> ("FY", year)."""
    m = _RELEASE_QUARTER_RE.search(text[:3000])
    if not m:
        return None
    ordinal, year = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    return _ORDINAL[ordinal.lower()], int(year)


def release_period_end(text: str) -> str | None:
    """The date an earnings release's tables most often name first after "Quarter(s) Ended" / "Three Months
    Ended" (the first one seen wins a tie). Most of the time, not once: heads stacked over two columns
    ("Quarters Ended March 31, March 30, 2031 2030", invented) read as prose pair the second day with the year."""
    seen: dict[str, int] = {}
    for m in _QUARTER_ENDED_RE.finditer(text[:60000]):
        date = MONTH_DAY_YEAR.search(text, m.end(), m.end() + 80)
        if date and (iso := iso_date(date.group(3), month_number(date.group(1)), date.group(2))):
            seen[iso] = seen.get(iso, 0) + 1
    return max(seen, key=seen.get) if seen else None


def fill_fiscal_period(meta: dict, text: str, fiscal_year_end: str | None = None) -> None:
    """Set fiscal_period (and its source) where the XBRL did not, from the form and the text; for a quarter, set
    the fiscal year to the year its fiscal year ends in unless the company's own dei: label gave it.
    fiscal_year_end: "MMDD" as an EDGAR header states it, when there is one."""
    if meta.get("fiscal_period"):
        return
    form = str(meta.get("form") or "").upper()
    if _ANNUAL_FORM_RE.match(form):
        meta["fiscal_period"], meta["fiscal_period_source"] = "FY", FP_FORM
        return
    period_end = meta.get("period_end")
    if not (_QUARTERLY_FORM_RE.match(form) and period_end):
        return
    quarter, source = quarter_from_statements(text), FP_STATEMENTS
    if quarter is None:
        source = FP_FISCAL_YEAR_END
        fye = None
        if fiscal_year_end and re.fullmatch(r"\d{4}", fiscal_year_end):
            fye = int(fiscal_year_end[:2]), int(fiscal_year_end[2:])
        fye = fye or fiscal_year_end_named(text, period_end)
        quarter = quarter_from_fiscal_year_end(period_end, *fye) if fye else None
    if quarter is None:
        return
    meta["fiscal_period"], meta["fiscal_period_source"] = f"Q{quarter}", source
    if meta.get("fiscal_year_source") in (None, "period_end"):
        meta["fiscal_year"] = fiscal_year_of_quarter(period_end, quarter)
        meta["fiscal_year_source"] = FY_FROM_FISCAL_PERIOD
