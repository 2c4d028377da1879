"""A figure asked for by the label the filing prints beside it (rag.facts.row_labels), whatever its concept is
called when the label is a primary statement's line."""

from __future__ import annotations

from rag.catalog import Catalog
from rag.facts.asked import label_or_vocabulary
from rag.facts.row_labels import asks_rate_of, labelled_mentions, spelled_out_labels
from rag.facts.store import FactRow
from rag.facts.views import FilingView
from rag.question import plan_question
from rag.words import tokens

FILING = {"doc_id": "d", "ticker": "ACME", "company": "ACME HEALTH INC.", "form": "10-K", "fiscal_year": 2024}


def _fact(concept: str, value: float, row_label: str, chunk: str, instant: bool = False) -> FactRow:
    """A fiscal-2024 figure in millions (a year-end balance with `instant`), printed under `row_label` in chunk
    `chunk`."""
    return FactRow("d", concept, "", value, f"{value:,.0f}", "usd", "c", None if instant else "2024-01-01",
                   "2024-12-31", instant, {}, "-6", 6, 1, 2, chunk, "Item 8", 40, row_label)


def _on_statement(row: FactRow) -> bool:
    return row.chunk_id == "income-statement"


def _asked(question: str, *facts: FactRow) -> list[str]:
    found = labelled_mentions(question, [FilingView(FILING, list(facts))], {"acme"}, _on_statement)
    return [m.metric_key.split("|")[2] for m in found]


def test_a_statement_line_is_asked_by_its_printed_words_whatever_its_concept():
    medical = _fact("us-gaap:PolicyholderBenefitsAndClaimsIncurredNet", 264_185e6, "Medical costs", "income-statement")
    assert _asked("What were Acme's medical costs in 2024?", medical) == [
        "us-gaap:PolicyholderBenefitsAndClaimsIncurredNet"]
    # The same words under a concept that shares none of them, printed in a note's table: a borrowed label.
    in_a_note = _fact("us-gaap:PolicyholderBenefitsAndClaimsIncurredNet", 264_185e6, "Medical costs", "note-7")
    assert _asked("What were Acme's medical costs in 2024?", in_a_note) == []


def test_a_rate_named_after_a_line_is_not_the_lines_amount():
    # "Medical cost ratio" spells out the line "Medical costs" and asks for a share of it: stating the line's
    # dollars would answer a question not asked.
    medical = _fact("us-gaap:PolicyholderBenefitsAndClaimsIncurredNet", 264_185e6, "Medical costs", "income-statement")
    views = [FilingView(FILING, [medical])]
    for question, rate in (("Acme medical cost ratio 2024", True), ("What were Acme's medical costs in 2024?", False),
                           ("acme medical costs as a % of premiums fy24", True)):
        found = labelled_mentions(question, views, {"acme"}, _on_statement)
        assert found and asks_rate_of(question, found[0]) is rate
    # A label that prints the rate word itself names the rate.
    tax = _fact("us-gaap:EffectiveIncomeTaxRateContinuingOperations", 0.16, "Effective tax rate", "note-9")
    found = labelled_mentions("Acme effective tax rate 2024", [FilingView(FILING, [tax])], {"acme"}, _on_statement)
    assert found and not asks_rate_of("Acme effective tax rate 2024", found[0])


def test_a_label_on_a_statement_line_and_in_a_note_names_the_statement_line():
    statement = _fact("us-gaap:InvestmentIncomeInterest", 1_332e6, "Interest income", "income-statement")
    note = _fact("us-gaap:DisposalGroupIncludingDiscontinuedOperationInterestIncome", 117e6, "Interest income",
                 "note-21")
    assert _asked("What was Acme's interest income in 2024?", statement, note) == ["us-gaap:InvestmentIncomeInterest"]
    # Two statement lines under one label: ambiguous, nothing is picked.
    other = _fact("us-gaap:InterestIncomeOperating", 90e6, "Interest income", "income-statement")
    assert _asked("What was Acme's interest income in 2024?", statement, other) == []


