"""FactsLayer: exact figures for a question plan, read from the filing that owns the fiscal year, computed in
code where the question asks for growth, shares, ratios, sums or differences."""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import replace
from typing import Callable, Iterable

from ..config import get_settings
from ..schema import MetricMention, QuestionPlan
from ..words import tokens
from .asked import (
    attributed_parts,
    label_or_vocabulary,
    lists_parts,
    names_the_amount,
    segment_owner,
    several_left_out,
    traded,
    unread_part,
    unread_source,
)
from .checks import FigureChecker
from .labels import (
    ANNUAL_FORMS,
    SCALE_WORDS,
    decimal_places,
    lower_label,
    member_label,
    nice_date,
    tolerance,
    unit_kind,
)
from .members import members_holding, members_named, narrowed_by, parts_listed
from .mentions import member_matcher, normalize, plain_word, without_conjunction
from .metrics import Metric, member_concepts, metric
from .per_item import PerItemRates
from .quarter_block import answer_periods
from .quarters import QuarterFacts
from .render import FactAnswer, FactsBlock
from .row_labels import asks_rate_of, labelled_mentions, spelled_out_labels
from .store import FactRow, FactStore
from .views import (
    FactGroup,
    FilingView,
    NotReported,
    Unresolved,
    Value,
    When,
    by_label,
    combine,
    period_name,
    primary_statement,
    printed_as,
    source_label,
    stamp,
)

log = logging.getLogger(__name__)

ChunkLookup = Callable[[str], "tuple[str, dict] | None"]


