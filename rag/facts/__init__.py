"""Exact figures from the filings' inline XBRL facts: stored at index time, read in code, never by a model.

A 10-K's inline XBRL tags every reported number (`ix:nonFraction`: concept, context period, dimensions, unit,
scale, sign). This package keeps them in SQLite beside the index and answers the commonest analyst question, a
number, straight from them:

    record_filing(settings, parsed, meta, shard_dir)  # at index time (rag.index calls it)
    layer = FactsLayer(settings, chunk_lookup=...)    # the engine holds one
    found = layer.answer_for(plan)                    # FactAnswer (block with [F1].. + citations) or None
    warnings = layer.check_answer(text, tickers, years)

Rules that matter for correctness (a wrong number stated confidently is the worst outcome):
- Fiscal year Y of company C is read from the filing whose own fiscal year (dei:DocumentFiscalYearFocus) is Y,
  from the context that covers that filing's own fiscal period (a ~1-year duration ending at the period end, or
  the instant at the period end) with no dimensions (the consolidated total). A later filing's prior-year
  comparative is used only when no FY Y filing is indexed, and the answer says so.
- A metric maps to an ordered list of concepts; the first with a value wins. Duplicated facts (the same figure in
  the statements and in MD&A) must agree within their stated precision, or the metric is not answered.
- A metric qualified by words the facts cannot resolve ("<product> revenue", "revenue in Europe") is answered only
  when a dimension member of the filing matches those words; otherwise the question falls through to retrieval.
- Every computed figure (growth, margins, ratios, sums, differences) is computed here, and the answer shows the
  formula and every input with its citation.

Modules, bottom up: labels (labels, units, formatting), store (SQLite), metrics (the vocabulary: words ->
concepts, and the statement that prints each), mentions (finding metric phrases in a text), views (one filing's
facts, values), render (the facts block), checks (an answer's figures against the facts), layer (FactsLayer), cli.
"""

from .checks import CheckedStream
from .cli import print_facts
from .labels import concept_label, format_amount, member_label, unit_kind
from .layer import FactsLayer
from .mentions import (
    CHANGE_WORDS,
    MONTH_WORDS,
    STOP_WORDS,
    deductions,
    exclusions,
    find_mentions,
    is_metric_phrase,
    normalize,
    plain_word,
)
from .metrics import METRIC_BY_KEY, METRICS, STATEMENT_METRICS, Metric, metric, metric_statements
from .render import FactAnswer
from .store import (
    FactRow,
    FactStore,
    backfill_filing,
    filing_facts,
    forget_filings,
    map_to_chunks,
    record_filing,
)
from .tables import FactStoreUnavailable
from .views import FactGroup, by_label

__all__ = [
    "CHANGE_WORDS", "METRICS", "METRIC_BY_KEY", "MONTH_WORDS", "STATEMENT_METRICS", "STOP_WORDS", "CheckedStream",
    "FactAnswer", "FactGroup", "FactRow", "FactStore", "FactStoreUnavailable", "FactsLayer", "Metric", "backfill_filing", "filing_facts", "by_label",
    "concept_label", "deductions", "exclusions", "find_mentions", "forget_filings", "format_amount", "is_metric_phrase",
    "map_to_chunks", "member_label", "metric", "metric_statements", "normalize", "plain_word", "print_facts", "record_filing",
    "unit_kind",
]
