"""The question plan: companies, years, forms, Items, statements and the figures asked for, read once."""

from __future__ import annotations

import pytest

from rag.catalog import Catalog
from rag.companies import short_names
from rag.facts import METRIC_BY_KEY, STATEMENT_METRICS
from rag.question import plan_question
from rag.retrieve import search_text
from rag.schema import Filters
from rag.words import HEADCOUNT_NOUNS

FILINGS = [
    {"ticker": "AAPL", "company": "Apple Inc.", "form": "10-K", "fiscal_year": 2024, "period_end": "2024-09-28"},
    {"ticker": "AAPL", "company": "Apple Inc.", "form": "10-K", "fiscal_year": 2025, "period_end": "2025-09-27"},
    {"ticker": "GOOGL", "company": "Alphabet Inc.", "form": "10-K", "fiscal_year": 2024, "period_end": "2024-12-31"},
    {"ticker": "HD", "company": "HOME DEPOT, INC.", "form": "10-K", "fiscal_year": 2024, "period_end": "2025-02-02"},
    {"ticker": "MA", "company": "Mastercard Incorporated", "form": "10-K", "fiscal_year": 2024,
     "period_end": "2024-12-31"},
    {"ticker": "WFC", "company": "WELLS FARGO & COMPANY/MN", "form": "10-K", "fiscal_year": 2024,
     "period_end": "2024-12-31"},
]


class _Node:
    def __init__(self, ticker, text):
        self.metadata = {"ticker": ticker}
        self.text = text


@pytest.fixture(scope="module")
def catalog():
    # Alphabet's filings say "Google" constantly; nobody else's do. Apple's mention it once.
    nodes = [_Node("GOOGL", "Google Search and Google Cloud grew. " * 30), _Node("AAPL", "We compete with Google.")]
    return Catalog.build(FILINGS, nodes)


def test_short_names():
    assert "apple" in short_names("Apple Inc.")
    assert "home depot" in short_names("HOME DEPOT, INC.")
    assert "wells fargo" in short_names("WELLS FARGO & COMPANY/MN")
    assert "mastercard" in short_names("Mastercard Incorporated")


@pytest.mark.parametrize(
    "question, tickers, years",
    [
        ("How did Apple's services revenue change from FY2023 to FY2024?", ["AAPL"], [2023, 2024]),
        ("What did AAPL report in fiscal 2025?", ["AAPL"], [2025]),
        ("Alphabet revenue in FY24", ["GOOGL"], [2024]),
        ("How much did Google Cloud earn in 2024?", ["GOOGL"], [2024]),
        ("Home Depot's net sales for the year ended February 2, 2025", ["HD"], [2024]),
        ("Compare Mastercard and Wells Fargo net income in 2024", ["MA", "WFC"], [2024]),
        ("What is the market for widgets?", [], []),
    ],
)
def test_companies_and_years(catalog, question, tickers, years):
    analysis = plan_question(question, catalog)
    assert analysis.tickers == tickers
    assert analysis.fiscal_years == years


def test_latest_year_sections_forms_and_unknown_companies(catalog):
    analysis = plan_question("What are the risk factors in Apple's latest annual report?", catalog)
    assert analysis.tickers == ["AAPL"]
    assert analysis.fiscal_years == [2025]
    assert analysis.sections == ["Item 1A"]
    assert analysis.forms == ["10-K"]
    assert set(plan_question("Summarize the MD&A and Item 7A", catalog).sections) == {"Item 7", "Item 7A"}
    unknown = plan_question("What was Microsoft's revenue in 2024?", catalog)
    assert unknown.tickers == [] and unknown.unknown_companies == ["Microsoft"]
    assert plan_question("What was Apple's revenue?", catalog).unknown_companies == []
    # A capitalised word before a known company's possessive is not a company of its own.
    assert plan_question("Summarize Apple's MD&A for fiscal 2025", catalog).unknown_companies == []
    assert plan_question("Are Apple's margins higher than Globex Widgets's?", catalog).unknown_companies == ["Globex Widgets"]
    # A name written after "the" is a body or a place, not a filer missing from the index.
    assert plan_question("How could AI rules like the EU's hurt Apple?", catalog).unknown_companies == []
    assert plan_question("What does the SEC's new rule mean for Apple?", catalog).unknown_companies == []
    # A name ending in "s" takes the apostrophe alone as its possessive.
    assert plan_question("What was Globex Electronics' memory division profit in 2024?",
                         catalog).unknown_companies == ["Globex Electronics"]
    assert plan_question("Summarize Microsoft's risk factors", catalog).unknown_companies == ["Microsoft"]
    # A known company's name running on names a part of it ("Optum Health's", "Google Cloud's"), here one no
    # passage names, not a company missing from the index.
    part = plan_question("What was Apple Zorblax's revenue in 2024?", catalog)
    assert part.tickers == ["AAPL"] and part.unknown_companies == []
    # The same when the company is also named by its own name first: its word still names it.
    also = plan_question("Using Alphabet's segment figures, what was Google Cloud's operating income in 2024?", catalog)
    assert also.tickers == ["GOOGL"] and also.unknown_companies == []
    assert analysis.label() == "AAPL · FY2025 · 10-K · Item 1A"


@pytest.mark.parametrize(
    "question, statements",
    [
        ("What was Acme's operating margin in fiscal 2024?", ["income statement"]),
        ("What is Acme's FY2024 days payable outstanding? DPO is defined as 365 * average accounts payable / COGS",
         ["balance sheet", "income statement"]),
        ("What were Acme's capital expenditures as a % of revenue in 2024?", ["cash flow statement", "income statement"]),
        ("What is Acme's return on assets for FY2024?", ["income statement", "balance sheet"]),
        # Named statements win; prose about a figure and questions without figures search as usual.
        ("Per the balance sheet, what was Acme's revenue?", ["balance sheet"]),
        ("What drove Acme's gross margin change in 2024?", []),
        ("What are Acme's main risk factors?", []),
        # A habit over the years (seasonality) is told in prose, not printed on one year's statement.
        ("Which quarter is usually Acme's biggest for sales?", []),
        ("Does Acme's revenue tend to peak in the holiday quarter?", []),
    ],
)
def test_the_statements_a_metric_needs_are_searched_first(catalog, question, statements):
    assert plan_question(question, catalog).statements == statements


