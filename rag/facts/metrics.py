"""The metric vocabulary: analysts' words -> XBRL concepts (ordered: the first concept with a value wins), and
the primary statement that prints each metric. The vocabulary itself is data (rag/data/metrics.toml), checked here
when it loads."""

from __future__ import annotations

import logging
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..phrasing import Phrasebook, Phrasing
from .labels import first_sign, other_sign

log = logging.getLogger(__name__)

_DATA = Path(__file__).resolve().parent.parent / "data" / "metrics.toml"
_PERIODS = ("duration", "instant", "cover")
_KINDS = ("money", "per_share", "shares", "pure", "percent", "ratio", "days")
_OPERATIONS = ("sub", "add", "div")
_STATEMENTS = ("income statement", "balance sheet", "cash flow statement")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    phrases: tuple[str, ...]  # phrasings in rag.facts.phrasing's notation
    concepts: tuple[str, ...] = ()
    period: str = "duration"  # duration | instant | cover (a cover-page fact dated after the period end)
    kind: str = "money"  # money | per_share | shares | pure | percent | ratio | days
    members: bool = False  # may be narrowed by a dimension member ("<product> net sales", "subscription revenue")
    derive: tuple | None = None  # ("sub" | "add" | "div", metric a, metric b): always computed
    fallback: tuple | None = None  # the same, used only when no concept has a value
    ext: str | None = None  # regex on a company extension concept's local name: the last resort
    formula: str = ""  # the computed figure's definition in words
    listed: bool = True  # offered on the Financials page
    # Phrasings right after the mention that mean something else ("how much cash did it return").
    veto: tuple[str, ...] = ()
    # A verb with no object ("how much did it earn"): names this figure only when the question names no other.
    verb_phrases: tuple[str, ...] = ()
    statement: str = ""  # the primary statement that prints it
    # How a statement words the figure, "{}" standing for the amount without its sign: below zero for an income or
    # cash-flow line ("a net loss of {}"), always for a cash outflow line ("{} spent on ...").
    negative: str = ""
    outflow: str = ""
    # Above zero, for a line whose concept counts the sign its label names second (see _labelled).
    positive: str = ""


_FIELDS = {"key", "label", "phrasings", "verb_phrasings", "concepts", "period", "kind", "members", "derive", "fallback",
           "ext", "formula", "listed", "veto", "statement", "negative", "outflow", "positive"}


def _metric_of(entry: dict) -> Metric:
    """One [[metric]] table, checked: a mistake in the data file is named at start, not met mid-answer."""
    key = entry.get("key", "?")
    unknown = set(entry) - _FIELDS
    if unknown or not isinstance(entry.get("label"), str):
        raise ValueError(f"metrics.toml, metric {key!r}: unknown fields {sorted(unknown)} or no label")
    for field, allowed in (("period", _PERIODS), ("kind", _KINDS), ("statement", _STATEMENTS)):
        if field in entry and entry[field] not in allowed:
            raise ValueError(f"metrics.toml, metric {key!r}: {field} must be one of {allowed}")
    for field in ("derive", "fallback"):
        op = entry.get(field)
        if op is not None and (len(op) != 3 or op[0] not in _OPERATIONS):
            raise ValueError(f"metrics.toml, metric {key!r}: {field} is [operation, metric, metric]")
    for concept in entry.get("concepts", []):
        prefix, _colon, local = concept.partition(":")
        if not (prefix.islower() and local[:1].isupper() and local.isidentifier()):
            raise ValueError(f"metrics.toml, metric {key!r}: {concept!r} is not a prefixed concept name")
    return Metric(
        key, entry["label"], tuple(entry.get("phrasings", ())), tuple(entry.get("concepts", ())),
        period=entry.get("period", "duration"), kind=entry.get("kind", "money"), members=entry.get("members", False),
        derive=tuple(entry["derive"]) if "derive" in entry else None,
        fallback=tuple(entry["fallback"]) if "fallback" in entry else None,
        ext=entry.get("ext"), formula=entry.get("formula", ""), listed=entry.get("listed", True),
        veto=tuple(entry.get("veto", ())), verb_phrases=tuple(entry.get("verb_phrasings", ())),
        statement=entry.get("statement", ""), negative=entry.get("negative", ""), outflow=entry.get("outflow", ""),
        positive=entry.get("positive", ""))


