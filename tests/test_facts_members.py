"""A segment or region the question names is read from the filing's own dimension members (rag.facts.members)."""

from __future__ import annotations

from rag.catalog import Catalog
from rag.config import get_settings
from rag.facts import FactsLayer, find_mentions
from rag.facts.asked import attributed_parts
from rag.facts.labels import member_label
from rag.facts.members import members_named, narrowed_by
from rag.facts.mentions import member_matcher
from rag.facts.store import FactRow
from rag.facts.views import FilingView
from rag.question import plan_question
from rag.schema import MetricMention

REVENUE = "us-gaap:Revenues"
FILING = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-Q", "fiscal_year": 2025,
          "fiscal_period": "Q2"}


def _fact(concept: str, value: float, row_label: str, start: str | None, end: str, dims: dict | None = None) -> FactRow:
    """One tagged fact, in millions, printed under `row_label`; an instant when `start` is None."""
    return FactRow("d", concept, row_label, value, f"{value:,.0f}", "usd", "c", start, end, start is None,
                   dims or {}, "-6", 6, 1, 2, "chunk", "Part I Item 1", 3, row_label)


def _row(member: str | None, value: float, row_label: str) -> FactRow:
    dims = {"us-gaap:StatementBusinessSegmentsAxis": member} if member else {}
    return _fact(REVENUE, value, row_label, "2025-04-01", "2025-06-30", dims)


VIEW = FilingView(FILING, [
    _row(None, 30_000e6, "Total revenues"),
    _row("acme:AcmeInternationalSegmentMember", 9_000e6, "Acme International"),
    _row("acme:AcmeDomesticSegmentMember", 18_000e6, "Acme Domestic"),
    _row("acme:EnergyGenerationAndStorageMember", 3_000e6, "Energy generation and storage"),
])


def _revenue() -> MetricMention:
    return MetricMention("revenue", 0, 0, ["revenue"])


def name_members(question: str, mention: MetricMention, views: list[FilingView], concepts: list[str]):
    """The mention narrowed to the one member the question names, or None."""
    return narrowed_by(mention, members_named(question, mention, views, concepts))


def test_a_member_named_after_the_company_is_found_by_its_printed_words():
    named = name_members("What was Acme International's revenue in Q2 2025?", _revenue(), [VIEW], [REVENUE])
    assert named is not None and named.before == ["acme", "international"]


def test_a_member_named_by_its_row_label_inside_the_question():
    named = name_members("How much revenue did Acme's energy generation and storage segment bring in?",
                         _revenue(), [VIEW], [REVENUE])
    assert named is not None and named.before == ["energy", "generation", "and", "storage"]


def test_a_member_is_named_apart_from_the_metrics_own_word():
    # "Data processing revenues" repeats the metric's word: "revenue ... from data processing" names it too.
    view = FilingView(FILING, [_row(None, 30_000e6, "Total revenues"),
                               _row("acme:DataProcessingRevenuesMember", 17_714e6, "Data processing revenues"),
                               _row("acme:ServiceRevenuesMember", 16_000e6, "Service revenues")])
    named = name_members("How much revenue did Acme earn from data processing in Q2 2025?", _revenue(), [view],
                         [REVENUE])
    assert named is not None and named.before == ["data", "processing", "revenue"]
    # Shortened to one word, a member is too common a word to be named apart ("service" anywhere).
    assert name_members("How much revenue did Acme earn in Q2 2025, by the service it sells?", _revenue(), [view],
                        [REVENUE]) is None


def test_no_member_named_means_no_figure():
    # "by segment" names no single member: the consolidated figure would be the wrong answer, so none is given.
    assert name_members("What was Acme's revenue by segment?", _revenue(), [VIEW], [REVENUE]) is None
    # The company's own name alone is not a member.
    assert name_members("What was Acme Holdings' segment revenue?", _revenue(), [VIEW], [REVENUE]) is None