@pytest.mark.parametrize(
    ("question", "items"),
    [
        ("How many people did Home Depot employ at the end of fiscal 2024?", ["Item 1"]),
        ("How many of Apple's people work in research and development?", ["Item 1"]),
        ("How many distribution centers and stores does Home Depot operate?", ["Item 2"]),
        # A facilities word written as a name is a segment, not the properties: "Data Center" of a chip maker.
        ("What drove growth in NVIDIA's Data Center segment in fiscal 2025?", []),
        ("How many data centers does Alphabet operate?", ["Item 2"]),
        ("Headquarters of Adobe?", ["Item 2"]),
        ("How many shareowners of record did Apple have?", ["Item 5"]),
        ("How much may yet be purchased under Apple's repurchase program?", ["Item 5"]),
        # Beside a statement the figures need: the Item still joins.
        ("After its buybacks, how much was still available under Apple's share repurchase program?", ["Item 5"]),
        ("What is the remaining amount authorized under Apple's repurchase program?", ["Item 5"]),
        ("What is Apple's capital return program?", ["Item 5"]),
        ("Tell me about Home Depot's share buyback program.", ["Item 5"]),
        # Item 101(c)(1): what the company is, sells or makes, and what its segments are, when no figure is asked.
        ("What kinds of trucks does Tesla build and sell today?", ["Item 1"]),
        ("What sort of company is Adobe?", ["Item 1"]),
        ("Which reportable segments does Apple have?", ["Item 1"]),
        ("What is Vision Pro, according to Apple's 10-K?", ["Item 1"]),
        # What the company does, asked the ways people ask it; what it did about something is no such question.
        ("What does Apple do?", ["Item 1"]),
        ("What does Mastercard actually do?", ["Item 1"]),
        ("What business is Adobe in?", ["Item 1"]),
        ("What is Alphabet's business?", ["Item 1"]),
        ("Describe Home Depot's business.", ["Item 1"]),
        ("What did Apple do about the European Commission's decision?", []),
        ("What is Apple's business in Greater China worth?", []),
        ("How much revenue did Apple's Services segment make?", []),
        ("What is Apple's total revenue?", []),
        ("What is Adobe's gross margin?", []),
        # How seasonal the business is, told with the business in Item 1.
        ("Which quarter is usually Home Depot's biggest for sales?", ["Item 1"]),
        ("Is Nike's business seasonal?", ["Item 1"]),
        # Item 103: lawsuits, fines and investigations, asked without naming Legal Proceedings.
        ("What penalty did the European Commission hand Apple, and what was it ordered to change?", ["Item 3"]),
        ("What lawsuits has Apple been hit with over its App Store?", ["Item 3"]),
        ("Is Apple under antitrust investigation?", ["Item 3"]),
        ("What did Apple spend on legal fees in 2024?", []),
        # Item 105, 106, 101(c)(1) competition and 305, asked by what they disclose.
        ("What could hurt Apple's supply of components from Asia?", ["Item 1A"]),
        ("Who at Apple is in charge of cyber threats?", ["Item 1A", "Item 1C"]),
        ("Which competitors does Apple name?", ["Item 1"]),
        # Item 101(c)(1): intellectual property, the sources of materials, the customers served.
        ("How does Apple guard its inventions?", ["Item 1"]),
        ("Which trademarks matter most to Home Depot?", ["Item 1"]),
        ("Who makes Apple's iPhones?", ["Item 1"]),
        ("Does Home Depot rely on a few suppliers?", ["Item 1"]),
        ("Who buys Apple's products?", ["Item 1"]),
        ("Does Apple depend on a single customer?", ["Item 1"]),
        ("How much revenue did Apple get from its largest customers?", []),
        ("How much would a rise in interest rates add to Apple's interest expense?", ["Item 7A"]),
        ("What is Apple's foreign currency risk?", ["Item 1A", "Item 7A"]),
        # An Item named is a filter of its own; questions about neither an Item's content nor its name get none.
        ("What does Item 1A say about Apple's employees?", []),
        ("What was Home Depot's total revenue in fiscal 2024?", []),
        ("What are Apple's main risk factors?", []),
        # The kind of company asked of the filer is its Item 1; asked of a business it bought, it is not.
        ("What kind of company is Home Depot?", ["Item 1"]),
        ("What kind of company is SRS, and when did Home Depot buy it?", []),
    ],
)
def test_the_items_whose_content_a_question_asks_about(catalog, question, items):
    assert plan_question(question, catalog).topic_sections == items


@pytest.mark.parametrize(("question", "item"), [
    ("What are the main risk factors?", "Item 1A"),
    ("What are Apple's key risks?", "Item 1A"),  # a topic the regulation places in Item 1A, no title named
    ("Summarize Apple's risk factors in its fiscal 2024 10-K", "Item 1A"),  # company, year and form are filters
    ("What are the risk factors in Apple's Q2 2025 10-Q?", "Part II Item 1A"),  # Form 10-Q's own Item
    ("What risks does Apple face from its suppliers?", ""),  # words of its own: about those, not the whole Item
    ("What was Apple's gross margin in fiscal 2024?", ""),  # a figure
    ("How many employees does Apple have?", ""),
])
def test_a_question_about_one_item_as_a_whole(catalog, question, item):
    assert plan_question(question, catalog).whole_item == item


