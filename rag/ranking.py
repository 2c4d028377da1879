"""The order of one search's passages: one linear score over named features, its weights fitted on labelled questions.

A search fuses dense and keyword lists (reciprocal rank fusion). What fusion cannot know is what a passage is: a
note on an accounting standard every filer prints, a statement's table where the question asks why, the Item the
question's topic points to. Each of those is a feature here; the weights that trade them against the retrievers'
ranks are fitted by `python -m rag.ranking_fit` on the dev sets' tune halves (pairwise logistic regression: each
passage holding a question's evidence against each that does not, in the same search) and saved as data in
`rag/data/ranking.json`, with the held-out companies' figures from the same fit.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .numbers import YEAR
from .schema import Filters, QuestionPlan

WEIGHTS_PATH = Path(__file__).parent / "data" / "ranking.json"

# The features, in the order of the weights file. Places are 1/(1 + rank): the first passage counts most, and a
# passage a list did not return counts 0.
FEATURES = (
    "fused_place",        # its place in reciprocal rank fusion's order
    "fused_log_place",    # -log2(2 + rank) in that order: how far down, on a slower curve
    "dense_place",        # its best place in any dense list of the search
    "keyword_place",      # its best place in any keyword (BM25) list
    "dense_share",        # its similarity to the question over the best passage's, in its dense list
    "keyword_share",      # its BM25 score over the best passage's, in its keyword list
    "both_lists",         # found by both retrievers
    "list_head",          # among the first LIST_HEAD of a dense or keyword list
    "standard_note",      # a note on an accounting standard the FASB issued, when the question is not about one
    "table_share",        # the share of its lines that are table rows
    "table_for_prose",    # table_share, for a question that asks why or how (answered in prose)
    "topic_item",         # of an Item the question's topic points to, for a question told in prose
    "statement_named",    # of the primary statement the question names
    "other_years_table",  # its table rows print years, none of them its own filing's, of a filing the question asks
)

LIST_HEAD = 2  # a list's first places, which fusion alone can bury (see list_head)

# A note on an accounting standard the FASB issued ("In November 2031, the FASB issued ASU 2031-07, ...", invented),
# opening its passage, under its heading or not: every filer repeats one, in the very words a question about the
# company's own segments, income taxes or expenses uses. It answers only a question about accounting standards.
_STANDARD_NOTE = re.compile(
    r"^(?:[A-Z][\w ,-]{0,80}?(?:pronouncements?|standards?|guidance)[\w ,-]{0,40}?\s+)?"
    r"(?:In\s+\w+\s+\d{4},\s+the\s+(?:FASB|Financial\s+Accounting\s+Standards\s+Board)\b|"
    r"(?:ASU|Accounting\s+Standards\s+Update)\b)", re.I)


def is_standard_note(text: str) -> bool:
    """A passage (its text with the header line) that opens with a note on an accounting standard."""
    return bool(_STANDARD_NOTE.match(" ".join(text.split("\n", 1)[-1].split()[:40])))


def other_years_table(text: str, meta: dict, years_asked: frozenset[int]) -> bool:
    """A passage whose table lines print years and none of its filing's own (its fiscal year, its period's end):
    a prior period's table in a later filing ("Three months ended June 30, <last year>" in this year's 10-Q), when
    the question asks that filing's period (or names no year)."""
    fiscal_year = meta.get("fiscal_year")
    if not fiscal_year or (years_asked and int(fiscal_year) not in years_asked):
        return False
    own = {str(fiscal_year), str(meta.get("period_end") or "")[:4]}
    lines = text.splitlines()[1:]
    rows = [k for k, line in enumerate(lines) if "|" in line]
    # From its first table line to its last: the heads, the rows and the period lines between ("Six months ended").
    printed = {m.group() for line in lines[rows[0]:rows[-1] + 1] for m in YEAR.finditer(line)} if rows else set()
    return bool(printed) and not printed & own


def table_share(text: str) -> float:
    """The share of a passage's lines (after its header line) that are table rows."""
    lines = [ln for ln in text.splitlines()[1:] if ln.strip()]
    return sum("|" in ln for ln in lines) / len(lines) if lines else 0.0