def test_a_segment_tagged_on_two_axes_is_named_by_its_segment():
    # Segment disclosures from 2024 on also tag each figure with ConsolidationItemsAxis = OperatingSegmentsMember.
    def tagged(member: str, value: float, label: str) -> FactRow:
        return _fact(REVENUE, value, label, "2025-04-01", "2025-06-30", {
            "srt:ConsolidationItemsAxis": "us-gaap:OperatingSegmentsMember",
            "us-gaap:StatementBusinessSegmentsAxis": member})

    view = FilingView(FILING, [_row(None, 30_000e6, "Total revenues"),
                               tagged("acme:CloudMember", 7_000e6, "Cloud"),
                               tagged("acme:DevicesMember", 23_000e6, "Devices")])
    named = name_members("What revenue did the Cloud segment post?", _revenue(), [view], [REVENUE])
    assert named is not None and named.before == ["cloud"]
    cloud = [g for g in view.by_concept[REVENUE] if g.dims]
    assert sorted(g.dims["us-gaap:StatementBusinessSegmentsAxis"] for g in cloud) == ["acme:CloudMember",
                                                                                      "acme:DevicesMember"]
    assert all(len(g.dims) == 1 for g in cloud)


def test_a_member_whose_name_runs_words_together_is_named_by_the_words_apart():
    # XBRL member names hold no spaces and filers choose their capitals: "AcmerxMember" is the segment the filing
    # prints as "Acme Rx", beside a "Total revenues" row that names no segment.
    view = FilingView(FILING, [_row(None, 30_000e6, "Total revenues"),
                               _row("acme:AcmerxMember", 12_000e6, "Total revenues"),
                               _row("acme:AcmehealthMember", 18_000e6, "Total revenues")])
    named = name_members("What was Acme Rx's revenue in Q2 2025?", _revenue(), [view], [REVENUE])
    assert named is not None and named.before == ["acmerx"]
    # A word that only begins the run-together name is not the member.
    assert name_members("What was Acme's revenue in Q2 2025?", _revenue(), [view], [REVENUE]) is None


def test_a_metric_printed_on_its_own_label_but_tagged_with_a_narrower_concept():
    from rag.facts.metrics import metric
    from rag.facts.views import printed_as

    def instant(concept: str, value: float, label: str) -> FactRow:
        return _fact(concept, value, label, None, "2025-06-30")

    annual = {**FILING, "form": "10-K", "fiscal_period": "FY", "period_end": "2025-06-30"}
    rows = [_row(None, 30_000e6, "Total revenues"),
            instant("us-gaap:InventoryFinishedGoodsNetOfReserves", 7_489e6, "Inventories"),
            # A tax note prints the same label beside a deferred tax asset: not an inventory.
            instant("us-gaap:DeferredTaxAssetsInventory", 98e6, "Inventories")]
    view = FilingView(annual, rows)
    found = printed_as(metric("inventory"), view, 0, "instant")
    assert found is not None and found.value == 7_489e6
    assert printed_as(metric("inventory"), FilingView(annual, [rows[0], rows[2]]), 0, "instant") is None
    # A note discloses what a statement's label also names: the fair value hierarchy's "Total liabilities"
    # (an element the taxonomy names "...Disclosure") is no balance-sheet total.
    fair_value = instant("us-gaap:LiabilitiesFairValueDisclosure", 6_148e6, "Total liabilities")
    assert printed_as(metric("total_liabilities"), FilingView(annual, [rows[0], fair_value]), 0, "instant") is None


def test_the_kind_of_part_said_after_its_name_is_not_part_of_the_member():
    cloud = {"us-gaap:StatementBusinessSegmentsAxis": "acme:CloudMember"}
    devices = {"us-gaap:StatementBusinessSegmentsAxis": "acme:DevicesMember"}
    for after in (["cloud", "segment"], ["cloud", "region"], ["cloud"]):
        match = member_matcher(MetricMention("operating_income", 0, 0, ["operating", "income"], after=after))
        assert match(cloud) > 0 and match(devices) == 0
    # A kind word alone still has to name something.
    match = member_matcher(MetricMention("operating_income", 0, 0, ["operating", "income"], after=["segment"]))
    assert match(cloud) == 0
    # A member whose own name says its kind is found by the mention narrowed to its words, kind word and all.
    other = {"us-gaap:StatementBusinessSegmentsAxis": "us-gaap:AllOtherSegmentsMember"}
    match = member_matcher(MetricMention("operating_income", 0, 0, ["operating", "income"],
                                         before=["all", "other", "segment"]))
    assert match(other) > 0 and match(cloud) == 0
    # A kind word is no part of a name of one other word: "other" alone names no "Other Segments".
    match = member_matcher(MetricMention("revenue", 0, 0, ["revenue"], before=["other"]))
    assert match({"us-gaap:StatementBusinessSegmentsAxis": "acme:OtherSegmentsMember"}) == 0