@pytest.mark.parametrize(("question", "narrative"), [
    ("What weighed on Apple's gross margin in fiscal 2024?", True),  # the cause is asked: prose
    ("How is Home Depot working off its surplus inventory?", True),  # an action under way: prose
    ("What remained under Apple's share repurchase program at the end of fiscal 2024?", False),  # an amount
    ("How did Apple's total net sales change from fiscal 2023 to fiscal 2024?", False),
    ("What was Apple's gross margin in fiscal 2024?", False),
    ("Can bad weather hurt Apple's sales?", True),  # whether something can happen: a risk described in prose
    ("Can you give me Apple's net sales for fiscal 2024?", False),  # a polite request for a figure
    # One thing's effect on a figure is told beside the figure; the figure itself is no answer.
    ("How much did inventory provisions drag on Apple's gross margin in fiscal 2024?", True),
    ("How much did currency moves drag down Apple's cash in fiscal 2024?", False),  # the cash-flow line's own name
    ("What was Apple's weighted average diluted share count in fiscal 2024?", False),
])
def test_questions_that_ask_for_prose_by_their_form(catalog, question, narrative):
    plan = plan_question(question, catalog)
    assert plan.narrative is narrative
    assert (plan.statements == []) if narrative else True  # prose is not looked up on a statement's pages


def test_search_text_drops_only_the_words_that_became_filters(catalog):
    question = "What is Gemini, according to Alphabet's fiscal 2024 10-K?"
    analysis = plan_question(question, catalog)
    applied = Filters(tickers=analysis.tickers, fiscal_years=analysis.fiscal_years, forms=analysis.forms)
    text = search_text(question, analysis, applied)
    assert "Gemini" in text and "Alphabet" not in text and "2024" not in text and "10-K" not in text
    # A year that was not applied stays in the text; so does a full date, worded so in filings.
    assert "2024" in search_text(question, analysis, Filters(tickers=analysis.tickers))
    dated = "How many employees did Apple have as of September 28, 2024?"
    a = plan_question(dated, catalog)
    assert "September 28, 2024" in search_text(dated, a, Filters(tickers=a.tickers, fiscal_years=a.fiscal_years))
    # Nothing left to search with: the question as asked.
    bare = "Alphabet 2024"
    assert search_text(bare, plan_question(bare, catalog), applied) == bare


def test_short_forms_of_company_names_are_recognised():
    filings = FILINGS + [
        {"ticker": "AXP", "company": "American Express Co", "form": "10-K", "fiscal_year": 2022},
        {"ticker": "JNJ", "company": "Johnson & Johnson", "form": "10-K", "fiscal_year": 2022},
        {"ticker": "PG", "company": "PROCTER & GAMBLE CO", "form": "10-K", "fiscal_year": 2024},
        {"ticker": "BAC", "company": "BANK OF AMERICA CORP /DE/", "form": "10-K", "fiscal_year": 2024},
        {"ticker": "CEOX", "company": "Continental Energy Operations Inc.", "form": "10-K", "fiscal_year": 2024},
        {"ticker": "NIKE", "company": "Nike", "form": "10-K", "fiscal_year": 2019},
        {"ticker": "KO", "company": "Coca-Cola", "form": "10-K", "fiscal_year": 2017},
        {"ticker": "EBAY", "company": "eBay Inc.", "form": "10-Q", "fiscal_year": 2023},
    ]
    catalog = Catalog.build(filings)
    for question, tickers in [
        ("Does AMEX have an improving operating margin profile as of 2022?", ["AXP"]),
        ("Are JnJ's FY2022 financials that of a high growth company?", ["JNJ"]),
        ("Compare J&J and P&G gross margins", ["JNJ", "PG"]),
        ("What did BofA say about deposits?", ["BAC"]),
        # Not short forms: a role, a metric, an ordinary capitalised word, a name of one word.
        ("Who is the CEO of Wells Fargo?", ["WFC"]),
        ("What was the COGS and EBITDA of Apple in 2024?", ["AAPL"]),
        ("Was American Express able to retain Amex card members?", ["AXP"]),
        # A short name that is also the ticker, written as names are; a hyphenated name written with a space.
        ("What were Nike's total current assets in 2019? And Coca Cola's?", ["NIKE", "KO"]),
        # A name that is its ticker, written with a capital inside as its owner writes it.
        ("What was eBay's net income in Q2 2023?", ["EBAY"]),
        ("nike shoes are popular", []),
    ]:
        analysis = plan_question(question, catalog)
        assert analysis.tickers == tickers, question
        assert not analysis.unknown_companies, question



def test_every_statement_mapping_names_a_known_metric():
    assert all(key in METRIC_BY_KEY for keys in STATEMENT_METRICS.values() for key in keys)


@pytest.mark.parametrize("question, growth", [
    ("How did revenue compare with a year earlier?", True),
    ("Revenue compared to the prior fiscal year", True),
    ("Compare revenue of the two companies", False),  # a comparison across companies is not a change over time
    ("How much did revenue grow?", True),
    ("By how much did Apple's net revenue climb in 2024?", True),
    ("How far did Apple's net income slip in 2024?", True),
    ("How much did Apple's services revenue go up in 2024?", True),
    # Said of a margin: whether it got better or worse is its change.
    ("Did Apple's gross margin improve or deteriorate in fiscal 2024?", True),
    ("Did Apple's operating margin worsen in 2024?", True),
])
def test_a_comparison_with_the_period_before_asks_for_a_change(catalog, question, growth):
    plan = plan_question(question, catalog)
    assert plan.calculation.growth is growth
    # The verb of change is the change asked, not a word that narrows the figure.
    assert not {"climb", "slip", "go", "up", "improve", "deteriorate", "worsen"} & {
        w for m in plan.metrics for w in m.before + m.after}