class FactsLayer(QuarterFacts, PerItemRates):
    """Selection, question answering and answer checks over the fact store. `chunk_lookup(chunk_id)` returns the
    chunk's (text, metadata) from the live index; `live_doc_ids()` the doc ids of the live index (facts of other
    filings are ignored)."""

    def __init__(self, settings=None, *, store: FactStore | None = None, chunk_lookup: ChunkLookup | None = None,
                 live_doc_ids: Callable[[], Iterable[str]] | None = None):
        if store is None:
            if settings is None:
                settings = get_settings()
            store = FactStore.for_settings(settings)
        self.store = store
        self.chunk_lookup = chunk_lookup
        self.live_doc_ids = live_doc_ids
        self._views: dict[tuple, FilingView] = {}
        self._lock = threading.Lock()

    # ---- filings and views
    def filings(self, ticker: str | None = None) -> list[dict]:
        live = None
        if self.live_doc_ids is not None:
            try:
                live = list(self.live_doc_ids())
            except Exception:  # noqa: BLE001 - no index: use every stored filing
                live = None
        return self.store.filings(ticker=ticker, doc_ids=live)

    def annual_filings(self, ticker: str) -> dict[int, dict]:
        """FY -> the annual filing of that fiscal year (the one with most facts when there are several)."""
        out: dict[int, dict] = {}
        for f in self.filings(ticker):
            if (f.get("form") or "").upper() not in ANNUAL_FORMS or f.get("fiscal_year") is None:
                continue
            fy = int(f["fiscal_year"])
            if fy not in out or (f.get("fact_count") or 0) > (out[fy].get("fact_count") or 0):
                out[fy] = f
        return out

    def view(self, filing: dict) -> FilingView:
        key = (filing["doc_id"], filing.get("indexed_at"))
        with self._lock:
            hit = self._views.get(key)
        if hit is None:
            hit = FilingView(filing, self.store.facts(filing["doc_id"]))
            with self._lock:
                if len(self._views) > 64:
                    self._views.clear()
                self._views[key] = hit
        return hit

    def warm(self) -> int:
        """Build the views of the indexed filings ahead of the first question (~0.1 s each), as the index itself
        is loaded ahead; returns how many."""
        filings = self.filings()[:64]
        for f in filings:
            self.view(f)
        return len(filings)

    def locate(self, ticker: str, year: int) -> tuple[FilingView, int, bool] | None:
        """The filing to read FY `year` from: its own 10-K, else a later 10-K's comparative column."""
        annual = self.annual_filings(ticker)
        if year in annual:
            return self.view(annual[year]), 0, False
        for later in (year + 1, year + 2):
            if later in annual:
                v = self.view(annual[later])
                k = later - year
                if k < len(v.year_ends):
                    return v, k, True
        return None

    # ---- values
    def value(self, metric_: Metric | str, ticker: str, year: int, mention: MetricMention | None = None) -> Value | None:
        """The figure of a metric for one company and fiscal year (None when the facts cannot say)."""
        m = metric(metric_) if isinstance(metric_, str) else metric_
        try:
            return self.resolve(m, ticker.upper(), int(year), mention)
        except Unresolved:
            return None

    def resolve(self, m: Metric, ticker: str, year: int, mention: MetricMention | None,
                when: When | None = None) -> Value:
        """value(), raising Unresolved with the reason when the facts cannot give the figure. `when` asks for a
        quarter or a year to date of fiscal year `year` instead of the whole year."""
        if mention is not None and mention.qualified:
            if not member_concepts(m):
                printed = self._printed_as_qualified(m, ticker, year, mention, when)
                if printed is not None:
                    return printed
                raise Unresolved(f"{m.label} cannot be narrowed to {' '.join(mention.before + mention.after)}")
            if m.derive:  # a segment's margin: both inputs narrowed to the same member
                return self._derived(m, m.derive, ticker, year, when, mention)
            try:
                return self._member_value(m, ticker, year, mention, when)
            except NotReported:
                printed = self._printed_as_qualified(m, ticker, year, mention, when)
                if printed is not None:
                    return printed
                if not m.fallback:
                    raise
                # A part's figure the filing tags only through its inputs: gross profit of a products-and-services
                # split whose revenue and cost of sales are tagged per member ("Services gross margin").
                return self._derived(m, m.fallback, ticker, year, when, mention)
        if m.derive:
            return self._derived(m, m.derive, ticker, year, when)
        if self.computed_fourth_quarter(m, when):
            return self.fourth_quarter(m, ticker, year, mention, when)
        view, k, comparative, months = self._where(ticker, year, when)
        m = _portion_of(m, mention, view, k)
        candidates: list[FactGroup] = []
        for concept in m.concepts:
            period = m.period
            if period == "cover" and not concept.startswith("dei:"):
                period = "instant"  # a balance-sheet count at the period end, not the cover date
            elif period == "cover" and comparative:
                continue
            found = view.find(concept, k, period, months=months)
            if found == "conflict":
                if not candidates:
                    raise Unresolved(f"{concept} has disagreeing values")
                continue
            if found is not None:
                candidates.append(found)
                if period == "cover":
                    break
            elif period == "cover" and not candidates:
                total = self._cover_classes(m, view, concept, year)
                if total is not None:
                    return total
        if not candidates and m.period != "cover":
            listed = self._listed_class_value(m, view, k, year, comparative, months, when)
            if listed is not None:
                return listed
        if candidates:
            first = by_label(m, candidates)
            worded = _as_worded(mention, first, candidates) if mention else []
            if worded:
                # Named as the filing prints it: "Net sales" is not a retailer's total revenue.
                label = next(r.row_label for r in worded[0].rows if r.row_label).strip(" :")
                return self._reported(replace(m, label=label), primary_statement(worded[0], worded), view, year,
                                      comparative, when=when)
            return self._reported(m, primary_statement(first, candidates), view, year, comparative, when=when)
        if m.ext:
            found = view.extension(m.ext, k, m.period, months=months)
            if found == "conflict":
                raise Unresolved("extension concepts disagree")
            if found is not None:
                # A filer's own concept: named as its row prints it, which may say more than the metric's name.
                printed = next((r.row_label.strip(" :") for r in found.rows if r.row_label), "")
                return self._reported(replace(m, label=printed) if printed else m, found, view, year, comparative,
                                      when=when)
        if m.period != "cover":
            printed = printed_as(m, view, k, m.period, months)
            if printed is not None:
                return self._reported(m, printed, view, year, comparative, when=when)
        if m.fallback:
            return self._derived(m, m.fallback, ticker, year, when)
        raise NotReported(f"no {m.label} in the {period_name(year, when)} data of {ticker}")

    def _where(self, ticker: str, year: int, when: When | None) -> tuple[FilingView, int, bool, int | None]:
        """The filing to read from, how many years back in it, whether that is a comparative column, and the
        period length to read (None: the fiscal year, as a 10-K reports it)."""
        if when is not None and when.quarterly:
            return self.locate_quarter(ticker, year, when)
        where = self.locate(ticker, year)
        if where is None:
            raise Unresolved(f"no FY{year} filing of {ticker}")
        view, k, comparative = where
        if when is not None and when.back:  # a fourth quarter's year-end a year earlier: the 10-K's prior column
            k += when.back
            if k >= len(view.year_ends):
                raise Unresolved(f"no FY{year - when.back} column in the FY{view.fiscal_year} filing of {ticker}")
        return view, k, comparative, None

    def _cover_classes(self, m: Metric, view: FilingView, concept: str, year: int) -> Value | None:
        """A cover-page count given per share class only (classes A, B and C): their sum, each class cited."""
        classes = view.cover_classes(concept)
        if len(classes) < 2:
            return None
        parts = [self._reported(m, g, view, year, False, member=member_label(next(iter(g.dims.values()))))
                 for g in classes]
        total = parts[0]
        for p in parts[1:]:
            total = combine(m, "add", total, p) if total is not None else None
        return total

    def _listed_class_value(self, m: Metric, view: FilingView, k: int, year: int, comparative: bool,
                            months: int | None, when: When | None) -> Value | None:
        """A figure the filing tags per class of stock only (one filer's earnings per share, classes A, B, C): the
        class traded under the filer's ticker, labelled with its class. An amount or a count tagged for other
        classes too (another's shares bought back, classes A and C) is not the listed class's alone: no figure."""
        listed = view.listed_class
        if listed is None:
            return None
        for concept in m.concepts:
            found = view.find(concept, k, m.period, member=lambda dims: listed in dims.values(), months=months)
            if not isinstance(found, FactGroup):
                continue
            axis = next(a for a, v in found.dims.items() if v == listed)
            if m.kind != "per_share" and view.find(concept, k, m.period, months=months,
                                                   member=lambda dims, axis=axis: dims.get(axis) not in (None, listed)):
                return None  # another class is tagged too: the listed class's figure is a part
            return self._reported(m, found, view, year, comparative, member=member_label(listed), axis=axis,
                                  when=when)
        return None

    def _derived(self, m: Metric, spec: tuple, ticker: str, year: int, when: When | None = None,
                 mention: MetricMention | None = None) -> Value:
        """`mention`: a qualified mention narrows both inputs to the member it names."""
        op, a_key, b_key = spec
        a = self.resolve(metric(a_key), ticker, year, mention, when)
        b = self.resolve(metric(b_key), ticker, year, mention, when)
        out = combine(m, op, a, b)
        if out is None:
            raise Unresolved("inputs cannot be combined")
        if mention is not None and a.member:  # labelled as the part it is of: "Operating margin — <Segment>"
            out = replace(out, member=a.member, member_axis=a.member_axis)
        return stamp(out, when)

    def _printed_as_qualified(self, m: Metric, ticker: str, year: int, mention: MetricMention,
                              when: When | None) -> Value | None:
        """The figure tagged without a member when the row label the filing prints beside it names the qualifier
        itself: "Repurchases of Class B common stock" answers "buying back Class B shares" for a filer that buys
        back that class only and tags the cash-flow line without a class. None otherwise."""
        quals = without_conjunction(mention.before + mention.after)
        try:
            value = self.resolve(m, ticker, year, None, when)
        except Unresolved:
            return None
        labels = {r.row_label for r in value.group.rows if r.row_label} if value.group else set()
        for label in labels:
            words = without_conjunction([plain_word(w) for w in normalize(label).split()])
            if any(words[i:i + len(quals)] == quals for i in range(len(words))):
                return replace(value, printed_label=label)
        return None

    def _member_value(self, m: Metric, ticker: str, year: int, mention: MetricMention,
                      when: When | None = None) -> Value:
        if self.computed_fourth_quarter(m, when):
            return self.fourth_quarter(m, ticker, year, mention, when)
        view, k, comparative, months = self._where(ticker, year, when)
        match = member_matcher(mention)
        if match is None:
            raise Unresolved("no qualifier")
        best_len, hits = 0, []
        for concept in m.concepts:
            for g in view.by_concept.get(concept, ()):
                if len(g.dims) != 1:
                    continue
                n = match(g.dims, {r.row_label for r in g.rows if r.row_label})
                if not n:
                    continue
                found = view.find(concept, k, m.period, member=lambda d, g=g: d == g.dims, months=months)
                if found == "conflict":
                    raise Unresolved("member values disagree")
                if found is None:
                    continue
                if n > best_len:
                    best_len, hits = n, [(concept, found)]
                elif n == best_len and all(found is not h for _, h in hits):
                    hits.append((concept, found))
        if not hits:
            raise NotReported("no dimension member matches " + " ".join(mention.before + mention.after))
        # Members of several axes must agree; the first concept in priority order is cited (a cover-page count: the
        # cover's own, dated after the balance sheet's). One member on two concepts (a segment's total revenues
        # beside its net sales) is two figures, and the priority order picks one, as for the whole company.
        first = hits[0][1]
        for _, g in ([] if m.period == "cover" else hits[1:]):
            if g.dims != first.dims and abs(g.value - first.value) > tolerance(g.best.decimals) + tolerance(
                    first.best.decimals) + 1e-9 * abs(first.value):
                raise Unresolved("several members match with different values")
        member = next(iter(first.dims.values()))
        reported_in = self.chunk(first.best.chunk_id)
        return self._reported(m, first, view, year, comparative,
                              member=member_label(member, (r.row_label for r in first.rows),
                                                  reported_in[0] if reported_in else ""),
                              axis=next(iter(first.dims)), when=when)

    def _reported(self, m: Metric, g: FactGroup, view: FilingView, year: int, comparative: bool,
                  member: str | None = None, axis: str | None = None, when: When | None = None) -> Value:
        f = g.best
        kind = unit_kind(f.unit)
        if m.kind in ("per_share", "shares", "pure") and kind != m.kind:
            kind = m.kind if kind == "other" else kind
        if kind not in ("money", "per_share", "shares", "pure"):
            raise Unresolved(f"{f.concept} has unit {f.unit}")
        places = decimal_places(f.text)
        scale = f.scale if kind == "money" else 0
        if kind == "money" and scale not in SCALE_WORDS and abs(f.value) >= 1e6:
            scale, places = 6, 0 if abs(f.value) % 1e6 == 0 else 3
        return stamp(Value(
            metric=m, amount=f.value, kind=kind, ticker=(view.filing.get("ticker") or "").upper(),
            company=view.filing.get("company") or "", fiscal_year=year - (when.back if when else 0),
            filing=view.filing, comparative=comparative or bool(when and when.back),
            group=g, member=member, member_axis=axis, scale=scale, places=places, unit=f.unit,
        ), when)

    # ---- questions
    def answer_for(self, plan: QuestionPlan, tickers: Iterable[str] | None = None,
                   years: Iterable[int] | None = None) -> FactAnswer | None:
        """Exact figures for a question plan that asks for reported or computed metrics of named companies; None
        when the facts cannot answer it (the caller falls through to the retrieval answer). `tickers` and `years`
        default to the plan's; the engine passes the user's filters where they override it."""
        tickers = plan.tickers if tickers is None else tickers
        years = plan.fiscal_years if years is None else years
        tickers, years = [t.upper() for t in tickers], [int(y) for y in years]
        readings = label_or_vocabulary(plan, self._labelled(plan, tickers, years))
        if readings is None:
            return None
        plan, tried = readings
        for mentions in tried:
            try:
                found = self._answer_for(plan, tickers, years, mentions) if mentions else None
            except Unresolved as exc:
                log.debug("facts cannot answer %r: %s", plan.question, exc)
                found = None
            # "How many of its people work in research and development": a count of people or things is asked,
            # and an amount of money under the same words (R&D expense) answers another question.
            if found is not None and plan.counted and all(v.kind in ("money", "per_share") for v in found.values):
                found = None
            # "By how much did currency moves drag down its cash balance": an amount of change or effect is asked,
            # and a balance's level at the year end is none.
            if found is not None and plan.calculation.by_how_much and found.operation == "lookup" and all(
                    v.metric.period == "instant" for v in found.values):
                found = None
            if found is not None:
                return found
        return None

    def unreported(self, plan: QuestionPlan, tickers: Iterable[str] | None = None,
                   years: Iterable[int] | None = None) -> list[str]:
        """Notes on the reported metrics a question asks for that the XBRL data of a named company's annual
        filing does not hold (a 10-K that incorporates its statements by reference from the annual report tags
        none): the passages then quoted may print another figure under similar words."""
        if plan.narrative or plan.periods or plan.latest_quarters:
            return []
        tickers = [t.upper() for t in (plan.tickers if tickers is None else tickers)]
        years = [int(y) for y in (plan.fiscal_years if years is None else years)]
        notes: list[str] = []
        for mention in plan.metrics:
            m = metric(mention.metric_key)
            if mention.vetoed or mention.qualified or m.derive or m.period == "cover":
                continue
            for ticker in tickers:
                held = [f for f in self.filings(ticker) if str(f.get("form") or "").upper().startswith("10-K")]
                for filing in held:
                    year = int(filing.get("fiscal_year") or 0)
                    if (years and year not in years) or not self.view(filing).groups:
                        continue
                    try:
                        self.resolve(m, ticker, year, None)
                    except NotReported:
                        notes.append(f"The XBRL data of {ticker}'s FY{year} {filing.get('form')} holds no "
                                     f"{m.label.lower()}; check that the passages quoted state it.")
                    except Unresolved:
                        pass  # there, but ambiguous or disagreeing: not a figure the filing lacks
        return list(dict.fromkeys(notes))

    def _answer_for(self, plan: QuestionPlan, tickers: list[str], years: list[int],
                    mentions: list[MetricMention]) -> FactAnswer | None:
        # A company the facts cannot speak for, prose, or no figure asked: retrieval answers it.
        if plan.unknown_companies or self._prose_asked(plan, tickers, years):
            return None
        if not mentions:
            return None
        notes: list[str] = []
        if not tickers and (plan.periods or plan.latest_quarters):
            return None  # a quarter of no named company: a cover-page date names a 10-K, not a quarter
        if not tickers:
            inferred = self._company_by_date(plan.dates, plan.metrics) or self._company_by_member(plan, years)
            if inferred is None:
                return None
            ticker, year, inferred_note = inferred
            tickers, years = [ticker], [year] if year else years
            notes.append(inferred_note)
        # A metric phrase whose next words give it another meaning ("cash" in "how much cash did it use for
        # repurchases") names no figure; the question's other metrics still do, and with none left it is prose.
        mentions = attributed_parts(plan, [mt for mt in mentions if not mt.vetoed and not traded(mt, plan)])
        if not mentions:
            return None
        # "How much favorable reserve development did it book in medical costs": the amount asked is named before the
        # verb, and a metric named only after it ("in medical costs") says where that amount sits, not what it is.
        if plan.amount_named and not any(names_the_amount(mt, plan) for mt in mentions):
            return None
        found = self._figures_asked(plan, mentions, tickers)
        if found is None:
            return None
        specs, left_out = found
        if plan.periods or plan.latest_quarters:  # quarters and years to date: never a fiscal year's figure
            # A quarter's figure less a part is not computed: the part left out leaves the passages to answer.
            return None if left_out else answer_periods(self, plan, tickers, specs)
        calc = plan.calculation
        plan_years = self._years(plan, tickers, years, notes)
        growth = calc.growth or (len(tickers) == 1 and len(set(years)) >= 2 and calc.compares)
        share = calc.share_of_end is not None
        several_years = max(len(v) for v in plan_years.values()) >= 2
        # "How much did it pay out in total in 2024": one company's one figure of the one year named is that figure
        # ("over the past five years in total" names none, and the one year indexed is not its sum).
        one_figure = len(specs) == len(tickers) == len(plan.fiscal_years) == 1 and not several_years
        summing = (calc.total and not one_figure) or (calc.total_over and several_years)
        if calc.total and len(specs) == len(tickers) == 1 and not several_years and lists_parts(plan):
            return None  # "adding the current and long-term portions together": one figure read adds up nothing
        if share and len(specs) == 1 and not growth and plan.share_part is not None:
            part = plan.share_part
            specs = [part, specs[0]] if part.start < specs[0].start else [specs[0], part]
        if (share or calc.ratio) and len(specs) != 2 and not growth and left_out is None and not (
                summing and len(specs) > 2):  # the parts a share adds up, and its whole, are three or more
            return None  # a share or ratio of something the facts cannot name
        block = FactsBlock(self)
        if left_out is not None and share:
            block.rest_share(specs[0], left_out, tickers, plan_years)
        elif left_out is not None:
            block.two_metric(specs[0], left_out, tickers, plan_years, "sub")
        elif summing and len(specs) >= 2 + share and len(tickers) == 1 and not several_years:
            block.parts_total(specs, tickers, plan_years, share)
        elif len(specs) == 2 and (share or calc.ratio or (calc.difference and len(tickers) == 1)):
            if share:
                den = next((s for s in specs if s.start >= calc.share_of_end), specs[-1])
                num = specs[0] if den is specs[1] else specs[1]
                block.two_metric(num, den, tickers, plan_years, "div_pct")
            else:  # a ratio, or a difference
                block.two_metric(specs[0], specs[1], tickers, plan_years, "div" if calc.ratio else "sub")
        else:
            for spec in specs:
                if growth and not summing:
                    block.growth(spec, tickers, plan_years, calc)
                elif summing:
                    block.total(spec, tickers, plan_years)
                else:
                    block.lookup(spec, tickers, plan_years)
        if not block.values or (block.missing and not block.lines):
            return None
        return block.finish(notes)

    def _figures_asked(self, plan: QuestionPlan, mentions: list[MetricMention],
                       tickers: list[str]) -> tuple[list[MetricMention], MetricMention | None] | None:
        """The figures asked (each once, narrowed to the part of the company the question names), and the part of
        the one figure that the question leaves out, to be taken from it; None when it cannot say which are asked."""
        specs: list[MetricMention] = []
        for mt in mentions:
            if mt.spec() not in {s.spec() for s in specs}:
                specs.append(mt)
        if len(specs) > 3:
            return None
        # A member is named by what the question asks for, never by what it rules out ("revenue other than from
        # <product>" does not name the <product> line).
        asked = plan.question_without(lambda dimension, _value: dimension == "excluded")
        if plan.calculation.total and len(specs) == len(tickers) == 1:  # "<part> and <part> combined"
            if parts := parts_listed(asked, specs[0], [self.view(f) for f in self.filings(tickers[0])]):
                return parts + ([specs[0]] if plan.calculation.share_of_end is not None else []), None  # + the whole
        if (plan.names_part or segment_owner(plan)) and plan.share_part is None:
            # A part of the company: its figure, never the whole (a share's part narrows itself: see below).
            named = self._with_members(asked, specs, tickers)
            return None if named is None else (named, None)
        if plan.calculation.share_of_end is not None:
            # A share names its part beside the whole (see plan.share_part), or by what it leaves out of the whole
            # ("what percentage of net sales came from outside the U.S."): the whole less that member.
            if len(specs) != 1 or plan.share_part is not None:
                return specs, None
            left_out = self._left_out_members(plan, specs, tickers)
            if not left_out:
                return specs, None
            return (specs, left_out[0]) if left_out[0] is not None else None
        # A part named with no word that says so ("What operating margin did <segment> earn"): a member the
        # filing tags for the metric, named by its own words, still owns the figure.
        named = self._with_members(asked, specs, tickers, every=False)
        if named is None:
            return None
        if any(s.qualified for s in named):
            return None if unread_source(plan, named) else (named, None)
        if unread_part(plan, named):
            return None
        left_out = self._left_out_members(plan, named, tickers)
        if not left_out:
            return named, None
        # "Net sales excluding <region>": the whole holds the part left out, so it is no answer; the whole less
        # that part is, computed from the two tagged figures, when one figure is asked and the words left out name
        # one member of it.
        if len(named) != 1 or left_out[0] is None:
            return None
        return named, left_out[0]

    def _labelled(self, plan: QuestionPlan, tickers: list[str], years: list[int]) -> list[MetricMention]:
        """A figure the metric vocabulary has no word for, named by the label the company's filings print for it
        (rag.facts.row_labels); only for one named company, read from the filings of the years asked."""
        if len(tickers) != 1:
            return []
        views, company = self._company_views(tickers[0], years)
        cut = plan.calculation.share_of_end
        if cut is not None:
            # "Medical costs as a percentage of premiums", "personnel costs as a % of opex": each side names its own
            # printed line, by as little as one word (the part is what comes before "of", so a word as common as
            # "Total" is seldom in it); both named, the share divides them.
            part = labelled_mentions(plan.question[:cut], views, company, self._on_statement, min_words=1)
            whole = labelled_mentions(plan.question[cut:], views, company, self._on_statement, min_words=1)
            if part and whole and part[0].metric_key != whole[0].metric_key:
                return [part[0], replace(whole[0], start=cut, end=cut)]
            # "What share of revenue went to research", "... did it put into marketing": the whole is named right
            # after "of" and the part after the verb that spends it.
            named_whole = next((m for m in plan.metrics if m.start >= cut and not m.vetoed), None)
            if not part and named_whole is not None:
                after = labelled_mentions(plan.question[named_whole.end:], views, company, self._on_statement,
                                          min_words=1, part_of_figure=True)
                if after and after[0].metric_key != named_whole.metric_key:
                    return [replace(after[0], start=0, end=0), named_whole]
        found = labelled_mentions(plan.question, views, company, self._on_statement)
        return [] if found and asks_rate_of(plan.question, found[0]) else found

    def _prose_asked(self, plan: QuestionPlan, tickers: list[str], years: list[int]) -> bool:
        """plan.narrative, unless each word that makes it so sits in a label the one company asked about prints
        and the question spells out in full ("Sales to customers", "Proceeds from maturities of marketable
        securities"): a figure's own name does not ask for prose."""
        if not plan.narrative:
            return False
        if len(tickers) != 1:
            return True
        views, company = self._company_views(tickers[0], years)
        labels = spelled_out_labels(plan.question, views, company)
        return not all(words and any(words <= label for label in labels)
                       for words in (set(tokens(w)) for w in plan.narrative_words))

    def _company_views(self, ticker: str, years: list[int]) -> tuple[list[FilingView], set[str]]:
        """The views of a company's filings of the years asked (all when none), and the words of its name. A year
        with no filing of its own is read from the later annual reports that print it as a comparative."""
        filings = self.filings(ticker)
        held = {f.get("fiscal_year") for f in filings}
        wanted = set(years) | {y + k for y in years if y not in held for k in (1, 2)}
        views = [self.view(f) for f in filings if not years or f.get("fiscal_year") in wanted]
        return views, {w for v in views for w in tokens(f"{v.filing.get('company') or ''} {ticker}")}

    def _on_statement(self, row: FactRow) -> bool:
        """Is the fact printed in a primary statement (its chunk's `statement`)?"""
        found = self.chunk_lookup(row.chunk_id) if self.chunk_lookup and row.chunk_id else None
        return bool(found and found[1].get("statement"))

    def _with_members(self, question: str, specs: list[MetricMention], tickers: list[str], *,
                      every: bool = True) -> list[MetricMention] | None:
        """Each spec qualified by the member the question names (rag.facts.members); None when one names none.
        every=False (the question does not say it asks for a part): the specs as they are when none names a
        member, and None when some do and some do not, as which figures are the part's is then a guess."""
        views = [self.view(f) for t in tickers for f in self.filings(t)]
        winners = [None if s.qualified else members_named(question, s, views, member_concepts(metric(s.metric_key)))
                   for s in specs]
        named = [s if w is None else narrowed_by(s, w) for s, w in zip(specs, winners)]
        if every:
            return None if any(s is None for s in named) else named
        narrowed = [n is not None and n is not s for n, s in zip(named, specs)]
        if not any(narrowed):
            # Two members named equally: a part is asked, and which one is a guess; the whole is not the answer.
            return None if any(w is not None and len(w) > 1 for w in winners) else specs
        return named if all(narrowed) else None

    def _left_out_members(self, plan: QuestionPlan, specs: list[MetricMention],
                          tickers: list[str]) -> list[MetricMention | None]:
        """For each spec, the spec narrowed to the part of its figure that the question leaves out ("revenue other
        than from <product>", "net sales excluding <region>"): a dimension member the filing tags for the figure's
        concepts. None for a spec whose words left out name no single member; empty when the question leaves out
        no part of any figure. A thing left out that is no part of the figure ("R&D, not counting acquired IPR&D",
        a line of its own) leaves the figure as it is. A figure read by its printed label is narrowed by its own
        concept's members, whether or not the metric vocabulary lets that concept be asked per part."""
        if not plan.excluded:
            return []
        views = [self.view(f) for t in tickers for f in self.filings(t)]
        left_out = " ".join(plan.excluded)
        concepts = [member_concepts(metric(s.metric_key)) or metric(s.metric_key).concepts for s in specs]
        # Named as the filing writes the member, else by words its name holds ("service fees" of "Equipment
        # service fees"): the total holds that part either way, and with several such members which one to
        # take away is a guess.
        named = [members_named(left_out, s, views, c) or members_holding(left_out, views, c)
                 for s, c in zip(specs, concepts)]
        if not any(named):
            return []
        if several_left_out(plan) or any(len(w) > 1 for w in named):
            return [None] * len(specs)
        # The part is asked for itself: the words the mention rules out are its own now, not a filter on it.
        parts = [narrowed_by(s, w) if w else None for s, w in zip(specs, named)]
        return [replace(p, excluded=[]) if p is not None else None for p in parts]

    def _company_by_member(self, plan: QuestionPlan, years: list[int]) -> tuple | None:
        """No company named, but a part of one ("What operating margin did <segment initials> earn"): the one
        company whose filings tag a member that the question names for every figure asked."""
        mentions = [mt for mt in plan.metrics if not mt.vetoed]
        if not mentions or len(mentions) > 2:
            return None
        owners = []
        for ticker in sorted({str(f.get("ticker")).upper() for f in self.filings() if f.get("ticker")}):
            views, _company = self._company_views(ticker, years)
            # Exactly one member named per figure, whether the words sit before the figure's own ("<segment
            # initials> net sales", which qualify the mention) or elsewhere in the question.
            named = [members_named(plan.question, s, views, member_concepts(metric(s.metric_key))) for s in mentions]
            if views and all(len(n) == 1 for n in named):
                owners.append(ticker)
        if len(owners) != 1:
            return None
        ticker = owners[0]
        company = next((f.get("company") for f in self.filings(ticker) if f.get("company")), ticker)
        return ticker, None, (f"No company was named: only {company}'s ({ticker}) filings tag the part of a company "
                              "that the question names.")

    def _company_by_date(self, dates: list[str], mentions: list[MetricMention]) -> tuple | None:
        """No company named, but the exact date of a cover-page figure ("shares outstanding as of October 18,
        2024"): the one indexed annual filing that reports the metric at that date, if exactly one does."""
        if not dates or len(mentions) != 1 or mentions[0].qualified:
            return None
        m = metric(mentions[0].metric_key)
        if m.period != "cover":
            return None  # only cover-page dates are particular to one filing; a year-end date is not
        by_doc = {f["doc_id"]: f for f in self.filings()
                  if (f.get("form") or "").upper() in ANNUAL_FORMS and f.get("ticker") and f.get("fiscal_year")}
        hits = set()
        for doc_id in self.store.docs_with(m.concepts, dates):
            f = by_doc.get(doc_id)
            if f is not None:
                hits.add((f["ticker"].upper(), int(f["fiscal_year"]), f.get("company") or f["ticker"]))
        if len({h[0] for h in hits}) != 1 or len(hits) != 1:
            return None
        ticker, year, company = hits.pop()
        note = (f"No company was named: the only indexed 10-K that reports {lower_label(m.label)} as of "
                f"{nice_date(dates[0])} is {company}'s ({ticker}) FY{year} 10-K.")
        return ticker, year, note

    def _years(self, plan: QuestionPlan, tickers: list[str], years: list[int],
               notes: list[str]) -> dict[str, list[int]]:
        """The fiscal years to read per company: each company's own year when the question pairs them, the latest
        indexed 10-K when it names none or asks for the latest, and the year before too when it asks for a change."""
        growth = plan.calculation.growth
        out: dict[str, list[int]] = {}
        pairs = plan.year_of_company
        if years and pairs and set(pairs) == set(tickers) and set(pairs.values()) == set(years):
            return {t: [y] for t, y in pairs.items()}
        if not years or plan.latest:
            latest = {}
            for t in tickers:
                fys = sorted(self.annual_filings(t))
                if not fys:
                    raise Unresolved(f"no annual filing of {t}")
                latest[t] = fys[-1]
                out[t] = [fys[-1] - 1, fys[-1]] if growth else [fys[-1] - plan.years_back]
            said = ", ".join(f"{t} FY{y}" for t, y in latest.items())
            if plan.years_back and not plan.latest:
                before = "the year" if plan.years_back == 1 else f"{plan.years_back} years"
                notes.append(f"No fiscal year was named: {before} before the latest indexed 10-K ({said}).")
            elif plan.latest:
                notes.append(f"Latest indexed 10-K per company: {said}.")
            else:
                notes.append(f"No fiscal year was named: using the latest indexed 10-K ({said}).")
            if len(set(latest.values())) > 1:
                notes.append("The companies' latest fiscal years differ (and so may their fiscal year-ends).")
            return out
        for t in tickers:
            ys = sorted(set(years))
            if growth and len(ys) == 1:
                ys = [ys[0] - 1, ys[0]]
            out[t] = ys
        return out


    # ---- checking an answer
    def check_answer(self, text: str, tickers: Iterable[str] = (), years: Iterable[int] = ()) -> list[str]:
        """Warnings for figures in an answer that contradict the XBRL fact for the metric, company and fiscal year
        the sentence talks about. Figures that equal some other fact of the company are left alone."""
        return FigureChecker(self).check(text, tickers, years)

    # ---- tables (Financials page, CLI)
    def history(self, tickers: Iterable[str], metric_keys: Iterable[str]) -> list[dict]:
        """Long-format rows (company, metric, fiscal year, value, citation) over every fiscal year the indexed
        filings report, own years first and earlier years from comparatives (labelled)."""
        rows = []
        for t in [t.upper() for t in tickers]:
            annual = self.annual_filings(t)
            if not annual:
                continue
            years = set(annual)
            for fy in annual:
                v = self.view(annual[fy])
                years.update(fy - k for k in range(1, len(v.year_ends)))
            for key in metric_keys:
                m = metric(key)
                for year in sorted(years):
                    val = self.value(m, t, year)
                    if val is None:
                        continue
                    row = val.to_dict()
                    row["source"] = source_label(val)
                    row["inputs"] = [] if val.reported else [
                        {**leaf.to_dict(), "source": source_label(leaf)} for leaf in val.reported_leaves()
                    ]
                    rows.append(row)
        return rows

    def chunk(self, chunk_id: str | None) -> tuple[str, dict] | None:
        if not chunk_id or self.chunk_lookup is None:
            return None
        try:
            return self.chunk_lookup(chunk_id)
        except Exception:  # noqa: BLE001
            return None


