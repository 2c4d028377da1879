"""How much a sentence or table row of the retrieved passages answers the question: one linear score over named
features, in log space, its weights saved as data in `rag/data/unit_scoring.json`.

A unit's words are matched against the question's (rag.answer.extractive's IDF-weighted overlap), and its meaning
too, with the index's own embedding model (a sentence that says what is asked in other words); what neither can see is whether the unit is the kind of thing asked (a count for "how many", an amount for "how much", a
figure at all, the year named, the class of stock named). Each of those is a feature here, 1 when it holds. The
score is exp(weights . features): a power of the word match times a factor per feature it holds. The file's
`prior` is the factors as first set by hand, and `fixed` the features whose weight is a product decision the fit
leaves as it is (an older filing's sentence counts less when no period is named: the company as it is now);
`python -m rag.unit_fit` fits the `weights` from the prior on the dev sets' tune halves (pairwise logistic regression: each unit quoting a question's evidence against each that does not, of
the same question) and reports them on the held-out companies.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
