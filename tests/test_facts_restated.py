"""Where else a filing prints a figure the facts answer with (rag.facts.restated): the MD&A table or sentence that
restates a tagged figure, found by the figure as printed and the words that name it."""

from __future__ import annotations

from types import SimpleNamespace

from rag.facts import metric
from rag.facts.restated import reported_values, restating
from rag.facts.store import FactRow
from rag.facts.views import FactGroup, Value

FILING = {"doc_id": "d", "ticker": "ACME", "company": "ACME HEALTH INC.", "form": "10-K", "fiscal_year": 2024}


def _value(amount: float, printed: str, *, member: str | None = None, row_label: str = "Total revenues") -> Value:
    row = FactRow("d", "us-gaap:Revenues", "", amount, printed, "usd", "c", "2024-01-01", "2024-12-31", False,
                  {"us-gaap:StatementBusinessSegmentsAxis": "acme:RxMember"} if member else {}, "-6", 6, 1, 2,
                  "note-9", "Item 8", 68, row_label)
    group = FactGroup("us-gaap:Revenues", "2024-01-01", "2024-12-31", row.dimensions, "usd", [row], row, False)
    return Value(metric=metric("revenue"), amount=amount, kind="money", ticker="ACME", company=FILING["company"],
                 fiscal_year=2024, filing=FILING, group=group, member=member)


def _passages(*texts: str) -> list:
    return [SimpleNamespace(node_id=f"c{i}", text=text) for i, text in enumerate(texts)]


def test_a_members_figure_is_restated_on_a_line_that_names_the_member():
    rx = _value(133_231e6, "133,231", member="Acme Rx")
    passages = _passages("Revenues were 133,231 in total across the group.",  # the figure, not the member's line
                         "Acme Rx | 133,231 | 116,087\nAcme Care | 98,000 | 91,000",
                         "Acme Rx | 133,231 | 116,087 (as restated below)")
    assert [p.node_id for p in restating(rx, passages, cited=set())] == ["c1"]  # the first, and one only
    assert [p.node_id for p in restating(rx, passages, cited={"c1"})] == ["c2"]  # the cited one is not a restatement


def test_the_whole_is_named_by_its_printed_row_label_or_its_own_label():
    total = _value(57_420e6, "57,420", row_label="Total net sales")
    by_row_label = _passages("Total net sales were $57,420 million in fiscal 2024.")
    by_own_label = _passages("Total revenue | $57,420 | $51,230")
    assert restating(total, by_row_label, set()) and restating(total, by_own_label, set())
    # The figure inside a longer number, or beside other words, is no restatement of it.
    assert restating(total, _passages("Total net sales | $157,420 | $57,4201"), set()) == []
    assert restating(total, _passages("Operating expenses were $57,420 million."), set()) == []


def test_a_figure_of_few_digits_is_not_looked_for():
    # "18" is printed everywhere: no passage can be said to restate it.
    assert restating(_value(18e6, "18"), _passages("Total revenues | 18 | 11"), set()) == []


def test_a_computed_figure_is_restated_through_its_inputs():
    revenue, income = _value(43_229e6, "43,229", member="Cloud"), _value(6_112e6, "6,112", member="Cloud")
    margin = Value(metric=metric("operating_margin"), amount=0.1414, kind="percent", ticker="ACME", company="", fiscal_year=2024,
                   filing=FILING, inputs=[income, revenue], op="div")
    assert reported_values([margin, revenue]) == [income, revenue]
