"""Reading one filing's facts (FilingView), choosing among concepts that report a figure, and Value: a reported
fact or a figure computed from them."""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..companies import reader_name
from ..schema import period_label
from ..words import tokens
from .labels import (
    ANNUAL_DAYS,
    ANNUAL_FORMS,
    MONTHS_WORDS,
    PERIOD_DAYS,
    currency_of,
    days_between,
    duration_months,
    format_amount,
    nice_date,
    precision_digits,
    split_camel,
    tolerance,
)
from .mentions import normalize
from .metrics import PHRASEBOOK, Metric
from .store import FactRow

log = logging.getLogger(__name__)


# ==============================================================================================================
# Reading one filing's facts


@dataclass
class FactGroup:
    """Every occurrence of one fact (concept, period, dimensions, unit) in a filing."""

    concept: str
    period_start: str | None
    period_end: str | None
    dims: dict
    unit: str
    rows: list[FactRow]
    best: FactRow  # the most precise occurrence, preferring the financial statements for the citation
    conflict: bool  # occurrences that disagree beyond their stated precision

    @property
    def instant(self) -> bool:
        return self.period_start in (None, "")

    @property
    def value(self) -> float:
        return self.best.value

    @classmethod
    def build(cls, rows: list[FactRow], dims: dict | None = None) -> "FactGroup":
        """`dims`: the dimensions the group is read under, when not the rows' own named ones (see
        _nested_members)."""
        ordered = sorted(rows, key=lambda r: (-precision_digits(r.decimals), _cite_rank(r),
                                              r.char_start if r.char_start >= 0 else 1 << 40))
        best = ordered[0]
        conflict = any(
            abs(r.value - best.value) > tolerance(r.decimals) + tolerance(best.decimals) + 1e-9 * abs(best.value)
            for r in rows
        )
        return cls(best.concept, best.period_start, best.period_end,
                   named_dims(best.dimensions) if dims is None else dims, best.unit, rows, best, conflict)


# Segment disclosures under ASU 2023-07 tag a segment's figure on two axes: the segment's own member, and
# srt:ConsolidationItemsAxis = us-gaap:OperatingSegmentsMember, which only says that the figure is a segment's.
# That second axis names no part of the company, so a segment's figure is read as the one member it names.
_SEGMENT_MARKERS = {("srt:ConsolidationItemsAxis", "us-gaap:OperatingSegmentsMember")}


def named_dims(dims: dict) -> dict:
    """The dimensions that name a part of the company: a segment marker beside a member of another axis is
    dropped."""
    if len(dims) < 2:
        return dims
    named = {axis: member for axis, member in dims.items() if (axis, member) not in _SEGMENT_MARKERS}
    return named or dims


_SEGMENTS_AXIS = "us-gaap:StatementBusinessSegmentsAxis"


def _nested_members(rows: list[FactRow]) -> dict[tuple[str, frozenset], dict]:
    """(concept, two-axis dims) -> the one member those figures belong to: a member of another axis (a product
    line, a region) that a concept tags only beside one and the same reportable segment, and never alone, such as
    "<Brand> ads" within "<Company> Services". The segment is the container (segment reporting discloses its lines
    inside it), so the figure is the line's own; a line split across segments has no one figure."""
    alone: set[tuple[str, str, str]] = set()
    segments: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for r in rows:
        dims = named_dims(r.dimensions)
        if len(dims) == 1:
            alone.add((r.concept, *next(iter(dims.items()))))
        elif len(dims) == 2 and _SEGMENTS_AXIS in dims:
            ((axis, member),) = [(a, m) for a, m in dims.items() if a != _SEGMENTS_AXIS]
            segments[(r.concept, axis, member)].add(dims[_SEGMENTS_AXIS])
    out: dict[tuple[str, frozenset], dict] = {}
    for (concept, axis, member), held_by in segments.items():
        if len(held_by) == 1 and (concept, axis, member) not in alone:
            out[(concept, frozenset({(axis, member), (_SEGMENTS_AXIS, next(iter(held_by)))}))] = {axis: member}
    return out


def _member_ok(g: FactGroup, member) -> bool:
    """The consolidated figure when no member is asked for, else the figure of exactly the one member asked for."""
    return not g.dims if member is None else len(g.dims) == 1 and bool(member(g.dims))