def test_a_member_named_with_its_words_cut_short():
    media = {"us-gaap:StatementBusinessSegmentsAxis": "acme:DigitalMediaMember"}
    experience = {"us-gaap:StatementBusinessSegmentsAxis": "acme:DigitalExperienceMember"}
    match = member_matcher(MetricMention("revenue", 0, 0, ["rev"], before=["dig", "media"]))
    assert match(media) > 0 and match(experience) == 0
    # Two letters are no abbreviation of a word, and every word must be there.
    assert member_matcher(MetricMention("revenue", 0, 0, ["rev"], before=["di", "media"]))(media) == 0
    assert member_matcher(MetricMention("revenue", 0, 0, ["rev"], before=["media"]))(media) == 0


def test_the_questions_own_words_pick_the_line_the_filing_prints_under_them():
    from rag.facts.layer import _as_worded

    def annual(concept: str, value: float, label: str) -> FactRow:
        return _fact(concept, value, label, "2024-02-01", "2025-01-31")

    view = FilingView({**FILING, "form": "10-K", "fiscal_period": "FY"}, [
        annual("us-gaap:Revenues", 680_985e6, "Total revenues"),
        annual("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", 674_538e6, "Net sales")])
    groups = [g for gs in view.by_concept.values() for g in gs]
    total = view.by_concept["us-gaap:Revenues"][0]
    net = next(g for g in groups if g is not total)
    said = _as_worded(MetricMention("revenue", 0, 0, ["net", "sales"]), total, groups)
    assert [g.value for g in said] == [674_538e6]
    # The metric's own choice printed under the question's words, or no line printed so: nothing changes.
    assert _as_worded(MetricMention("revenue", 0, 0, ["total", "revenues"]), total, groups) == []
    assert _as_worded(MetricMention("revenue", 0, 0, ["revenue"]), total, groups) == []
    assert [g.value for g in _as_worded(MetricMention("revenue", 0, 0, ["total", "revenues"]), net, groups)] == [
        680_985e6]


_PRODUCT, _SEGMENT = "srt:ProductOrServiceAxis", "us-gaap:StatementBusinessSegmentsAxis"


def _two_axes(product: str, segment: str, value: float, row_label: str) -> FactRow:
    return _fact(REVENUE, value, row_label, "2025-04-01", "2025-06-30", {_PRODUCT: product, _SEGMENT: segment})


def test_a_product_line_tagged_inside_its_one_segment_is_read_as_its_own_member():
    # "Video ads" is tagged only beside its one segment, and never alone: the figure is the product line's own. The
    # segment holds two lines, so neither of its figures is the segment's.
    view = FilingView(FILING, [
        _row(None, 30_000e6, "Total revenues"),
        _row("acme:ServicesSegmentMember", 25_000e6, "Services"),
        _two_axes("acme:VideoAdsMember", "acme:ServicesSegmentMember", 7_000e6, "Video ads"),
        _two_axes("acme:SearchMember", "acme:ServicesSegmentMember", 18_000e6, "Search"),
        # A product sold in two segments is split between them: no one figure is the product's.
        _two_axes("acme:DevicesMember", "acme:ServicesSegmentMember", 1_000e6, "Devices"),
        _two_axes("acme:DevicesMember", "acme:CloudSegmentMember", 2_000e6, "Devices"),
    ])
    named = name_members("How much revenue did Acme's video ads bring in?", _revenue(), [view], [REVENUE])
    assert named is not None and named.before == ["video", "ads"]
    assert [g.best.value for g in view.by_concept[REVENUE] if g.dims == {_PRODUCT: "acme:VideoAdsMember"}] == [7_000e6]
    assert name_members("How much revenue did Acme's devices bring in?", _revenue(), [view], [REVENUE]) is None
    # The segment's own one-axis figure is still the segment's.
    assert name_members("What was Acme's services revenue?", _revenue(), [view], [REVENUE]).before == ["service"]