@pytest.mark.parametrize("question, metric_key, share", [
    # The colloquial words for a share of a whole.
    ("What chunk of Apple's revenue comes from services?", "revenue", True),
    ("How big a slice of Apple's sales is iPhone?", "revenue", True),
    ("What part of Apple's revenue came from Services in fiscal 2024?", "revenue", True),
    ("Which part of Apple's business grew fastest?", None, False),  # no figure named: not a share
    # Whether it made a profit is its net income; how profitable it was is its net margin.
    ("Was Apple profitable in fiscal 2024?", "net_income", False),
    ("How profitable was Apple in fiscal 2024?", "net_margin", False),
])
def test_plain_words_for_a_share_and_for_profit(catalog, question, metric_key, share):
    plan = plan_question(question, catalog)
    assert (plan.metrics[0].metric_key if plan.metrics else None) == metric_key
    assert (plan.calculation.share_of_end is not None) is share


def test_the_words_that_make_a_question_ask_for_prose(catalog):
    # Kept with the plan, so that a word inside a figure's printed name ("sales to customers") can be told apart.
    plan = plan_question("What were Apple's sales to customers in 2024?", catalog)
    assert plan.narrative and plan.narrative_words == ["customers"]
    plan = plan_question("Why did Apple's revenue fall in the quarter?", catalog)
    assert plan.narrative_words == ["why", "quarter"]
    assert plan_question("What was Apple's revenue in 2024?", catalog).narrative_words == []


def test_a_count_question_names_what_it_counts(catalog):
    # Read once, here: the facts layer (no money for a count) and retrieval (the passage that counts it) share it.
    # What is counted ends where the question's verb or a place starts; "of" stays inside it.
    assert plan_question("How many employees did Apple have in 2024?", catalog).counted == ["employees"]
    assert plan_question("How many employees does Apple have?", catalog).counted == ["employees"]
    # The company's name is not what is counted, and does not use up the words that are.
    assert plan_question("How many Apple retail stores are there in Canada?", catalog).counted == [
        "retail", "stores"]
    assert plan_question("How many Mastercard class A holders of record are there?", catalog).counted == [
        "class", "a", "holders", "of", "record"]
    assert plan_question("How many holders of record did Tesla have?", catalog).counted == ["holders", "of", "record"]
    assert plan_question("How many dollars did Apple spend on R&D in 2024?", catalog).counted == []
    # A modal verb starts the predicate as "will" does: the stores, not "stores may close".
    assert plan_question("How many Tesla stores may close next year?", catalog).counted == ["tesla", "stores"]
    # Counts compared ("which has more ..."), asked without "how many", name what they count the same way; an
    # amount compared is a metric's, no count.
    assert plan_question("Which has more Class A stockholders of record, Apple or Tesla?", catalog).counted == [
        "class", "a", "stockholders", "of", "record"]
    assert plan_question("Does Tesla have more stores than Apple?", catalog).counted == ["stores"]
    assert plan_question("Which has more revenue, Apple or Tesla?", catalog).counted == []
    # A headcount asked by its size or ranked counts the persons employed, whatever word the question counts in.
    for question in ("What was Apple's headcount in 2024?", "Which has the bigger workforce, Apple or Tesla, and by roughly how many people?",
                     "What was the size of Apple's workforce in 2024?", "How many people work at Tesla?"):
        assert plan_question(question, catalog).counted == HEADCOUNT_NOUNS, question


def test_each_company_gets_the_year_named_after_it_even_when_its_name_is_hyphenated():
    catalog = Catalog.build([{"ticker": "KO", "company": "COCA COLA CO", "form": "10-K", "fiscal_year": 2024},
                             {"ticker": "PG", "company": "PROCTER & GAMBLE CO", "form": "10-K", "fiscal_year": 2025},
                             {"ticker": "PG", "company": "PROCTER & GAMBLE CO", "form": "10-K", "fiscal_year": 2024}])
    plan = plan_question("Who spent more on advertising, Procter & Gamble in fiscal 2025 or Coca-Cola in 2024?",
                         catalog)
    assert plan.year_of_company == {"PG": 2025, "KO": 2024}


def test_the_item_a_figure_is_asked_per_is_read_once(catalog):
    def per_item(question):
        return plan_question(question, catalog).per_item

    assert per_item("What were Apple's net sales per retail square foot in 2024?") == ["retail", "square", "foot"]
    assert per_item("How much revenue did Apple bring in per adjusted script in 2024?") == ["adjusted", "script"]
    assert per_item("What was Apple's revenue per employee?") == ["employee"]
    # A per-share figure the metric vocabulary names is a metric, not a rate over an item.
    assert per_item("What were Apple's diluted earnings per share in 2024?") == []
    assert per_item("How much did Apple earn per share in 2024?") == []
    assert per_item("What was Apple's book value per share?") == ["share"]
    assert per_item("What percent of Apple's revenue came from iPhone?") == []
    assert per_item("What per cent of Apple's revenue came from iPhone?") == []


