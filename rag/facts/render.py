"""The facts block an answer is built from: one line per figure or computation, every reported input cited."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

from ..schema import Calculation, Citation, MetricMention
from .labels import concept_label, currency_of, dims_label, format_amount, lower_label
from .metrics import NOTE_CONCEPTS, metric
from .views import DAYS_PER_YEAR, OP_SIGN, Unresolved, Value, combine

log = logging.getLogger(__name__)

# Words that make a printed per-share amount a quarter's: "at a quarterly amount of", "per quarter".
_PER_QUARTER = re.compile(r"\bquarterly\b|\bper\s+quarter\b|\beach\s+quarter\b", re.I)


def relative_size(hi: float, lo: float) -> str:
    """How much larger one positive figure is than another, as an analyst words it: a percentage while the larger is
    less than twice the smaller ("41.34% higher"), a multiple from twice on ("7.8 times")."""
    ratio = hi / lo
    return f"{(ratio - 1) * 100:.2f}% higher" if ratio < 2 else f"{ratio:.1f} times as much"


def summed(vals: list[Value]) -> Value | None:
    """The sum of figures of one kind in one currency, read as the first one's metric; None when two cannot be added."""
    total = vals[0]
    for v in vals[1:]:
        total = combine(total.metric, "add", total, v)
        if total is None:
            return None
    return total


@dataclass
class FactAnswer:
    """Exact figures for a question: `block` is text whose lines cite [F1], [F2] ... = `citations` (answer.py's
    Citation, kind "fact"), for rag.answer's facts hook. `results` are the computed figures."""

    block: str
    citations: list
    values: list[Value]
    results: list[dict]
    notes: list[str]
    operation: str

    def to_dict(self) -> dict:
        return {"block": self.block, "operation": self.operation, "notes": self.notes, "results": self.results,
                "values": [v.to_dict() for v in self.values]}



