"""How much a sentence or table row of the retrieved passages answers the question: one linear score over named
features, in log space, its weights saved as data in `rag/data/unit_scoring.json`, and the scorer that computes them
(`scored_units`).

A unit's words are matched against the question's (IDF-weighted overlap over the retrieved passages), and, for a
prose question, its meaning too, with the index's own embedding model (a sentence that says what is asked in other
words); what neither can see is whether the unit is the kind of thing asked (a count for "how many", an amount for
"how much", a figure at all, the year named, the class of stock named). Each of those is a feature here, 1 when it
holds. The score is exp(weights . features): a power of the word match times a factor per feature it holds. The
file's `prior` is the factors as first set by hand, and `fixed` the features whose weight is a product decision the
fit leaves as it is (an older filing's sentence counts less when no period is named: the company as it is now);
`python -m rag.unit_fit` fits the `weights` from the prior on the dev sets' tune halves (pairwise logistic
regression: each unit quoting a question's evidence against each that does not, of the same question) and reports
them on the held-out companies.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..boilerplate import boilerplate_model
from ..embedding import text_vectors
from ..numbers import YEAR, parse_numbers, worth_checking
from ..phrasing import PhraseList
from ..schema import Citation, QuestionPlan
from .counts import amounts_only, counts_named, names_counted, only_amounts, row_figures
from .figures import answer_figures
from .quotable import QuotableUnit, quotable_units
from .table_figure import PERCENT_Q, negated, numeric_question
from .terms import (
    GENERIC_TERMS,
    content_terms,
    is_covered,
    period_terms,
    question_terms,
    section_tokens,
    tokens,
    weighted_synonyms,
)

WEIGHTS_PATH = Path(__file__).resolve().parent.parent / "data" / "unit_scoring.json"

UNIT_FEATURES = (
    "word_match",         # log of the unit's IDF-weighted overlap with the question's words (its own and context)
    "year_named",         # it prints a year asked (or is a sentence of a filing of that year)
    "other_year_row",     # a row under year heads, none of them asked
    "figure_named",       # it prints a figure the question names
    "count_stated",       # "how many": a sentence giving a number of the thing counted
    "amounts_for_count",  # "how many": a row of dollars or percentages only
    "no_count_sentence",  # "how many": a sentence whose figures are all amounts
    "counted_row",        # "how many": a row of a table that counts the thing
    "rates_for_amount",   # "how much": a row of percentages only
    "negated_row",        # a row of the figure the question rules out ("Non-GAAP" for "GAAP")
    "other_share_class",  # a unit about another class of stock than the one named
    "left_out",           # it holds what the question leaves out ("excluding cash") and does not say so
    "figure_row",         # a figure asked: a row with a figure worth checking
    "figure_sentence",    # a figure asked: a sentence with one
    "no_figure",          # a figure asked: a unit without one
    "length",             # log(1 + words over 25 / 40): longer units say more than what was asked
    "retrieval_place",    # log(1 + 0.25 / (1 + rank)) of its passage in the retrieval order
    "older_filing",       # no period named: a filing older than the company's latest among the sources
    "coverage",           # log(0.4 + 0.6 * the share of the question's content terms it holds, with context)
    "meaning",            # prose asked: cosine of its and the question's vectors (the index's embedding model)
    "boilerplate",        # prose asked, a sentence: how likely it is boilerplate (rag.boilerplate, same vectors)
)


class UnitScoringError(ValueError):
    """The weights file does not fit the features this code computes."""


@dataclass(frozen=True)
class UnitScoring:
    weights: np.ndarray

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> UnitScoring:
        data = json.loads(path.read_text(encoding="utf-8"))
        names = list(data.get("features") or [])
        if names != list(UNIT_FEATURES):
            raise UnitScoringError(f"{path.name} holds weights for {names}, but the scorer computes "
                                   f"{list(UNIT_FEATURES)}; fit it again (python -m rag.unit_fit)")
        weights = np.asarray(data["weights"], dtype=float)
        if weights.shape != (len(UNIT_FEATURES),) or not np.all(np.isfinite(weights)):
            raise UnitScoringError(f"{path.name}: expected {len(UNIT_FEATURES)} finite weights")
        return cls(weights)

    def score(self, x: list[float]) -> float:
        return math.exp(float(np.dot(self.weights, x)))


_DEFAULT: UnitScoring | None = None


def default_unit_scoring() -> UnitScoring:
    """The weights the package ships, read once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = UnitScoring.load()
    return _DEFAULT