def test_what_a_question_rules_out_is_read_with_the_phrase_that_rules_it_out(catalog):
    plan = plan_question("Not counting cash, how much payments volume did Mastercard process in 2024?", catalog)
    assert plan.excluded == ["cash"]
    # The phrase is cut out of the words a passage must match, with its exclusion words ("counting").
    assert plan.question_without(lambda dimension, _v: dimension == "excluded").split()[:3] == [",", "how", "much"]
    # The words ruled out run to the clause's end or the question's next clause word.
    assert plan_question("What was Apple's revenue growth excluding the impact of foreign currency in 2024?",
                         catalog).excluded == ["impact of foreign currency"]
    assert plan_question("How much revenue did Apple earn from products other than iPhone?", catalog).excluded == [
        "iphone"]
    assert plan_question("How much revenue did Apple earn in 2024?", catalog).excluded == []
    # The metric right before an exclusion reads the same words as left out of itself (one reading of both).
    plan = plan_question("What was Tesla's automotive revenue (excl. leasing) in 2023?", catalog)
    assert plan.excluded == ["leasing"]
    assert [m.excluded for m in plan.metrics] == [["leasing"]]
    plan = plan_question("What was Apple's revenue excluding the impact of foreign currency in 2024?", catalog)
    assert [m.excluded for m in plan.metrics] == [["impact", "foreign", "currency"]]
    # "Outside" with an article or "of" rules a place out of a figure; "outside directors" are a kind of director,
    # and in a question about prose the place is the topic.
    assert plan_question("What share of Alphabet's revenue came from outside the U.S. in 2024?",
                         catalog).excluded == ["u.s."]
    assert plan_question("How much revenue did Apple earn outside of China in 2024?", catalog).excluded == ["china"]
    assert plan_question("How many outside directors does Apple have?", catalog).excluded == []
    assert plan_question("What risks does Apple face from its operations outside the U.S.?", catalog).excluded == []
    # The home country written with "non-" is left out of a figure too, and is no qualifier of the metric.
    plan = plan_question("What was Apple's non-U.S. revenue in 2024?", catalog)
    assert plan.excluded == ["u.s."] and [m.before for m in plan.metrics] == [[]]
    assert plan_question("What share of Apple's 2024 net sales was non-US?", catalog).excluded == ["us"]
    assert plan_question("What risks do Apple's non-U.S. operations face?", catalog).excluded == []
    assert plan_question("What was Apple's non-GAAP revenue in 2024?", catalog).excluded == []
    # A list left out is left out whole.
    assert plan_question("What was Apple's revenue excluding Services, Mac and iPad in 2024?",
                         catalog).excluded == ["services, mac and ipad"]
    # "exceptional" holds "except" but rules nothing out.
    assert plan_question("What were Apple's exceptional items in 2024?", catalog).excluded == []


def test_a_year_that_names_the_annual_report_is_the_source_not_the_period_asked(catalog):
    plan = plan_question("What net income did Apple report for fiscal 2023, as shown in its fiscal 2024 10-K?", catalog)
    assert plan.fiscal_years == [2023] and plan.document_years == [2024]
    plan = plan_question("Looking at Apple's 2024 annual report, what were net sales in 2023?", catalog)
    assert plan.fiscal_years == [2023] and plan.document_years == [2024]
    # With no other year named, the report's year is also the year asked.
    plan = plan_question("In its fiscal 2024 10-K, what was Apple's revenue?", catalog)
    assert plan.fiscal_years == [2024] and plan.document_years == [2024]
    assert plan_question("What was Apple's revenue in fiscal 2024?", catalog).document_years == []
    # "Per" before a company's name says whose account is read, not what a figure is divided by.
    plan = plan_question("Per Apple's fiscal 2025 10-K, what net income did the company earn in fiscal 2024?", catalog)
    assert plan.per_item == [] and plan.fiscal_years == [2024] and plan.document_years == [2025]
    assert plan_question("What were Apple's net sales per employee in 2024?", catalog).per_item == ["employee"]


def test_a_sentence_that_sets_the_scene_names_no_year_asked(catalog):
    # The year only the scene names is not asked: the asking sentence's year is.
    plan = plan_question("Apple's tax rate came way down in fiscal 2025. What was its effective tax rate the year "
                         "before, in fiscal 2024?", catalog)
    assert plan.fiscal_years == [2024]
    plan = plan_question("Apple Inc. reported revenue in 2023. What was it in 2024?", catalog)
    assert plan.fiscal_years == [2024]
    # The asking sentence compares or names no year: every year named stays asked.
    assert plan_question("Apple's revenue in fiscal 2024 was strong. How did fiscal 2025 compare?",
                         catalog).fiscal_years == [2024, 2025]
    assert plan_question("Apple's revenue was $391 billion in 2024. How much did it grow in 2025?",
                         catalog).fiscal_years == [2024, 2025]
    assert plan_question("Think of fiscal 2024. What was Apple's revenue?", catalog).fiscal_years == [2024]
    # "U.S." ends no sentence.
    assert plan_question("What were Apple's 2023 U.S. net sales and its 2024 net sales?",
                         catalog).fiscal_years == [2023, 2024]


def test_how_much_of_a_whole_reads_an_amount_as_surely_as_a_share(catalog):
    calc = plan_question("How much of Apple's 2024 net income was attributable to noncontrolling interests?",
                         catalog).calculation
    assert calc.share_of_end is not None and calc.amount_of
    calc = plan_question("What percentage of Apple's 2024 net sales came from iPhone?", catalog).calculation
    assert calc.share_of_end is not None and not calc.amount_of


def test_a_shares_part_is_read_however_the_question_places_it(catalog):
    # After "came from", after the verb with no "from", or as the subject of the share it makes up; a possessive
    # before the subject names whose part it is.
    for question, part in (("What percentage of Apple's 2024 net sales came from Greater China?", ["greater", "china"]),
                           ("What percent of Apple's fiscal 2024 net sales were Services?", ["service"]),
                           ("What percent of Mastercard's 2024 net revenue was value-added services and solutions?",
                            ["value-added", "service", "and", "solution"]),
                           ("Wearables accounted for what percentage of Apple's 2024 net sales?", ["wearable"]),
                           ("Apple's iPhone made up what share of its 2024 net sales?", ["iphone"])):
        assert plan_question(question, catalog).share_part.after == part, question
    # A participle says how the share arose, and the part is what follows it; "not" leaves a part out.
    plan = plan_question("What percentage of Apple's 2024 net sales was generated in Greater China?", catalog)
    assert plan.share_part.after == ["greater", "china"]
    assert plan_question("What percent of Apple's 2024 net sales was not from iPhone?", catalog).share_part is None