class FactsBlock:
    """Builds the facts block: one line per figure or computation, every reported input cited [F#]."""

    def __init__(self, layer):
        self.layer = layer
        self.lines: list[str] = []
        self.values: list[Value] = []
        self.results: list[dict] = []
        self.cited: list[Value] = []
        self._cite_ix: dict[tuple, int] = {}
        self.missing: list[str] = []
        self.notes: list[str] = []
        self.operation = "lookup"

    # ---- pieces
    def _get(self, spec: MetricMention, ticker: str, year: int) -> Value | None:
        try:
            v = self.layer.resolve(metric(spec.metric_key), ticker, year, spec)
        except Unresolved as exc:
            self.missing.append(f"{ticker} FY{year} {metric(spec.metric_key).label}: {exc}")
            return None
        self.values.append(v)
        for leaf in [v] + v.reported_leaves():
            if leaf.comparative:
                gap = int(leaf.filing.get("fiscal_year") or 0) - int(leaf.fiscal_year)
                kind = "prior-year comparatives" if gap == 1 else f"comparatives ({gap} years back)"
                note = (f"No FY{leaf.fiscal_year} 10-K of {leaf.ticker} is indexed: its FY{leaf.fiscal_year} figures "
                        f"are the {kind} reported in the FY{leaf.filing.get('fiscal_year')} "
                        f"{leaf.filing.get('form') or '10-K'}.")
                if note not in self.notes:
                    self.notes.append(note)
        return v

    def ref(self, v: Value) -> str:
        g = v.group
        key = (v.filing.get("doc_id"), g.concept, g.period_start, g.period_end, json.dumps(g.dims, sort_keys=True))
        if key not in self._cite_ix:
            self.cited.append(v)
            self._cite_ix[key] = len(self.cited)
        return f"[F{self._cite_ix[key]}]"

    def expr(self, v: Value, whole: bool = False) -> str:
        """A figure with its citation, or a computed one as the arithmetic of its cited inputs, in parentheses
        unless it is the `whole` expression."""
        if v.reported:
            return f"{v.member + ' ' if v.member and v.metric.period == 'cover' else ''}{v.display()} {self.ref(v)}"
        if v.op == "add":
            parts = _flatten_add(v)
            if len(parts) == 1:
                return self.expr(parts[0], whole)
            joined = " + ".join(self.expr(p) for p in parts)
            return joined if whole else f"({joined})"
        a, b = v.inputs
        inner = f"{self.expr(a)} {OP_SIGN[v.op]} {self.expr(b)}"
        if v.kind == "days":
            return f"{inner} × {DAYS_PER_YEAR}" if whole else f"({inner} × {DAYS_PER_YEAR})"
        return inner if whole or (a.reported and b.reported and v.op == "div") else f"({inner})"

    def full(self, v: Value) -> str:
        if v.reported:
            note = ""
            f = v.fact
            # The XBRL concept is the citation's to show: the sentence names the breakdown or the filer's line.
            if v.member:
                note = f" ({dims_label(f.dimensions)})"
            elif (f.concept in NOTE_CONCEPTS and f.concept != v.metric.concepts[0]) or \
                    not f.concept.startswith(("us-gaap:", "dei:")):
                note = f" (reported as “{(f.row_label or '').strip(' :') or concept_label(f.concept)}”)"
            if self._printed_per_quarter(v):
                note += (" (the filing prints this as a quarterly amount, though it is tagged for the whole period: "
                         "the period's total is not tagged)")
            return f"{v.display()} {self.ref(v)}{note}"
        formula = v.metric.formula or ("sum of share classes" if v.op == "add" else "")
        inner = self.expr(v, whole=True)
        return f"{v.display()} = {formula} = {inner}" if formula else f"{v.display()} = {inner}"

    def _printed_per_quarter(self, v: Value) -> bool:
        """A per-share figure of more than a quarter that the filing prints as a quarter's ("Cash dividends declared
        and paid, at a quarterly amount of $0.37 per class A common share", tagged for the fiscal year): the tag's
        period is not what the figure measures."""
        f = v.fact
        if v.kind != "per_share" or v.months <= 3:
            return False
        chunk = self.layer.chunk(f.chunk_id)
        text = chunk[0] if chunk else ""
        at = text.find(f.text) if f.text else -1
        return at >= 0 and bool(_PER_QUARTER.search(text, max(0, at - 120), at))

    def stated(self, v: Value) -> str:
        """A figure as the filing words it: a negative income line is a loss ("a net loss of $574 million"), a
        negative cash flow is cash used, and a cash outflow line is an amount spent, never a negative number."""
        m = v.metric
        wording = m.outflow if m.outflow else (m.negative if v.amount < 0 else m.positive)
        if not wording or v.kind != "money" or not v.reported:
            return self.full(v)
        return wording.format(self.full(v).replace(v.display(), v.display(magnitude=True), 1))

    def _result(self, label: str, value: float, display: str, formula: str, inputs: list[Value], **extra) -> None:
        self.results.append({"label": label, "value": value, "display": display, "formula": formula,
                             "inputs": [i.to_dict() for i in inputs], **extra})

    # ---- operations
    def lookup(self, spec: MetricMention, tickers: list[str], plan_years: dict[str, list[int]]) -> None:
        per_ticker: dict[str, list[Value]] = {}
        for t in tickers:
            for y in plan_years.get(t, []):
                v = self._get(spec, t, y)
                if v is None:
                    continue
                per_ticker.setdefault(t, []).append(v)
                self.lines.append(f"- {v.who()} · {v.named} · {v.when()}: {self.stated(v)}")
                if not v.reported:
                    self._result(f"{v.label}, {v.ticker} {v.period_label()}", v.amount, v.display(),
                                 v.metric.formula, v.reported_leaves())
        if len(per_ticker) >= 2:
            self.compare(spec, per_ticker)

    def compare(self, spec: MetricMention, per_ticker: dict[str, list[Value]]) -> None:
        self.operation = "compare"
        single = all(len(vs) == 1 for vs in per_ticker.values())
        groups: list[list[Value]] = []
        if single:
            groups.append([vs[0] for vs in per_ticker.values()])
        else:
            common = set.intersection(*({v.period_label() for v in vs} for vs in per_ticker.values()))
            for y in sorted(common):
                groups.append([v for vs in per_ticker.values() for v in vs if v.period_label() == y])
        for vals in groups:
            if len(vals) < 2 or len({(v.kind, currency_of(v.unit)) for v in vals}) != 1:
                continue
            ranked = sorted(vals, key=lambda v: v.amount, reverse=True)
            label = lower_label(ranked[0].label)
            hi, lo = ranked[0], ranked[1]
            when = "" if single and len({v.period_label() for v in vals}) > 1 else f" in {hi.period_label()}"
            years = {v.ticker: v.period_label() for v in vals}
            if hi.kind in ("percent", "pure"):
                pts = (hi.amount - lo.amount) * 100
                diff_text = f"{pts:.2f} percentage points"
                diff_val = pts
            else:
                d = combine(hi.metric, "sub", hi, lo)
                diff_text = d.display() if d else format_amount(hi.amount - lo.amount, hi.kind)
                diff_val = hi.amount - lo.amount
            line = (f"- Comparison: {hi.who()} had the higher {label}{when}: {hi.display()} ({years[hi.ticker]}) vs "
                    f"{lo.display()} for {lo.who()} ({years[lo.ticker]}); difference {diff_text} "
                    f"= {hi.display()} − {lo.display()}")
            if hi.kind == "money" and lo.amount > 0:
                line += f" ({relative_size(hi.amount, lo.amount)})"
            if len(ranked) > 2:
                line += "; ranking: " + " > ".join(f"{v.ticker} {v.display()}" for v in ranked)
            self.lines.append(line + ".")
            self._result(f"Difference in {label}: {hi.ticker} − {lo.ticker}", diff_val, diff_text,
                         f"{hi.ticker} − {lo.ticker}", [hi, lo], larger=hi.ticker)

    def growth(self, spec: MetricMention, tickers: list[str], plan_years: dict[str, list[int]],
               calc: Calculation) -> None:
        """The change from the first year asked to the last (calc.year_range, else the first and last asked), in
        amount and percent; also the compound annual growth rate over the years between them (calc.compound), or
        the later figure as a multiple of the earlier (calc.multiple), when the question asks for it."""
        self.operation = "growth"
        from_to = calc.year_range
        rates: dict[str, float] = {}
        for t in tickers:
            ys = plan_years.get(t, [])
            if not ys:
                continue
            base, target = from_to if from_to and set(from_to) <= set(ys) | set(from_to) else (min(ys), max(ys))
            if base == target:
                base = target - 1
            a, b = self._get(spec, t, base), self._get(spec, t, target)
            if a is None or b is None:
                continue
            for y in sorted(set(ys) - {base, target}):
                mid = self._get(spec, t, y)
                if mid is not None:
                    self.lines.append(f"- {mid.who()} · {mid.named} · {mid.when()}: {self.full(mid)}")
            label = a.named
            if a.kind in ("percent", "pure"):
                pts = (b.amount - a.amount) * 100
                self.lines.append(
                    f"- {a.who()} · {label}: FY{base} {self.full(a)} → FY{target} {self.full(b)}; change "
                    f"{pts:+.2f} percentage points")
                self._result(f"Change in {lower_label(label)}, {t} FY{base}→FY{target}", pts,
                             f"{pts:+.2f} percentage points", "later − earlier", [a, b])
                continue
            d = combine(a.metric, "sub", b, a)
            if d is None:
                continue
            sign = "+" if d.amount > 0 else ""
            line = (f"- {a.who()} · {label}: FY{base} {self.stated(a)} → FY{target} {self.stated(b)}; "
                    f"change {sign}{d.display()}")
            if a.amount > 0:
                pct = (b.amount - a.amount) / a.amount * 100
                rates[t] = pct
                line += (f" ({pct:+.2f}%) = ({b.display()} − {a.display()}) / {a.display()}")
                self._result(f"Growth in {lower_label(label)}, {t} FY{base}→FY{target}", pct, f"{pct:+.2f}%",
                             "(later − earlier) / earlier", [a, b], change=d.amount, change_display=d.display())
                if calc.multiple and b.amount > 0:
                    times = b.amount / a.amount
                    line += f"; FY{target} is {times:.2f} times FY{base} = {b.display()} / {a.display()}"
                    self._result(f"{label}, {t} FY{target} as a multiple of FY{base}", times, f"{times:.2f}×",
                                 "later / earlier", [a, b])
                if calc.compound and b.amount > 0 and target - base >= 2:
                    years = target - base
                    rates[t] = ((b.amount / a.amount) ** (1 / years) - 1) * 100
                    line += (f"; compound annual growth rate {rates[t]:+.2f}% a year over {years} years "
                             f"= ({b.display()} / {a.display()})^(1/{years}) − 1")
                    self._result(f"Compound annual growth rate of {lower_label(label)}, {t} FY{base}→FY{target}",
                                 rates[t], f"{rates[t]:+.2f}%", "(later / earlier)^(1 / years) − 1", [a, b])
            else:
                line += f" = {b.display()} − {a.display()} (no percentage: the FY{base} figure is not positive)"
                self._result(f"Change in {lower_label(label)}, {t} FY{base}→FY{target}", d.amount, d.display(),
                             "later − earlier", [a, b])
            self.lines.append(line)
        if len(rates) >= 2:
            ranked = sorted(rates.items(), key=lambda kv: kv[1], reverse=True)
            self.lines.append("- Comparison: " + " > ".join(f"{t} {r:+.2f}%" for t, r in ranked)
                              + f"; {ranked[0][0]} grew faster.")

    def total(self, spec: MetricMention, tickers: list[str], plan_years: dict[str, list[int]]) -> None:
        m = metric(spec.metric_key)
        if m.period != "duration" or m.kind not in ("money", "shares"):
            self.lookup(spec, tickers, plan_years)
            return
        self.operation = "sum"
        if len(tickers) >= 2 and all(len(plan_years.get(t, [])) == 1 for t in tickers):
            self._companies_total(spec, tickers, plan_years)
            return
        for t in tickers:
            ys = sorted(plan_years.get(t, []))
            vals = [self._get(spec, t, y) for y in ys]
            if len(ys) < 2 or any(v is None for v in vals):
                continue
            total = summed(vals)
            if total is None:
                continue
            years = " + ".join(f"FY{y}" for y in ys)
            self.lines.append(f"- {vals[0].who()} · {vals[0].label}, {years}: {total.display()} = "
                              + " + ".join(self.expr(v) for v in vals))
            self._result(f"{vals[0].label}, {t} {years}", total.amount, total.display(), "sum over fiscal years",
                         vals)

    def parts_total(self, specs: list[MetricMention], tickers: list[str], plan_years: dict[str, list[int]],
                    share: bool = False) -> None:
        """"<Part> and <other part> combined", "<one expense> and <another> together": the sum of the figures listed,
        each one company's in one year, when all are amounts of one kind in one currency. With `share`, the last
        spec is the whole, and the sum of the others is also given as a percentage of it."""
        parts = specs[:-1] if share else specs
        for t in tickers:
            for y in plan_years.get(t, []):
                vals = [self._get(spec, t, y) for spec in parts]
                whole = self._get(specs[-1], t, y) if share else None
                if share and (whole is None or not whole.amount):
                    continue
                # One kind, one currency, and parts of one breakdown: a product and a region overlap.
                kinds = {(v.kind, currency_of(v.unit), v.member_axis) for v in vals if v is not None}
                if any(v is None for v in vals) or len(kinds) != 1:
                    continue
                total = summed(vals)
                if total is None or vals[0].kind not in ("money", "shares"):
                    continue
                self.operation = "sum"
                what = " + ".join(v.label for v in vals)
                self.lines.append(f"- {vals[0].who()} · {vals[0].when()}: {what} = "
                                  f"{total.display()} = " + " + ".join(self.full(v) for v in vals))
                self._result(f"{what}, {t} {vals[0].period_label()}", total.amount, total.display(), what, vals)
                if whole is not None and whole.kind == total.kind:
                    pct = total.amount / whole.amount * 100
                    self.operation = "percentage"
                    self.lines.append(f"- {vals[0].who()} · {vals[0].when()}: ({what}) as a percentage of "
                                      f"{lower_label(whole.label)} = {pct:.2f}% = {total.display()} / {self.full(whole)}")
                    self._result(f"({what}) as a percentage of {lower_label(whole.label)}, {t} "
                                 f"{vals[0].period_label()}", pct, f"{pct:.2f}%", f"({what}) / {whole.label}",
                                 vals + [whole])

    def _companies_total(self, spec: MetricMention, tickers: list[str], plan_years: dict[str, list[int]]) -> None:
        """"The combined revenue of Acme and Globex": each company's figure for its year, and their sum when
        all are amounts of one kind in one currency (each company's own fiscal year, as the lines say)."""
        vals = []
        for t in tickers:
            v = self._get(spec, t, plan_years[t][0])
            if v is not None:
                vals.append(v)
                self.lines.append(f"- {v.who()} · {v.named} · {v.when()}: {self.stated(v)}")
        if len(vals) < 2 or len({(v.kind, currency_of(v.unit)) for v in vals}) != 1:
            return
        total = summed(vals)
        if total is None:
            return
        who = " + ".join(f"{v.ticker} {v.period_label()}" for v in vals)
        self.lines.append(f"- Combined {lower_label(vals[0].label)} ({who}): {total.display()} = "
                          + " + ".join(self.expr(v) for v in vals))
        self._result(f"Combined {lower_label(vals[0].label)}, {who}", total.amount, total.display(),
                     "sum over companies", vals)

    def two_metric(self, num: MetricMention, den: MetricMention, tickers: list[str], plan_years: dict[str, list[int]],
                   mode: str) -> None:
        self.operation = {"div_pct": "percentage", "div": "ratio", "sub": "difference"}[mode]
        for t in tickers:
            for y in plan_years.get(t, []):
                a, b = self._get(num, t, y), self._get(den, t, y)
                if a is None or b is None:
                    continue
                if mode in ("div_pct", "div"):
                    if b.amount == 0 or a.kind != b.kind:
                        continue
                    r = a.amount / b.amount
                    if mode == "div_pct":
                        shown = f"{r * 100:.2f}%"
                        what = f"{a.label} as a percentage of {lower_label(b.label)}"
                        val = r * 100
                    else:
                        shown = f"{r:.2f}"
                        what = f"Ratio of {lower_label(a.label)} to {lower_label(b.label)}"
                        val = r
                    self.lines.append(f"- {a.who()} · {a.when()}: {what} = {shown} = {self.full(a)} / {self.full(b)}")
                    self._result(f"{what}, {t} {a.period_label()}", val, shown, f"{a.label} / {b.label}", [a, b])
                else:
                    d = combine(a.metric, "sub", a, b)
                    if d is None:
                        continue
                    # The whole less one of its own parts is named for what it is: the whole without that part.
                    part_of_whole = bool(b.member) and not a.member and a.metric.key == b.metric.key
                    what = f"{a.label} excluding {b.member}" if part_of_whole else \
                        f"{a.label} − {lower_label(b.label)}"
                    self.lines.append(f"- {a.who()} · {a.when()}: {what} = {d.display()} "
                                      f"= {self.full(a)} − {self.full(b)}")
                    self._result(f"{what}, {t} {a.period_label()}", d.amount, d.display(),
                                 f"{a.label} − {b.label}", [a, b])

    def rest_share(self, whole: MetricMention, part: MetricMention, tickers: list[str],
                   plan_years: dict[str, list[int]]) -> None:
        """The whole less one of its parts, as an amount and as a share of the whole ("net sales from outside the
        United States"): the question may ask either, and both come from the same two cited figures."""
        self.operation = "percentage"
        for t in tickers:
            for y in plan_years.get(t, []):
                a, b = self._get(whole, t, y), self._get(part, t, y)
                if a is None or b is None or a.amount == 0 or not b.member:
                    continue
                d = combine(a.metric, "sub", a, b)
                if d is None:
                    continue
                share = d.amount / a.amount * 100
                what = f"{a.label} excluding {b.member}"
                self.lines.append(f"- {a.who()} · {a.when()}: {what} = {d.display()} = {self.full(a)} − {self.full(b)}"
                                  f", {share:.2f}% of {lower_label(a.label)}")
                self._result(f"{what} as a percentage of {lower_label(a.label)}, {t} {a.period_label()}", share,
                             f"{share:.2f}%", f"({a.label} − {b.label}) / {a.label}", [a, b], amount=d.amount)

    # ---- the block
    def finish(self, notes: list[str]) -> FactAnswer | None:
        if not self.lines:
            return None
        lines = list(self.lines)
        for note in notes + self.notes:
            lines.append(f"Note: {note}")
        read = [v.fact for v in self.cited if v.fact is not None and v.fact.from_pdf]
        for place in dict.fromkeys(f.pdf_place() for f in read):
            pages = sorted({f.page for f in read if f.pdf_place() == place and f.page})
            where = f" (page {', '.join(map(str, pages))})" if pages else ""
            lines.append(f"Note: figures read from the PDF's {place}{where}, not from XBRL data: the PDF has none.")
        if self.missing:
            lines.append("Not in the filing's figures: " + "; ".join(self.missing[:4]) + ".")
        citations = [self._citation(v, i + 1) for i, v in enumerate(self.cited)]
        return FactAnswer(block="\n".join(lines), citations=citations, values=self.values, results=self.results,
                          notes=notes + self.notes, operation=self.operation)

    def _citation(self, v: Value, number: int):
        f = v.fact
        filing = v.filing
        chunk = self.layer.chunk(f.chunk_id)
        text, meta = chunk if chunk else ("", {})
        dims = f" [{dims_label(f.dimensions)}]" if f.dimensions else ""
        if f.from_pdf:  # no XBRL in a PDF: the statement row's cell or the cover's count, as read from the page
            xbrl = (f"Read from the PDF's {f.pdf_place()}, page {f.page or '?'}: "
                    f"{f.row_label or concept_label(f.concept)} = "
                    f"{f.text} ({'scale ' + str(f.scale) + ', ' if f.scale else ''}as {concept_label(f.concept)}) "
                    f"-> {v.display()}, {f.period_text()}; {filing.get('form') or ''} "
                    f"{_quarter_prefix(filing)}FY{filing.get('fiscal_year')}")
        else:
            xbrl = (f"XBRL fact: {f.concept} ({concept_label(f.concept)}){dims} = {f.text} "
                    f"({'scale ' + str(f.scale) + ', ' if f.scale else ''}decimals {f.decimals}) -> {v.display()}, "
                    f"{f.period_text()}; {filing.get('form') or ''} {_quarter_prefix(filing)}FY{filing.get('fiscal_year')}")
        return Citation(
            number=number, chunk_id=f.chunk_id, doc_id=filing.get("doc_id"), ticker=filing.get("ticker"),
            company=filing.get("company"), form=filing.get("form"), fiscal_year=filing.get("fiscal_year"),
            fiscal_period=filing.get("fiscal_period"), section=meta.get("section") or f.section, section_title=meta.get("section_title"),
            page_start=meta.get("page_start") or f.page, page_end=meta.get("page_end") or f.page, score=1.0,
            text=(text.strip() + "\n\n" + xbrl).strip() if text else xbrl,
            char_start=meta.get("char_start"), char_end=meta.get("char_end"),
            source=filing.get("source") or filing.get("path"), url=filing.get("url"), kind="fact",
            cik=filing.get("cik"), accession=filing.get("accession"), quote=_row_of(text, f),
            origin=f"the PDF's {f.pdf_place()}" if f.from_pdf else None,
        )


def _row_of(text: str, f) -> str | None:
    """The line of a chunk that prints a fact's figure, its row label first where the filing prints one (the
    table row 'Total net sales | $123,456 | ...', an invented row); None when no line shows the figure as tagged."""
    lines = [ln.strip() for ln in (text or "").splitlines() if f.text and f.text in ln]
    label = (f.row_label or "").strip()
    return next((ln for ln in lines if label and ln.startswith(label)), lines[0] if lines else None)


def _quarter_prefix(filing: dict) -> str:
    """'Q3 ' for a quarterly report's citation; nothing for an annual one."""
    period = str(filing.get("fiscal_period") or "").upper()
    return f"{period} " if period in ("Q1", "Q2", "Q3") else ""


def _flatten_add(v: Value) -> list[Value]:
    if v.op != "add":
        return [v]
    out = []
    for i in v.inputs:
        out.extend(_flatten_add(i))
    return out


