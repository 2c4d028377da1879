"""Fiscal periods in a question: quarters, halves, year-to-date and trailing periods, and the latest quarters.

Analysts name quarters many ways: "Q2 2025", "FY2025 Q2", "second quarter of fiscal 2027", "fiscal Q3", "the
three months ended June 30, 2025", "the quarter ended August 9, 2025", "first half", "six / nine months ended",
"year to date", "trailing twelve months", "the latest quarter", "the last four quarters", "Q1 to Q3". Every one
is fiscal, not calendar: a year written next to a quarter is the company's fiscal year, and a period-end date
names the indexed filing whose period ends then (its own fiscal year and quarter). Imports nothing above the
bottom modules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .dates import MONTH_PATTERN, dates_named, month_number
from .schema import PeriodAsk

_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_LENGTHS = {"three": 3, "3": 3, "six": 6, "6": 6, "nine": 9, "9": 9, "twelve": 12, "12": 12}
# A period's length as a column head spells it ("Nine Months Ended").
MONTH_COUNTS = {word: months for word, months in _LENGTHS.items() if word.isalpha()}
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8}

# A fiscal year written next to a quarter: "2025", "FY2025", "FY25", "fiscal 2025", "fiscal year 2025", "'25".
_YEAR = r"(?:(?:of\s+|in\s+)?(?:the\s+)?(?:fiscal\s+(?:year\s+)?|fy\s*'?)?((?:19|20)\d{2}|'\d{2}|(?<=fy)\d{2}))"
_QUARTER_CODE = re.compile(r"\b(?:(fy\s*'?\d{2,4}|(?:19|20)\d{2})\s*)?q([1-4])\b(?:\s*" + _YEAR + r")?")
_QUARTER_WORDS = re.compile(
    r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\b(?:\s*" + _YEAR + r")?")
_QUARTER_RANGE = re.compile(r"\bq([1-4])\s*(?:to|through|-|–)\s*q([1-4])\b(?:\s*" + _YEAR + r")?")
_PERIOD_ENDED = re.compile(
    r"\b(?:(three|six|nine|twelve|3|6|9|12)[\s-]+months?|(quarter|half|year))\s+(?:period\s+)?end(?:ed|ing)\s+")
# A quarter named by the month it ends in: "the June 2025 quarter", "the quarter ended (in) June 2025".
_MONTH_QUARTER = re.compile(
    r"\b(?:(" + MONTH_PATTERN + r")\.?\s+((?:19|20)\d{2})\s+(?:fiscal\s+)?quarter"
    r"|quarter\s+(?:period\s+)?end(?:ed|ing)\s+(?:in\s+)?(" + MONTH_PATTERN + r")\.?\s+((?:19|20)\d{2}))\b")
# A fiscal quarter named by the month it ends in, with the fiscal year after it or none: "the June quarter of fiscal
# 2025", "the December quarter" (how some companies and their analysts name quarters).
_MONTH_NAMED_QUARTER = re.compile(r"\b(" + MONTH_PATTERN + r")\s+(?:fiscal\s+)?quarter\b(?:\s*" + _YEAR + r")?")
_HALF = re.compile(r"\b(first|1st)\s+half\b(?:\s*" + _YEAR + r")?")
_FIRST_MONTHS = re.compile(r"\bfirst\s+(six|nine|6|9)\s+months\b(?:\s*" + _YEAR + r")?")
_YEAR_TO_DATE = re.compile(r"\byear[\s-]to[\s-]date\b|\bytd\b")
_TRAILING = re.compile(r"\b(?:trailing|last)\s+(?:twelve|12)\s+months\b|\bttm\b|\bltm\b")
# "Q2 alone, not year to date", "rather than the first half": a period the question sets aside is not asked for.
_SET_ASIDE = re.compile(r"(?:\bnot|n't|\brather\s+than|\binstead\s+of|\bas\s+opposed\s+to|\bexcluding|\bexcept|\bversus|"
                        r"\bvs\.?)\s+(?:the\s+|a\s+|its\s+|their\s+|for\s+the\s+)?$")
_LATEST_QUARTERS = re.compile(
    r"\b(?:latest|most\s+recent|last|past|previous|trailing|recent)\s+(?:(two|three|four|five|six|eight|\d)\s+)?"
    r"(?:fiscal\s+)?quarters?\b")


@dataclass
class PeriodReading:
    periods: list[PeriodAsk] = field(default_factory=list)
    latest_quarters: int = 0
    # Where the period words sit in the question (those set aside included): they choose a filter, not a topic.
    spans: list[tuple[int, int]] = field(default_factory=list)


def read_periods(low: str, filings: list[dict]) -> PeriodReading:
    """The fiscal periods a lower-case question asks about. `filings` are the indexed filings (dicts with
    period_end, fiscal_year, fiscal_period) that a period-end date is matched against."""
    out = PeriodReading()
    taken: list[tuple[int, int]] = []

    def free(m: re.Match) -> bool:
        return not any(s < m.end() and m.start() < e for s, e in taken)

    def add(period: PeriodAsk, m: re.Match) -> None:
        taken.append(m.span())
        if _SET_ASIDE.search(low, 0, m.start()):
            return
        if period not in out.periods:
            out.periods.append(period)

    for m in _QUARTER_RANGE.finditer(low):
        first, last = sorted((int(m.group(1)), int(m.group(2))))
        year = _year(m.group(3))
        for q in range(first, last + 1):
            add(PeriodAsk(q, year), m)
    for m in _QUARTER_CODE.finditer(low):
        if free(m):
            add(PeriodAsk(int(m.group(2)), _year(m.group(1)) or _year(m.group(3))), m)
    for m in _QUARTER_WORDS.finditer(low):
        if free(m):
            add(PeriodAsk(_ORDINALS[m.group(1)], _year(m.group(2))), m)
    for m in _HALF.finditer(low):
        if free(m):
            add(PeriodAsk(2, _year(m.group(2)), months=6), m)
    for m in _FIRST_MONTHS.finditer(low):
        if free(m):
            months = _LENGTHS[m.group(1)]
            add(PeriodAsk(months // 3, _year(m.group(2)), months=months), m)
    _periods_ended(low, filings, out, add, free)
    for m in _MONTH_QUARTER.finditer(low):
        month, year = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        filing = next((f for f in filings if str(f.get("period_end") or "").startswith(
            f"{year}-{month_number(month):02d}") and _quarter_of(f) in (1, 2, 3)), None)
        if filing is not None and free(m):  # the indexed 10-Q whose quarter ends in that month
            add(PeriodAsk(_quarter_of(filing), int(filing["fiscal_year"])), m)
    for m in _MONTH_NAMED_QUARTER.finditer(low):
        quarter = _quarter_ending_in(month_number(m.group(1)), filings)
        if quarter is not None and free(m):
            add(PeriodAsk(quarter, _year(m.group(2))), m)
    _year_to_date_and_trailing(low, out, taken)
    if not out.periods:
        m = _LATEST_QUARTERS.search(low)
        if m:
            count = m.group(1)
            out.latest_quarters = int(count) if count and count.isdigit() else _NUMBER_WORDS.get(count or "", 1)
            taken.append(m.span())
    out.spans = sorted(taken)
    return out


def _periods_ended(low: str, filings: list[dict], out: PeriodReading, add, free) -> None:
    """"the three months ended June 21, 2025", "the quarter ended August 9, 2025", "six months ending ...": the
    filing whose period ends on that date gives the fiscal year and quarter; the words give the length."""
    dates = dates_named(low)
    for m in _PERIOD_ENDED.finditer(low):
        date = next(((s, e, iso) for s, e, iso in dates if s == m.end()), None)
        if date is None or not free(m):
            continue
        months = _LENGTHS.get(m.group(1) or "", 0) or {"quarter": 3, "half": 6, "year": 12}[m.group(2)]
        if months == 12:
            continue  # a fiscal year ended on a date: the fiscal-year reading of the question has it
        filing = next((f for f in filings if f.get("period_end") == date[2] and f.get("fiscal_year")), None)
        quarter = _quarter_of(filing) if filing else None
        if quarter is None and months in (6, 9):
            quarter = months // 3  # a year-to-date length names the quarter whose 10-Q prints it
        year = int(filing["fiscal_year"]) if filing else None
        closing = None if filing else _quarter_closing_on(date[2], filings)
        if closing and (months == 3 or closing[0] == months // 3):
            # No indexed report ends then: the companies' fiscal calendar still says which quarter of which fiscal
            # year closes on that date, so the answer can say that report is missing instead of reading the
            # fiscal year's annual report as if it were the quarter.
            quarter, year = closing
        add(PeriodAsk(quarter, year, months=months), m)


def _year_to_date_and_trailing(low: str, out: PeriodReading, taken: list[tuple[int, int]]) -> None:
    """"year to date" turns a named quarter into its year-to-date length; "trailing twelve months" into the year
    that ends with it (the latest quarter when none is named)."""
    ytd = _YEAR_TO_DATE.search(low)
    if ytd:
        taken.append(ytd.span())
    if ytd and not _SET_ASIDE.search(low, 0, ytd.start()):
        out.periods = [PeriodAsk(p.quarter, p.fiscal_year, months=3 * p.quarter) if p.quarter in (1, 2, 3) else p
                       for p in out.periods] or out.periods
        if not out.periods:
            out.latest_quarters = 1
    trailing = _TRAILING.search(low)
    if trailing:
        taken.append(trailing.span())
    if trailing and not _SET_ASIDE.search(low, 0, trailing.start()):
        if out.periods:
            out.periods = [PeriodAsk(p.quarter, p.fiscal_year, months=12, trailing=True) for p in out.periods]
        else:
            out.periods = [PeriodAsk(None, None, months=12, trailing=True)]


def _closing_month(iso: str) -> tuple[int, int]:
    """(year, month) a period ending on the date closes: a 52/53-week period that ends in a month's first week
    closes the month before (a fiscal year ended February 2, 2025 is a January year)."""
    year, month, day = int(iso[:4]), int(iso[5:7]), int(iso[8:10])
    if day <= 7:
        month -= 1
    return (year - 1, 12) if month == 0 else (year, month)


def _year_ends(filings: list[dict]) -> set[tuple[int, int]]:
    """The companies' fiscal year-ends, read from their annual reports: (the month the year closes in, the fiscal
    year's number less that month's calendar year), 0 for most filers, -1 for a retailer whose fiscal 2024 closes in
    January 2025."""
    ends = set()
    for f in filings:
        end = str(f.get("period_end") or "")
        if _quarter_of(f) == 4 and re.fullmatch(r"\d{4}-\d{2}-\d{2}", end) and f.get("fiscal_year"):
            year, month = _closing_month(end)
            ends.add((month, int(f["fiscal_year"]) - year))
    return ends


def _quarter_ending_in(month: int, filings: list[dict]) -> int | None:
    """The fiscal quarter that ends in `month`, by the fiscal year-end month of the companies asked about; None when
    they hold no annual report or their years end in different months."""
    ends = {closing for closing, _offset in _year_ends(filings)}
    if len(ends) != 1:
        return None
    months_after = (month - ends.pop() - 1) % 12  # 0 for the first month of the fiscal year
    return months_after // 3 + 1 if months_after % 3 == 2 else None


def _quarter_closing_on(iso: str, filings: list[dict]) -> tuple[int, int] | None:
    """(fiscal quarter, fiscal year) of a quarter that ends on the date, by the fiscal calendar of the companies
    asked about; None when they hold no annual report, their calendars differ, or no quarter closes that month."""
    ends = _year_ends(filings)
    if len(ends) != 1:
        return None
    closes, offset = ends.pop()
    year, month = _closing_month(iso)
    months_after = (month - closes - 1) % 12
    if months_after % 3 != 2:
        return None
    return months_after // 3 + 1, (year if month <= closes else year + 1) + offset


def fiscal_year_of_date(iso: str, filings: list[dict], tickers: list[str]) -> int:
    """The fiscal year a date names: that of an indexed filing whose period ends on it (one of the companies named,
    when the question names any); else, in the named companies' own fiscal calendar, the fiscal year that closes in
    the date's month (a retailer's fiscal 2024 closes in January 2025; a 52/53-week year ends a few days off the
    month's end); else the date's calendar year."""
    named = [f for f in filings if str(f.get("ticker") or "").upper() in tickers]
    exact = [f for f in named or filings if f.get("period_end") == iso and f.get("fiscal_year")]
    if exact:
        return int(exact[0]["fiscal_year"])
    year, month = _closing_month(iso)
    offsets = {offset for closes, offset in _year_ends(named) if closes == month}
    return year + offsets.pop() if len(offsets) == 1 else int(iso[:4])


def _quarter_of(filing: dict) -> int | None:
    period = str(filing.get("fiscal_period") or "").upper()
    if period in ("Q1", "Q2", "Q3", "Q4"):
        return int(period[1])
    if period == "FY" or str(filing.get("form") or "").upper().startswith("10-K"):
        return 4
    return None


def _year(raw: str | None) -> int | None:
    """'2025' / "'25" / 'fy25' / 'fy 2025' -> 2025."""
    if not raw:
        return None
    digits = re.sub(r"\D", "", raw)
    if len(digits) == 2:
        return 2000 + int(digits)
    return int(digits) if len(digits) == 4 else None