def test_the_labels_a_question_spells_out_in_full():
    # Every label of two words or more whose words the question holds, one-word labels and partial ones excluded.
    view = FilingView(FILING, [_fact("us-gaap:Revenues", 88_821e6, "Sales to customers", "income-statement"),
                               _fact("us-gaap:ProfitLoss", 14_066e6, "Net earnings", "income-statement"),
                               _fact("us-gaap:OtherCostAndExpenseOperating", 9e6, "Other", "income-statement"),
                               _fact("us-gaap:CostOfRevenue", 25_000e6, "Cost of products sold", "income-statement")])
    found = spelled_out_labels("What were Acme's net earnings over its sales to customers in 2024?", [view], {"acme"})
    assert sorted(map(sorted, found)) == sorted(map(sorted, [set(tokens("Sales to customers")),
                                                             set(tokens("Net earnings"))]))


def test_a_label_that_joins_two_things_is_asked_by_either_one():
    # Filings tag marketing and advertising as one line; a question about either names it.
    line = _fact("us-gaap:MarketingAndAdvertisingExpense", 4_689e6, "Marketing and advertising expense", "note-1")
    assert _asked("What was Acme's advertising expense in 2024?", line) == ["us-gaap:MarketingAndAdvertisingExpense"]
    assert _asked("What was Acme's marketing expense in 2024?", line) == ["us-gaap:MarketingAndAdvertisingExpense"]
    # What a company spends is printed as an expense.
    assert _asked("How much did Acme spend on advertising in 2024?", line) == [
        "us-gaap:MarketingAndAdvertisingExpense"]
    # So is what it pays, asked as its bill or outlay.
    costs = _fact("us-gaap:BenefitsLossesAndExpenses", 264_185e6, "Medical costs", "income-statement")
    assert _asked("What was Acme's bill for its members' medical care in 2024?", costs) == [
        "us-gaap:BenefitsLossesAndExpenses"]
    assert _asked("What was Acme's outlay on advertising in 2024?", line) == ["us-gaap:MarketingAndAdvertisingExpense"]
    assert _asked("How many billing days did Acme's members use in 2024?", costs) == []
    # One word of the label named, and no more, is not the label.
    assert _asked("How much advertising did Acme run in 2024?", line) == []
    # A spelled-out label still beats the one named in part.
    ads = _fact("us-gaap:AdvertisingExpense", 900e6, "Advertising expense", "note-2")
    assert _asked("What was Acme's advertising expense in 2024?", line, ads) == ["us-gaap:AdvertisingExpense"]
    # "Spend" names an expense, not every line of costs and expenses.
    total = _fact("us-gaap:CostsAndExpenses", 95_000e6, "Costs and expenses", "income-statement")
    assert _asked("How much did Acme spend buying back shares in 2024?", total) == []


def test_a_question_written_as_the_figures_name_asks_for_it():
    comprehensive = _fact("us-gaap:ComprehensiveIncomeNetOfTax", 12_540e6, "Comprehensive income", "income-statement")
    assert _asked("Acme's total comprehensive income for 2024?", comprehensive) == ["us-gaap:ComprehensiveIncomeNetOfTax"]
    assert _asked("What was Acme's comprehensive income in 2024?", comprehensive) == [
        "us-gaap:ComprehensiveIncomeNetOfTax"]
    # What it "came to" asks for the figure too.
    assert _asked("What did Acme's comprehensive income come to in 2024?", comprehensive) == [
        "us-gaap:ComprehensiveIncomeNetOfTax"]
    # What a company set aside for a loss is printed as a provision.
    provision = _fact("us-gaap:LossContingencyLossInPeriod", 868e6, "Litigation provision", "income-statement")
    assert _asked("What did Acme set aside for litigation in 2024?", provision) == ["us-gaap:LossContingencyLossInPeriod"]
    # Its size asked ("how big was") is the figure.
    assert _asked("How big was Acme's comprehensive income in 2024?", comprehensive) == [
        "us-gaap:ComprehensiveIncomeNetOfTax"]
    # A question that asks something else of the same words is not a request for the figure.
    assert _asked("Why did Acme's comprehensive income fall in 2024?", comprehensive) == []
    assert _asked("Explain Acme's comprehensive income in 2024", comprehensive) == []