@dataclass(frozen=True)
class RankContext:
    """What a search's ranking knows of its question: read from the plan once, the same for every passage."""
    standards_asked: bool = False
    prose: bool = False  # asks why or how: answered in prose
    topic_items: frozenset[str] = frozenset()  # Items the topic points to (empty for a figure or a named Item)
    statements: frozenset[str] = frozenset()  # primary statements the question names
    years: frozenset[int] = frozenset()  # fiscal years the search is held to (empty: none named)


NO_CONTEXT = RankContext()  # a search whose question is not known: only the retrievers' places and scores differ


def rank_context(plan: QuestionPlan, group: Filters, standards_asked: bool) -> RankContext:
    """What one group's searches rank by. The Items a topic points to count only for a question told in prose
    (a figure is as often printed in Item 7 or 8 as in the Item the topic names) and not when Items are named."""
    topic = not plan.asks_figure and not group.sections
    return RankContext(
        standards_asked=standards_asked, prose=plan.prose_intent,
        topic_items=frozenset(plan.topic_sections) if topic else frozenset(),
        statements=frozenset(plan.statements or ()),
        years=frozenset(group.fiscal_years or ()),
    )


@dataclass
class Candidate:
    """One passage of a search with where each list put it."""
    result: object  # NodeWithScore
    fused_rank: int
    dense_rank: int | None = None
    keyword_rank: int | None = None
    dense_share: float = 0.0  # its similarity over the best in its dense list (0: not in one)
    keyword_share: float = 0.0  # its BM25 score over the best in its keyword list (0: not in one)


def _place(rank: int | None) -> float:
    return 0.0 if rank is None else 1.0 / (1 + rank)


def features(candidate: Candidate, context: RankContext) -> list[float]:
    node = candidate.result.node
    text = node.get_content()
    meta = node.metadata
    tables = table_share(text)
    return [
        _place(candidate.fused_rank),
        -math.log2(2 + candidate.fused_rank),
        _place(candidate.dense_rank),
        _place(candidate.keyword_rank),
        candidate.dense_share,
        candidate.keyword_share,
        float(candidate.dense_rank is not None and candidate.keyword_rank is not None),
        float(min(r for r in (candidate.dense_rank, candidate.keyword_rank, LIST_HEAD) if r is not None) < LIST_HEAD),
        float(not context.standards_asked and is_standard_note(text)),
        tables,
        tables if context.prose else 0.0,
        float(bool(context.topic_items) and meta.get("section") in context.topic_items),
        float(bool(context.statements) and meta.get("statement") in context.statements),
        float(other_years_table(text, meta, context.years)),
    ]


class RankingError(ValueError):
    """The weights file does not fit the features this code computes."""


@dataclass(frozen=True)
class Ranking:
    weights: np.ndarray

    @classmethod
    def load(cls, path: Path = WEIGHTS_PATH) -> Ranking:
        data = json.loads(path.read_text(encoding="utf-8"))
        names = list(data.get("features") or [])
        if names != list(FEATURES):
            raise RankingError(f"{path.name} holds weights for {names}, but the ranking computes {list(FEATURES)}; "
                               f"fit it again (python -m rag.ranking_fit)")
        weights = np.asarray(data["weights"], dtype=float)
        if weights.shape != (len(FEATURES),) or not np.all(np.isfinite(weights)):
            raise RankingError(f"{path.name}: expected {len(FEATURES)} finite weights")
        return cls(weights)

    def matrix(self, candidates: list[Candidate], context: RankContext) -> np.ndarray:
        return np.asarray([features(c, context) for c in candidates], dtype=float).reshape(-1, len(FEATURES))

    def ordered(self, candidates: list[Candidate], context: RankContext, recorder=None) -> list:
        """The candidates' results, best score first (ties keep fusion's order)."""
        if not candidates:
            return []
        x = self.matrix(candidates, context)
        if recorder is not None:
            recorder(candidates, x)
        scores = x @ self.weights
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i].fused_rank))
        return [candidates[i].result for i in order]


_DEFAULT: Ranking | None = None


def default_ranking() -> Ranking:
    """The fitted weights the package ships, read once."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Ranking.load()
    return _DEFAULT