def test_a_members_own_name_beats_one_shortened_by_the_companys():
    # "Acme Brand" without the company's name is "Brand"; "Zephyr" is a member's whole name: "Zephyr brand" names
    # the Zephyr segment, not the Acme Brand.
    view = FilingView(FILING, [
        _row(None, 30_000e6, "Total revenues"),
        _row("acme:AcmeBrandMember", 28_000e6, "Acme Brand"),
        _row("acme:ZephyrSegmentMember", 2_000e6, "Zephyr"),
    ])
    named = name_members("What revenue did Acme's Zephyr brand bring in?", _revenue(), [view], [REVENUE])
    assert named is not None and named.before == ["zephyr"]
    # A name the question capitalises that holds the shortened form and more ("Jordan Brand") names another part
    # than the "Brand" of "Acme Brand": no member, so no figure rather than the Acme Brand's.
    assert name_members("How much revenue did the Jordan Brand generate for Acme?", _revenue(), [view],
                        [REVENUE]) is None
    named = name_members("How much revenue did the Acme Brand generate?", _revenue(), [view], [REVENUE])
    assert named is not None and named.before == ["acme", "brand"]
    # A possessive ends a name: the owner's name before it is not part of the part named after it.
    named = name_members("What revenue did Acme's Zephyr Segment bring in?", _revenue(), [view], [REVENUE])
    assert named is not None and named.before == ["zephyr"]
    assert name_members("What was the Jordan Brand's revenue at Acme?", _revenue(), [view], [REVENUE]) is None
    # Two members named as well as each other: both are returned, and name_members picks neither.
    assert len(members_named("What revenue did the domestic and international segments bring in?", _revenue(),
                             [VIEW], [REVENUE])) == 2
    assert name_members("What revenue did the domestic and international segments bring in?", _revenue(), [VIEW],
                        [REVENUE]) is None


class _OneFilingStore:
    """The fact store's reading side, over one filing's rows."""

    def __init__(self, filing: dict, rows: list[FactRow]):
        self.filing, self.rows = filing, rows

    def filings(self, ticker=None, doc_ids=None):
        return [self.filing] if ticker in (None, self.filing["ticker"]) else []

    def facts(self, doc_id):
        return self.rows



def _answerer(filing: dict, rows: list[FactRow]):
    """A function from a question to the facts block over one filing's rows (None when the facts give no figure)."""
    layer = FactsLayer(get_settings(), store=_OneFilingStore(filing, rows))
    catalog = Catalog.build([filing])

    def answer(question: str) -> str | None:
        found = layer.answer_for(plan_question(question, catalog))
        return found.block if found else None

    return answer

def test_a_class_of_stock_on_the_cover_is_named_by_its_class():
    filing = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
              "fiscal_period": "FY", "fact_count": 3}

    def cover(member: str, shares: float) -> FactRow:
        return FactRow("d", "dei:EntityCommonStockSharesOutstanding", "", shares, f"{shares:,.0f}", "shares", "c",
                       None, "2025-01-28", True, {"us-gaap:StatementClassOfStockAxis": member}, "INF", 0, 1, 2,
                       "chunk", "Cover", 1, "")

    rows = [cover("us-gaap:CommonClassAMember", 5_833e6), cover("us-gaap:CommonClassBMember", 860e6),
            cover("acme:CapitalClassCMember", 5_497e6), cover("acme:CommonClassB1Member", 4e6)]
    layer = FactsLayer(get_settings(), store=_OneFilingStore(filing, rows))
    catalog = Catalog.build([filing])

    def answer(question: str):
        found = layer.answer_for(plan_question(question, catalog))
        return found.block if found else None

    assert "5,833,000,000 shares" in answer("How many Class A shares did Acme have outstanding?")
    assert "5,497,000,000 shares" in answer("How many Class C shares did Acme have outstanding?")
    assert "4,000,000 shares" in answer("How many Class B-1 shares did Acme have outstanding?")  # ClassB1Member
    # No class named: every class's sum; a class the cover does not list: no figure, never the sum.
    assert "12,194,000,000 shares = sum of share classes" in answer("How many shares did Acme have outstanding?")
    # The stock named after "shares of" is the common stock, not a class: the same sum.
    assert "12,194,000,000 shares = sum of share classes" in answer(
        "How many shares of common stock did Acme have outstanding?")
    assert answer("How many Class D shares did Acme have outstanding?") is None
    # The class named inside "shares of <owner>'s Class C stock were outstanding" is still the class asked.
    assert "5,497,000,000 shares" in answer("How many shares of Acme's Class C stock were outstanding?")
    assert "sum of share classes" not in answer("How many shares of Acme's Class C stock were outstanding?")
    assert answer("How many shares of Acme's Class D stock were outstanding?") is None