def _portion_of(m: Metric, mention: MetricMention | None, view: FilingView, k: int) -> Metric:
    """The metric narrowed to the portion of a balance the question names ("current deferred revenue"): the
    taxonomy's concepts for it end in "Current" or "Noncurrent" (ContractWithCustomerLiabilityCurrent). Only when
    the filing tags that portion; otherwise "current" says "as of now" ("its current cash balance")."""
    if mention is None or not mention.portion or m.period != "instant":
        return m
    suffix = "Current" if mention.portion == "current" else "Noncurrent"
    split = tuple(dict.fromkeys(re.sub(r"(?:Current|Noncurrent)$", "", c) + suffix for c in m.concepts))
    if not any(isinstance(view.find(c, k, "instant"), FactGroup) for c in split):
        return m
    return replace(m, concepts=split, label=f"{m.label}, {mention.portion} portion", derive=None, fallback=None,
                   ext=None)


def _as_worded(mention: MetricMention, first: FactGroup, candidates: list[FactGroup]) -> list[FactGroup]:
    """The candidates the filing prints under the question's own words for the metric, when the metric's own
    choice (`first`) is printed otherwise: a retailer's "Net sales" and "Total revenues" (net sales plus membership
    income) are both the top line to the metric vocabulary, and "net sales" asks for the first. [] when the words
    pick out no different figure, or when the metric's choice is printed under them too ("Net loss attributable
    to <Company> shareholders" is the net loss asked for, beside a "Net loss" including noncontrolling interests)."""
    phrase = " ".join(mention.words).lower()

    def labels(g: FactGroup) -> list[str]:
        return [normalize(r.row_label or "").strip(" :") for r in g.rows]

    def says(g: FactGroup) -> bool:
        return any(label in (phrase, f"total {phrase}") for label in labels(g))

    if any(label.startswith((phrase, f"total {phrase}")) for label in labels(first)):
        return []
    worded = [g for g in candidates if says(g)]
    others = [g for g in candidates if not says(g)]
    if not worded or not others or all(g.value == worded[0].value for g in others):
        return []
    return worded