# An amount asked, not its change: "how much volume", but not "how much did it grow" or "how much of revenue".
_HOW_MUCH = re.compile(r"\bhow\s+much\b(?!\s+of\b)", re.I)
_AMOUNT_CHANGED = PhraseList("amount_changed")


def asks_amount(question: str) -> bool:
    """"How much" asked of an amount, with no word of its change after it (rag/data/lexicon.toml's amount_changed)."""
    m = _HOW_MUCH.search(question)
    return bool(m) and not _AMOUNT_CHANGED.search(question[m.end():])


# A passage that leaves something out itself ("growth excluding currency", "on a constant-currency basis") is the
# figure a question with the same exclusion asks for, not the part left out.
_EXCLUDES = PhraseList("excludes")


def _percentages_only(row: str) -> bool:
    """A table row whose figures are all percentages ("Total freight volume growth | 9% | 11%")."""
    figures = row_figures(row)
    return bool(figures) and all(n.pct for n in figures)


# A class of stock by its letter ("Class A", "class A-2", "Class C common stock").
_SHARE_CLASS = re.compile(r"\bclass\s+([a-z](?:-?\d)?)\b", re.I)


@dataclass
class _Asked:
    """What kind of unit a question asks for, as scored_units weighs a unit against it."""

    question: str
    years: set[str]
    counted: list[str]  # "how many stores": what is counted
    amount: bool  # "how much", not a share or a rate
    numeric: bool  # any figure
    share_classes: set[str]  # "class A" -> {"a"}
    ruled_out: list[set[str]]  # the words of what the question leaves out or takes off

    @classmethod
    def of(cls, question: str, analysis: QuestionPlan | None, years: set[str]) -> "_Asked":
        return cls(
            question=question, years=years, counted=analysis.counted if analysis else [],
            amount=asks_amount(question) and not PERCENT_Q.search(question),
            numeric=numeric_question(question),
            share_classes={c.lower() for c in _SHARE_CLASS.findall(question)},
            ruled_out=[set(tokens(words)) - GENERIC_TERMS
                       for words in ((analysis.excluded + analysis.deducted) if analysis else [])],
        )


def _kind_features(u: QuotableUnit, toks: set[str], asked: _Asked) -> dict[str, float]:
    """How a unit's kind fits what is asked (rag.answer.unit_scoring's features, 1 when they hold): a count for
    "how many", an amount for "how much", a figure at all, the class of stock named, nothing the question leaves
    out. `toks`: the words of a sentence, or of a row's label."""
    held: dict[str, float] = {}
    if asked.counted and u.kind == "sentence" and counts_named(u, asked.counted, asked.years):
        held["count_stated"] = 1.0  # "how many stores": "operated 2,146 stores"
    if asked.counted and u.kind == "row" and amounts_only(u.text):
        held["amounts_for_count"] = 1.0  # "how many memberships": a row of dollars or percentages
    elif asked.counted and u.kind == "sentence" and only_amounts(
            [n for n in answer_figures(u.text) if worth_checking(n)]):
        held["no_count_sentence"] = 1.0  # "total headcount": "total SBC expense was $19.3 billion"
    elif asked.counted and u.kind == "row" and names_counted(
            set(tokens(" ".join(asked.counted))), set(tokens(f"{u.header} {u.caption} {u.title}"))):
        held["counted_row"] = 1.0  # "how many associates in Canada": a row of a table of the number of associates
    if asked.amount and u.kind == "row" and _percentages_only(u.text):
        held["rates_for_amount"] = 1.0  # "how much freight volume": a row of growth rates
    if u.kind == "row" and negated(u.text.split("|")[0], asked.question):
        held["negated_row"] = 1.0  # "GAAP diluted EPS": the "Non-GAAP" row
    if asked.share_classes and (named := {c.lower() for c in _SHARE_CLASS.findall(u.text)}) and not (
            named & asked.share_classes):
        held["other_share_class"] = 1.0  # "holders of Class A stock": a sentence about Class B shares only
    if any(words and words <= toks for words in asked.ruled_out) and not _EXCLUDES.search(u.text):
        held["left_out"] = 1.0  # "not counting cash", "before incentives are deducted"
    if asked.numeric:
        if not any(worth_checking(n) for n in parse_numbers(u.text)):
            held["no_figure"] = 1.0
        else:
            held["figure_row" if u.kind == "row" else "figure_sentence"] = 1.0
    return held