def test_a_parts_gross_margin_is_computed_from_its_tagged_revenue_and_cost():
    # Revenue and cost of sales are tagged per product-or-service member, gross profit only in total: a question
    # about one part's gross margin reads that part's two inputs, never the company's total gross profit.
    filing = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
              "fiscal_period": "FY", "fact_count": 5}
    axis = "srt:ProductOrServiceAxis"

    def year(concept: str, value: float, member: str | None) -> FactRow:
        return _fact(concept, value, "", "2024-01-01", "2024-12-31", {axis: member} if member else None)

    rows = [year(REVENUE, 400e6, None), year(REVENUE, 100e6, "us-gaap:ServiceMember"),
            year(REVENUE, 300e6, "us-gaap:ProductMember"), year("us-gaap:CostOfGoodsAndServicesSold", 25e6,
                                                                 "us-gaap:ServiceMember"),
            year("us-gaap:CostOfGoodsAndServicesSold", 200e6, "us-gaap:ProductMember"),
            year("us-gaap:GrossProfit", 175e6, None)]
    answer = _answerer(filing, rows)

    services = answer("What was Acme's services gross margin in fiscal 2024?")
    assert "Gross margin — Service ·" in services and "75.00% = gross profit / total revenue" in services
    assert "$75 million" in answer("What was Acme's services gross profit in fiscal 2024?")
    assert "43.75%" in answer("What was Acme's gross margin in fiscal 2024?")  # the whole company's, as tagged
    # A part neither input is tagged for gets no figure, rather than the total.
    assert answer("What was Acme's licensing gross margin in fiscal 2024?") is None


# A filer with several classes of stock, its facts tagged per class on the class-of-stock axis.
_CLASSES_FILING = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K",
                   "fiscal_year": 2024, "fiscal_period": "FY", "fact_count": 3}
_CLASS_AXIS = "us-gaap:StatementClassOfStockAxis"
# A consolidated figure dates the fiscal year; the cover's trading symbol names the class traded under the ticker.
_CLASSES_REVENUE = FactRow("d", REVENUE, "", 35_926e6, "35,926", "usd", "c", "2024-01-01", "2024-12-31", False, {},
                           "-6", 6, 1, 2, "chunk", "Item 8", 40, "Net revenue")
_TRADED_CLASS_A = FactRow("d", "dei:TradingSymbol", "", None, "ACME", "", "c", None, "2025-01-28", True,
                          {_CLASS_AXIS: "us-gaap:CommonClassAMember"}, "", 0, 1, 2, "chunk", "Cover", 1, "")


def _per_class(concept: str, unit: str, member: str, value: float) -> FactRow:
    """A fiscal-2024 fact of `concept` for one class of stock."""
    return FactRow("d", concept, "", value, f"{value:,.2f}", unit, "c", "2024-01-01", "2024-12-31", False,
                   {_CLASS_AXIS: member}, "2", 0, 1, 2, "chunk", "Item 8", 40, "")


def _classes_answer(question: str, rows: list[FactRow]) -> str | None:
    found = FactsLayer(get_settings(), store=_OneFilingStore(_CLASSES_FILING, rows)).answer_for(
        plan_question(question, Catalog.build([_CLASSES_FILING])))
    return found.block if found else None