def _load(path: Path = _DATA) -> tuple[list[Metric], frozenset[str]]:
    with path.open("rb") as f:
        data = tomllib.load(f)
    metrics = [_metric_of(entry) for entry in data["metric"]]
    keys = [m.key for m in metrics]
    if len(set(keys)) != len(keys):
        raise ValueError("metrics.toml: a key is used twice")
    for m in metrics:
        for op in (m.derive, m.fallback):
            if op and not set(op[1:]) <= set(keys):
                raise ValueError(f"metrics.toml, metric {m.key!r}: computed from an unknown metric {op[1:]}")
    return metrics, frozenset(data.get("note_concepts", ()))


METRICS, NOTE_CONCEPTS = _load()
METRIC_BY_KEY = {m.key: m for m in METRICS}
# Every phrasing of every metric, parsed once (a phrasing the notation cannot read fails the import).
PHRASEBOOK: Phrasebook[Metric] = Phrasebook(
    [Phrasing(text, m) for m in METRICS for text in m.phrases + m.verb_phrases])
VERB_PHRASINGS = frozenset(id(p) for p in PHRASEBOOK.phrasings if p.text in p.names.verb_phrases)
VETOES = {m.key: [Phrasing(text, m) for text in m.veto] for m in METRICS if m.veto}


# A figure asked for by the label the filing prints beside it (rag.facts.row_labels): one concept, no phrase list.
# Its key carries what defines it, "concept|<period>|<qname>|<label>", so any stage can rebuild it from a mention.
LABELLED_PREFIX = "concept|"


def labelled_key(concept: str, label: str, instant: bool) -> str:
    return "|".join((LABELLED_PREFIX.rstrip("|"), "instant" if instant else "duration", concept, label))


@lru_cache(maxsize=512)
def _labelled(key: str) -> Metric:
    _prefix, period, concept, label = key.split("|", 3)
    # Below zero, a line printed in two signs is worded in the other one: "$294 million of other expense, net".
    below_zero = other_sign(label)
    if below_zero and _INCOME_POSITIVE.search(concept) and _EXPENSE_FIRST.match(first_sign(label)):
        # "Interest expense (income), net" tagged InterestIncomeExpense...Net: the concept counts income above zero,
        # so its figure above zero is the income the label names second, and below zero the expense it names first.
        return Metric(key, label, (), (concept,), period=period, listed=False,
                      positive=f"{{}} of {below_zero}", negative=f"{{}} of {first_sign(label)}")
    return Metric(key, label, (), (concept,), period=period, listed=False,
                  negative=f"{{}} of {below_zero}" if below_zero else "")


# A concept that nets income against expense names income first (InterestIncomeExpenseNonoperatingNet,
# NonoperatingIncomeExpense): above zero is income. A label that names the expense first reads the other way.
_INCOME_POSITIVE = re.compile(r":\w*(?:Income|Gain)(?:Loss|Expense)")
_EXPENSE_FIRST = re.compile(r"^(?:[\w-]+\s+){0,3}?(?:expenses?|loss(?:es)?|costs?)\b")


def metric(key: str) -> Metric:
    if key.startswith(LABELLED_PREFIX):
        return _labelled(key)
    return METRIC_BY_KEY[key]



def member_concepts(metric_: Metric) -> tuple[str, ...]:
    """The concepts whose dimension members can narrow a metric ("<segment> operating income"): its own, or, for
    a figure computed from two that both can be narrowed (a segment's operating margin), its inputs'. Empty when
    the metric is only ever the company's total."""
    if metric_.members:
        return metric_.concepts
    if metric_.derive and all(METRIC_BY_KEY[key].members for key in metric_.derive[1:]):
        return tuple(c for key in metric_.derive[1:] for c in METRIC_BY_KEY[key].concepts)
    return ()


STATEMENT_BY_METRIC = {m.key: m.statement for m in METRICS if m.statement}
STATEMENT_METRICS = {name: tuple(k for k, s in STATEMENT_BY_METRIC.items() if s == name) for name in _STATEMENTS}


def prints_metric(low: str, metrics: list[Metric]) -> bool:
    """Does lower-cased text print one of the metrics by any of its phrasings?"""
    return any(PHRASEBOOK.find(low, only=m) for m in metrics)


def metric_statements(metric_: Metric) -> list[str]:
    """The primary statements that print a metric, or its inputs when it is computed."""
    own = STATEMENT_BY_METRIC.get(metric_.key)
    if own:
        return [own]
    out: list[str] = []
    for op in (metric_.derive, metric_.fallback):
        for key in (op or ())[1:]:
            for name in metric_statements(METRIC_BY_KEY[key]):
                if name not in out:
                    out.append(name)
    return out