def _period_features(u: QuotableUnit, source: Citation, context: set[str], years: set[str],
                     numbers: set[str]) -> dict[str, float]:
    """The years and figures a unit prints against those asked (rag.answer.unit_scoring's features)."""
    held: dict[str, float] = {}
    if years:
        # A row under other years' heads is another year's figure; an undated table's row is not. A sentence that
        # names no year speaks of its filing's own period, as the report's other sentences do.
        own_year = u.kind == "sentence" and str(source.fiscal_year or "") in years
        dated = u.kind == "row" and bool(YEAR.search(u.header))
        if years & context or own_year:
            held["year_named"] = 1.0
        elif dated:
            held["other_year_row"] = 1.0
    if numbers and numbers & context:
        held["figure_named"] = 1.0
    return held


def scored_units(question: str, sources: list[Citation], analysis: QuestionPlan | None,
                 embed_model=None) -> list[QuotableUnit]:
    """Every sentence and table row of the sources that matches the question, with a score (term overlap weighted by IDF over the
    retrieved chunks, with synonyms, bigrams, years, figures; with `embed_model`, the index's, their meaning's
    closeness to the question's too) and `coverage`: the share of the question's content terms the unit holds
    (with its table header and its Item title)."""
    terms = question_terms(question, sources, analysis)
    terms += [t for t in period_terms(analysis) if t not in terms]
    content = content_terms(question, sources, analysis)
    years = {t for t in terms if YEAR.fullmatch(t)}
    years |= {str(y) for y in (analysis.fiscal_years if analysis else [])}
    words = [t for t in terms if not t[0].isdigit()]
    numbers = {t for t in terms if t[0].isdigit() and t not in years and (len(t) >= 3 or "." in t)}
    doc_tokens = [set(tokens(c.text)) for c in sources]
    n_docs = max(1, len(sources))

    def idf(t: str) -> float:
        df = sum(1 for d in doc_tokens if t in d)
        return math.log(1.0 + (n_docs + 1) / (df + 0.5))

    # Each question word counts once per unit: the best of the word itself and its synonyms. A synonym never
    # counts more than the word itself: a rarer synonym ("workforce" for "employees") is not better evidence.
    expansions = {t: [(e, w * (0.3 if t in GENERIC_TERMS else 1.0) * min(idf(e), idf(t)))
                      for e, w in weighted_synonyms(t)] for t in words}
    weights: dict[str, float] = {}
    for pairs in expansions.values():
        for e, w in pairs:
            weights[e] = max(weights.get(e, 0.0), w)

    def overlap(tokens: set[str]) -> float:
        return sum(max((w for e, w in pairs if e in tokens), default=0.0) for pairs in expansions.values())

    bigrams = {(a, b) for a, b in zip(words, words[1:], strict=False)}
    asked = _Asked.of(question or "", analysis, years)
    latest = _latest_years(sources, analysis)
    scoring = default_unit_scoring()
    units: list[QuotableUnit] = []
    for rank, c in enumerate(sources):
        section = section_tokens(c)
        stale = c.ticker in latest and int(c.fiscal_year or 0) < latest[c.ticker]
        for u in quotable_units(c):
            main = tokens(u.text if u.kind == "sentence" else u.text.split("|")[0])
            toks = set(main)
            context = set(tokens(u.text)) | set(tokens(u.header)) | set(tokens(u.note)) | set(tokens(u.group)) | set(
                tokens(f"{u.caption} {u.header_title}"))
            label = [t for t in toks if not t[0].isdigit()] if u.kind == "row" else []
            # A row labelled in generic words only ("Total") takes its meaning from its table's column titles.
            headed_by_table = u.kind == "row" and bool(u.header) and all(t in GENERIC_TERMS for t in label)
            score = overlap(toks)
            # Values, header years and the Item title count, less than the unit's own words.
            score += (1.0 if headed_by_table else 0.3) * max(0.0, overlap(toks | context | section) - score)
            if label and not headed_by_table:
                # "Total net sales" fits "total net sales" better than "Total cost of sales" does.
                score *= sum(1 for t in label if t in weights) / len(label)
            score += 0.5 * sum(
                (weights.get(a, 0) + weights.get(b, 0)) / 2 for a, b in zip(main, main[1:], strict=False)
                if (a, b) in bigrams
            )
            if score <= 0:
                continue
            held = _kind_features(u, toks, asked) | _period_features(u, c, context, years, numbers)
            if stale:
                held["older_filing"] = 1.0
            vocab = context | section
            u.coverage = (sum(1 for t in content if is_covered(t, vocab)) / len(content)) if content else 1.0
            held.update(
                word_match=math.log(score),
                length=math.log(1.0 + max(0, len(main) - 25) / 40.0),  # concise units say what was asked
                retrieval_place=math.log(1.0 + 0.25 / (rank + 1)),  # a little of the retrieval order
                # A unit that holds more of what the question is about beats one that repeats a rare word.
                coverage=math.log(0.4 + 0.6 * u.coverage),
            )
            u.features = [held.get(name, 0.0) for name in UNIT_FEATURES]
            units.append(u)
    if embed_model is not None and units:
        _weigh_meaning(question, units, analysis, embed_model)
    for u in units:
        u.score = scoring.score(u.features)
    return units