def test_one_line_over_another_is_a_share_and_over_a_period_is_not(catalog):
    for question in ("Apple's 2024 cost of sales over net sales?", "Apple R&D divided by revenue in 2024"):
        assert plan_question(question, catalog).calculation.share_of_end is not None, question
    for question in ("How did Apple's revenue change over the prior year?", "Apple net sales growth over 2023",
                     "Apple's R&D spending over the past five years",
                     "How much cash did Apple hand over in income taxes in 2024?"):
        assert plan_question(question, catalog).calculation.share_of_end is None, question


def test_names_the_plan_reads_as_nothing_else(catalog):
    # A product, business or person the question names beside the company and the figure.
    assert plan_question("How much revenue did Model Y bring in for Apple in 2024?", catalog).unread_names == [
        "Model", "Y"]
    assert plan_question("How much did Home Depot's SRS business contribute in 2024?", catalog).unread_names == ["SRS"]
    # Companies, metrics, periods, statement titles, and words every question capitalises are read already.
    for question in ("What was Apple's Net Income in FY2024?", "What were Mastercard's Q2 2024 revenues?",
                     "According to the Consolidated Statements of Operations, what was Apple's revenue in 2024?",
                     "What did Apple report under U.S. GAAP in its Form 10-K for 2024?",
                     "What was Apple's revenue in fiscal 2024 (FYE September 28)?"):
        assert plan_question(question, catalog).unread_names == [], question
    # A name joined to an ordinary word is the name alone: "US-sourced" names the US, which is no unread name.
    assert plan_question("What share of Apple's 2024 pre-tax income was US-sourced?", catalog).unread_names == []
    assert plan_question("How much of Apple's revenue was Zorblax-driven in 2024?", catalog).unread_names == [
        "Zorblax"]


def test_an_abbreviated_month_is_a_date_not_a_name(catalog):
    for question in ("Apple remaining share repurchase authorization at Dec 31, 2024?",
                     "What were Apple's net sales for the year ended Sept. 28, 2024?"):
        assert plan_question(question, catalog).unread_names == [], question
    assert [m.after for m in plan_question("Apple's remaining repurchase authorization at Dec 31, 2024?",
                                           catalog).metrics] == [[]]


def test_names_written_in_several_capitalised_words(catalog):
    # Read as one name, in the question's words; the question words that open a run and a possessive are not its.
    assert plan_question("Tell me about the Recorded Future deal: when did it close?", catalog).name_phrases == [
        "Recorded Future"]
    assert plan_question("Does Visa Direct make money for Apple?", catalog).name_phrases == ["Visa Direct"]
    assert plan_question("What is Apple's Decision Intelligence Pro?", catalog).name_phrases == [
        "Decision Intelligence Pro"]
    # A possessive ends a name; one capitalised word is no phrase; words the plan reads otherwise make none.
    assert plan_question("What's in Apple's iPhone line-up?", catalog).name_phrases == []
    assert plan_question("What was Apple's Net Income in 2024?", catalog).name_phrases == []
    # A class of stock is the filer's capital structure, printed throughout: no name to search passages by.
    assert plan_question("How many Class A holders of record does Apple have?", catalog).name_phrases == []
    assert plan_question("How many Series B-1 shares did Apple issue?", catalog).name_phrases == []


def test_what_a_figure_is_asked_as_coming_from(catalog):
    assert plan_question("How much revenue did Apple earn from data processing in 2024?", catalog).source_part == [
        "data", "processing"]
    # The activity that earned it, named by its verb in -ing after the verb asking the amount.
    assert plan_question("How much freight revenue did Apple earn hauling coal and renewables in 2024?",
                         catalog).source_part == ["coal"]
    assert plan_question("How much revenue did Apple generate during 2024?", catalog).source_part == []
    # Where the figure is read, or when, is no source.
    for question in ("How much revenue did Apple report in 2024, from its 10-K?",
                     "How did Apple's revenue change from 2023 to 2024?",
                     "What revenue did Apple report, from the income statement?"):
        assert plan_question(question, catalog).source_part == [], question


def test_an_adjustment_the_figure_is_asked_before_is_read_as_taken_off_and_names_no_figure(catalog):
    # A gross figure asked before an adjustment: the adjustment's words are read, and a metric among them is no
    # figure asked (its own line is what the gross figure is before).
    plan = plan_question("What was Visa's gross revenue in 2024 before client incentives are deducted?", catalog)
    assert plan.deducted == ["client incentives"]
    plan = plan_question("How much revenue did Apple book before deducting cost of sales?", catalog)
    assert plan.deducted == ["cost of sales"]
    assert [m.metric_key for m in plan.metrics if not m.vetoed] == ["revenue"]
    assert plan_question("Apple net sales gross of returns in 2024?", catalog).deducted == ["returns"]
    # "Before" naming a line of its own is no adjustment: income before income taxes is the figure asked.
    plan = plan_question("What was Apple's income before income taxes in 2024?", catalog)
    assert plan.deducted == [] and not any(m.vetoed for m in plan.metrics)


def test_a_ticker_typed_in_lower_case_names_its_company():
    nodes = [_Node("GOOGL", "Google Search and Google Cloud grew. " * 30), _Node("WFC", "Fees for the wfc program.")]
    catalog = Catalog.build(FILINGS, nodes)
    # A ticker opening a terse question, of any length from two letters, or one of three letters or more later on.
    assert plan_question("hd store count?", catalog).tickers == ["HD"]
    assert plan_question("ma loss on equity investments 2024", catalog).tickers == ["MA"]
    assert plan_question("compare aapl and googl capex", catalog).tickers == ["AAPL", "GOOGL"]
    # Later in a question a short ticker is an ordinary word ("ma"), as is one the filings use as a word ("wfc"),
    # and a lower-case ticker does not add a company to one the question names.
    assert plan_question("How does the ma compare?", catalog).tickers == []
    assert plan_question("What did the wfc program cost?", catalog).tickers == []
    assert plan_question("How does Apple's hd camera compare?", catalog).tickers == ["AAPL"]
    assert plan_question("How does Google's camera compare with aapl's?", catalog).tickers == ["GOOGL"]


