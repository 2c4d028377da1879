"""Exact figures from inline XBRL facts (rag/facts.py): selection over real 10-Ks, computed metrics with their
formulas and citations, answer checks, the index hooks and the CLI.

The real-corpus tests read ../shared/corpus/filings in place and store facts straight from parse_file() with the
chunk spans of a chunker-only pass (no embedding); the index/engine tests use small generated filings.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest

from rag.catalog import Catalog
from rag.config import get_settings
from rag.facts import (
    FactsLayer,
    FactStore,
    concept_label,
    find_mentions,
    format_amount,
    map_to_chunks,
    member_label,
    print_facts,
    unit_kind,
)
from rag.facts.metrics import labelled_key, metric
from rag.question import plan_question
from tests.filings import ACME, SHARED, store_facts, write_filing

CORPUS = SHARED / "corpus" / "filings"
# The few filings the corpus tests need (each costs ~2 s to parse and chunk).
FILES = {
    ("AAPL", 2024): "AAPL/aapl-20240928.htm",
    ("AAPL", 2025): "AAPL/aapl-20250927.htm",
    ("TSLA", 2023): "TSLA/tsla-20231231.htm",
    ("TSLA", 2024): "TSLA/tsla-20241231.htm",
    ("NVDA", 2023): "NVDA/nvda-20230129.htm",
    ("NVDA", 2025): "NVDA/nvda-20250126.htm",
    ("ADBE", 2024): "ADBE/adbe-20241129.htm",
    ("CRM", 2025): "CRM/crm-20250131.htm",
    ("AMZN", 2024): "AMZN/amzn-20241231.htm",  # no "Total liabilities" line; segments printed by short names
}


@pytest.fixture(scope="module")
def corpus_stores(tmp_path_factory, pg_module_url):
    """The real filings above, each fact mapped to its chunk, written into a fact store of each backend (the
    embedded file and team mode's PostgreSQL); plus chunk texts by id."""
    if not CORPUS.exists():
        pytest.skip(f"{CORPUS} is absent: the shared corpus (../shared beside the project) is needed for this test")
    from rag.index import IndexStore

    settings = get_settings(storage_dir=tmp_path_factory.mktemp("facts-storage"))
    chunker = IndexStore(settings).chunker()
    stores = {"embedded": FactStore.for_settings(settings), "served": FactStore(database_url=pg_module_url)}
    chunks: dict[str, tuple[str, dict]] = {}
    docs: dict[tuple, str] = {}
    parsed: dict[tuple, object] = {}
    for key, rel in FILES.items():
        path = CORPUS / rel
        doc, meta = store_facts(list(stores.values()), chunker, path, chunks)
        docs[key] = meta["doc_id"]
        parsed[key] = doc
    return {"settings": settings, "stores": stores, "chunks": chunks, "docs": docs, "parsed": parsed}


@pytest.fixture(scope="module", params=["embedded", "served"])
def corpus(request, corpus_stores):
    """The corpus read through one backend's fact store: every test below runs on both, with the same results."""
    store = corpus_stores["stores"][request.param]
    layer = FactsLayer(corpus_stores["settings"], store=store, chunk_lookup=corpus_stores["chunks"].get)
    return {**corpus_stores, "store": store, "layer": layer}


def ask(corpus, question: str):
    layer = corpus["layer"]
    return layer.answer_for(plan_question(question, Catalog.build(layer.filings())))


# ------------------------------------------------------------------------------------------- selection, real 10-Ks


def test_apple_fy2024_total_net_sales(corpus):
    v = corpus["layer"].value("revenue", "AAPL", 2024)
    assert v.amount == 391_035_000_000
    assert v.display() == "$391,035 million"
    assert v.filing["doc_id"] == corpus["docs"][("AAPL", 2024)] and not v.comparative
    f = v.fact
    assert f.dimensions == {} and f.decimals == "-6" and f.scale == 6
    assert (f.period_start, f.period_end) == ("2023-10-01", "2024-09-28")
    # Cited to the chunk that shows the figure.
    text, meta = corpus["chunks"][f.chunk_id]
    assert "391,035" in text and meta["char_start"] <= f.char_start < f.char_end <= meta["char_end"]


def test_tesla_fy2023_total_revenues_from_the_browser_saved_copy(corpus):
    v = corpus["layer"].value("revenue", "TSLA", 2023)
    assert v.amount == 96_773_000_000
    assert v.filing["doc_id"] == corpus["docs"][("TSLA", 2023)] and not v.comparative


def test_nvidia_fy2023_comes_from_its_own_filing_not_the_fy2025_comparative(corpus):
    layer = corpus["layer"]
    v = layer.value("revenue", "NVDA", 2023)
    assert v.amount == 26_974_000_000
    assert v.filing["doc_id"] == corpus["docs"][("NVDA", 2023)]
    assert Path(v.filing["path"]).name == "nvda-20230129.htm" and not v.comparative
    # The FY2025 10-K reports FY2023 too (a 3-year income statement): the same figure, never the source here.
    fy25 = layer.view(next(f for f in layer.filings("NVDA") if f["fiscal_year"] == 2025))
    g = fy25.find("us-gaap:Revenues", 2, "duration")
    assert g is not None and g.value == v.amount and g.best.doc_id != v.filing["doc_id"]


def test_apple_fy2025_never_takes_a_prior_year_comparative(corpus):
    layer = corpus["layer"]
    fy25 = corpus["docs"][("AAPL", 2025)]
    for key in ("revenue", "net_income", "eps_diluted", "total_assets", "operating_cash_flow", "cash"):
        v = layer.value(key, "AAPL", 2025)
        assert v is not None, key
        assert v.filing["doc_id"] == fy25 and not v.comparative, key
        assert v.period_end == "2025-09-27", (key, v.period_end)
    assert layer.value("revenue", "AAPL", 2025).amount == 416_161_000_000
    # And FY2024 is read from the FY2024 10-K, not from the FY2025 10-K's comparative column.
    assert layer.value("total_assets", "AAPL", 2024).filing["doc_id"] == corpus["docs"][("AAPL", 2024)]


def test_prior_year_comparative_only_without_that_years_filing_and_said(corpus):
    v = corpus["layer"].value("revenue", "AAPL", 2023)
    assert v.amount == 383_285_000_000 and v.comparative
    assert v.filing["fiscal_year"] == 2024 and v.period_end == "2023-09-30"
    fa = ask(corpus, "What was Apple's total revenue in fiscal 2023?")
    assert "$383,285 million" in fa.block
    assert "No FY2023 10-K of AAPL is indexed" in fa.block and "prior-year comparative" in fa.block


def test_negative_values_scale_and_decimals(corpus):
    layer = corpus["layer"]
    tax = layer.value("income_tax", "TSLA", 2023)  # Tesla's FY2023 tax line is a benefit: shown in parentheses
    assert tax.amount == -5_001_000_000 and tax.display() == "-$5,001 million"
    assert tax.fact.decimals == "-6" and tax.fact.scale == 6
    eps = layer.value("eps_diluted", "AAPL", 2024)
    assert eps.amount == pytest.approx(6.08) and eps.display() == "$6.08 per share"
    shares = layer.value("shares_outstanding", "AAPL", 2024)  # cover page, a later date than the period end
    assert shares.amount == 15_115_823_000 and shares.fact.concept == "dei:EntityCommonStockSharesOutstanding"
    assert "October 18, 2024" in shares.when()


def test_every_visible_fact_sits_in_its_chunk(corpus):
    store, chunks = corpus["store"], corpus["chunks"]
    rows = store.facts(corpus["docs"][("AAPL", 2024)])
    visible = [r for r in rows if r.char_start >= 0]
    assert len(visible) > 500
    mapped = [r for r in visible if r.chunk_id]
    assert len(mapped) >= 0.98 * len(visible)
    doc = corpus["parsed"][("AAPL", 2024)]
    for r in mapped:
        _, meta = chunks[r.chunk_id]
        assert meta["char_start"] <= r.char_start and r.char_end <= meta["char_end"]
        assert doc.text[r.char_start:r.char_end] == r.text


# ------------------------------------------------------------------------------------ questions and computations


def test_lookup_answer_cites_the_chunk(corpus):
    fa = ask(corpus, "What was Tesla's total revenue for the year ended December 31, 2023?")
    assert fa is not None and fa.operation == "lookup"
    assert "$96,773 million [F1]" in fa.block
    (c,) = fa.citations
    assert c.kind == "fact" and c.ticker == "TSLA" and c.fiscal_year == 2023 and c.chunk_id
    # The income statement's tag, not the segment note's us-gaap:Revenues further on.
    assert "96,773" in c.text and "us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax" in c.text


def test_growth_between_years_with_formula_and_citations(corpus):
    fa = ask(corpus, "How much did Apple's total net sales grow from fiscal 2024 to fiscal 2025?")
    assert fa.operation == "growth"
    (r,) = fa.results
    assert r["value"] == pytest.approx((416_161 - 391_035) / 391_035 * 100)
    assert "+6.43%" in fa.block and "+$25,126 million" in fa.block
    assert "($416,161 million − $391,035 million) / $391,035 million" in fa.block
    assert {c.fiscal_year for c in fa.citations} == {2024, 2025}
    assert all(c.kind == "fact" and c.chunk_id for c in fa.citations)


def test_margin_is_computed_from_two_cited_facts(corpus):
    fa = ask(corpus, "What was Salesforce's operating margin in fiscal 2025?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(7_205 / 37_895)
    assert "19.01% = operating income / total revenue = $7,205 million [F1] / $37,895 million [F2]" in fa.block
    assert [c.ticker for c in fa.citations] == ["CRM", "CRM"]


def test_cross_company_difference(corpus):
    fa = ask(corpus, "Which had more total revenue in its latest fiscal year, Adobe (fiscal 2024) or Salesforce "
                     "(fiscal 2025), and by how much?")
    assert fa.operation == "compare"
    diff = next(r for r in fa.results if r["label"].startswith("Difference"))
    assert diff["value"] == 16_390_000_000 and diff["larger"] == "CRM"
    assert "difference $16,390 million = $37,895 million − $21,505 million" in fa.block
    assert {(c.ticker, c.fiscal_year) for c in fa.citations} == {("ADBE", 2024), ("CRM", 2025)}


def test_percentage_of_a_dimension_member(corpus):
    fa = ask(corpus, "What percentage of Tesla's total revenue in 2023 came from Automotive Sales (excluding Leasing)?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(78_509 / 96_773 * 100)
    assert "81.13%" in fa.block and "Automotive Sales" in fa.block


def test_share_of_a_segment_named_after_from(corpus):
    fa = ask(corpus, "What percentage of Apple's fiscal 2024 revenue came from Greater China?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(66_952 / 391_035 * 100)
    assert "17.12%" in fa.block and "Greater China" in fa.block
    assert ask(corpus, "What percentage of Apple's fiscal 2024 revenue came from Antarctica?") is None
    # Called a segment, the part is still a share of the consolidated whole, never of its own figure (100%).
    fa = ask(corpus, "What percentage of Apple's total net sales came from the Greater China segment in fiscal 2024?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(66_952 / 391_035 * 100) and "$391,035 million" in fa.block
    # The part named with no "from", or as the subject of the share.
    fa = ask(corpus, "What percent of Apple's fiscal 2024 net sales were Services?")
    assert "24.59% = $96,169 million" in fa.block
    fa = ask(corpus, "iPhone accounted for what percentage of Apple's fiscal 2024 net sales?")
    assert "51.45% = $201,183 million" in fa.block
    # Not from a part: the rest, which the facts do not name here, so no figure rather than the part's own share.
    assert ask(corpus, "What percent of Apple's fiscal 2024 net sales was not from iPhone?") is None


def test_a_member_asked_by_the_label_printed_beside_its_figure(corpus):
    # The filing's member is "Amazon Web Services"; its disaggregation table prints the row as "AWS".
    fa = ask(corpus, "What share of AMZN's 2024 net sales came from AWS?")
    (r,) = fa.results
    layer = corpus["layer"]
    total = layer.value("revenue", "AMZN", 2024).amount
    assert r["value"] == pytest.approx(107_556_000_000 / total * 100) and "Amazon Web Services" in fa.block


def test_a_segments_margin_divides_the_segments_own_figures(corpus):
    # The segment's operating income over the segment's revenue, never over the company's total revenue; "&" in
    # the question is the "And" of the member's name (ComputeAndNetworkingSegmentMember).
    fa = ask(corpus, "What operating margin did NVIDIA's Compute & Networking segment earn in fiscal 2025?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(82_875 / 116_193)
    assert "Operating margin — Compute And Networking" in fa.block
    # A segment named by its initials ("AWS": Amazon Web Services), in a company named after its web address.
    fa = ask(corpus, "What was Amazon's AWS operating margin in 2024?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(39_834 / 107_556) and "Amazon Web Services" in fa.block
    # The owner between "of" and the segment is not part of the segment's name.
    fa = ask(corpus, "What was the operating income of Amazon's North America segment in 2024?")
    # Named by the line Amazon prints, not the vocabulary's "Operating income".
    assert "Operating income (loss) — North America" in fa.block and "$24,967 million" in fa.block
    # A margin of a part no member names is no figure at all, never the company's own margin.
    assert ask(corpus, "What operating margin did NVIDIA's Automotive Robotics segment earn in fiscal 2025?") is None


def test_a_part_named_without_a_segment_word_or_its_company(corpus):
    # "What operating margin did AWS earn": no "segment", no possessive, no company; the member is the part, and
    # the one company whose filings tag it owns the figure. The company's total would be a confident wrong answer.
    fa = ask(corpus, "What operating margin did AWS earn in 2024?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(39_834 / 107_556) and "Amazon Web Services" in fa.block
    assert any("only AMAZON.COM, INC.'s (AMZN) filings tag" in n for n in fa.notes)
    fa = ask(corpus, "How much operating income did Amazon's North America business make in 2024?")
    # Named by the line Amazon prints, not the vocabulary's "Operating income".
    assert "Operating income (loss) — North America" in fa.block and "$24,967 million" in fa.block
    # A part that no company's filings tag names no company: nothing is answered for it.
    assert ask(corpus, "What operating margin did Antarctica earn in 2024?") is None
    # The company's own figure is still the company's when no part is named.
    fa = ask(corpus, "What was Amazon's operating income in 2024?")
    assert "Operating income ·" in fa.block and "—" not in fa.block


def test_a_word_of_prose_inside_a_printed_label_is_the_figures_name(corpus):
    # "maturities" asks for prose (debt maturities) unless it sits in a line the statement prints and the question
    # spells out in full.
    fa = ask(corpus, "What were Apple's proceeds from maturities of marketable securities in fiscal 2024?")
    assert "Proceeds from maturities of marketable securities" in fa.block and "$51,211 million" in fa.block
    assert ask(corpus, "Why did Apple's proceeds from maturities of marketable securities fall in fiscal 2024?") is None
    assert ask(corpus, "What are the maturities of Apple's marketable securities in fiscal 2024?") is None


def test_a_printed_label_does_not_answer_for_a_part_it_leaves_out(corpus):
    # "Total net sales from the education market": no member names that market, and the statement's "Total net
    # sales" line is the whole company's figure, not the part asked.
    assert ask(corpus, "What were Apple's total net sales from the education market in fiscal 2024?") is None
    fa = ask(corpus, "What were Apple's total net sales in fiscal 2024?")
    assert "$391,035 million" in fa.block


def test_cash_returned_to_shareholders_is_dividends_and_buybacks(corpus):
    fa = ask(corpus, "How much cash did Apple return to shareholders in fiscal 2024?")
    (v,) = fa.values
    assert v.amount == (15_234 + 94_949) * 1e6 and "dividends paid + share repurchases" in fa.block
    # The stock-performance graph's "total shareholder return" is another thing: no figure.
    assert ask(corpus, "What was Apple's total shareholder return over five years?") is None


def test_a_part_the_question_leaves_out_is_taken_from_the_whole_never_answered_by_it(corpus):
    # "Other than from iPhone": not the iPhone line, and not total revenue, which holds it, but the total less the
    # iPhone member, both inputs cited.
    for question in ("How much revenue did Apple earn other than from iPhone in fiscal 2024?",
                     "What was Apple's revenue, not counting iPhone, in fiscal 2024?"):
        fa = ask(corpus, question)
        assert fa is not None and fa.operation == "difference", question
        (result,) = fa.results
        assert result["value"] == (391_035 - 201_183) * 1e6
        assert "Total revenue excluding iPhone" in fa.block and "$391,035 million" in fa.block \
            and "$201,183 million" in fa.block and len(fa.citations) == 2
    # A region left out, named before the figure.
    fa = ask(corpus, "Excluding Greater China, what were Apple's net sales in fiscal 2024?")
    assert fa is not None and fa.results[0]["value"] == (391_035 - 66_952) * 1e6
    # A share of what is left ("came from outside the United States", the member being the country code US): the
    # whole less the part, stated as an amount and as a percentage of the whole.
    for question in ("What percentage of Apple's fiscal 2024 net sales came from outside the United States?",
                     "How much of Apple's fiscal 2024 net sales came from outside the U.S.?"):
        fa = ask(corpus, question)
        assert fa is not None, question
        (result,) = fa.results
        assert result["value"] == pytest.approx((391_035 - 142_196) / 391_035 * 100)
        assert "$248,839 million" in fa.block and "63.64% of total revenue" in fa.block
    # A part named by words its member's name holds ("Automotive regulatory credits").
    fa = ask(corpus, "What was Tesla's revenue excluding regulatory credits in 2024?")
    assert fa is not None and fa.results[0]["value"] == (97_690 - 2_763) * 1e6
    assert "Total revenue excluding Automotive regulatory credits" in fa.block
    # Several parts left out: taking one away would leave the others in (nor is the last one the part asked).
    assert ask(corpus, "What was Apple's revenue excluding Services and Mac in fiscal 2024?") is None
    assert ask(corpus, "What share of Apple's fiscal 2024 revenue came from outside the U.S. and outside of "
                       "Greater China?") is None
    # Two figures with a part left out: which figure loses the part is a guess, so the facts do not answer.
    assert ask(corpus, "What were Apple's net sales and operating income excluding Greater China in fiscal "
                       "2024?") is None


def test_the_home_country_written_with_non_is_left_out_of_the_whole(corpus):
    fa = ask(corpus, "What was Adobe's non-U.S. revenue in fiscal 2024?")
    assert fa is not None and fa.results[0]["value"] == (21_505 - 11_499) * 1e6
    assert "Total revenue excluding US" in fa.block and len(fa.citations) == 2


def test_how_much_of_a_whole_a_part_labelled_in_full_was_is_the_parts_amount(corpus):
    # The label the filing prints holds the whole's words and more: it names the part, whose amount is asked.
    fa = ask(corpus, "How much of Tesla's 2024 net income was attributable to common stockholders?")
    (v,) = fa.values
    assert v.amount == 7_091e6 and "Net income attributable to common stockholders" in fa.block
    # No label names the part: the whole's figure would answer another question, so none is given.
    assert ask(corpus, "How much of Apple's fiscal 2024 net income was attributable to its founders?") is None


def test_a_word_that_only_hedges_qualifies_no_figure(corpus):
    # The income taxes paid, not a part of them ("actually paid") that the facts cannot name.
    (v,) = ask(corpus, "How much cash did Apple actually pay in income taxes in fiscal 2024?").values
    assert v.amount == 26_102e6


def test_the_year_answered_is_the_asking_sentences_not_the_scenes(corpus):
    fa = ask(corpus, "Apple's tax rate came way down in fiscal 2025. What was its effective tax rate the year "
                     "before, in fiscal 2024?")
    (v,) = fa.values
    assert v.fiscal_year == 2024 and "24.1%" in fa.block and "15.6%" not in fa.block


def test_a_sum_of_parts_of_which_one_is_read_gives_no_figure(corpus):
    # Only "Debt current" is named in full: stating it as the sum would be half the answer, so none is given.
    assert ask(corpus, "Adding the current and long-term portions together, how much debt was on Adobe's balance "
                       "sheet at the end of fiscal 2024?") is None
    # A sum over the years named still adds up.
    fa = ask(corpus, "What were Apple's net sales in fiscal 2024 and 2025 combined?")
    assert fa.results[0]["value"] == (391_035 + 416_161) * 1e6


def test_a_share_of_revenue_billed_to_a_place_named_with_a_bracket(corpus):
    for question in ("What share of NVIDIA's fiscal 2025 revenue was billed to China (including Hong Kong)?",
                     "What percentage of NVIDIA's fiscal 2025 revenue came from China (including Hong Kong)?"):
        fa = ask(corpus, question)
        assert fa is not None and fa.results[0]["value"] == pytest.approx(17_108 / 130_497 * 100), question


def test_a_part_named_with_and_is_read_whole(corpus):
    # The segment "Compute & Networking", not the product line "Compute" its first word names.
    fa = ask(corpus, "What was NVIDIA's revenue from Compute and Networking in fiscal 2025?")
    (v,) = fa.values
    assert v.amount == 116_193e6 and "Compute And Networking" in fa.block
    # Two parts joined: no member is both, and one of them alone would be half the answer.
    assert ask(corpus, "What was Apple's revenue from iPhone and Mac in fiscal 2024?") is None
    # What a part made or lost "at the operating line" is its operating income.
    (v,) = ask(corpus, "What did Apple's Greater China segment earn at the operating line in fiscal 2024?").values
    assert v.metric.key == "operating_income" and v.member == "Greater China"
    # Earned from a part is that part's revenue.
    (v,) = ask(corpus, "What did Apple earn from iPhone in fiscal 2024?").values
    assert v.amount == 201_183e6


def test_what_a_part_brought_in_is_its_revenue(corpus):
    (v,) = ask(corpus, "What did Apple's iPhone bring in during fiscal 2024?").values
    assert v.amount == 201_183e6 and v.member
    # With an object, the object is the figure: the cash operations brought in.
    (v,) = ask(corpus, "How much cash did Apple's operations bring in during fiscal 2024?").values
    assert v.metric.key == "operating_cash_flow"


def test_an_amount_named_before_the_verb_is_what_is_asked_not_the_metric_after_it(corpus):
    # The figure asked is named between "how much" and the verb; "net sales" after the verb only says where that
    # amount sits, and the company's net sales would answer another question.
    assert ask(corpus, "How much favorable warranty development did Apple book in net sales in fiscal 2024?") is None
    assert ask(corpus, "How much Apple stock did the company buy back in fiscal 2024?") is None
    # A metric among those words is the figure; words that only say it is money leave the metric after the verb.
    assert "$391,035 million" in ask(corpus, "How much total net sales did Apple book in fiscal 2024?").block
    assert "$391,035 million" in ask(corpus, "How much money did Apple bring in as net sales in fiscal 2024?").block
    assert "$391,035 million" in ask(corpus, "How much did Apple book in net sales in fiscal 2024?").block
    # A figure read by the label the filing prints is named there too; "how much higher" asks for a difference.
    assert "$29,943 million" in ask(corpus, "How much cash and cash equivalents did Apple hold at the end of fiscal "
                                            "2024?").block
    assert ask(corpus, "How much higher were Apple's net sales in fiscal 2025 than in fiscal 2024?") is not None


def test_a_prior_year_asked_from_a_named_annual_report_is_that_year_alone(corpus):
    for question in ("What net income did Apple report for fiscal 2024, as shown in its fiscal 2025 10-K?",
                     "Per Apple's fiscal 2025 10-K, what net income did the company earn in fiscal 2024?"):
        fa = ask(corpus, question)
        assert fa is not None and "$93,736 million" in fa.block and "$112,010 million" not in fa.block, question


def test_a_balance_named_as_what_was_sold_or_bought_is_not_the_figure(corpus):
    # "From selling its inventory" asks for a deal's cash, not the inventory left at the year's end.
    assert ask(corpus, "How much did Tesla get in 2024 from selling its inventory?") is None
    assert ask(corpus, "How much did Tesla spend acquiring cash and cash equivalents in 2024?") is None
    assert "$12,017 million" in ask(corpus, "How much inventory did Tesla hold at the end of 2024?").block


def test_a_part_the_filing_does_not_tag_gets_no_company_total(corpus):
    # "Model Y" is a name the plan reads as nothing else, and no member of Tesla's revenue matches it: the total
    # revenue would answer another question. A part the filing tags is still answered.
    assert ask(corpus, "How much revenue did Model Y bring in for Tesla in 2024?") is None
    fa = ask(corpus, "How much revenue did Energy Generation and Storage bring in for Tesla in 2024?")
    assert fa is not None and "$10,086 million" in fa.block
    assert "$97,690 million" in ask(corpus, "How much revenue did Tesla bring in during 2024?").block
    # A capitalised word of the figure's own label is the figure's name, not a part.
    assert "$29,943 million" in ask(corpus, "What was Apple's Cash & Cash Equivalents balance at the end of "
                                            "fiscal 2024?").block
    # A source in plain words the filing tags no member for: no total either. The statement's own words for the
    # whole ("revenue from contracts with customers") are no part.
    assert ask(corpus, "How much revenue did Tesla earn from widget licensing in 2024?") is None
    assert "$97,690 million" in ask(corpus, "How much revenue did Tesla earn in 2024, per its 10-K?").block
    # The source named by the activity that earned it, after the verb asking the amount: no total, and no member
    # read by another qualifier, which is a wider part than the one asked.
    assert ask(corpus, "How much revenue did Tesla earn hauling freight in 2024?") is None
    assert ask(corpus, "How much energy generation and storage revenue did Tesla book selling solar roofs in "
                       "2024?") is None
    assert "$10,086 million" in ask(corpus, "How much energy generation and storage revenue did Tesla earn during "
                                            "2024?").block


def test_a_computed_metric_defined_in_the_question_and_a_share_asked_as_how_much_of(corpus):
    # The margin's own inputs named as its definition: the computed line, not the inputs again as answers.
    fa = ask(corpus, "What net margin did Apple earn in fiscal 2024, taking net income over net sales?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(93_736 / 391_035) and "· Total revenue ·" not in fa.block
    # "How much of its net sales went to R&D": the part over the whole, whatever verb joins them.
    fa = ask(corpus, "How much of its fiscal 2024 net sales did Apple put into research and development?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(31_370 / 391_035 * 100) and "as a percentage of total revenue" in fa.block
    fa = ask(corpus, "How much of Apple's fiscal 2024 net sales went to research and development?")
    (r,) = fa.results
    assert r["value"] == pytest.approx(31_370 / 391_035 * 100)


def test_a_count_asked_is_never_answered_with_money(corpus):
    # R&D headcount shares its words with R&D expense: the expense would answer another question.
    assert ask(corpus, "How many of NVIDIA's people work in research and development in fiscal 2025?") is None
    assert ask(corpus, "How much did NVIDIA spend on research and development in fiscal 2025?") is not None
    # A count of shares is a count.
    fa = ask(corpus, "How many weighted-average diluted shares did Apple have in fiscal 2024?")
    assert fa is not None and "diluted" in fa.block.lower()


def test_total_liabilities_from_the_statement_totals_when_no_line_reports_them(corpus):
    layer = corpus["layer"]
    assert layer.value("total_liabilities", "TSLA", 2024).fact.concept == "us-gaap:Liabilities"  # reported: read
    derived = layer.value("total_liabilities", "AMZN", 2024)
    both = layer.value("liabilities_and_equity", "AMZN", 2024).amount
    equity = layer.value("total_equity", "AMZN", 2024).amount
    assert derived.amount == both - equity and both > equity > 0
    fa = ask(corpus, "What were AMZN's total liabilities at the end of 2024?")
    assert "total liabilities and equity − total equity" in fa.block


def test_cash_as_the_means_of_payment_leaves_the_metric_it_pays_for(corpus):
    # "cash" followed by "use" is no cash balance; the repurchases it paid for are still the figure asked.
    fa = ask(corpus, "How much cash did Apple use for share repurchases in fiscal 2024?")
    assert "Repurchases of common stock" in fa.block and "$94,949 million [F1] spent on repurchases of common stock" in fa.block
    # Nor is "cash" before "return": what it returned is its dividends and buybacks, not its cash balance.
    assert "Cash returned to shareholders" in ask(corpus, "How much cash did Apple return to shareholders in "
                                                          "fiscal 2024?").block


def test_an_exact_date_names_the_one_filing_when_no_company_is_named(corpus):
    fa = ask(corpus, "How many common shares were outstanding on October 18, 2024?")
    assert "15,115,823,000 shares" in fa.block and "No company was named" in fa.block
    assert ask(corpus, "What was total revenue for the year ended December 31, 2024?") is None  # several match


def test_latest_year_when_none_is_named_and_it_says_so(corpus):
    fa = ask(corpus, "What were Apple's total assets?")
    assert "$359,241 million" in fa.block and "No fiscal year was named" in fa.block and "FY2025" in fa.block


@pytest.mark.parametrize("question", [
    "How does Apple recognize revenue?",  # narrative
    "What was Apple's revenue from Antarctica in 2024?",  # a qualifier no dimension member matches
    "What was Apple's operating income in the fourth quarter of 2024?",  # quarterly, not annual
    "What is Tesla's stock price forecast for 2025?",
    "What was Microsoft's revenue compared to Apple's in 2024?",  # a company that is not indexed
])
def test_falls_through_when_facts_cannot_answer(corpus, question):
    assert ask(corpus, question) is None


def test_metric_words_map_to_concepts():
    keys = [m.metric_key for m in find_mentions(
        "Compare net sales, cost of sales, R&D, SG&A, diluted EPS, capex, free cash flow and long-term debt")]
    assert keys == ["revenue", "cost_of_revenue", "rnd", "sga", "eps_diluted", "capex", "free_cash_flow",
                    "long_term_debt"]
    (m,) = find_mentions("What was Apple's iPhone revenue?")
    assert m.metric_key == "revenue" and m.before == ["iphone"]
    # A capitalised name runs on into the part word after it: "Greater" is no comparative there.
    (m,) = find_mentions("What did Apple's Greater China segment bring in during fiscal 2023?")
    assert m.metric_key == "revenue" and m.before == ["greater", "china", "segment"]
    # The short forms analysts write for net property, plant and equipment; not inside another word.
    assert [m.metric_key for m in find_mentions("Did PPNE grow, and PP&E, and PPE?")] == ["ppe"] * 3
    assert find_mentions("the shopper engagement and the apex of the upper bound") == []
    # The unit asked for and the word "balance" narrow nothing: "revenue in billions" is the revenue.
    (m,) = find_mentions("What was Apple's revenue in billions in fiscal 2024?")
    assert m.metric_key == "revenue" and not m.qualified
    (m,) = find_mentions("What was Apple's cash balance at the end of fiscal 2024?")
    assert m.metric_key == "cash" and not m.qualified
    # A share count said to be diluted or basic is the weighted average, not the cover's shares outstanding.
    assert [m.metric_key for m in find_mentions("Apple's weighted average diluted share count in 2024?")] == [
        "weighted_diluted"]
    assert [m.metric_key for m in find_mentions("Apple's basic share count in 2024?")] == ["weighted_basic"]
    assert [m.metric_key for m in find_mentions("Apple's share count?")] == ["shares_outstanding"]
    # What is left of a repurchase program, said before the program or after it.
    for question in ("How much remained on Apple's share repurchase authorization at the end of 2024?",
                     "How much was left under Apple's stock repurchase program?",
                     "What was Apple's remaining repurchase authorization?",
                     "How much buyback authorization does Apple have left at the end of 2024?",
                     "How much buyback capacity did Apple have left at the end of fiscal 2025?"):
        assert [m.metric_key for m in find_mentions(question)] == ["repurchase_remaining"], question
    # Some of it spent is no remainder.
    assert [m.metric_key for m in find_mentions("How much did Apple spend on share repurchases?")] == ["buybacks"]
    # The stock named before the verb: how much of it was bought back is the amount spent; how many shares, a count.
    for question in ("how much stock did Apple repurchase in fiscal 24?", "How much stock did Apple buy back?"):
        assert [m.metric_key for m in find_mentions(question)] == ["buybacks"], question
    assert "buybacks" not in [m.metric_key for m in find_mentions("How many shares did Apple repurchase in 2024?")]


def test_labels_and_units():
    assert concept_label("us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax") == \
        "Revenue from contracts with customers"
    assert concept_label("us-gaap:IncreaseDecreaseInAccountsPayable") == "Increase decrease in accounts payable"
    assert member_label("aapl:IPhoneMember") == "iPhone"
    # The filing's own row label, when it names the member; a generic one ("Revenues") does not.
    assert member_label("goog:YouTubeAdvertisingRevenueMember", ["YouTube ads", "Revenues"]) == "YouTube ads"
    assert member_label("aapl:ServiceMember", ["Services (1)"]) == "Services"
    assert member_label("nke:ConverseSegmentMember", ["Revenues", "TOTAL REVENUES"]) == "Converse"
    # A name the filer ran together is shown as the passage reporting the figure spells it, when it does.
    printed = "Revenues | Acme Health | Acme Rx | Total\nAcme Rx fulfilled 1,623 million scripts. AcmeRx.com"
    assert member_label("acme:AcmerxMember", ["Total revenues"], printed) == "Acme Rx"
    assert member_label("acme:AcmerxMember", ["Total revenues"], "No such name here.") == "Acmerx"
    assert unit_kind("usdPerShare") == "per_share" and unit_kind("shares") == "shares" and unit_kind("usd") == "money"
    assert format_amount(-1.2e7, "money", scale=6) == "-$12 million"
    assert format_amount(39_000_966_000, "money", scale=3) == "$39,000,966 thousand"


def test_a_mislabelled_concept_loses_to_the_row_labelled_as_the_metric():
    from rag.facts import FactGroup, FactRow, by_label, metric

    def group(concept, value, label):
        row = FactRow("d", concept, "", value, "", "usd", "c", "2024-01-01", "2024-12-29", False, {}, "-6", 6, 1, 2,
                      "d:00001", "Item 8", 1, label)
        return FactGroup.build([row])

    rnd = metric("rnd")
    mislabelled = group("us-gaap:ResearchAndDevelopmentExpense", 1.841e9,
                        "Charges for acquired in-process research and development assets")
    statement = group("us-gaap:ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost", 17.232e9,
                      "Research and development expense")
    assert by_label(rnd, [mislabelled, statement]) is statement
    # A first choice on a row labelled as the metric keeps its priority; so do small differences.
    proper = group("us-gaap:ResearchAndDevelopmentExpense", 17.0e9, "Research and development")
    assert by_label(rnd, [proper, statement]) is proper
    equity = metric("equity")
    own = group("us-gaap:StockholdersEquity", 91.013e9, "Total Walmart shareholders' equity")
    with_nci = group("us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", 97.421e9,
                     "Total equity")
    assert by_label(equity, [own, with_nci]) is own


def test_chunk_mapping_edges():
    class F:
        def __init__(self, s, e):
            self.char_start, self.char_end = s, e

    chunks = [{"id": "a", "char_start": 0, "char_end": 10}, {"id": "b", "char_start": 12, "char_end": 20}]
    got = [c["id"] if c else None for c in map_to_chunks([F(0, 3), F(9, 10), F(10, 11), F(15, 18), F(-1, -1)],
                                                         chunks)]
    assert got == ["a", "a", None, "b", None]


# ----------------------------------------------------------------------------------------------- answer checks


def test_a_contradicting_number_is_flagged(corpus):
    layer = corpus["layer"]
    bad = layer.check_answer("Apple's total net sales for fiscal 2024 were $391,036 million [1].", ["AAPL"], [2024])
    assert len(bad) == 1 and "$391,036 million" in bad[0] and "$391,035 million" in bad[0]
    assert layer.check_answer("Tesla's revenue in 2023 was $97.7 billion [1].", ["TSLA"], [2023])
    for fine in (
        "Apple's total net sales for fiscal 2024 were $391,035 million [1].",
        "Total net sales were $391.0 billion in fiscal 2024, up 2% from $383,285 million in 2023 [1].",
        "Salesforce's operating margin was 19.0% in fiscal 2025.",
    ):
        assert layer.check_answer(fine, ["AAPL"] if "Apple" in fine or "Total" in fine else ["CRM"],
                                  [2024] if "2024" in fine else [2025]) == [], fine
    assert layer.check_answer("Salesforce's operating margin was 21.5% in fiscal 2025.", ["CRM"], [2025])


# ------------------------------------------------------------------------------- index hooks, engine, CLI (small)


@pytest.fixture
def acme_index(tmp_path):
    from rag.index import IndexStore

    settings = get_settings(storage_dir=tmp_path / "storage", data_dir=tmp_path / "data")
    store = IndexStore(settings)
    path = write_filing(tmp_path / "in", "acme.htm", **ACME)
    report = store.add([path])
    assert report.rows[0]["status"] == "indexed", report.rows
    return settings, store, path


def test_indexing_stores_facts_and_removal_removes_them(acme_index):
    settings, store, path = acme_index
    facts = FactStore.for_settings(settings)
    (filing,) = facts.filings()
    doc_id = filing["doc_id"]
    assert filing["ticker"] == "ACME" and filing["fiscal_year"] == 2024 and facts.count(doc_id) > 0
    rows = {r.concept: r for r in facts.facts(doc_id) if r.period_end == "2024-09-28" and r.value is not None}
    assert rows["us-gaap:Revenues"].value == 391_035_000_000
    assert rows["us-gaap:OtherNonoperatingIncomeExpense"].value == -12_000_000  # sign="-" and scale="6"
    node_ids = {n.node_id for n in store.load().nodes}
    assert rows["us-gaap:Revenues"].chunk_id in node_ids
    # A filing indexed before facts existed gets them on the next (otherwise unchanged) index run.
    facts.remove([doc_id])
    assert facts.count(doc_id) == 0
    store.add([path])
    assert facts.count(doc_id) > 0
    assert store.remove([doc_id]) == [doc_id]
    assert facts.filings() == [] and facts.count(doc_id) == 0


def test_engine_answers_from_facts_without_llm(acme_index):
    from rag.engine import Engine

    settings, _, _ = acme_index
    engine = Engine(settings)
    result = engine.ask("What was ACME's total revenue in fiscal 2024?", use_llm=False)
    assert "$391,035 million" in result.answer
    fact = [c for c in result.citations if c.kind == "fact"]
    assert fact and fact[0].chunk_id and "391,035" in fact[0].text
    growth = engine.ask("How did ACME's total revenue change from fiscal 2023 to fiscal 2024?", use_llm=False)
    assert "+$7,750 million (+2.02%)" in growth.answer and "prior-year comparative" in growth.answer


def test_a_figure_the_filing_does_not_tag_is_said_so(acme_index):
    from rag.engine import Engine

    settings, _, _ = acme_index
    engine = Engine(settings)
    # The synthetic 10-K tags revenue but no goodwill: passages quoted for goodwill may hold another figure.
    missing = engine.ask("What was ACME's goodwill at the end of fiscal 2024?", use_llm=False)
    assert any("holds no goodwill" in w and "ACME's FY2024 10-K" in w for w in missing.warnings)
    found = engine.ask("What was ACME's total revenue in fiscal 2024?", use_llm=False)
    assert not any("holds no" in w for w in found.warnings)
    prose = engine.ask("Which supply risks does Acme describe?", use_llm=False)
    assert not any("holds no" in w for w in prose.warnings)


def test_retrieval_leads_with_the_chunk_that_holds_the_asked_figure(acme_index):
    from rag.engine import Engine

    settings, _, _ = acme_index
    engine = Engine(settings)
    (doc_id,) = engine.index().filings
    fact_chunk = next(r.chunk_id for r in FactStore.for_settings(settings).facts(doc_id)
                      if r.concept == "us-gaap:Revenues" and r.period_end == "2024-09-28")
    for mode in ("hybrid", "dense", "keyword"):
        result = engine.retrieve("What was ACME's total revenue in fiscal 2024?", mode=mode, top_k=3)
        assert result.nodes[0].node.node_id == fact_chunk, mode
        assert len(result.nodes) == 3 and len({n.node.node_id for n in result.nodes}) == 3
    # A question the facts cannot answer keeps the search order untouched.
    plain = engine.retrieve("Which supply risks does Acme describe?", top_k=3)
    direct = engine.retriever().retrieve("Which supply risks does Acme describe?", top_k=3)
    assert [n.node.node_id for n in plain.nodes] == [n.node.node_id for n in direct.nodes]


def test_the_statement_row_is_cited_over_a_note_that_tags_the_same_figure_otherwise(corpus):
    # Tesla tags 'Total revenues' on its income statement as RevenueFromContractWithCustomer... and as Revenues only
    # in a segment note further on: the citation goes to the statement.
    v = corpus["layer"].value("revenue", "TSLA", 2023)
    notes = [r for r in corpus["store"].facts(v.filing["doc_id"], ["us-gaap:Revenues"])
             if r.period_end == "2023-12-31" and not r.dimensions]
    assert notes and all(v.fact.char_start < r.char_start for r in notes)
    text, _ = corpus["chunks"][v.fact.chunk_id]
    assert "96,773" in text and "Total revenues" in text


def test_engine_flags_a_wrong_llm_figure(acme_index):
    from rag.engine import Engine
    from tests.fake_ollama import FakeOllama

    settings, _, _ = acme_index
    with FakeOllama() as fake:
        s = settings.with_overrides(ollama_url=fake.url, llm_model="test-model", llm_timeout_s=5.0,
                                    llm_context_window=4096)
        fake.reply = "ACME's total revenue in fiscal 2024 was $391,036 million [1]."
        result = Engine(s).ask("What was ACME's total revenue in fiscal 2024?")
        prompt = next(m["content"] for m in fake.chat_requests()[-1]["messages"] if m["role"] == "user")
    assert "<facts>" in prompt and "$391,035 million" in prompt
    assert not result.extractive
    assert any("$391,036 million" in w and "$391,035 million" in w for w in result.warnings), result.warnings


def test_print_facts_cli(acme_index, capsys):
    settings, _, _ = acme_index
    out = io.StringIO()
    assert print_facts("acme", settings, fiscal_year=2024, out=out) == 0
    text = out.getvalue()
    assert "ACME" in text and "FY2024" in text and "Total revenue" in text and "$391,035 million" in text
    out = io.StringIO()
    assert print_facts("ACME", settings, concept="Revenues", out=out) == 0
    assert "$383,285 million" in out.getvalue()  # the prior-year column, with its period
    assert print_facts("ZZZZ", settings) == 1
    assert "No XBRL facts stored for ZZZZ" in capsys.readouterr().err


def test_financials_page(acme_index, monkeypatch):
    from streamlit.testing.v1 import AppTest

    settings, _, _ = acme_index
    monkeypatch.setenv("RAG_STORAGE_DIR", str(settings.storage_dir))
    monkeypatch.setenv("RAG_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=60)
    at.switch_page("pages/financials.py").run()
    assert not at.exception, at.exception
    assert at.multiselect[0].value == ["ACME"]
    table = at.dataframe[0].value
    assert "$391,035 million" in table.to_string() and "$383,285 million" in table.to_string()
    assert any("Download CSV" in str(b.label) for b in at.get("download_button"))


def test_a_metric_phrase_split_by_the_questions_subject_is_still_found():
    # "How much cash did <company> generate from operations": the company stands between the metric's words.
    (m,) = find_mentions("How much cash did Acme Widgets generate from operations in fiscal 2024?")
    assert m.metric_key == "operating_cash_flow"
    assert [x.metric_key for x in find_mentions("How much cash was generated from operating activities?")] == [
        "operating_cash_flow"]
    assert [(x.metric_key, x.vetoed) for x in find_mentions("How much cash did Acme hold?")] == [("cash", True)]
    # Cash spent on a deal, or acquired with a business, is no cash balance: the investing line is the figure.
    assert [(x.metric_key, x.vetoed) for x in find_mentions(
        "What did Acme spend in cash on acquisitions in 2024, net of cash acquired?")] == [
        ("acquisitions_paid", False), ("cash", True)]
    # A list of what was bought may drop its "and": the spending is still on PP&E (the assets after it are named
    # with a qualifier, so they ask for no figure of their own).
    assert [(x.metric_key, x.qualified) for x in find_mentions(
        "What did Acme spend on property, equipment and intangible assets in 2024?", {"acme"})] == [
        ("capex", False), ("total_assets", True)]
    # A balance of debt with a verb of paying it back or raising it after it is that year's cash flow.
    for question in ("How much long-term debt did Acme retire in 2024?", "Acme term debt issued in 2024",
                     "How much term debt did Acme pay down during fiscal 2024?"):
        assert [x.vetoed for x in find_mentions(question) if x.metric_key in ("total_debt", "long_term_debt")] in (
            [True], []), question


@pytest.mark.parametrize("question, key", [
    # Statement lines in an analyst's own words, the verb before the metric never its qualifier.
    ("How much did Acme spend buying back its own stock in fiscal 2025?", "buybacks"),
    ("What did Acme pay out to shareholders in dividends in 2024?", "dividends_paid"),
    ("How much did Acme put into capital spending in fiscal 2024?", "capex"),
    ("How big was Acme's balance sheet at the end of 2024?", "total_assets"),
    ("What was Acme's tax bill in fiscal 2024?", "income_tax"),
    ("How much did Acme return to shareholders in 2024?", "shareholder_returns"),
    # Dividends paid out, whatever comes between the verb and the noun; what a part earned from operations.
    ("Who paid out more in dividends in 2024, Acme or Beta?", "dividends_paid"),
    ("How much did Acme pay out as cash dividends in 2024?", "dividends_paid"),
    # Where the money went: cash paid out in dividends.
    ("How much did Acme spend on dividends in 2024?", "dividends_paid"),
    ("How much went to dividends at Acme in 2024?", "dividends_paid"),
    ("What did Acme earn from operations in 2024?", "operating_income"),
    ("How much capital did Acme return to its shareholders in 2024?", "shareholder_returns"),
    ("How much cash did Acme's operations bring in during 2024?", "operating_cash_flow"),
    # A cash-flow section by its name, the cash around it: never the cash balance.
    ("How much cash did Acme's operating activities bring in during 2024?", "operating_cash_flow"),
    ("How much net cash came in from Acme's financing activities in 2024?", "financing_cash_flow"),
    ("How much cash did Acme's investing activities use in fiscal 2024?", "investing_cash_flow"),
    ("What did Acme's financing activities provide in 2024?", "financing_cash_flow"),
    # "For" right before the section's name is the section: filings print "Cash flows used for investing activities".
    ("Acme 2024 cash used for investing activities?", "investing_cash_flow"),
    ("How much cash did Acme use for financing activities in 2024?", "financing_cash_flow"),
    ("How much cash did Acme pay to repurchase its common stock in fiscal 2023?", "buybacks"),
    # What a company earned, with no object, is its profit.
    ("How much did Acme earn in fiscal 2024?", "net_income"),
    ("How much revenue did Acme earn in fiscal 2024?", "revenue"),
    # An analyst's word for the balance names it rather than narrowing it.
    ("What's Acme's cash pile at the end of fiscal 2025?", "cash"),
    # The abbreviation filings print themselves ("total SBC expense was $22.8 billion").
    ("acme sbc 2024?", "sbc"),
    # Cash that went to taxes, whatever the verb: the taxes paid, not the balance and not the expense.
    ("How much cash did Acme actually hand over in income taxes during fiscal 2025?", "income_taxes_paid"),
    # The cash-flow line for what exchange rates did to cash, by its name or in an analyst's words; the change word
    # in its name asks for no change.
    ("What was the effect of exchange rate changes on Acme's cash in 2024?", "fx_effect_on_cash"),
    ("By how much did currency moves drag down Acme's cash balance in 2024?", "fx_effect_on_cash"),
    # A result at the operating line, profit or loss.
    ("What was Acme's operating result in 2022?", "operating_income"),
    # Sold, asked as an amount with no object: the sales.
    ("How much did Acme sell in fiscal 2025?", "revenue"),
    # Analysts' short forms.
    ("acme rev fy24", "revenue"),
    ("acme op margin fy24", "operating_margin"),
    ("acme op income 2024", "operating_income"),
    # Cash handed back to shareholders; PP&E as what cash was spent on; receivables alone.
    ("How much cash did Acme hand back to shareholders in 2024?", "shareholder_returns"),
    ("What did Acme spend on additions to PP&E in fiscal 2024?", "capex"),
    ("How much did Acme spend on property and equipment in 2024?", "capex"),
    ("What was Acme's term debt at the end of fiscal 2024?", "total_debt"),
    # A clipped word analysts type.
    ("acme stock-based comp expense 2024", "sbc"),
    ("What were Acme's receivables on the balance sheet at Dec 31, 2024?", "receivables"),
    # A verb in the past tense after the metric is no part of it.
    ("Acme's retained earnings flipped negative in 2025: how big is the deficit?", "retained_earnings"),
    # A hyphenated name between the verb's words.
    ("How many shares does Acme-Widgets have outstanding?", "shares_outstanding"),
    # A period word after the metric says when, not which part ("at year-end").
    ("What were Acme's total liabilities at year-end 2024?", "total_liabilities"),
    ("How much tax did Acme-Widgets pay in 2024?", "income_taxes_paid"),
    # Where the figure is printed is the place it is read from, not a part of it ("per" there is no rate).
    ("How many shares did Acme have outstanding on the cover of its 2024 10-K?", "shares_outstanding"),
    ("What were Acme's total liabilities per the balance sheet at year-end 2024?", "total_liabilities"),
    ("What was Acme's net income in the annual report for 2024?", "net_income"),
])
def test_statement_lines_asked_in_an_analysts_words(question, key):
    # A metric phrase the next words give another meaning is vetoed ("cash" in "how much cash did it pay to ...").
    (m,) = [m for m in find_mentions(question, {"acme"}) if not m.vetoed]
    assert m.metric_key == key and not m.qualified, m


def test_cash_returned_through_one_way_is_that_ways_amount(corpus):
    # "Returned to shareholders through buybacks" asks for the repurchases alone, never dividends + repurchases.
    (v,) = ask(corpus, "How much did Apple return to shareholders through buybacks in fiscal 2024?").values
    assert v.group.concept == "us-gaap:PaymentsForRepurchaseOfCommonStock" and v.amount == 94_949_000_000
    # Both ways named, or none: the sum.
    for question in ("How much did Apple return to shareholders through buybacks and dividends in fiscal 2024?",
                     "How much cash did Apple return to shareholders in fiscal 2024?"):
        answer = ask(corpus, question)
        assert "$110,183 million = dividends paid + share repurchases" in answer.block, question


def test_a_bracket_closed_right_before_the_metric_names_its_part():
    # "GOOG (Class C) shares": the class in brackets is the part asked, as "Class C shares" is.
    (m,) = find_mentions("How many GOOG (Class C) shares were outstanding per the cover?", {"alphabet"})
    assert m.metric_key == "shares_outstanding" and m.before == ["class", "c"]
    # A bracket elsewhere still ends the words read back ("sales (excluding fuel)" is read by its exclusion).
    (m,) = find_mentions("What were Acme's total (consolidated) net sales in 2024?", {"acme"})
    assert m.metric_key == "revenue" and not m.qualified


def test_what_a_company_sells_asked_without_an_amount_is_its_products_not_its_sales():
    assert find_mentions("What does Acme actually sell, according to its fiscal 2025 10-K?", {"acme"}) == []
    assert plan_question("What was the effect of exchange rate changes on Apple's cash in 2024?",
                         Catalog.build([])).calculation.growth is False


def test_a_portion_of_a_balance_is_read_from_its_current_or_noncurrent_concept(corpus):
    # Adobe tags its deferred revenue whole and split; "current" and "long-term" name the split's parts.
    (v,) = ask(corpus, "What was Adobe's current unearned revenue at the end of fiscal 2024?").values
    assert v.amount == 6_131_000_000 and v.group.concept == "us-gaap:ContractWithCustomerLiabilityCurrent"
    assert "current portion" in v.label
    (v,) = ask(corpus, "Adobe long-term deferred revenue at fy24 year end?").values
    assert v.amount == 128_000_000 and v.group.concept == "us-gaap:ContractWithCustomerLiabilityNoncurrent"
    # A balance the filing does not split: "current" says "as of now".
    (v,) = ask(corpus, "What was Apple's current cash balance at the end of fiscal 2024?").values
    assert v.amount == 29_943_000_000


def test_by_how_much_asks_an_effect_or_a_change_never_a_balance(corpus):
    (v,) = ask(corpus, "By how much did currency moves drag down Amazon's cash balance in 2024?").values
    assert v.amount == -1_301_000_000 and v.metric.key == "fx_effect_on_cash"
    # A balance's level is no answer to "by how much"; its change is.
    assert ask(corpus, "By how much did the tax charge dent Apple's cash balance in fiscal 2024?") is None
    answer = ask(corpus, "By how much did Apple's cash balance grow in fiscal 2025?")
    assert answer is not None and answer.operation != "lookup"


def test_lines_filers_print_their_own_way_answer_the_standard_metric_as_printed(corpus):
    # SG&A of a filer that prints sales and marketing apart from general and administrative: the two added, cited.
    answer = ask(corpus, "What was Adobe's SG&A in fiscal 2024?")
    (v,) = answer.values
    assert v.amount == 7_293_000_000 and "sales and marketing + general and administrative" in answer.block
    # A filer's own concept for the acquisitions line or D&A is named as its row prints it.
    (v,) = ask(corpus, "How much did Amazon spend on acquisitions in 2024?").values
    assert v.amount == 7_082_000_000 and v.label.startswith("Acquisitions, net of cash acquired, non-marketable")
    (v,) = ask(corpus, "Tesla D&A 2024").values
    assert v.amount == 5_368_000_000 and v.label == "Depreciation, amortization and impairment"


def test_a_year_named_relative_to_the_latest_counts_back_from_it(corpus):
    # No year named: "the prior fiscal year" is the year before the latest 10-K, and "two years ago" two before.
    answer = ask(corpus, "What was Apple's revenue in the prior fiscal year?")
    (v,) = answer.values
    assert v.fiscal_year == 2024 and v.amount == 391_035_000_000
    assert any("the year before the latest indexed 10-K (AAPL FY2025)" in n for n in answer.notes)
    (v,) = ask(corpus, "What was Apple's net income two years ago?").values
    assert v.fiscal_year == 2023 and v.amount == 96_995_000_000
    # "Last year" is the latest year itself; a year named with "compared with the prior year" is a change.
    (v,) = ask(corpus, "What was Apple's revenue last year?").values
    assert v.fiscal_year == 2025
    assert ask(corpus, "What was Adobe's net income in fiscal 2024 compared with the prior year?").operation != "lookup"


def test_figures_asked_with_an_analysts_verbs_and_years(corpus):
    # Debt raised is the cash-flow statement's proceeds from issuing it; "new" qualifies nothing.
    (v,) = ask(corpus, "How much new term debt did Apple raise in fiscal 2025?").values
    assert v.amount == 4_481_000_000 and v.label == "Proceeds from issuance of term debt, net"
    # "The prior year" of a named annual report is the year before the report's own.
    (v,) = ask(corpus, "Looking at Apple's FY2025 10-K, what was revenue in the prior year?").values
    assert v.fiscal_year == 2024 and v.amount == 391_035_000_000
    # "Back in" a year says when, not which part.
    (v,) = ask(corpus, "What was Apple's diluted EPS back in fiscal 2023, per its FY2025 10-K?").values
    assert v.amount == 6.13
    # A line asked by its label for a year with no report of its own is read from the later report's column.
    (v,) = ask(corpus, "What was Tesla's other income (expense), net in fiscal 2022?").values
    assert v.fiscal_year == 2022


def test_a_share_of_one_printed_line_in_another_divides_the_two(corpus):
    # Neither side in the metric vocabulary: each side names its own printed line, and the share divides them.
    answer = ask(corpus, "What was Apple's other income/(expense), net as a percentage of operating income in "
                         "fiscal 2025?")
    assert answer.operation != "lookup" and "-0.24%" in answer.block
    assert "-$321 million [F1] / $133,050 million [F2]" in answer.block
    # A part printed under one word ("Fulfillment") is named by it before "of".
    answer = ask(corpus, "fulfillment costs as a % of amazon's total operating expenses in 2024?")
    assert answer is not None and "Fulfillment as a percentage of total operating expenses" in answer.block
    # The part named after the verb that spends the whole ("went to", "put into", "spend on"), the whole right
    # after "share of": the printed line of what is spent on, over the whole.
    for question in ("What share of Amazon's net sales went to fulfillment in 2024?",
                     "What share of net sales did Amazon put into fulfillment in 2024?"):
        answer = ask(corpus, question)
        assert answer is not None and "Fulfillment expense as a percentage of total revenue = 15.44%" in answer.block, question


def test_a_whole_years_words_qualify_no_figure(corpus):
    (v,) = ask(corpus, "What was Apple's full-year dividend per share in fiscal 2024?").values
    assert v.amount == 0.98
    (v,) = ask(corpus, "What was Apple's operating result in fiscal 2024?").values
    assert v.amount == 123_216_000_000


def test_cash_spent_on_a_line_inside_a_section_is_not_the_sections_net_line():
    # "spend on purchases of property and equipment in investing activities" asks for one line of the section.
    keys = [m.metric_key for m in find_mentions(
        "How much cash did Acme spend on purchases of property and equipment in investing activities in 2024?")]
    assert "investing_cash_flow" not in keys


def test_a_hyphenated_company_name_is_the_owner_not_a_qualifier():
    # The filer "COCA COLA CO" is written "Coca-Cola" in a question.
    (m,) = find_mentions("What did Coca-Cola pay in dividends in 2024?", {"coca", "cola"})
    assert m.metric_key == "dividends_paid" and not m.qualified


def test_operating_revenues_is_the_top_line_not_a_qualified_revenue():
    (m,) = find_mentions("What were the company's net operating revenues in fiscal 2024?")
    assert m.metric_key == "revenue" and not m.qualified


def test_reading_a_current_fact_store_writes_nothing(tmp_path):
    """A reader (the app, `rag eval` over a shared index) must not change the store it reads."""
    path = tmp_path / "facts.sqlite3"
    FactStore(path).add_filing({"doc_id": "d", "ticker": "ACME", "fiscal_year": 2024}, [])  # a current store
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert [f["doc_id"] for f in FactStore(path).filings()] == ["d"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_figure_asked_per_item_is_not_the_total(corpus):
    # "Revenue per seat", "net sales per square foot": a rate over a count the statements do not tag. The printed
    # label "Subscription revenue" holds the words asked but is the total, not the rate.
    assert ask(corpus, "What was Adobe's subscription revenue per seat in fiscal 2024?") is None
    # The item may come well after the figure's words.
    assert ask(corpus, "How much subscription revenue did Adobe bring in per seat in fiscal 2024?") is None
    assert ask(corpus, "What was Adobe's subscription revenue in fiscal 2024?") is not None


def test_shares_outstanding_asked_with_the_verb(corpus):
    fa = ask(corpus, "How many shares did Apple have outstanding in fiscal 2024?")
    assert "Shares outstanding" in fa.block and "15,115,823,000 shares" in fa.block
    # A class the facts cannot name stays outside the phrase: no figure, rather than every class's sum.
    assert ask(corpus, "How many Class A shares did Apple have outstanding in fiscal 2024?") is None


def test_taxes_paid_are_the_cash_paid_not_the_expense(corpus):
    # What a company pays in income taxes is the cash-flow statement's supplemental line; the expense stays the
    # answer to a question about the expense.
    for question in ("How much did Adobe pay in income taxes in fiscal 2024?",
                     "How much cash did Adobe pay for income taxes in fiscal 2024?",
                     "How much income tax did Adobe pay in fiscal 2024?",
                     "What were Adobe's cash taxes in fiscal 2024?"):
        fa = ask(corpus, question)
        # Adobe's own line for what the vocabulary calls "Income taxes paid".
        assert "Cash paid for income taxes, net of refunds" in fa.block and "$1,727 million" in fa.block, question
    fa = ask(corpus, "What was Adobe's income tax expense in fiscal 2024?")
    assert "Provision for income taxes" in fa.block and "$1,371 million" in fa.block


def test_cash_paid_for_acquisitions_is_the_investing_line(corpus):
    for question in ("How much did NVIDIA spend on acquisitions in fiscal 2025?",
                     "How much did NVIDIA spend to acquire businesses in fiscal 2025?"):
        fa = ask(corpus, question)
        assert "$1,007 million [F1] spent on acquisitions, net of cash acquired" in fa.block, question
    # Which businesses it bought is prose, not the figure.
    assert ask(corpus, "What acquisitions did NVIDIA make in fiscal 2025?") is None


def test_standard_ratios_are_computed_with_their_definition(corpus):
    # Asked for by name, each ratio is computed from its cited inputs and labelled with the definition used.
    fa = ask(corpus, "What was NVIDIA's inventory turnover in fiscal 2025?")
    assert ("Inventory turnover (cost of revenue / period-end inventories) · FY2025" in fa.block
            and "3.24 = cost of revenue / period-end inventories = $32,639 million [F1] / $10,080 million [F2]" in fa.block)
    fa = ask(corpus, "What was Apple's dividend payout ratio in fiscal 2024?")
    assert "16.25% = dividends paid / net income = $15,234 million [F1] / $93,736 million [F2]" in fa.block
    # The same share asked as where the earnings went.
    fa = ask(corpus, "What share of Apple's net income went to dividends in fiscal 2024?")
    assert "16.25%" in fa.block and "$15,234 million" in fa.block and "$93,736 million" in fa.block
    fa = ask(corpus, "What was Tesla's interest coverage in 2024?")
    assert "20.22 = operating income / interest expense = $7,076 million [F1] / $350 million [F2]" in fa.block
    # Asked as how often one figure covered the other, with both named: the ratio alone, its inputs cited in it.
    fa = ask(corpus, "How many times did Tesla's operating income cover its interest expense in 2024?")
    assert "20.22 = operating income / interest expense" in fa.block and "· Operating income ·" not in fa.block


def test_more_standard_ratios_show_each_step_of_their_definition(corpus):
    # Liquidity, efficiency and the carriers' operating ratio: each computed from statement lines the filing tags,
    # the nested step written out once, without doubled parentheses.
    fa = ask(corpus, "What was NVIDIA's quick ratio at the end of fiscal 2025?")
    assert ("3.88 = (total current assets − inventories) / total current liabilities = "
            "($80,126 million [F1] − $10,080 million [F2]) / $18,047 million [F3]") in fa.block
    fa = ask(corpus, "What is Apple's cash ratio for fiscal 2024?")
    assert "0.17 = cash and cash equivalents / total current liabilities = $29,943 million" in fa.block
    fa = ask(corpus, "What was Amazon's asset turnover in 2024?")
    assert "1.02 = total revenue / period-end total assets = $637,959 million [F1] / $624,894 million [F2]" in fa.block
    fa = ask(corpus, "What was Tesla's operating ratio in 2024?")
    assert ("92.76% = (total revenue − operating income) / total revenue = "
            "($97,690 million [F1] − $7,076 million [F2]) / $97,690 million [F1]") in fa.block
    fa = ask(corpus, "What was Tesla's EBITDA in 2024?")
    assert ("$12,444 million = operating income + depreciation and amortization = "
            "$7,076 million [F1] + $5,368 million [F2]") in fa.block
    # Its margin is a share of revenue, not the amount.
    fa = ask(corpus, "What was Tesla's EBITDA margin in 2024?")
    assert "12.74% = (operating income + depreciation and amortization) / total revenue" in fa.block
    # Debt-to-capital: term debt over term debt plus equity, the shared input cited once.
    fa = ask(corpus, "What was Apple's debt-to-capital ratio at the end of fiscal 2024?")
    assert ("62.93% = total term debt / (total term debt + stockholders' equity) = $96,662 million [F1] / "
            "($96,662 million [F1] + $56,950 million [F2])") in fa.block
    # "A minus B" is the first less the second.
    fa = ask(corpus, "What were Apple's total current assets minus total current liabilities at the end of fiscal 2024?")
    assert "= -$23,405 million = $152,987 million [F1] − $176,392 million [F2]" in fa.block
    # So is the margin of any amount the vocabulary has no margin for.
    fa = ask(corpus, "What was Apple's operating cash flow margin in fiscal 2024?")
    assert "Operating cash flow as a percentage of total revenue = 30.24% = $118,254 million" in fa.block
    # No inventories on the balance sheet: the acid test has no defined input, so the facts give no figure.
    assert ask(corpus, "What was Adobe's acid-test ratio in fiscal 2024?") is None



def test_working_capital_days_are_a_balance_over_the_years_flow_times_365(corpus):
    # Days sales, inventory and payables outstanding: the period-end balance over the year's flow through it, in
    # days, with the × 365 written in the arithmetic. Not the balance itself, which shares the words.
    fa = ask(corpus, "What was NVIDIA's days sales outstanding in fiscal 2025?")
    assert ("64.5 days = period-end accounts receivable / total revenue × 365 = "
            "$23,065 million [F1] / $130,497 million [F2] × 365") in fa.block
    assert "112.7 days = period-end inventories / cost of revenue × 365" in ask(
        corpus, "What was NVIDIA's days inventory outstanding in fiscal 2025?").block
    assert "119.7 days" in ask(corpus, "What were Apple's DPO in fiscal 2024?").block
    assert "days" not in ask(corpus, "What were NVIDIA's inventories at the end of fiscal 2025?").block


def test_a_compound_annual_growth_rate_compounds_over_the_years_between(corpus):
    # Asked by name or short form, the yearly rate is computed beside the whole change, never given as the change.
    for question in ("What was the compound annual growth rate of NVIDIA's revenue from fiscal 2023 to fiscal 2025?",
                     "What was NVIDIA's revenue CAGR between fiscal 2023 and fiscal 2025?"):
        fa = ask(corpus, question)
        assert "(+383.79%)" in fa.block and "compound annual growth rate +119.95% a year over 2 years" in fa.block
        assert any(r["label"].startswith("Compound annual growth rate") and round(r["value"], 2) == 119.95
                   for r in fa.results)
    assert "compound" not in ask(corpus, "How much did NVIDIA's revenue grow from fiscal 2023 to fiscal 2025?").block


def test_how_many_times_is_a_multiple_never_a_count(corpus):
    # "How many times larger", "by what multiple": one figure's later year over its earlier, beside the change. The
    # words after "how many times" count nothing, so the figure is not refused as a count answered in money.
    for question in ("How many times larger was NVIDIA's fiscal 2025 revenue than its fiscal 2023 revenue?",
                     "By what multiple did NVIDIA's revenue increase from fiscal 2023 to fiscal 2025?"):
        fa = ask(corpus, question)
        assert "FY2025 is 4.84 times FY2023 = $130,497 million / $26,974 million" in fa.block
    # A coverage asked as "how many times" stays the one year's ratio, not a change over years.
    fa = ask(corpus, "How many times did Tesla's operating income cover its interest expense in 2024?")
    assert "20.22 = operating income / interest expense" in fa.block and "times FY" not in fa.block
    assert "Inventory turnover" in ask(corpus, "How many times a year does NVIDIA turn over its inventory in fiscal 2025?").block


def test_a_label_inside_the_metric_phrase_asked_does_not_answer_for_it(corpus):
    # "Net interest income" holds every word of the printed label "Net income": a filer that tags no net interest
    # income has none, and its net income would answer another question. "Total net sales" is still "Net sales".
    assert ask(corpus, "What was Apple's net interest income in fiscal 2024?") is None
    assert "$391,035 million" in ask(corpus, "What were Apple's total net sales in fiscal 2024?").block


def test_a_companys_tax_rate_is_its_effective_rate_and_the_statutory_rate_is_not(corpus):
    fa = ask(corpus, "What was Apple's tax rate in fiscal 2024?")
    assert "Effective tax rate" in fa.block and "24.1%" in fa.block
    statutory = ask(corpus, "What was the statutory tax rate in Apple's fiscal 2024 10-K?")
    assert statutory is None or "Effective tax rate" not in statutory.block

def test_working_capital_is_current_assets_less_current_liabilities(corpus):
    fa = ask(corpus, "What was Apple's working capital at the end of fiscal 2024?")
    assert "Working capital" in fa.block and "as of September 28, 2024" in fa.block
    assert "-$23,405 million = total current assets − total current liabilities = $152,987 million" in fa.block


def test_shares_bought_back_are_a_count_and_stock_bought_back_an_amount(corpus):
    fa = ask(corpus, "How many shares did Apple buy back in fiscal 2024?")
    (v,) = fa.values
    assert v.amount == 499_000_000 and "499,000,000 shares" in fa.block
    assert ask(corpus, "nvda shares repurchased fy2023").values[0].amount == 63_000_000
    fa = ask(corpus, "How much stock did Apple buy back in fiscal 2024?")
    assert fa.values[0].amount == 94_949e6


def test_the_combined_figure_of_several_companies_is_their_sum(corpus):
    fa = ask(corpus, "What was the combined revenue of Adobe and Salesforce in their latest fiscal years?")
    assert fa.operation == "sum"
    assert ("Combined total revenue (ADBE FY2024 + CRM FY2025): $59,400 million = $21,505 million [F1] + "
            "$37,895 million [F2]") in fa.block
    assert fa.results[0]["value"] == 59_400_000_000
    # One company over two years is still the sum over its years.
    fa = ask(corpus, "What was Apple's combined revenue for fiscal 2024 and 2025?")
    assert "Total revenue, FY2024 + FY2025" in fa.block
    # "In total" of one company's one year adds nothing up: it is that year's figure.
    fa = ask(corpus, "How much did Apple pay out in dividends in total in fiscal 2024?")
    (v,) = fa.values
    assert fa.operation == "lookup" and v.amount == 15_234e6 and v.fiscal_year == 2024


def test_a_superlative_ranks_the_companies_rather_than_naming_a_part(corpus):
    # "the highest operating margin" names no segment called "highest": each company's margin, compared.
    fa = ask(corpus, "Which company had the highest operating margin in their latest fiscal years: Adobe or "
                     "Salesforce?")
    assert fa is not None and fa.operation == "compare"
    assert "Comparison: Adobe Inc. (ADBE) had the higher operating margin" in fa.block


def test_a_line_printed_in_two_signs_is_worded_in_the_sign_of_its_figure(corpus):
    # Apple's "Other income/(expense), net" was -$321 million in fiscal 2025: an expense, said as one.
    for question in ("What was Apple's other expense in fiscal 2025?", "What was Apple's other income in fiscal 2025?"):
        fa = ask(corpus, question)
        assert "Other income/(expense), net · FY2025" in fa.block, question
        assert "$321 million [F1] of other expense, net" in fa.block and "-$321" not in fa.block, question


def test_a_net_line_whose_concept_counts_the_other_sign_is_worded_by_the_concept():
    # "Interest expense (income), net" tagged InterestIncomeExpenseNonoperatingNet: the concept counts income above
    # zero, so $107 million above zero is interest income, and below zero it is the expense the label names first.
    m = metric(labelled_key("us-gaap:InterestIncomeExpenseNonoperatingNet", "Interest expense (income), net", False))
    assert m.positive == "{} of interest income, net" and m.negative == "{} of interest expense, net"
    # A concept that counts the sign the label names first keeps the label's reading.
    m = metric(labelled_key("us-gaap:NonoperatingIncomeExpense", "Other income/(expense), net", False))
    assert m.positive == "" and m.negative == "{} of other expense, net"


def test_earnings_per_share_asked_with_the_verb(corpus):
    fa = ask(corpus, "How much did Apple earn per share in fiscal 2024?")
    assert "Diluted EPS" in fa.block and "$6.08 per share" in fa.block
    assert "Diluted EPS" in ask(corpus, "What did Apple earn per diluted share in fiscal 2024?").block
    # "Net income per diluted share" is the same figure, not the net income; "per basic share" the basic one.
    fa = ask(corpus, "What was Apple's net income per diluted share in fiscal 2024?")
    assert "Diluted EPS" in fa.block and "$6.08 per share" in fa.block
    assert "Basic EPS" in ask(corpus, "What were Apple's earnings per basic share in fiscal 2024?").block


def test_a_figure_asked_per_item_is_the_tagged_amount_over_the_count_stated_in_prose(corpus):
    layer = corpus["layer"]
    doc = corpus["docs"][("AAPL", 2024)]
    meta = {"doc_id": doc, "ticker": "AAPL", "company": "Apple Inc.", "form": "10-K", "fiscal_year": 2024}
    question = "How much net sales did Apple bring in per employee in fiscal 2024?"
    plan = plan_question(question, Catalog.build(layer.filings()))
    headcount = ("c-people", "As of September 28, 2024, the Company had approximately 164,000 full-time equivalent "
                 "employees.", meta)
    found = layer.rate_per_item(plan, [("c-other", "Revenue grew in every segment.", meta), headcount])
    assert found is not None and found.results[0]["value"] == pytest.approx(391_035e6 / 164_000)
    assert "per employee = $2,384,360 = $391,035 million [F1]" in found.block
    assert "164,000 full-time equivalent employees [F2]" in found.block
    assert [c.kind for c in found.citations] == ["fact", "passage"] and found.citations[1].chunk_id == "c-people"
    # A count of another filing, or of another year, divides nothing.
    other = dict(meta, doc_id="another filing")
    assert layer.rate_per_item(plan, [(headcount[0], headcount[1], other)]) is None
    earlier = ("c-old", "The Company had approximately 161,000 employees as of September 30, 2023.", meta)
    assert layer.rate_per_item(plan, [earlier]) is None
    # Two passages that disagree on the count: no rate.
    disagreeing = ("c-more", "The Company had approximately 170,000 employees in 2024.", meta)
    assert layer.rate_per_item(plan, [headcount, disagreeing]) is None
    # A count of a part of the company (a segment, a region it tags) divides none of the whole's amount.
    for part in ("The Services segment had approximately 20,000 employees in 2024.",
                 "In Greater China, the Company had approximately 20,000 employees in 2024."):
        assert layer.rate_per_item(plan, [("c-part", part, meta)]) is None


def test_a_remainder_member_is_no_part_a_headcount_sentence_names(corpus):
    # A filer that tags "Other countries" as a region: "employees in 38 countries" speaks of the whole company,
    # not of that remainder, so its count divides the whole's revenue.
    layer = corpus["layer"]
    meta = {"doc_id": corpus["docs"][("NVDA", 2025)], "ticker": "NVDA", "company": "NVIDIA CORP", "form": "10-K",
            "fiscal_year": 2025}
    plan = plan_question("What was NVIDIA's revenue per employee in fiscal 2025?", Catalog.build(layer.filings()))
    headcount = ("c-people", "As of the end of fiscal year 2025, we had approximately 36,000 employees in 38 "
                 "countries; 27,100 were engaged in research and development.", meta)
    found = layer.rate_per_item(plan, [headcount])
    assert found is not None and "= $3,624,917 = $130,497 million [F1] / 36,000 employees [F2]" in found.block