def _latest_years(sources: list[Citation], analysis: QuestionPlan | None) -> dict[str, int]:
    """Each company's latest fiscal year among the sources when no year or period is named: the company as it is
    now. Its latest filing speaks first; an older one's sentence ("24,318 employees" two annual reports ago) counts
    less, though it is still quoted."""
    latest: dict[str, int] = {}
    if analysis is not None and not (analysis.fiscal_years or analysis.periods or analysis.latest_quarters):
        for c in sources:
            if c.ticker and c.fiscal_year:
                latest[c.ticker] = max(latest.get(c.ticker, 0), int(c.fiscal_year))
    return latest


def _weigh_meaning(question: str, units: list[QuotableUnit], analysis: QuestionPlan | None, embed_model) -> None:
    """Set the units' `meaning` and `boilerplate` features from the index's embedding model, for a question the
    intent model reads as asking prose or a list. A figure's row or sentence is found by its label, period and
    figure: the blurred meaning of a short label put wrong units first on the dev sets' figure questions, and a
    sentence stating a count in the words every filer uses ("as of <date> we employed ...") reads as boilerplate."""
    if not _asks_prose(analysis):
        return
    vectors = text_vectors(embed_model, [question] + [_meaning_text(u) for u in units])
    boilerplate = boilerplate_model(embed_model)
    likely = boilerplate.likelihood(vectors[1:]) if boilerplate is not None else np.zeros(len(units))
    for u, vector, p in zip(units, vectors[1:], likely, strict=True):
        u.features[_MEANING] = float(vector @ vectors[0])
        if u.kind == "sentence":  # rag.boilerplate weighs sentences; a row's label is no sentence
            u.features[_BOILERPLATE] = float(p)


_MEANING = UNIT_FEATURES.index("meaning")
_BOILERPLATE = UNIT_FEATURES.index("boilerplate")


def _asks_prose(analysis: QuestionPlan | None) -> bool:
    """Does the intent model read the question as asking for prose or a list (not a figure)?"""
    return analysis is not None and analysis.intent is not None and analysis.intent.label in ("prose", "list")


def _meaning_text(u: QuotableUnit) -> str:
    """What a unit says, as its meaning is compared with the question's: a sentence itself; a row's label under its
    table's caption (its figures say nothing an embedding can weigh)."""
    if u.kind == "sentence":
        return u.text
    return " ".join(p for p in (u.caption or u.title, u.group, u.text.split("|")[0].strip()) if p)