def test_a_year_end_written_short_names_the_fiscal_year(catalog):
    assert plan_question("Mastercard accrued expenses on the balance sheet ye24?", catalog).fiscal_years == [2024]
    assert plan_question("Apple cash at YE 2025", catalog).fiscal_years == [2025]


def test_a_terse_lower_case_question_opens_with_a_name_one_company_owns(catalog):
    assert plan_question("google cloud operating income FY2024?", catalog).tickers == ["GOOGL"]


def test_a_brand_used_less_often_than_the_name_names_its_company_when_it_reads_as_a_name():
    # Each word below is used 16 times, all in one company's filings: too few to be owned on numbers alone.
    nodes = [
        _Node("MA", "Zest drinks sold well. " * 16),  # a brand: never written in lower case
        _Node("MA", "Previous years differ. " * 16 + "as in previous years"),  # an ordinary word opening sentences
        _Node("MA", "We hold shares of Monster Beverage Corporation. " * 16),  # another company's name
        _Node("AAPL", "Apple results to Jan 28. " * 30),
    ]
    catalog = Catalog.build(FILINGS, nodes)
    assert catalog.distinctive.get("Zest") == "MA"
    assert "Previous" not in catalog.distinctive and "Monster" not in catalog.distinctive
    assert plan_question("Why did Zest's sales grow in 2024?", catalog).tickers == ["MA"]
    assert plan_question("What was Monster's revenue?", catalog).tickers == []
    # "What is <brand>": the brand names its company, and is still a product that company's Item 1 describes;
    # the company's own name is no such term.
    brand = plan_question("What is Zest?", catalog)
    assert brand.tickers == ["MA"] and brand.topic_sections == ["Item 1"]
    assert plan_question("What is Mastercard?", catalog).topic_sections == []
    # Typed in lower case, the brand names its company anywhere in a question that names no other.
    assert plan_question("why did zest's sales grow", catalog).tickers == ["MA"]
    assert plan_question("how did zest do at apple", catalog).tickers == ["AAPL"]
    # A month written short is a date, never a name.
    assert plan_question("revenue as of Jan 31 2024", catalog).tickers == []


def test_a_year_counted_back_from_a_year_named(catalog):
    # "The year before FY25" asks for fiscal 2024, not for 2025; "two years prior to" counts back two.
    assert plan_question("What did Apple spend on capex in the year before FY25?", catalog).fiscal_years == [2024]
    assert plan_question("Apple capex two years prior to fiscal 2025", catalog).fiscal_years == [2023]
    assert plan_question("Apple capex in the year before FY25, i.e. fiscal 2024", catalog).fiscal_years == [2024]
    # Compared with "the year before" it names, both years.
    plan = plan_question("Apple capex fiscal 2025 vs the year before", catalog)
    assert plan.calculation.growth and plan.fiscal_years == [2025]


def test_the_years_written_as_fiscal_years_are_told_from_bare_years(catalog):
    # A bare year may be the calendar year a fiscal year's report is filed in ("holders of record in early 2025").
    plan = plan_question("Apple revenue guidance for fiscal 2027 and holders of record in early 2026", catalog)
    assert plan.fiscal_years == [2027, 2026] and plan.fiscal_written == [2027]
    assert plan_question("apple capex FY27", catalog).fiscal_written == [2027]
    # A year counted back from one named is not the one written.
    assert plan_question("Apple capex in the year before FY27", catalog).fiscal_written == []


def test_a_computed_figure_followed_by_its_inputs_asks_for_the_computed_figure(catalog):
    # "Buybacks plus dividends" defines cash returned to shareholders; the vetoed "cash" is no other figure.
    plan = plan_question("How much cash did Apple hand back to shareholders in 2024, buybacks plus dividends?", catalog)
    assert [m.metric_key for m in plan.metrics if not m.vetoed] == ["shareholder_returns"]


def test_a_company_named_by_its_abbreviation_is_no_qualifier_and_full_year_is_fiscal():
    catalog = Catalog.build([{"ticker": "PG", "company": "PROCTER & GAMBLE CO", "fiscal_year": 2025},
                             {"ticker": "AAPL", "company": "Apple Inc.", "fiscal_year": 2025}])
    # "P&G" named the company, so it does not narrow the metric after it to a part.
    plan = plan_question("P&G diluted EPS for fiscal 2025?", catalog)
    assert plan.tickers == ["PG"] and [(m.metric_key, m.before) for m in plan.metrics] == [("eps_diluted", [])]
    # "Full-year 2027" is a fiscal year as surely as "fiscal 2027" (a year after the index is not covered).
    assert plan_question("What operating ratio did Apple report for full-year 2027?", catalog).fiscal_written == [2027]
    assert plan_question("Apple holders of record in early 2027", catalog).fiscal_written == []


def test_a_ticker_no_indexed_filing_writes_is_a_company_not_indexed():
    nodes = [_Node("AAPL", "Apple reported net income and EBITDA. " * 30), _Node("MA", "Mastercard " * 30)]
    catalog = Catalog.build(FILINGS, nodes)
    # Typed in capitals anywhere, or in lower case opening a terse question, in a question naming no indexed company.
    assert plan_question("JPM net income 2024", catalog).unknown_companies == ["JPM"]
    assert plan_question("msft revenue fy24", catalog).unknown_companies == ["msft"]
    # A company's name typed in lower case, opening a terse question or as a possessive: a name no filing writes.
    assert plan_question("zyntrox membership fee revenue fiscal 2024?", catalog).unknown_companies == ["zyntrox"]
    assert plan_question("what was zyntrox's net income in 2024?", catalog).unknown_companies == ["zyntrox"]
    assert plan_question("reported net income 2024", catalog).unknown_companies == []
    # A short form of a metric, a word the filings write, or a question naming an indexed company: none.
    assert plan_question("EBITDA 2024", catalog).unknown_companies == []
    assert plan_question("FCF for AAPL in 2024", catalog).unknown_companies == []
    assert plan_question("net income 2024", catalog).unknown_companies == []
    # With one company indexed, a question naming none is about it, whatever words it writes in capitals.
    alone = Catalog.build(FILINGS[:1], [_Node(FILINGS[0]["ticker"], "Apple reported net income. " * 30)])
    assert plan_question("What were the ASKED risk factors?", alone).unknown_companies == []