def _cite_rank(r: FactRow) -> int:
    if r.char_start < 0 or not r.chunk_id:
        return 3
    return {"Item 8": 0, "Item 7": 1}.get(r.section or "", 2)


def _listed_class(filing: dict, rows: list[FactRow]) -> str | None:
    """The class of stock traded under the filer's own ticker, as the cover's trading symbols say (one filer's Class A,
    traded under its ticker): the class a per-share figure means when the filing tags it per class only."""
    ticker = (filing.get("ticker") or "").upper()
    for r in rows:
        if r.concept == "dei:TradingSymbol" and ticker and (r.text or "").strip().upper() == ticker:
            classes = [m for axis, m in r.dimensions.items() if "ClassOfStock" in axis]
            if len(classes) == 1 and len(r.dimensions) == 1:
                return classes[0]
    return None


class FilingView:
    """One filing's facts grouped for selection, and the fiscal year-ends it reports (its own first)."""

    def __init__(self, filing: dict, rows: list[FactRow]):
        self.filing = filing
        self.listed_class = _listed_class(filing, rows)
        groups: dict[tuple, list[FactRow]] = defaultdict(list)
        rows = [r for r in rows if r.value is not None and math.isfinite(r.value)]
        nested = _nested_members(rows)
        for r in rows:
            named = named_dims(r.dimensions)
            if len(named) == 2:
                named = nested.get((r.concept, frozenset(named.items())), named)
            dims = json.dumps(named, sort_keys=True)
            groups[(r.concept, r.period_start, r.period_end, dims, r.unit)].append(r)
        self.groups = [FactGroup.build(v, json.loads(key[3])) for key, v in groups.items()]
        self.by_concept: dict[str, list[FactGroup]] = defaultdict(list)
        for g in self.groups:
            self.by_concept[g.concept].append(g)
        self.year_ends = self._year_ends()
        self._period_ends: dict[int, list[str]] = {}

    @property
    def doc_id(self) -> str:
        return self.filing["doc_id"]

    @property
    def fiscal_year(self) -> int | None:
        return self.filing.get("fiscal_year")

    @property
    def annual(self) -> bool:
        return (self.filing.get("form") or "").upper() in ANNUAL_FORMS

    def _year_ends(self) -> list[str]:
        ends: Counter = Counter()
        for g in self.groups:
            if g.dims or g.instant:
                continue
            d = days_between(g.period_start, g.period_end)
            if d is not None and ANNUAL_DAYS[0] <= d <= ANNUAL_DAYS[1]:
                ends[g.period_end] += 1
        pe = self.filing.get("period_end")
        if not ends:
            return [pe] if pe else []
        if pe in ends:
            current = pe
        else:
            near = [e for e in ends if pe and abs(days_between(e, pe) or 999) <= 7]
            if near:
                current = max(near, key=lambda e: ends[e])
            else:
                top = ends.most_common(1)[0][1]
                # A 10-Q may print a single annual figure (a prior year's total in a note): never fail on it.
                current = max([e for e, c in ends.items() if c >= max(2, top // 4)] or list(ends))
        out = [current]
        for e in sorted(ends, reverse=True):
            if e >= out[-1]:
                continue
            gap = days_between(e, out[-1]) or 0
            if ANNUAL_DAYS[0] - 5 <= gap <= ANNUAL_DAYS[1] + 5:
                out.append(e)
        return out

    def find(self, concept: str, k: int, period: str, member=None, months: int | None = None) -> FactGroup | str | None:
        """The consolidated (or member) fact of `concept` for the fiscal year k years before this filing's own;
        with `months`, for the period of that length ending at this filing's own period end (a 10-Q's quarter or
        year to date), k years before. Returns the group, "conflict" when the candidates disagree, or None."""
        if period == "cover":
            return self._cover(concept, member) if k == 0 else None
        if months is not None:
            return self._find_months(concept, k, period, member, months)
        if k >= len(self.year_ends):
            return None
        end = self.year_ends[k]
        cands = []
        for g in self.by_concept.get(concept, ()):
            if g.period_end != end:
                continue
            if period == "instant" and not g.instant:
                continue
            if period == "duration":
                d = days_between(g.period_start, g.period_end)
                if g.instant or d is None or not ANNUAL_DAYS[0] <= d <= ANNUAL_DAYS[1]:
                    continue
            if _member_ok(g, member):
                cands.append(g)
        return _pick(cands)

    def period_ends(self, months: int) -> list[str]:
        """The ends of this filing's periods of `months` months (0: its balance-sheet dates), its own period first,
        then a year earlier (the comparative column a 10-Q prints beside it)."""
        if months not in self._period_ends:
            self._period_ends[months] = self._chain(months)
        return self._period_ends[months]

    def _chain(self, months: int) -> list[str]:
        ends: Counter = Counter()
        for g in self.groups:
            if not g.dims and duration_months(g.period_start, g.period_end) == months:
                ends[g.period_end] += 1
        own = self.filing.get("period_end")
        if own not in ends:
            near = [e for e in ends if own and abs(days_between(e, own) or 999) <= 7]
            own = max(near, key=lambda e: ends[e]) if near else None
        if own is None:
            return []
        out = [own]
        for e in sorted(ends, reverse=True):
            gap = days_between(e, out[-1]) or 0
            if e < out[-1] and ANNUAL_DAYS[0] - 5 <= gap <= ANNUAL_DAYS[1] + 5:
                out.append(e)
        return out

    def _find_months(self, concept: str, k: int, period: str, member, months: int) -> FactGroup | str | None:
        want = 0 if period == "instant" else months
        ends = self.period_ends(want)
        if k >= len(ends):
            return None
        cands = []
        for g in self.by_concept.get(concept, ()):
            if g.period_end != ends[k] or duration_months(g.period_start, g.period_end) != want:
                continue
            if _member_ok(g, member):
                cands.append(g)
        return _pick(cands, target=sum(PERIOD_DAYS[want]) // 2 if want else 365)

    def _cover(self, concept: str, member=None) -> FactGroup | str | None:
        """The cover page's latest figure: the company's, or one member's (a class of stock)."""
        cands = [g for g in self.by_concept.get(concept, ()) if _member_ok(g, member)]
        if not cands:
            return None
        latest = max(g.period_end or "" for g in cands)
        return _pick([g for g in cands if (g.period_end or "") == latest])

    def cover_classes(self, concept: str) -> list[FactGroup]:
        """Cover-page values per share class (a filer may report A, B and C and no total)."""
        cands = [g for g in self.by_concept.get(concept, ())
                 if len(g.dims) == 1 and "ClassOfStock" in next(iter(g.dims))]
        if not cands:
            return []
        latest = max(g.period_end or "" for g in cands)
        return [g for g in cands if (g.period_end or "") == latest]

    def extension(self, pattern: str, k: int, period: str, months: int | None = None) -> FactGroup | str | None:
        rx = re.compile(pattern)
        hits = []
        for concept in self.by_concept:
            prefix, _, local = concept.partition(":")
            if prefix in ("us-gaap", "dei", "srt", "ifrs-full") or not rx.search(local):
                continue
            found = self.find(concept, k, period, months=months)
            if found is not None:
                hits.append(found)
        if any(h == "conflict" for h in hits) or len({h.value for h in hits if not isinstance(h, str)}) > 1:
            return "conflict"
        return hits[0] if hits else None


def _label_score(m: Metric, g: FactGroup) -> int:
    """2: a row of the filing is labelled as the metric ('Research and development'); 1: a row label starts so;
    0: no row says so ('Charges for acquired in-process research and development'); -1: nothing to judge by."""
    labels = [r.row_label for r in g.rows if r.row_label]
    if not labels:
        return -1
    best = 0
    for label in labels:
        text = re.sub(r"\s+", " ", normalize(label)).strip(" :,")
        text = re.sub(r"\s*\(\d\)$", "", text)  # a footnote mark: 'Depreciation and amortization (1)'
        if PHRASEBOOK.fullmatch(text, only=m) or PHRASEBOOK.fullmatch(re.sub(r"\s*\(.*?\)\s*", " ", text).strip(),
                                                                      only=m):
            best = max(best, 2)
        elif PHRASEBOOK.starts(text, only=m):
            best = max(best, 1)
    return best


def by_label(m: Metric, candidates: list[FactGroup]) -> FactGroup:
    """The first concept in priority order, unless a filing tags it on a row that is not the metric (one filer tags
    'Charges for acquired in-process research and development' as ResearchAndDevelopmentExpense) or only in
    prose, while another candidate sits on a row labelled exactly as the metric ('Research and development
    expense') with a figure at least 1.5 times apart."""
    first = candidates[0]
    if _label_score(m, first) > 0:
        return first
    for g in candidates[1:]:
        a, b = abs(first.value), abs(g.value)
        if min(a, b) == 0 or max(a, b) / min(a, b) < 1.5:
            continue
        if _label_score(m, g) == 2:
            return g
    return first


def primary_statement(chosen: FactGroup, candidates: list[FactGroup]) -> FactGroup:
    """Of the concepts that report the same figure, the one printed first in the statements: one filer tags 'Total
    revenues' on its income statement as RevenueFromContractWithCustomer... and as Revenues only in a note, and
    the statement is the source an analyst checks."""
    # The same figure rounded twice differs by less than the two roundings together; one unit apart at the stated
    # precision is another figure (a net loss of 574 beside 571 attributable to the company).
    def agrees(g: FactGroup) -> bool:
        gap = abs(g.value - chosen.value)
        return gap <= 1e-9 * abs(chosen.value) or gap < tolerance(g.best.decimals) + tolerance(chosen.best.decimals)

    same = [g for g in candidates if g is chosen or agrees(g)]

    def place(g: FactGroup) -> tuple:
        r = g.best
        return _cite_rank(r), r.char_start if r.char_start >= 0 else 1 << 40

    return min(same, key=place) if same else chosen


# Words that only place a figure (its side of the balance sheet, a subtotal): they say nothing of what it is.
PLACING_WORDS = set(tokens("net total current noncurrent non-current gross other"))


def concept_words(concept: str) -> set[str]:
    """The stems of a concept's local name that say what the figure is (not where it sits)."""
    return set(tokens(" ".join(split_camel(concept.split(":")[-1])))) - PLACING_WORDS


def printed_as(m: Metric, view: FilingView, k: int, period: str, months: int | None = None) -> FactGroup | None:
    """The figure a filing prints on a row labelled exactly as the metric ("Inventories") but tags with another
    concept than the metric's own (InventoryFinishedGoodsNetOfReserves for a filer holding finished goods only):
    the concept's name must open with a word of the metric's own concept names, and every such candidate must
    agree. The taxonomy names an element that only a note discloses "...Disclosure": the fair value hierarchy's
    "Total liabilities" (LiabilitiesFairValueDisclosure) is no balance-sheet total."""
    own = set().union(*(concept_words(c) for c in m.concepts))
    candidates = []
    for concept, groups in view.by_concept.items():
        # The name's first word is what the element measures: InventoryFinishedGoods... is an inventory,
        # DeferredTaxAssetsInventory a tax asset that a note also prints beside the label "Inventories".
        head = split_camel(concept.split(":")[-1])[:1]
        if concept in m.concepts or not head or not (set(tokens(head[0])) & own) or concept.endswith("Disclosure"):
            continue
        if not any(not g.dims and _label_score(m, g) == 2 for g in groups):
            continue
        found = view.find(concept, k, period, months=months)
        if isinstance(found, FactGroup):
            candidates.append(found)
    picked = _pick(candidates)
    if not isinstance(picked, FactGroup):
        return None  # none, or two rows labelled as the metric with different figures: neither is the answer
    return primary_statement(picked, candidates)


def _pick(cands: list[FactGroup], target: int = 365) -> FactGroup | str | None:
    if not cands:
        return None
    if any(g.conflict for g in cands):
        return "conflict"
    if len(cands) > 1:
        cands = sorted(cands, key=lambda g: abs((days_between(g.period_start, g.period_end) or target) - target))
        first = cands[0]
        for g in cands[1:]:
            if abs(g.value - first.value) > tolerance(g.best.decimals) + tolerance(first.best.decimals) + 1e-9 * abs(first.value):
                return "conflict"
    return cands[0]


# ==============================================================================================================
# Values: a reported fact or a figure computed from them


@dataclass
class Value:
    metric: Metric
    amount: float
    kind: str  # money / per_share / shares / pure / percent / ratio
    ticker: str
    company: str
    fiscal_year: int
    filing: dict  # the filing the figure was read from
    comparative: bool = False  # read from a later filing's prior-year column
    group: FactGroup | None = None  # reported figures
    inputs: list["Value"] = field(default_factory=list)  # computed figures
    op: str | None = None  # sub / add / div
    member: str | None = None  # the dimension member that narrowed it (label)
    member_axis: str | None = None
    printed_label: str | None = None  # the row label printed beside it, when that names what was asked
    scale: int = 6
    places: int = 0
    unit: str = "usd"
    quarter: int | None = None  # the fiscal quarter asked (1-4); None for a fiscal year
    months: int = 12  # the length of the period asked: 3 the quarter, 6 or 9 the year to date, 12 the year

    @property
    def reported(self) -> bool:
        return self.group is not None

    @property
    def fact(self) -> FactRow | None:
        return self.group.best if self.group else None

    @property
    def label(self) -> str:
        if self.printed_label:
            return self.printed_label
        return f"{self.metric.label} — {self.member}" if self.member else self.metric.label

    @property
    def named(self) -> str:
        """The figure under the label its filer prints on the cited row ("Total net sales") where that row shows one
        of a few words, else `label`; a member's figure keeps the member it names."""
        printed = (self.fact.row_label or "").strip(" :") if self.group and not self.printed_label else ""
        words = len(printed.split())
        if not 2 <= words <= 8 or any(ch.isdigit() for ch in printed):
            return self.label
        return f"{printed} — {self.member}" if self.member else printed

    @property
    def period_end(self) -> str | None:
        if self.group:
            return self.group.period_end
        ends = [v.period_end for v in self.inputs if v.period_end]
        return max(ends) if ends else None

    @property
    def period_start(self) -> str | None:
        if self.group:
            return self.group.period_start
        starts = [v.period_start for v in self.inputs if v.period_start]
        return min(starts) if starts else None

    def display(self, magnitude: bool = False) -> str:
        """'$48,210 million'; with `magnitude`, without its sign (a loss or an outflow worded as such)."""
        amount = abs(self.amount) if magnitude else self.amount
        places = {"percent": 2, "ratio": 2, "days": 1}.get(self.kind, self.places)
        text = format_amount(amount, self.kind, scale=self.scale, places=places, unit=self.unit)
        if self.kind == "money" and self.scale == 3 and abs(amount) >= 1e8:
            text += f" ({format_amount(amount, 'money', scale=6, places=1, unit=self.unit)})"
        return text

    def who(self) -> str:
        return f"{reader_name(self.company)} ({self.ticker})" if self.company else self.ticker

    def period_label(self) -> str:
        """'FY2024'; 'Q3 FY2025', 'H1 FY2025' (six months), '9M FY2025' for a quarter or a year to date."""
        if self.quarter is None:
            return f"FY{self.fiscal_year}"
        if self.months == 3:
            return f"Q{self.quarter} FY{self.fiscal_year}"
        return ("H1" if self.months == 6 else f"{self.months}M") + f" FY{self.fiscal_year}"

    def instant(self) -> bool:
        return self.metric.period in ("instant", "cover") or bool(self.group and self.group.instant)

    def when(self) -> str:
        """'FY2024 (fiscal year ended September 28, 2024)' or '... (as of September 28, 2024)'; for a quarter or
        a year to date, the period in words: 'the three months ended June 28, 2025 (Q3 FY2025)'."""
        if self.quarter is not None:
            return self._period_words()
        end = self.period_end
        leaves = self.reported_leaves()
        if end and leaves and all(v.group.concept.startswith("dei:") for v in leaves):
            return f"FY{self.fiscal_year} 10-K cover page (as of {nice_date(end)})"
        if not end:
            return f"FY{self.fiscal_year}"
        if self.metric.period in ("instant", "cover") or (self.group and self.group.instant):
            return f"FY{self.fiscal_year} (as of {nice_date(end)})"
        return f"FY{self.fiscal_year} (fiscal year ended {nice_date(end)})"

    def _period_words(self) -> str:
        end = nice_date(self.period_end)
        if self.instant():
            return f"as of {end} (end of Q{self.quarter} FY{self.fiscal_year})"
        return f"the {MONTHS_WORDS.get(self.months, str(self.months))} months ended {end} ({self.period_label()})"

    def reported_leaves(self) -> list["Value"]:
        if self.reported:
            return [self]
        out = []
        for v in self.inputs:
            out.extend(v.reported_leaves())
        return out

    def to_dict(self) -> dict:
        f = self.fact
        return {
            "metric": self.metric.key, "label": self.label, "ticker": self.ticker, "company": self.company,
            "fiscal_year": self.fiscal_year, "value": self.amount, "display": self.display(), "kind": self.kind,
            "concept": f.concept if f else None, "period_start": self.period_start, "period_end": self.period_end,
            "dimensions": f.dimensions if f else {}, "doc_id": self.filing.get("doc_id"),
            "form": self.filing.get("form"), "filing_fiscal_year": self.filing.get("fiscal_year"),
            "comparative": self.comparative, "chunk_id": f.chunk_id if f else None,
            "section": f.section if f else None, "page": f.page if f else None,
            "formula": None if self.reported else self.metric.formula or OP_WORD.get(self.op or "", ""),
            "quarter": self.quarter, "months": self.months, "period": self.period_label(),
        }


OP_SIGN = {"sub": "−", "add": "+", "div": "/"}
DAYS_PER_YEAR = 365  # the textbook convention for days ratios, whatever weeks the fiscal year had
OP_WORD = {"sub": "difference", "add": "sum", "div": "ratio"}


def combine(metric_: Metric, op: str, a: Value, b: Value) -> Value | None:
    if op in ("sub", "add"):
        if a.kind != b.kind or (a.kind == "money" and currency_of(a.unit) != currency_of(b.unit)):
            return None
        amount = a.amount - b.amount if op == "sub" else a.amount + b.amount
        kind = a.kind
    else:
        if b.amount == 0 or (a.kind == "money" and b.kind == "money" and currency_of(a.unit) != currency_of(b.unit)):
            return None
        amount = a.amount / b.amount
        kind = "percent" if metric_.kind in ("percent", "pure") else "ratio"
        if metric_.kind == "days":  # a balance as days of the year's flow (days sales outstanding): × 365
            amount, kind = amount * DAYS_PER_YEAR, "days"
    return Value(
        metric=metric_, amount=amount, kind=kind, ticker=a.ticker, company=a.company, fiscal_year=a.fiscal_year,
        filing=a.filing, comparative=a.comparative or b.comparative, inputs=[a, b], op=op,
        # Written at the finer scale of the two, with the decimals each input carries there ("$30.1 billion" is
        # "$30,100 million": no decimal left).
        scale=min(a.scale, b.scale), places=max(max(0, v.places - (v.scale - min(a.scale, b.scale))) for v in (a, b)),
        unit=a.unit,
    )


@dataclass(frozen=True)
class When:
    """A part of a fiscal year to read instead of the whole year: a quarter (3 months) or a year to date (6 or 9
    months), `back` years before it (the prior-year column its 10-Q prints beside it). `borrow`: when the
    period's own 10-Q is not indexed, the next year's 10-Q's prior-year column may stand in (said in the answer)."""

    quarter: int | None
    months: int = 3
    back: int = 0
    borrow: bool = True

    @property
    def quarterly(self) -> bool:
        """Read from a 10-Q: the first three quarters and their year to date (a fourth quarter is not filed)."""
        return self.quarter in (1, 2, 3) and self.months in (3, 6, 9) and self.months <= 3 * self.quarter


def stamp(v: Value, when: When | None) -> Value:
    """A value marked with the period asked, so that it names it in words."""
    if when is not None:
        v.quarter, v.months = when.quarter, when.months
    return v


def period_name(year: int, when: When | None) -> str:
    if when is None or when.quarter is None:
        return f"FY{year}"
    if when.months == 3:
        return f"Q{when.quarter} FY{year}"
    return ("H1" if when.months == 6 else f"{when.months}M") + f" FY{year}"


class Unresolved(Exception):
    """The facts cannot give this figure (missing, ambiguous or disagreeing): the question falls through."""


class NotReported(Unresolved):
    """No fact of the filing reports the metric for the period asked, and none computes it."""


def source_label(v: Value) -> str:
    """Where a value comes from, for the Financials page and the CLI: '10-Q Q3 FY2025 · Part I Item 1 p. 5', a
    prior-year comparative marked, a computed value marked."""
    f = v.filing
    base = f"{f.get('form') or ''} {period_label(f.get('fiscal_year'), f.get('fiscal_period'))}"
    if v.comparative:
        base += " (prior-year comparative)"
    if not v.reported:
        return base + " · computed"
    fact = v.fact
    if fact.section:
        base += f" · {fact.section}"
    if fact.page:
        base += f" p. {fact.page}"
    return base