def test_a_statement_line_is_named_in_either_sign_without_its_sign_word():
    # "Less: Net income (loss) attributable to noncontrolling interests": a question names it as a net income or a
    # net loss, never with "Less" or both signs.
    minority = _fact("us-gaap:NetIncomeLossAttributableToNoncontrollingInterest", 18e6,
                     "Less: Net income (loss) attributable to noncontrolling interests", "income-statement")
    for question in ("What was Acme's net income attributable to noncontrolling interests in 2024?",
                     "What was Acme's net loss attributable to noncontrolling interests in 2024?"):
        assert _asked(question, minority) == ["us-gaap:NetIncomeLossAttributableToNoncontrollingInterest"], question
    # Shown as printed; its words are the reading the question named, so it is not "more exact" for a sign word.
    (found,) = labelled_mentions("What was Acme's net loss attributable to noncontrolling interests in 2024?",
                                 [FilingView(FILING, [minority])], {"acme"}, _on_statement)
    assert found.metric_key.split("|", 3)[3] == "Less: Net income (loss) attributable to noncontrolling interests"
    assert "(loss)" not in found.words and "less:" not in found.words


def test_a_line_of_what_is_left_over_needs_the_word_other():
    # "Total other income (expense)" read in one sign is "Total other income": not the total comprehensive income
    # a question without "other" asks for.
    other = _fact("us-gaap:NonoperatingIncomeExpense", -328e6, "Total other income (expense)", "income-statement")
    comprehensive = _fact("us-gaap:ComprehensiveIncomeNetOfTax", 12_540e6, "Comprehensive income", "note-9")
    assert _asked("Acme's total comprehensive income for 2024?", other, comprehensive) == [
        "us-gaap:ComprehensiveIncomeNetOfTax"]
    assert _asked("What was Acme's total other income in 2024?", other, comprehensive) == [
        "us-gaap:NonoperatingIncomeExpense"]


def test_a_balance_named_on_two_statements_is_the_balance_unless_a_change_is_asked():
    balance = _fact("us-gaap:AccruedLiabilitiesCurrent", 4_120e6, "Accrued and other current liabilities",
                    "income-statement", instant=True)
    change = _fact("us-gaap:IncreaseDecreaseInAccruedLiabilitiesAndOtherOperatingLiabilities", 1_500e6,
                   "Accrued and other current liabilities", "income-statement")
    assert _asked("How much did Acme carry in accrued and other current liabilities at the end of 2024?",
                  balance, change) == ["us-gaap:AccruedLiabilitiesCurrent"]
    assert _asked("How much did Acme's accrued and other current liabilities increase in 2024?", balance, change) == []


def test_a_bracket_of_counts_beside_a_line_is_no_word_of_it():
    treasury = _fact("us-gaap:TreasuryStockValue", 37_583e6, "Treasury stock, at cost (160 and 146 shares, respectively)",
                     "income-statement")
    assert _asked("What was Acme's treasury stock at cost in 2024?", treasury) == ["us-gaap:TreasuryStockValue"]
    # The counts after a dash, as other filers print them.
    treasury = _fact("us-gaap:TreasuryStockValue", 55_916e6,
                     "Treasury stock, at cost — 2,738 and 2,732 shares, respectively", "income-statement")
    assert _asked("What was Acme's treasury stock at cost in 2024?", treasury) == ["us-gaap:TreasuryStockValue"]


def test_a_label_named_by_clipped_words_as_analysts_type_them():
    accrued = _fact("us-gaap:AccruedLiabilitiesCurrent", 10_393e6, "Accrued expenses", "income-statement",
                    instant=True)
    assert _asked("acme accrued exp on the bal sheet ye24?", accrued) == ["us-gaap:AccruedLiabilitiesCurrent"]


def test_a_label_of_one_word_is_read_only_when_asked_for():
    premiums = _fact("us-gaap:PremiumsEarnedNet", 308_810e6, "Premiums", "income-statement")
    found = labelled_mentions(" premiums in 2024?", [FilingView(FILING, [premiums])], {"acme"}, _on_statement,
                              min_words=1)
    assert [m.metric_key.split("|")[2] for m in found] == ["us-gaap:PremiumsEarnedNet"]
    assert _asked("What were Acme's premiums in 2024?", premiums) == []


