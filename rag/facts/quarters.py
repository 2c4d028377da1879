"""Quarters and years to date: read from 10-Qs, and fourth quarters computed from the 10-K and the third-quarter
10-Q (a fourth quarter is not filed on its own).

A 10-Q prints the quarter (three months) beside the year to date (six or nine months), each beside the same period
a year earlier. A figure is read only from the column of the length asked, so a quarter is never answered with a
year-to-date figure or the other way round. A mixin of FactsLayer: it uses the layer's filings(), view(),
annual_filings() and resolve().
"""

from __future__ import annotations

import re

from .labels import days_between
from .metrics import Metric, metric
from .views import FilingView, Unresolved, Value, When, combine, source_label, stamp

QUARTERLY_FORMS = ("10-Q", "10-Q/A")


def quarter_of(filing: dict) -> int | None:
    """The fiscal quarter (1-3) a quarterly report covers, from its dei:DocumentFiscalPeriodFocus."""
    if (filing.get("form") or "").upper() not in QUARTERLY_FORMS:
        return None
    period = str(filing.get("fiscal_period") or "").upper()
    return int(period[1]) if period in ("Q1", "Q2", "Q3") else None


class QuarterFacts:
    """Finding quarterly filings and reading quarters, years to date and computed fourth quarters."""

    def quarterly_filings(self, ticker: str) -> dict[tuple[int, int], dict]:
        """(fiscal year, quarter 1-3) -> the 10-Q of that quarter (the one with most facts when there are several)."""
        out: dict[tuple[int, int], dict] = {}
        for f in self.filings(ticker):
            q = quarter_of(f)
            if q is None or f.get("fiscal_year") is None:
                continue
            key = (int(f["fiscal_year"]), q)
            if key not in out or (f.get("fact_count") or 0) > (out[key].get("fact_count") or 0):
                out[key] = f
        return out

    def quarters_held(self, ticker: str) -> list[tuple[int, int]]:
        """Every (fiscal year, quarter) the indexed filings give a three-month figure for, newest first: each
        10-Q's own quarter, and a fourth quarter where the 10-K and the third-quarter 10-Q of its year are both
        indexed."""
        held = set(self.quarterly_filings(ticker))
        annual = self.annual_filings(ticker)
        held |= {(fy, 4) for fy, q in list(held) if q == 3 and fy in annual}
        return sorted(held, reverse=True)

    def latest_year_of(self, ticker: str, quarter: int | None) -> int | None:
        """The newest fiscal year whose filing of that quarter is indexed (a fourth quarter: both its filings)."""
        years = [fy for fy, q in self.quarters_held(ticker) if q == quarter] if quarter else \
            sorted(self.annual_filings(ticker), reverse=True)
        return years[0] if years else None

    def locate_quarter(self, ticker: str, year: int, when: When) -> tuple[FilingView, int, bool, int]:
        """The 10-Q to read a quarter or year to date from, how many years back in it (its prior-year column),
        whether that column stands in for an unindexed 10-Q, and the length to read."""
        filings = self.quarterly_filings(ticker)
        own = filings.get((year, when.quarter))
        if own is not None:
            return self.view(own), when.back, False, when.months
        later = filings.get((year + 1, when.quarter))
        if when.borrow and not when.back and later is not None:
            return self.view(later), 1, True, when.months
        raise Unresolved(f"no Q{when.quarter} FY{year} 10-Q of {ticker}")

    @staticmethod
    def computed_fourth_quarter(m: Metric, when: When | None) -> bool:
        """A fourth quarter's flow (income, cash flow) is the fiscal year minus the nine months; its balance-sheet
        figures are the 10-K's year-end ones, read as they are."""
        return when is not None and when.quarter == 4 and when.months == 3 and m.period == "duration"

    def fourth_quarter(self, m: Metric, ticker: str, year: int, mention, when: When) -> Value:
        """Q4 = the fiscal year (10-K) minus the nine months (third-quarter 10-Q), both filings indexed; both
        inputs are cited. Only for amounts: per-share figures, share counts and rates do not subtract."""
        if m.kind != "money":
            raise Unresolved(f"a fourth-quarter {m.label} cannot be computed: only amounts subtract")
        if year not in self.annual_filings(ticker) or (year, 3) not in self.quarterly_filings(ticker):
            raise Unresolved(f"Q4 FY{year} of {ticker} needs the FY{year} 10-K and the Q3 FY{year} 10-Q")
        whole = self.resolve(m, ticker, year, mention, When(None, 12, when.back))
        if whole.kind != "money":  # a line named by its printed label is per share by its unit, not its metric
            raise Unresolved(f"a fourth-quarter {m.label} cannot be computed: only amounts subtract")
        nine = self.resolve(m, ticker, year, mention, When(3, 9, when.back, borrow=False))
        if whole.comparative and not when.back:
            raise Unresolved(f"the FY{year} figure is not the 10-K's own")
        start_gap = days_between(nine.period_start, whole.period_start)
        tail = days_between(nine.period_end, whole.period_end)
        if start_gap is None or abs(start_gap) > 7 or tail is None or not 84 <= tail <= 98:
            raise Unresolved("the nine months and the fiscal year do not line up")
        out = combine(m, "sub", whole, nine)
        if out is None:
            raise Unresolved("the fiscal year and the nine months cannot be combined")
        out.fiscal_year = year - when.back
        if whole.member and _same_part(whole.member, nine.member):
            # A part's fourth quarter (a product line's) is labelled with the part, as its year and nine months are; the
            # 10-K and the 10-Q may print its name apart by a trademark sign ("Widget", "Widget®").
            out.member, out.member_axis = whole.member, whole.member_axis
        return stamp(out, When(4, 3, when.back))

    def quarter_history(self, tickers, metric_keys) -> list[dict]:
        """Long-format rows of three-month figures per (fiscal year, quarter) over the indexed 10-Qs, with the
        fourth quarters that can be computed (marked): for the Financials page."""
        rows = []
        for t in [t.upper() for t in tickers]:
            for key in metric_keys:
                m = metric(key)
                for fy, q in sorted(self.quarters_held(t)):
                    try:
                        v = self.resolve(m, t, fy, None, When(q, 3, borrow=False))
                    except Unresolved:
                        continue
                    row = v.to_dict()
                    row["computed_q4"] = q == 4 and m.period == "duration"
                    row["source"] = source_label(v)
                    row["inputs"] = [] if v.reported else [
                        {**leaf.to_dict(), "source": source_label(leaf)} for leaf in v.reported_leaves()]
                    rows.append(row)
        return rows


def _same_part(a: str | None, b: str | None) -> bool:
    """Two members' printed names name the same part, trademark signs and case aside."""
    def bare(name: str | None) -> str:
        return re.sub(r"[®™©\s]+", " ", name or "").strip().lower()
    return bool(bare(a)) and bare(a) == bare(b)