def test_a_hypothetical_change_is_the_premise_of_a_sensitivity_not_a_change_asked(catalog):
    # Item 305 states what a hypothetical move would do: the move is given, the figure asked is its effect.
    for question in ("What would a 100 basis point rise in interest rates do to Apple's investment portfolio?",
                     "What loss would a hypothetical 10% adverse change in currencies cause Apple in 2024?",
                     "How would a one percentage point increase in rates affect Apple's interest expense?"):
        assert plan_question(question, catalog).calculation.growth is False, question
    # A change the question asks about is still one, beside a premise or alone.
    assert plan_question("How much did Apple's interest expense rise in 2024?", catalog).calculation.growth
    assert plan_question("After a 1% rise in rates, how much did Apple's interest income grow in 2024?",
                         catalog).calculation.growth


def test_how_much_of_one_figure_with_no_part_named_asks_its_amount(catalog):
    # "How much of its buyback authorization did it have left": the figure named is what remains, no share of it.
    plan = plan_question("How much of its buyback authorization did Mastercard have left at the end of 2024?", catalog)
    assert [m.metric_key for m in plan.metrics] == ["repurchase_remaining"]
    assert plan.calculation.share_of_end is None and not plan.calculation.amount_of
    # A part named (where it came from, what is left out) keeps "how much of" a share asked as an amount.
    for question in ("How much of Apple's revenue came from services in fiscal 2024?",
                     "How much of Apple's fiscal 2024 net sales came from outside the U.S.?"):
        assert plan_question(question, catalog).calculation.amount_of, question
    # A part said in words of its own ("comes due within the next year") is still a part of the figure.
    plan = plan_question("How much of Apple's term debt comes due within the next year?", catalog)
    assert plan.calculation.amount_of


def test_what_is_behind_a_change_asks_for_its_causes(catalog):
    # "What's behind" and "what led to" ask why as "what drove" does: prose, not the figure.
    for question in ("What's behind the slump in Apple's services revenue in 2024?",
                     "What was behind the rise in Apple's gross margin in fiscal 2024?",
                     "What led to a higher current ratio at Apple in fiscal 2024?"):
        plan = plan_question(question, catalog)
        assert plan.prose_intent and plan.narrative, question
    assert not plan_question("What was Apple's gross margin in fiscal 2024?", catalog).prose_intent


def test_a_workforce_asked_in_the_plural_points_to_item_1(catalog):
    # Several companies' workforces are still Item 1's human capital disclosure, and their size is a headcount.
    plan = plan_question("How big are the workforces of Apple and Tesla?", catalog)
    assert plan.topic_sections == ["Item 1"] and plan.counted == HEADCOUNT_NOUNS
    assert plan_question("Compare the headcounts of Apple and Tesla", catalog).topic_sections == ["Item 1"]


def test_registered_shareholders_are_item_5s_holders_of_record(catalog):
    # Item 201(b): the approximate number of holders of record, which an analyst may call registered holders.
    for question in ("Apple vs Tesla registered shareholders", "How many registered stockholders does Apple have?",
                     # Item 703: what may yet be purchased, asked as the buyback's capacity or authority.
                     "How much buyback capacity do Apple and Tesla have left?"):
        assert plan_question(question, catalog).topic_sections == ["Item 5"], question


def test_a_compound_question_keeps_its_later_questions_to_search(catalog):
    plan = plan_question("What does Apple's 10-K say about its tax dispute, and what tax reserve does it now carry?",
                         catalog)
    assert plan.follow_ups == ["what tax reserve does it now carry?"]
    assert plan_question("What drove Apple's margins? How did its costs change in 2024?", catalog).follow_ups == [
        "How did its costs change in 2024?"]
    # A later question that names nothing of its own is not searched apart; one question is no compound.
    assert plan_question("What is SRS, when did Apple buy it, and why did it buy it?", catalog).follow_ups == []
    assert plan_question("Compare revenue and net income of Apple and Tesla", catalog).follow_ups == []


def test_a_ratio_named_by_its_two_lines_is_a_ratio(catalog):
    # "The ratio of A to B" and "A to B ratio" ask the same division; "led to a higher ratio" names no second line.
    for question in ("What was Apple's ratio of long-term debt to total equity in 2024?",
                     "What's Apple's long-term debt to total equity ratio at year-end 2024?"):
        plan = plan_question(question, catalog)
        assert plan.calculation.ratio and len(plan.metrics) == 2, question
    assert not plan_question("What led to a higher current ratio at Apple in 2024?", catalog).calculation.ratio


def test_the_number_of_things_compared_across_companies_is_a_count(catalog):
    # "Compare the number of <things>" across companies asks for a count as "how many" does, up to the companies.
    plan = plan_question("Compare the number of record holders at Apple and Home Depot.", catalog)
    assert plan.counted == ["record", "holders"]
    plan = plan_question("Which has the larger number of stores, Home Depot or Apple?", catalog)
    assert plan.counted == ["stores"]
    # A number of money is an amount, and one company's number keeps its words for retrieval alone.
    assert plan_question("Compare the number of dollars Apple and Home Depot spent on R&D.", catalog).counted == []
    plan = plan_question("By how much did Apple's number of stockholders of record drop from FY24 to FY25?", catalog)
    assert plan.counted == [] and plan.number_of == ["stockholders", "of", "record"]