def test_earnings_per_share_tagged_only_per_class_is_read_for_the_class_named():
    # A filer with several classes of stock may tag its EPS only per class: the class asked is the member; asked
    # without a class there is no one figure.
    def eps(member: str, value: float) -> FactRow:
        return _per_class("us-gaap:EarningsPerShareDiluted", "usdPerShare", member, value)

    rows = [_CLASSES_REVENUE, eps("us-gaap:CommonClassAMember", 9.73), eps("us-gaap:CommonClassCMember", 38.92)]
    class_a = _classes_answer("What was Acme's class A diluted EPS in fiscal 2024?", rows)
    assert "Diluted EPS — Common Class A" in class_a and "$9.73 per share" in class_a
    assert "$38.92 per share" in _classes_answer("What was Acme's class C diluted EPS in fiscal 2024?", rows)
    # Asked as net income per diluted share of the class: the same figure, the class still its qualifier.
    assert "$38.92 per share" in _classes_answer(
        "What was Acme's net income per diluted Class C share in fiscal 2024?", rows)
    assert _classes_answer("What was Acme's diluted EPS in fiscal 2024?", rows) is None
    # The cover lists the class traded under the filer's own ticker: that class is the one meant when none is named.
    unnamed = _classes_answer("What was Acme's diluted EPS in fiscal 2024?", [*rows, _TRADED_CLASS_A])
    assert "Diluted EPS — Common Class A" in unnamed and "$9.73 per share" in unnamed


def test_shares_bought_back_per_class_are_the_listed_class_only_when_no_other_class_is_tagged():
    # Shares repurchased tagged for the traded class alone (Mastercard's class A) are the company's count; tagged
    # for two classes (Alphabet's A and C), the traded class's count is a part of it, and no figure is given.
    def bought(member: str, value: float) -> FactRow:
        return _per_class("us-gaap:TreasuryStockSharesAcquired", "shares", member, value)

    question = "How many shares did Acme buy back in fiscal 2024?"
    rows = [_CLASSES_REVENUE, _TRADED_CLASS_A, bought("us-gaap:CommonClassAMember", 23_000_000)]
    one_class = _classes_answer(question, rows)
    assert "Shares repurchased — Common Class A" in one_class and "23,000,000 shares" in one_class
    assert _classes_answer(question, [*rows, bought("us-gaap:CommonClassCMember", 30_000_000)]) is None


def test_a_class_of_stock_is_met_by_the_line_the_filing_prints_for_it():
    # A filer that buys back one class only tags the cash-flow line without a class and prints it as that class's
    # ("Repurchases of class A common stock"): asked for that class, in the verb's words or the noun's, the line
    # answers under its printed label. A line printed without the class answers no question about one class.
    filing = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
              "fiscal_period": "FY", "fact_count": 1}
    catalog = Catalog.build([filing])

    def answer(label: str, question: str) -> str | None:
        rows = [_fact("us-gaap:PaymentsForRepurchaseOfCommonStock", 16_713e6, label, "2023-10-01", "2024-09-30")]
        found = FactsLayer(get_settings(), store=_OneFilingStore(filing, rows)).answer_for(
            plan_question(question, catalog))
        return found.block if found else None

    printed = "Repurchases of class A common stock"
    for question in ("How much did Acme spend buying back Class A shares in fiscal 2024?",
                     "How much did Acme spend on repurchases of Class A common stock in fiscal 2024?"):
        block = answer(printed, question)
        assert "Repurchases of class A common stock" in block and "$16,713 million" in block
    assert answer(printed, "How much did Acme spend buying back Class B shares in fiscal 2024?") is None
    assert answer("Repurchases of common stock", "How much did Acme spend buying back Class A shares in fiscal 2024?") is None
    assert "$16,713 million" in answer("Repurchases of common stock", "How much did Acme spend buying back shares in fiscal 2024?")


def test_a_part_named_with_and_before_the_metric_is_read_whole():
    # "energy generation and storage revenue": a member's name that joins two words, written before the metric,
    # is one qualifier, as it is after the metric ("revenue from energy generation and storage").
    (before,) = find_mentions("Acme energy generation and storage revenue Q2 2025?", {"acme"})
    assert before.before == ["energy", "generation", "and", "storage"]
    named = name_members("Acme energy generation and storage revenue Q2 2025?", before, [VIEW], [REVENUE])
    assert named == before  # its own qualifier names the member
    # Two metrics joined by "and" stay two, neither qualifying the other.
    assert [(m.metric_key, m.before) for m in find_mentions("What were Acme's net sales and operating income?")] == [
        ("revenue", []), ("operating_income", [])]