def test_new_debt_raised_is_the_proceeds_from_issuing_it():
    proceeds = _fact("us-gaap:ProceedsFromIssuanceOfLongTermDebt", 17_811e6, "Proceeds from issuance of long-term debt",
                     "income-statement")
    assert _asked("Acme gross proceeds from new long-term debt in 2024?", proceeds) == [
        "us-gaap:ProceedsFromIssuanceOfLongTermDebt"]


def test_a_footnote_mark_is_no_word_of_the_label():
    # "Revenue recognized (2)": the mark refers to a note under the table; read as a second sign it made the label
    # "Revenue 2", which a question about a second quarter's revenue named in full.
    recognized = _fact("us-gaap:ContractWithCustomerLiabilityRevenueRecognized", 1_100e6, "Revenue recognized (2)",
                       "note-4")
    assert _asked("How much revenue did Acme generate in Q2 2024?", recognized) == []
    assert _asked("How much revenue did Acme generate in the 2 quarters of 2024?", recognized) == []
    assert _asked("How much revenue recognized did Acme report in 2024?", recognized) == [
        "us-gaap:ContractWithCustomerLiabilityRevenueRecognized"]


def test_a_line_netted_of_its_opposite_is_named_without_net():
    # "Other income (loss) — net", "Other income/(expense), net": a question names the line in one sign and leaves
    # out the closing "net".
    dash = _fact("us-gaap:OtherNonoperatingIncomeExpense", 1_992e6, "Other income (loss) — net", "income-statement")
    for question in ("What was Acme's other income (loss) in 2024?", "What was Acme's other income in 2024?",
                     "What was Acme's other loss in 2024?"):
        assert _asked(question, dash) == ["us-gaap:OtherNonoperatingIncomeExpense"], question
    slash = _fact("us-gaap:NonoperatingIncomeExpense", -321e6, "Other income/(expense), net", "income-statement")
    assert _asked("What was Acme's other expense in 2024?", slash) == ["us-gaap:NonoperatingIncomeExpense"]
    # Still not the whole: "net income" is no reading of a line of what is left over.
    assert _asked("What was Acme's net income in 2024?", dash, slash) == []


def test_a_cash_flow_line_is_asked_with_the_verb_of_its_noun():
    # The statement prints "Payments for ...", "Proceeds from ...", "Repayments of ..."; analysts ask "how much did
    # it pay / get from selling / repay".
    acquired = _fact("us-gaap:PaymentsToAcquireBusinessesNetOfCashAcquired", -17_644e6,
                     "Payments for businesses acquired, net", "cash-flows")
    assert _asked("How much cash did Acme pay for businesses acquired in 2024?", acquired) == [
        "us-gaap:PaymentsToAcquireBusinessesNetOfCashAcquired"]
    disposals = _fact("acme:ProceedsFromDisposalsOfBusinesses", 3_485e6, "Proceeds from disposals of businesses",
                      "cash-flows")
    assert _asked("How much did Acme get in 2024 from selling businesses?", disposals) == [
        "acme:ProceedsFromDisposalsOfBusinesses"]
    repaid = _fact("us-gaap:RepaymentsOfLongTermDebt", 1_500e6, "Repayments of long-term debt", "cash-flows")
    assert _asked("How much long-term debt did Acme repay in 2024?", repaid) == ["us-gaap:RepaymentsOfLongTermDebt"]
    assert _asked("How much long-term debt was repaid by Acme in 2024?", repaid) == [
        "us-gaap:RepaymentsOfLongTermDebt"]
    # Debt paid down, off or back: its repayments line.
    term = _fact("us-gaap:RepaymentsOfLongTermDebt", 9_958e6, "Repayments of term debt", "cash-flows")
    assert _asked("How much term debt did Acme pay down in 2024?", term) == ["us-gaap:RepaymentsOfLongTermDebt"]
    assert _asked("How much term debt did Acme pay off in 2024?", term) == ["us-gaap:RepaymentsOfLongTermDebt"]
    # The verb adds the noun and nothing else: a label with a word the question lacks is still not named.
    assert _asked("How much did Acme pay in 2024?", acquired) == []


