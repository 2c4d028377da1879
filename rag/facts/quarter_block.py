"""The facts block for quarters and years to date: each line names its period in words ("the three months ended
June 28, 2025 (Q3 FY2025)"), a computed fourth quarter shows both filings it comes from, and quarter growth says
what it is measured against (the same quarter a year earlier, or the previous quarter)."""

from __future__ import annotations

import re

from ..schema import MetricMention, QuestionPlan
from .labels import MONTHS_WORDS, lower_label, nice_date
from .metrics import metric
from .render import FactAnswer, FactsBlock
from .views import Unresolved, Value, When, combine, period_name

_YEAR_TO_DATE = re.compile(r"\byear[\s-]to[\s-]date\b|\bytd\b")
Slot = tuple[int, When]  # (fiscal year, the part of it asked)


class QuarterBlock(FactsBlock):
    """FactsBlock over (fiscal year, When) slots instead of fiscal years."""

    def _get(self, spec: MetricMention, ticker: str, slot: Slot) -> Value | None:  # type: ignore[override]
        year, when = slot
        try:
            v = self.layer.resolve(metric(spec.metric_key), ticker, year, spec, when)
        except Unresolved as exc:
            self.missing.append(f"{ticker} {period_name(year, when)} {metric(spec.metric_key).label}: {exc}")
            return None
        self.values.append(v)
        for leaf in [v] + v.reported_leaves():
            if leaf.comparative and not when.back and leaf.quarter in (1, 2, 3):
                f = leaf.filing
                note = (f"No {period_name(leaf.fiscal_year, When(leaf.quarter))} 10-Q of {leaf.ticker} is indexed: "
                        f"its figures are the prior-year column of the {f.get('fiscal_period')} "
                        f"FY{f.get('fiscal_year')} {f.get('form') or '10-Q'}.")
                if note not in self.notes:
                    self.notes.append(note)
        return v

    def full(self, v: Value) -> str:
        if v.reported or v.quarter != 4 or v.op != "sub" or v.inputs[0].quarter is not None:
            return super().full(v)
        whole, nine = v.inputs
        return (f"{v.display()}, computed (a fourth quarter is not filed on its own) = fiscal year "
                f"{self.expr(whole)} ({_source(whole)}, year ended {nice_date(whole.period_end)}) − nine months "
                f"{self.expr(nine)} ({_source(nine)}, nine months ended {nice_date(nine.period_end)})")

    # ---- operations
    def growth_quarters(self, spec: MetricMention, tickers: list[str], slots: dict[str, list[Slot]]) -> None:
        """Each period against the same period a year earlier (the prior-year column of the same 10-Q) and, for a
        quarter, against the previous quarter when that quarter's filing is indexed."""
        self.operation = "growth"
        for t in tickers:
            for year, when in slots.get(t, []):
                now = self._get(spec, t, (year, when))
                if now is None:
                    continue
                self.lines.append(f"- {now.who()} · {now.named} · {now.when()}: {self.stated(now)}")
                length = MONTHS_WORDS.get(when.months, str(when.months))
                ago = self._get(spec, t, (year, When(when.quarter, when.months, back=1)))
                if ago is not None:
                    against = "the same quarter a year earlier" if when.months == 3 else \
                        f"the same {length} months a year earlier"
                    if ago.reported and ago.filing.get("doc_id") == now.filing.get("doc_id"):
                        against += " (the prior-year column of the same 10-Q)"
                    elif not ago.reported:
                        against += " (the prior-year columns of the same filings)"
                    self._change(now, ago, against)
                if when.months != 3:
                    continue
                prev = _previous(year, when)
                before = self._get(spec, t, prev)
                if before is not None:
                    self._change(now, before, "the previous quarter")
                else:
                    self.missing.pop()
                    self.notes.append(f"No comparison with the previous quarter: {period_name(*prev)} of {t} is "
                                      f"not in the indexed filings.")

    def _change(self, now: Value, base: Value, against: str) -> None:
        label = lower_label(now.label)
        if now.kind in ("percent", "pure"):
            pts = (now.amount - base.amount) * 100
            self.lines.append(f"- vs {against}, {base.when()}: {self.full(base)}; change {pts:+.2f} percentage points")
            self._result(f"Change in {label}, {now.ticker} {base.period_label()}→{now.period_label()}", pts,
                         f"{pts:+.2f} percentage points", "later − earlier", [base, now], against=against)
            return
        d = combine(now.metric, "sub", now, base)
        if d is None:
            return
        sign = "+" if d.amount > 0 else ""
        line = f"- vs {against}, {base.when()}: {self.stated(base)}; change {sign}{d.display()}"
        if base.amount > 0:
            pct = (now.amount - base.amount) / base.amount * 100
            line += f" ({pct:+.2f}%) = ({now.display()} − {base.display()}) / {base.display()}"
            self._result(f"Growth in {label}, {now.ticker} {base.period_label()}→{now.period_label()}", pct,
                         f"{pct:+.2f}%", "(later − earlier) / earlier", [base, now], change=d.amount,
                         change_display=d.display(), against=against)
        else:
            line += f" (no percentage: the {base.period_label()} figure is not positive)"
            self._result(f"Change in {label}, {now.ticker} {base.period_label()}→{now.period_label()}", d.amount,
                         d.display(), "later − earlier", [base, now], against=against)
        self.lines.append(line)

    def series(self, spec: MetricMention, tickers: list[str], slots: dict[str, list[Slot]]) -> None:
        """The last N quarters, oldest first, one line each, then the series on one line."""
        self.operation = "series"
        for t in tickers:
            got = []
            for slot in slots.get(t, []):
                v = self._get(spec, t, slot)
                if v is not None:
                    got.append(v)
                    self.lines.append(f"- {v.who()} · {v.named} · {v.when()}: {self.stated(v)}")
            if len(got) >= 2:
                self.lines.append(f"- {got[0].who()} · {got[0].label}, quarter by quarter: "
                                  + " → ".join(f"{v.period_label()} {v.display()}" for v in got))