def test_a_figure_attributed_to_one_thing_is_that_part_not_the_whole():
    # "How much tax expense is attributed to the termination fee", "net income attributable to noncontrolling
    # interests": the part one thing accounts for, read as a qualifier, so the whole figure (the company's tax
    # expense, its consolidated net income) is not given for it unless a member or a label names the part.
    (tax,) = find_mentions("How much tax expense is attributed to the acquisition termination fee?")
    assert tax.after == ["acquisition", "termination", "fee"]
    (nci,) = find_mentions("What was Acme's net income attributable to noncontrolling interests in 2024?", {"acme"})
    assert nci.metric_key == "net_income" and nci.after == ["noncontrolling", "interest"]
    # The metric named again only to say where the part is printed ("in its income tax reconciliation") asks for
    # nothing of its own.
    catalog = Catalog.build([{"ticker": "ACME", "company": "ACME HOLDINGS INC.", "fiscal_year": 2024}])
    plan = plan_question("In Acme's income tax reconciliation, how much tax expense is attributed to the "
                         "acquisition termination fee?", catalog)
    assert [(m.metric_key, m.after) for m in attributed_parts(plan, plan.metrics)] == [
        ("income_tax", ["acquisition", "termination", "fee"])]


def test_according_to_a_source_is_no_part():
    (shares,) = find_mentions("How many common shares were outstanding according to the cover of its 10-K?")
    assert shares.metric_key == "shares_outstanding" and shares.after == []


def test_a_part_named_by_its_initials_before_the_figure_finds_its_company():
    # "<segment initials> net sales", no company named: the initials qualify the figure's words, and the one
    # company whose filings tag a member of those initials owns the figure.
    filing = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
              "fiscal_period": "FY", "fact_count": 3}

    def year(member: str | None, value: float, label: str) -> FactRow:
        dims = {"us-gaap:StatementBusinessSegmentsAxis": member} if member else None
        return _fact(REVENUE, value, label, "2024-01-01", "2024-12-31", dims)

    rows = [year(None, 600e6, "Total net sales"), year("acme:WidgetCloudServicesSegmentMember", 107e6, "WCS"),
            year("acme:RetailSegmentMember", 493e6, "Retail")]
    layer = FactsLayer(get_settings(), store=_OneFilingStore(filing, rows))
    catalog = Catalog.build([filing])
    for question in ("What were WCS net sales in 2024?", "How much revenue did WCS bring in during 2024?"):
        found = layer.answer_for(plan_question(question, catalog))
        assert found is not None and "$107 million" in found.block and "600" not in found.block, question
        assert "No company was named" in found.block


def test_a_group_of_segments_tagged_as_its_total_is_named_by_the_groups_name():
    # "Total Zephyr" sums the segments "Zephyrhealth" and "Zephyrrx": "Zephyr" alone names the group, never one of
    # the segments whose run-together names only start with it.
    view = FilingView(FILING, [
        _row(None, 40_000e6, "Total revenues"),
        _row("acme:TotalZephyrMember", 25_000e6, "Total revenues"),
        _row("acme:ZephyrhealthMember", 10_000e6, "Total revenues"),
        _row("acme:ZephyrrxMember", 15_000e6, "Total revenues"),
    ])
    assert members_named("What were Zephyr's revenues in Q2 2025?", _revenue(), [view], [REVENUE]) == [
        ("total", "zephyr")]
    match = member_matcher(MetricMention("revenue", 0, 0, ["revenue"], after=["zephyr"]))
    group, segment = ({"us-gaap:StatementBusinessSegmentsAxis": m} for m in
                      ("acme:TotalZephyrMember", "acme:ZephyrhealthMember"))
    assert match(group) > match(segment) > 0
    # Shown by its own name, not by the line's "Total revenues" printed beside its figure.
    assert member_label("acme:TotalZephyrMember", ["Total revenues"]) == "Total Zephyr"