def test_buying_back_stock_is_asked_for_as_its_repurchases():
    line = _fact("us-gaap:PaymentsForRepurchaseOfCommonStock", 649e6, "Repurchases of common stock", "cash-flows")
    for question in ("How much common stock did Acme buy back in 2024?",
                     "How much did Acme spend on buybacks of common stock in 2024?",
                     "How much common stock was bought back by Acme in 2024?"):
        assert _asked(question, line) == ["us-gaap:PaymentsForRepurchaseOfCommonStock"], question
    assert _asked("How much common stock did Acme sell back to the market in 2024?", line) == []


def test_what_was_collected_from_a_disposal_is_its_proceeds_line():
    # "What did it collect from disposals of businesses": the cash-flow statement prints the act as "Proceeds
    # from ...", and "what did it collect" asks for the amount.
    disposals = _fact("acme:ProceedsFromDisposalsOfBusinesses", 3_485e6, "Proceeds from disposals of businesses",
                      "cash-flows")
    assert _asked("What did Acme collect in 2024 from disposals of businesses?", disposals) == [
        "acme:ProceedsFromDisposalsOfBusinesses"]
    assert _asked("What did Acme receive from disposals of businesses in 2024?", disposals) == [
        "acme:ProceedsFromDisposalsOfBusinesses"]
    # Without a verb that asks for an amount, "what did it do" asks for prose.
    assert _asked("What did Acme do with its disposals of businesses in 2024?", disposals) == []


def test_an_act_before_a_balance_names_the_cash_flow_line_not_the_balance():
    # "How much did it raise from issuing long-term debt": the balance's words with the act before them are the
    # line "Proceeds from issuance of long-term debt", which replaces the balance the vocabulary names.
    catalog = Catalog.build([{"ticker": "ACME", "company": "ACME HEALTH INC.", "fiscal_year": 2024}])
    issued = _fact("us-gaap:ProceedsFromIssuanceOfLongTermDebt", 17_811e6, "Proceeds from issuance of long-term debt",
                   "cash-flows")
    question = "How much did Acme raise from issuing long-term debt in 2024?"
    plan = plan_question(question, catalog)
    labelled = labelled_mentions(question, [FilingView(FILING, [issued])], {"acme"}, _on_statement)
    assert [m.metric_key for m in plan.metrics] == ["long_term_debt"]
    _plan, tried = label_or_vocabulary(plan, labelled)
    assert tried == [labelled]
    # The balance asked with no act is still the balance: the line's label is not named.
    question = "What was Acme's long-term debt at the end of 2024?"
    assert labelled_mentions(question, [FilingView(FILING, [issued])], {"acme"}, _on_statement) == []


def test_a_label_quoted_with_where_it_is_printed_names_that_line():
    # "What did it report on the 'Proceeds from property and equipment sales and incentives' line of its cash flow
    # statement": the label holds the words of the metrics it contains ("property and equipment", "sales"), and
    # "cash" of "cash flow statement" names no figure, so the printed line is the one figure asked.
    catalog = Catalog.build([{"ticker": "ACME", "company": "ACME HEALTH INC.", "fiscal_year": 2024}])
    line = _fact("acme:ProceedsFromPropertyAndEquipmentSalesAndIncentives", 5_341e6,
                 "Proceeds from property and equipment sales and incentives", "cash-flows")
    question = ("What did Acme report on the 'Proceeds from property and equipment sales and incentives' line of its "
                "2024 cash flow statement?")
    labelled = labelled_mentions(question, [FilingView(FILING, [line])], {"acme"}, _on_statement)
    assert [m.metric_key.split("|")[2] for m in labelled] == ["acme:ProceedsFromPropertyAndEquipmentSalesAndIncentives"]
    _plan, tried = label_or_vocabulary(plan_question(question, catalog), labelled)
    assert tried == [labelled]
