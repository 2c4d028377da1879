"""How the facts block words a figure (rag.facts.render): what the filing prints beside it is kept in view."""

from __future__ import annotations

from rag.catalog import Catalog
from rag.config import get_settings
from rag.facts import FactsLayer
from rag.facts.metrics import metric
from rag.facts.store import FactRow
from rag.facts.views import Value, combine
from rag.question import plan_question

FILING = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
          "fiscal_period": "FY", "fact_count": 1}


class _OneFilingStore:
    """The fact store's reading side, over one filing's rows."""

    def __init__(self, rows: list[FactRow]):
        self.rows = rows

    def filings(self, ticker=None, doc_ids=None):
        return [FILING] if ticker in (None, FILING["ticker"]) else []

    def facts(self, doc_id):
        return self.rows


def _dividend(value: float, text: str) -> FactRow:
    return FactRow("d", "us-gaap:CommonStockDividendsPerShareDeclared", "", value, text, "usdPerShare", "c",
                   "2023-10-01", "2024-09-30", False, {}, "2", 0, 1, 2, "equity", "Item 8", 60, None)


def _answer(row: FactRow, chunk_text: str) -> str:
    layer = FactsLayer(get_settings(), store=_OneFilingStore([row]), chunk_lookup=lambda _id: (chunk_text, {}))
    found = layer.answer_for(plan_question("What was Acme's dividend per share in fiscal 2024?",
                                           Catalog.build([FILING])))
    return found.block


def test_a_per_share_amount_printed_as_a_quarters_is_said_to_be_one():
    # Tagged for the fiscal year, printed in the statement of equity as each quarter's amount.
    printed = "Cash dividends declared and paid, at a quarterly amount of $0.52 per class A common stock | (4,217)"
    block = _answer(_dividend(0.52, "0.52"), printed)
    assert "$0.52 per share [F1] (the filing prints this as a quarterly amount" in block
    # Printed as the year's amount: stated as it is.
    block = _answer(_dividend(2.08, "2.08"), "Dividends declared per share | $2.08 | $1.80")
    assert "$2.08 per share [F1]" in block and "quarterly" not in block


def test_a_difference_of_figures_at_two_scales_keeps_only_the_decimals_its_inputs_carry():
    taxes = metric("income_taxes_paid")
    billions = Value(metric=taxes, amount=27.4e9, kind="money", ticker="ACME", company="Acme", fiscal_year=2024,
                     filing={}, scale=9, places=1)
    millions = Value(metric=taxes, amount=26_102e6, kind="money", ticker="BOLT", company="Bolt", fiscal_year=2024,
                     filing={}, scale=6, places=0)
    # "$27.4 billion" is "$27,400 million": the difference has no decimal to show at the finer scale.
    assert combine(taxes, "sub", billions, millions).display() == "$1,298 million"
    finer = Value(metric=taxes, amount=1_234.5e6, kind="money", ticker="BOLT", company="Bolt", fiscal_year=2024,
                  filing={}, scale=6, places=1)
    assert combine(taxes, "sub", billions, finer).display() == "$26,165.5 million"