def test_parts_listed_for_a_sum_are_each_read_and_added():
    # "<part> and <other part> combined": each member the question lists is its own figure, the answer their sum
    # with both cited; one listed part named in more words than the other is still asked. Two figures of different
    # breakdowns (a product and a region) overlap, so they are not added.
    filing = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
              "fiscal_period": "FY", "fact_count": 6}
    product, region = "srt:ProductOrServiceAxis", "us-gaap:StatementGeographicalAxis"

    def year(concept: str, value: float, dims: dict | None = None, label: str = "") -> FactRow:
        return _fact(concept, value, label, "2024-01-01", "2024-12-31", dims)

    rows = [year(REVENUE, 900e6), year(REVENUE, 500e6, {product: "acme:WidgetsMember"}, "Widgets"),
            year(REVENUE, 150e6, {product: "acme:CloudAndHostingServicesMember"}, "Cloud and hosting services"),
            year(REVENUE, 250e6, {product: "acme:GadgetsMember"}, "Gadgets"),
            year(REVENUE, 400e6, {region: "acme:EuropeMember"}, "Europe"),
            year("us-gaap:ResearchAndDevelopmentExpense", 70e6), year("us-gaap:SellingGeneralAndAdministrativeExpense", 30e6)]
    answer = _answerer(filing, rows)

    both = answer("What were Acme's widgets and gadgets revenues combined in fiscal 2024?")
    assert "= $750 million = $500 million [F1]" in both and "+ $250 million [F2]" in both
    longer = answer("What was the sum of Acme's cloud and hosting services and gadgets revenue in fiscal 2024?")
    assert "= $400 million" in longer and longer.index("Cloud and hosting") < longer.index("Gadgets")
    assert "$100 million = $70 million" in answer(
        "What were Acme's research and development and selling, general and administrative expenses combined in "
        "fiscal 2024?")
    assert answer("What were Acme's widgets and Europe revenues combined in fiscal 2024?") is None
    # A share of the parts combined divides their sum by the whole, never one part by the other.
    share = answer("What percentage of Acme's total revenues came from widgets and gadgets combined in fiscal 2024?")
    assert "= 83.33% = $750 million / $900 million" in share and "as a percentage of total revenue — " not in share


def test_a_segment_tagged_with_total_revenues_and_net_sales_is_read_by_the_concepts_order():
    # A segment's "Total revenues" (membership and other income included) and its "Net sales" are two figures of one
    # member on two concepts, not members that disagree: the first revenue concept in priority order answers, as it
    # does for the whole company, and the segment's margin divides by it. Two members of different axes that the
    # same words name and that disagree are still no answer.
    filing = {"doc_id": "d", "ticker": "ACME", "company": "ACME HOLDINGS INC.", "form": "10-K", "fiscal_year": 2024,
              "fiscal_period": "FY", "fact_count": 6}
    segment = {"us-gaap:StatementBusinessSegmentsAxis": "acme:AcmeStoresMember"}

    def year(concept: str, value: float, dims: dict | None, label: str) -> FactRow:
        return _fact(concept, value, label, "2024-01-01", "2024-12-31", dims)

    rows = [year(REVENUE, 1_000e6, None, "Total revenues"),
            year(REVENUE, 600e6, segment, "Total revenues"),
            year("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax", 590e6, segment, "Net sales"),
            year("us-gaap:OperatingIncomeLoss", 60e6, segment, "Operating income")]
    answer = _answerer(filing, rows)

    assert "$600 million" in answer("What were the Acme Stores segment's revenues in fiscal 2024?")
    assert "10.00% = operating income / total revenue = $60 million [F1] / $600 million [F2]" in answer(
        "What was the operating margin of the Acme Stores segment in fiscal 2024?")
    rows.append(year(REVENUE, 450e6, {"srt:StatementGeographicalAxis": "acme:AcmeStoresMember"}, "Acme Stores"))
    answer = _answerer(filing, rows)
    assert answer("What were the Acme Stores segment's revenues in fiscal 2024?") is None


def test_the_metrics_own_kind_written_after_its_short_form_is_no_part():
    # "SG&A expenses": the word "expenses" is the metric's own, not a part of it to narrow it to.
    assert [(m.metric_key, m.after) for m in find_mentions("What were Acme's R&D and SG&A expenses in 2024?")] == [
        ("rnd", []), ("sga", [])]