def _source(v: Value) -> str:
    """'FY2025 10-K', 'Q3 FY2025 10-Q', "Q3 FY2025 10-Q's prior-year column"."""
    f = v.filing
    period = str(f.get("fiscal_period") or "").upper()
    name = f"{period + ' ' if period in ('Q1', 'Q2', 'Q3') else ''}FY{f.get('fiscal_year')} {f.get('form') or ''}"
    return f"the {name.strip()}'s prior-year column" if v.comparative else f"the {name.strip()}"


def _previous(year: int, when: When) -> Slot:
    """The quarter before: Q1's is the previous fiscal year's fourth quarter."""
    if when.quarter == 1:
        return year - 1, When(4, 3, borrow=False)
    return year, When(when.quarter - 1, 3, borrow=False)


def latest_slots(layer, ticker: str, count: int) -> list[Slot]:
    """The newest `count` quarters of a company, oldest first, counted back from its newest indexed quarter."""
    held = layer.quarters_held(ticker)
    if not held:
        return []
    year, quarter = held[0]
    out = []
    for _ in range(count):
        out.append((year, When(quarter, 3)))
        year, quarter = (year - 1, 4) if quarter == 1 else (year, quarter - 1)
    return out[::-1]


def period_slots(layer, plan: QuestionPlan, tickers: list[str], notes: list[str]) -> dict[str, list[Slot]]:
    """The periods to read per company. A period without a year is the company's latest filing of it; when a
    question names several periods and several companies ("Acme's Q2 FY2026 or Globex's Q3 FY2025"), each company
    answers the periods it has filings for."""
    out: dict[str, list[Slot]] = {}
    # "year to date" with no quarter named reads as the latest quarter; its length is the whole year to date.
    to_date = plan.latest_quarters == 1 and bool(_YEAR_TO_DATE.search(plan.question.lower()))
    if plan.latest_quarters:
        for t in tickers:
            filed = sorted(layer.quarterly_filings(t), reverse=True)
            out[t] = latest_slots(layer, t, plan.latest_quarters) if not to_date else \
                [(filed[0][0], When(filed[0][1], 3 * filed[0][1]))] if filed else []
            if out[t] and plan.latest_quarters == 1:
                year, when = out[t][0]
                notes.append(f"Latest indexed quarterly period of {t}: {period_name(year, when)}.")
        return out
    for t in tickers:
        slots: list[Slot] = []
        for p in plan.periods:
            if p.quarter is None or p.trailing or (p.quarter == 4 and p.months != 3):
                continue
            when = When(p.quarter, p.months)
            year = p.fiscal_year or layer.latest_year_of(t, p.quarter)
            if year is None:
                continue
            if not p.fiscal_year:
                notes.append(f"No fiscal year was named: using {t}'s latest indexed {period_name(year, when)}.")
            slots.append((year, when))
        if len(plan.periods) > 1 and len(tickers) > 1:
            held = set(layer.quarters_held(t)) | {(fy, q) for fy, q in layer.quarterly_filings(t)}
            own = [s for s in slots if (s[0], s[1].quarter) in held]
            slots = own or slots
        out[t] = slots
    return out


def answer_periods(layer, plan: QuestionPlan, tickers: list[str], specs: list[MetricMention]) -> FactAnswer | None:
    """Exact figures for a question about quarters or years to date (None: the facts cannot answer it)."""
    if any(p.trailing for p in plan.periods):
        return None  # a trailing twelve months spans filings: left to retrieval for now
    calc = plan.calculation
    notes: list[str] = []
    slots = period_slots(layer, plan, tickers, notes)
    if not any(slots.values()):
        return None
    block = QuarterBlock(layer)
    share = calc.share_of_end is not None
    if share and len(specs) == 1 and not calc.growth and plan.share_part is not None:
        part = plan.share_part
        specs = [part, specs[0]] if part.start < specs[0].start else [specs[0], part]
    # "<part> and <other part> combined" in a quarter: their sum (and its share of the whole), as for a year.
    summing = calc.total and len(specs) >= 2 + share and len(tickers) == 1 and plan.latest_quarters <= 1
    if (share or calc.ratio) and len(specs) != 2 and not summing:
        return None
    if summing:
        block.parts_total(specs, tickers, slots, share)
    elif len(specs) == 2 and (share or calc.ratio or (calc.difference and len(tickers) == 1)):
        mode = "div_pct" if share else "div" if calc.ratio else "sub"
        den = next((s for s in specs if s.start >= (calc.share_of_end or 0)), specs[-1]) if share else specs[1]
        num = specs[0] if den is specs[1] else specs[1]
        block.two_metric(num, den, tickers, slots, mode)
    else:
        for spec in specs:
            if plan.latest_quarters > 1:
                block.series(spec, tickers, slots)
            elif calc.growth:
                block.growth_quarters(spec, tickers, slots)
            else:
                block.lookup(spec, tickers, slots)
    if not block.values or (block.missing and not block.lines):
        return None
    return block.finish(notes)
