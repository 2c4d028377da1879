"""The extractive answer (rag.answer.extractive): which sentences and table rows it quotes, and when it says
the passages do not answer."""

from __future__ import annotations

import re

from rag.answer import Citation, answer, extractive_answer
from rag.answer.quotable import column_heads, quotable_units
from rag.catalog import Catalog
from rag.question import plan_question
from rag.schema import QuestionPlan
from rag.words import spelled_out, stem, tokens
from tests.answer_samples import (
    APPLE_MDA,
    APPLE_TABLE,
    TESLA_HQ,
    TESLA_META,
    TESLA_RISK,
    make_node,
    retrieval,
    settings_for,
)


def test_extractive_answer_quotes_the_row_with_its_years():
    two_years = QuestionPlan(tickers=["AAPL"], fiscal_years=[2024, 2023])
    res = answer("What were total net sales in 2023 and 2024?", retrieval("q", analysis=two_years),
                 settings_for(None), use_llm=False)
    text = res.answer
    assert text.startswith("Extractive answer")
    row = next(line for line in text.splitlines() if "Total net sales | 391,035 | 383,285" in line)
    assert "2024 | 2023" in row  # the header years travel with the figure
    assert "in millions" in row
    assert row.rstrip().endswith("[1]")
    assert 1 in [c.number for c in res.citations]
    assert res.extractive and not res.refused
    # The cost and margin rows match less well than the net sales row: it comes first among the table rows.
    rows = [line for line in text.splitlines() if "|" in line]
    assert "Total net sales" in rows[0]


def test_extractive_answer_represents_several_sources():
    text = extractive_answer(
        "How did Apple's total net sales change in 2024 compared to 2023?",
        [Citation(number=1, text=APPLE_TABLE, ticker="AAPL"), Citation(number=2, text=APPLE_MDA, ticker="AAPL")],
        QuestionPlan(tickers=["AAPL"], fiscal_years=[2024, 2023]),
    )[0]
    assert "[1]" in text and "[2]" in text
    assert "increased 2% or $7.8 billion" in text
    # every quoted line ends with its citation
    for line in text.splitlines():
        if line.startswith("- "):
            assert re.search(r"\[\d+\]$", line.rstrip()), line


def test_extractive_prose_question_picks_the_right_sentence():
    nodes = [make_node(TESLA_HQ, "t-hq", **TESLA_META), make_node(TESLA_RISK, "t-risk", **TESLA_META)]
    res = answer("Why is Tesla dependent on Elon Musk?", retrieval("q", nodes, QuestionPlan(tickers=["TSLA"])),
                 settings_for(None), use_llm=False)
    assert "highly dependent on the services of Elon Musk" in res.answer
    # Search ranked it second; the passage the answer cites is [1] under it.
    assert "[1]" in res.answer and [(c.number, c.chunk_id) for c in res.citations] == [(1, "t-risk")]


def test_extractive_says_so_when_passages_do_not_answer():
    nodes = [make_node(TESLA_HQ, "t-hq", **TESLA_META), make_node(TESLA_RISK, "t-risk", **TESLA_META)]
    res = answer("What brand of coffee does the Tesla cafeteria serve?",
                 retrieval("q", nodes, QuestionPlan(tickers=["TSLA"])), settings_for(None), use_llm=False)
    assert res.refused and res.citations == [] and res.refusal_reason == "no_evidence"
    assert "coffee" in res.answer


def test_a_light_verb_of_the_question_is_not_a_missing_topic():
    # "keep" is how the question is phrased, not what it asks about: the passage on the headquarters answers it.
    nodes = [make_node(TESLA_HQ, "t-hq", **TESLA_META), make_node(TESLA_RISK, "t-risk", **TESLA_META)]
    res = answer("Where does Tesla keep its global headquarters?",
                 retrieval("q", nodes, QuestionPlan(tickers=["TSLA"])), settings_for(None), use_llm=False)
    assert not res.refused and "Austin, Texas" in res.answer
    res = answer("Where does Tesla keep its coffee beans?",
                 retrieval("q", nodes, QuestionPlan(tickers=["TSLA"])), settings_for(None), use_llm=False)
    assert res.refused


def test_the_verb_of_a_phrasal_verb_is_not_a_missing_topic():
    # "working off" phrases an action the filing tells in its own verbs ("liquidating"): the passage on the
    # inventory still answers, with a note on the word no passage holds ("surplus").
    text = _one_company("How is Gamma Health working off its surplus inventory?",
                        "We are liquidating inventory through increased markdowns and higher discounts.")
    assert not text.startswith("The indexed filings do not appear") and "liquidating inventory" in text
    assert "'surplus'" in text and "'working'" not in text


def test_extractive_matches_common_synonyms():
    text = TESLA_HQ + " As of December 31, 2023, we employed 140,473 full-time employees."
    nodes = [make_node(text, "t-hq", **TESLA_META), make_node(TESLA_RISK, "t-risk", **TESLA_META)]
    res = answer("How many people work at Tesla?", retrieval("q", nodes, QuestionPlan(tickers=["TSLA"])),
                 settings_for(None), use_llm=False)
    assert not res.refused
    assert "140,473 full-time employees" in res.answer


def test_exact_figures_stand_alone_when_no_passage_matches():
    facts = "[F1] Acme Corp (ACME) FY2024 total revenue: $1,234 million"
    text, refused = extractive_answer("What was Acme's total revenue in fiscal 2024?", [], facts_text=facts)
    assert not refused
    assert "$1,234 million" in text and "[F1]" in text


BOEING_META = {"ticker": "ACME", "company": "Acme Aircraft", "form": "10-Q", "fiscal_year": 2025,
               "fiscal_period": "Q2"}
DELIVERIES = (
    "Commercial airplane deliveries, including intercompany deliveries, were as follows:\n"
    "Deliveries during the first six months of 2025 | 190 | 18 | 280\n"
    "Deliveries during the second quarter of 2025 | 104 | 9 | 150\n"
    "Deliveries during the second quarter of 2024 | 70 | 6 | 92\n"
)
REVENUES = (
    "Revenues | Six months ended June 30 | Three months ended June 30\n"
    "Commercial Airplanes | $19,021 | $10,656 | $10,874 | $6,003\n"
)


def test_a_quarter_asked_as_a_code_finds_the_row_that_writes_it_out():
    """'Q2 ... alone, not year to date' is the row of the second quarter: its words are the period's words, and
    'deliveries' is what 'deliver' names. The year-to-date row is not quoted."""
    nodes = [make_node(REVENUES, "rev", **BOEING_META), make_node(DELIVERIES, "del", **BOEING_META)]
    question = "How many commercial airplanes did Acme deliver in Q2 2025 alone, not year to date?"
    plan = plan_question(question, Catalog.build([BOEING_META]))
    assert [p.label() for p in plan.periods] == ["Q2 FY2025"]
    res = answer(question, retrieval("q", nodes, plan), settings_for(None), use_llm=False)
    assert not res.refused
    first_row = next(line for line in res.answer.splitlines() if "|" in line)
    assert "second quarter of 2025" in first_row and "150" in first_row
    assert "first six months" not in res.answer


def test_words_of_the_question_that_no_passage_uses_do_not_refuse_an_on_topic_passage():
    """A long question's own phrasing ('spend buying back', 'left') is missing from the passage that answers it;
    the passage holds several of its topic words, so it is quoted (with a note), not refused."""
    text = ("During the second quarter, we repurchased 67 million shares of our common stock for $9.7 billion. "
            "As of quarter end, we were authorized, subject to certain specifications, to repurchase additional "
            "common stock up to $14.7 billion under the repurchase authorization.")
    nodes = [make_node(text, "buyback", **TESLA_META)]
    res = answer("How much did Tesla spend buying back its stock, and how much authorization was left?",
                 retrieval("q", nodes, QuestionPlan(tickers=["TSLA"])), settings_for(None), use_llm=False)
    assert not res.refused
    assert "$9.7 billion" in res.answer and "$14.7 billion" in res.answer
    assert "Note: no retrieved passage mentions" in res.answer and "'left'" in res.answer


_ITEM_703_HEADER = (
    "Period | Total Number of Shares Repurchased | Average Price Paid Per Share | Approximate Dollar Value that May "
    "Yet be Purchased Under the Plans (1)\n"
    "| (in millions, except average price per share)\n"
)
# The issuer-purchases table split over two chunks, as the chunker splits it (the header repeated).
ISSUER_PURCHASES = [
    "Below is a summary of stock repurchases for the three months ended November 29, 2024.\n" + _ITEM_703_HEADER
    + "Beginning repurchase authority | $20,150\nAugust 31—September 27, 2024\n"
    "Accelerated share repurchases | 4.6 | $— | $(2,500)\n",
    _ITEM_703_HEADER + "October 26—November 29, 2024\nShares repurchased | — | $— | $—\n"
    "Total | 4.6 | | $17,650\n"
    "(1)In March 2024, our Board of Directors granted authority to repurchase up to $25 billion in our common stock "
    "through March 14, 2028.\n",
]


def test_a_total_row_is_read_under_its_tables_column_titles():
    """The issuer-purchases table (Reg. S-K Item 703) titles its columns in words; its last row says only
    'Total'. What is left of the program is that row's figure under '... May Yet be Purchased'."""
    nodes = [make_node(text, f"item5-{i}", section="Item 5", section_title="Market for Common Equity")
             for i, text in enumerate(ISSUER_PURCHASES)]
    res = answer("How much stock repurchase authority remained at the end of the year?",
                 retrieval("q", nodes, QuestionPlan(tickers=["AAPL"])), settings_for(None), use_llm=False)
    assert not res.refused
    total = next(line for line in res.answer.splitlines() if "Total | 4.6" in line)
    assert "$17,650" in total and "May Yet be Purchased" in total  # the row travels with its column titles


# Two companies' workforce passages, worded as filings word them: a count beside other figures (a share, a prior
# year, a cost), and the headcount in different words ("persons", "employees").
_WORKFORCE_A = ("Human Capital. The total cost of our workforce for the year ended December 31, 2024 was $6.7 billion. "
                "As of December 31, 2024, we employed approximately 35,300 persons globally, of which approximately "
                "69% were employed outside of the U.S. in more than 90 countries.")
_WORKFORCE_B = ("Human Capital. This year, we grew our total workforce from approximately 28,800 in fiscal 2023 to "
                "approximately 31,600 employees in fiscal 2024, an increase of 10 percent year over year.")


def _two_companies(question: str, texts: tuple[str, str] = (_WORKFORCE_A, _WORKFORCE_B)) -> str:
    """The extractive answer over one passage of Alpha Payments ([1]) and one of Beta Networks ([2])."""
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Payments Inc.", "fiscal_year": 2024},
                             {"ticker": "BBB", "company": "Beta Networks Inc.", "fiscal_year": 2024}])
    sources = [Citation(number=1, text=texts[0], ticker="AAA", company="Alpha Payments Inc."),
               Citation(number=2, text=texts[1], ticker="BBB", company="Beta Networks Inc.")]
    return extractive_answer(question, sources, plan_question(question, catalog))[0]


def test_two_companies_ranked_by_a_figure_they_state_in_prose():
    text = _two_companies("Did Alpha Payments or Beta Networks employ more people in 2024, and by how much?")
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    # The headcounts, not the share employed abroad, the prior year's count or the cost of the workforce.
    assert "Alpha Payments Inc. states the larger, 35,300 [1], against 31,600 for Beta Networks Inc. [2]" in line
    assert "difference 3,700" in line and "not from tagged XBRL data" in line
    # Both companies' passages are quoted, each with its own citation.
    assert "35,300 persons" in text and "31,600 employees" in text


def test_a_headcount_in_full_time_equivalents_is_a_count_of_employees():
    # "approximately 164,000 full-time equivalent employees": the noun counted four words after its figure.
    texts = ("At the end of fiscal 2024, we employed approximately 470,100 associates, of whom approximately 50,600 "
             "were salaried.", "As of September 28, 2024, the Company had approximately 164,000 full-time "
             "equivalent employees.")
    text = _two_companies("How many more people does Alpha Payments employ than Beta Networks?", texts)
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "470,100 [1], against 164,000" in line and "difference 306,100" in line


def test_one_companys_count_compared_over_years_is_read_from_each_years_filing():
    # "Employee count FY23 vs FY25": each year's annual report states its own headcount; the change is the later
    # less the earlier. An expense sentence about "employee growth" states no count and compares nothing.
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Payments Inc.", "fiscal_year": 2023},
                             {"ticker": "AAA", "company": "Alpha Payments Inc.", "fiscal_year": 2025}])
    texts = {2025: "Research and development expenses rose 32%, reflecting employee growth and compensation increases.",
             2023: "As of the end of fiscal year 2023, we had 26,196 employees in 35 countries.",
             2024: "As of the end of fiscal year 2025, we had approximately 36,000 employees in 38 countries; 27,100 "
                   "were engaged in research and development."}
    sources = [Citation(number=i + 1, text=text, ticker="AAA", company="Alpha Payments Inc.",
                        fiscal_year=2025 if key != 2023 else 2023) for i, (key, text) in enumerate(texts.items())]
    question = "alpha payments employee count FY23 vs FY25, how much did headcount grow?"
    text = extractive_answer(question, sources, plan_question(question, catalog))[0]
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "(FY2025) states 36,000 [3], against 26,196 for Alpha Payments Inc. (FY2023) [2]" in line
    assert "change +9,804 (+37.4%)" in line
    # Asked as a change alone ("how much did it grow between"), the same comparison answers, and the change word no
    # passage prints is not reported as missing: the comparison is the change.
    question = "How much did Alpha Payments' headcount grow between the end of fiscal 2023 and fiscal 2025?"
    text = extractive_answer(question, sources, plan_question(question, catalog))[0]
    assert "change +9,804 (+37.4%)" in text and "'grow'" not in text
    # A part beside the total ("27,100 were engaged in research and development") is picked by the question's
    # words in each year's sentence, and compared instead of the totals.
    texts[2023] = ("As of the end of fiscal year 2023, we had 26,196 employees in 35 countries, 19,532 were engaged in "
                   "research and development and 6,664 were engaged in sales.")
    sources = [Citation(number=i + 1, text=text, ticker="AAA", company="Alpha Payments Inc.",
                        fiscal_year=2025 if key != 2023 else 2023) for i, (key, text) in enumerate(texts.items())]
    question = "By how much did Alpha Payments' R&D headcount grow between fiscal 2023 and fiscal 2025?"
    text = extractive_answer(question, sources, plan_question(question, catalog))[0]
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "states 27,100 [3], against 19,532" in line and "change +7,568" in line


def test_one_companys_count_asked_for_two_years_gives_each_years_figure():
    # "How many did it deliver in 2023 and 2024": one sentence states one year's count; stating it alone would
    # answer half the question as if it were the whole. Each year's filing gives its own year's figure.
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Motors Inc.", "fiscal_year": 2023},
                             {"ticker": "AAA", "company": "Alpha Motors Inc.", "fiscal_year": 2024}])
    texts = {2023: "In 2023, we produced 1,845,985 consumer vehicles and delivered 1,808,581 consumer vehicles.",
             2024: "In 2024, we produced approximately 1,773,000 consumer vehicles and delivered approximately "
                   "1,789,000 consumer vehicles."}
    sources = [Citation(number=i + 1, text=text, ticker="AAA", company="Alpha Motors Inc.", fiscal_year=year)
               for i, (year, text) in enumerate(texts.items())]
    question = "How many vehicles did Alpha Motors deliver in 2023 and 2024?"
    text = extractive_answer(question, sources, plan_question(question, catalog))[0]
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "(FY2024) states 1,789,000 [2], against 1,808,581 for Alpha Motors Inc. (FY2023) [1]" in line
    assert not text.startswith("Figure read from prose")



def test_holders_of_record_are_counted_under_the_filers_own_word_for_the_holder():
    # Item 201(b)'s holders of record, asked as "shareholders of record": one filer counts "shareowner accounts of
    # record", another "holders of record". The "of record" phrase after a plural names the count either way, so
    # both are read and compared, not the sentence that only mentions shareholders.
    texts = ("We also returned $0.6 billion to shareholders. At March 5, 2025, there were approximately 101,000 "
             "holders of record of our common stock.",
             "As of February 18, 2025, there were 176,283 shareowner accounts of record.")
    text = _two_companies("Did Alpha Payments or Beta Networks report more shareholders of record in 2024?", texts)
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "Beta Networks Inc. states the larger, 176,283 [2], against 101,000 for Alpha Payments Inc. [1]" in line


def test_no_comparison_unless_the_question_ranks_them():
    text = _two_companies("How many people did Alpha Payments and Beta Networks employ in 2024?")
    assert "Comparison" not in text and "35,300" in text and "31,600" in text


def test_a_headcount_compared_is_the_count_its_noun_follows():
    # "from approximately 28,800 in fiscal 2023 to approximately 31,600 employees": only the second figure is
    # followed by what a headcount counts, and "69% were employed" is a share.
    text = _two_companies("Which of Alpha Payments and Beta Networks has the larger workforce?")
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "35,300 [1], against 31,600" in line and "difference 3,700" in line


def test_no_comparison_when_a_company_states_the_count_twice_over():
    # Both years' headcounts with their noun and no year asked: which one to compare is a guess, so none is made.
    twice = "We had approximately 28,800 employees in fiscal 2023 and approximately 31,600 employees in fiscal 2024."
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Payments Inc.", "fiscal_year": 2024},
                             {"ticker": "BBB", "company": "Beta Networks Inc.", "fiscal_year": 2024}])
    sources = [Citation(number=1, text=_WORKFORCE_A, ticker="AAA", company="Alpha Payments Inc."),
               Citation(number=2, text=twice, ticker="BBB", company="Beta Networks Inc.")]
    question = "Which of Alpha Payments and Beta Networks has the larger workforce?"
    assert "Comparison" not in extractive_answer(question, sources, plan_question(question, catalog))[0]


def test_a_headcount_is_not_the_people_a_company_serves():
    # A health company counts the people it serves in the sentence its retrieval ranks first; its headcount is
    # the count of its employees, and a total beside its parts ("36,000 employees in 38 countries; 27,100 ...") is
    # compared by the total.
    served = ("Our businesses served approximately 29.7 million people in 2024. Our nearly 400,000 employees, "
              "as of December 31, 2024, including more than 140,000 clinical professionals, share one mission.")
    staff = ("As of the end of fiscal year 2024, we had approximately 36,000 employees in 38 countries; 27,100 were "
             "engaged in research and development.")
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Health Inc.", "fiscal_year": 2024},
                             {"ticker": "BBB", "company": "Beta Chips Inc.", "fiscal_year": 2024}])
    sources = [Citation(number=1, text=served, ticker="AAA", company="Alpha Health Inc."),
               Citation(number=2, text=staff, ticker="BBB", company="Beta Chips Inc.")]
    question = "Which had the bigger headcount at the end of 2024, Alpha Health or Beta Chips, and by how many people?"
    text = extractive_answer(question, sources, plan_question(question, catalog))[0]
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "Alpha Health Inc. states the larger, 400,000 [1], against 36,000 for Beta Chips Inc. [2]" in line
    assert "difference 364,000" in line


def test_a_noun_in_ee_shares_its_verbs_stem():
    # "employees" are whom a company "employed": a question in one word finds a passage in the other.
    assert stem("employees") == stem("employed") == stem("employ")
    assert stem("franchisees") == stem("franchise") and stem("retirees") == stem("retire")
    assert tokens("licensee fees") == [stem("license"), "fee"]  # short words keep their -ee
    # A short verb in -e takes -d alone: "fined" is what a "fine" is, unlike "need" or "owned".
    assert stem("fined") == stem("fine") == stem("fines") and stem("used") == stem("use")
    assert stem("need") == "need" and stem("owned") == "owned"


# A count a filing states for two dates in one sentence, and one it states as a total beside its parts.
_SERVED = ("Optimal Care served approximately 100 million people as of December 31, 2024 compared to 103 million "
           "people as of December 31, 2023. Its clinics grew in number.")
_STAFF = ("As of the end of fiscal year 2024, we had approximately 36,000 employees in 38 countries; 27,100 were "
          "engaged in research and development.")


def _one_company(question: str, *texts: str) -> str:
    """The extractive answer over passages of one company's FY2024 10-K, numbered in order."""
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2024}])
    sources = [Citation(number=i + 1, text=text, ticker="CCC", company="Gamma Health Inc.", form="10-K",
                        fiscal_year=2024) for i, text in enumerate(texts)]
    return extractive_answer(question, sources, plan_question(question, catalog))[0]


def _first_quote(answer_text: str) -> str:
    return next(ln for ln in answer_text.splitlines() if ln.startswith("- "))


def test_a_count_stated_for_two_dates_answers_with_the_year_asked():
    text = _one_company("How many people was Gamma Health's Optimal Care serving at the end of 2024?", _SERVED)
    assert text.startswith("Figure read from prose: **100 million**")
    assert '"… Care served approximately 100 million people as of December 31, 2024" [1]' in text
    assert "103" not in text  # the other date's count would read as a second answer
    # No year asked: the filing's own year.
    assert "**100 million**" in _one_company("How many people does Gamma Health's Optimal Care serve?", _SERVED)
    # The year asked is the other one: its count.
    assert "**103 million**" in _one_company("How many people did Optimal Care serve at the end of 2023?", _SERVED)


def test_a_part_beside_its_total_is_picked_by_the_questions_words():
    # The words beyond the thing counted ("research and development") pick the part whose clause holds them.
    text = _one_company("How many of Gamma Health's people work in research and development?", _STAFF)
    assert text.startswith("Figure read from prose: **27,100**")
    assert '"27,100 were engaged in research and development" [1]' in text and "36,000" not in text
    # With no such words, the total: the count its noun follows, with the clause's scope ("in 38 countries").
    text = _one_company("How many employees does Gamma Health have?", _STAFF)
    assert text.startswith("Figure read from prose: **36,000**")
    assert '"we had approximately 36,000 employees in 38 countries" [1]' in text and "27,100" not in text


def test_a_scope_both_counts_share_leaves_the_count_its_noun_follows():
    # "Around the world" sits in both counts' clauses; "offices" names one of them, the other counts countries.
    text = _one_company("How many offices does Gamma Health have around the world?",
                        "We owned or leased 135 office locations in 83 countries around the world, including four "
                        "data centers.")
    assert text.startswith("Figure read from prose: **135**")
    # A scope no count's noun settles stays unread.
    text = _one_company("How many stores does Gamma Health have around the world?",
                        "We owned or leased 135 office locations in 83 countries around the world.")
    assert not text.startswith("Figure read from prose")


def test_two_counts_asked_at_once_are_quoted_in_their_sentence():
    # The total and the part are both asked: picking one would drop the other, so the sentence is quoted whole.
    text = _one_company("How many people does Gamma Health employ, and how many of them work in research and "
                        "development?", _STAFF)
    assert not text.startswith("Figure read from prose") and "36,000 employees" in text and "27,100" in text


def test_a_count_whose_scope_the_sentence_never_names_is_quoted_whole():
    # "In Europe": no clause of the sentence says it, so no figure is picked; the sentence is quoted as it stands.
    text = _one_company("How many employees does Gamma Health have in Europe?", _STAFF)
    assert not text.startswith("Figure read from prose") and "36,000 employees" in text and "27,100" in text


def test_the_sentence_that_gives_the_count_asked_is_quoted_first():
    # "How many employees": the sentence where a figure counts employees leads, ahead of sentences that share only a
    # rarer synonym ("workforce") with the question and state shares, not counts.
    text = _one_company("How many employees does Gamma Health have?",
                        "Our workforce is 82% technical and 51% hold advanced degrees. Our workforce grew.",
                        "As of the end of fiscal year 2024, we had approximately 36,000 employees. Our employees matter.",
                        "Employees may join our stock purchase plan. We value employees.")
    assert "36,000 employees" in _first_quote(text)


# A properties table of store counts as filings print them: a title in the header's first cell over one column
# ("Number"), a total pushed one cell in, and the same table for the rest of the world.
_STORES = ("U.S. RETAIL STORES | NUMBER\nFactory stores | 213\nIn-line stores | 85\nTOTAL | 376\n\n"
           "NON-U.S. RETAIL STORES | NUMBER\nFactory stores | 600\nIn-line stores | 58\nTOTAL | 658\n\n"
           "Region | Stores | Region | Stores\nOhio | 9 | Utah | 4\n| Total | 13")


def test_a_count_table_is_read_under_its_title():
    units = quotable_units(Citation(number=1, text=_STORES, ticker="CCC", company="Gamma Retail Inc."))
    rows = [u for u in units if u.kind == "row"]
    assert [u.text for u in rows][:3] == ["Factory stores | 213", "In-line stores | 85", "TOTAL | 376"]
    assert rows[2].title == "U.S. RETAIL STORES" and rows[5].title == "NON-U.S. RETAIL STORES"
    assert rows[-1].text == "Total | 13"  # the label set one cell in is still the label
    # "United States" in the question is the "U.S." of the title; "non-U.S." is not.
    text = _one_company("How many retail stores does Gamma Retail have in the United States?", _STORES)
    assert _first_quote(text).startswith("- `TOTAL | 376` (table: U.S. RETAIL STORES; columns: NUMBER)")


def test_a_glossary_or_a_unit_note_is_not_a_table_header_or_row():
    glossary = "Term | Meaning\nSRS | SRS Distribution Inc.\nSEC | Securities and Exchange Commission of 1934"
    units = quotable_units(Citation(number=1, text=glossary, ticker="CCC"))
    assert all(not u.header for u in units)
    noted = "| (in thousands, except per membership)\nMembers at end of period | 89,625 | 80,128"
    units = quotable_units(Citation(number=1, text=noted, ticker="CCC"))
    assert [u.text for u in units] == ["Members at end of period | 89,625 | 80,128"] and units[0].note == "in thousands"


def test_a_count_question_prefers_a_row_of_counts_to_a_row_of_dollars():
    text = _one_company("How many paying members did Gamma Health have in 2024?",
                        "Region A | 2024 | 2023\nAverage monthly revenue per paying member | $17.20 | $16.28",
                        "Region A | 2024 | 2023\nPaid members at end of period | 89,625 | 80,128")
    # "paid" is the past of "paying"; a row of dollars is not a count.
    assert "**89,625** for 2024: `Paid members at end of period`" in text and "$17.20" not in text


def test_the_passage_a_figure_is_read_from_leads_the_sources():
    # Search ranked the table third; the answer reads its figure there, so it becomes source [1] and the others
    # follow in search order, renumbered in the text as in the Sources list and in the retrieval.
    question = "How many paid members did Gamma Health have in Region North at the end of 2023?"
    plan = plan_question(question, Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.",
                                                   "fiscal_year": 2024}]))
    meta = dict(ticker="CCC", company="Gamma Health Inc.", section="Item 7")
    nodes = [make_node("Gamma Health Inc. (CCC) · 10-K · FY2024 · Item 7\nMembers in Region North value the "
                       "service; paid plans grew.", "c-prose", 0.033, **meta),
             make_node("Gamma Health Inc. (CCC) · 10-K · FY2024 · Item 1\nGamma Health sells paid memberships in "
                       "two regions.", "c-business", 0.032, **meta),
             make_node("Gamma Health Inc. (CCC) · 10-K · FY2024 · Item 7\n" + _MEMBERS, "c-table", 0.031, **meta)]
    found = retrieval(question, list(nodes), plan)
    res = answer(question, found, settings_for(None), use_llm=False)
    assert "**80,128 thousand**" in res.answer and "column 2023 [1]" in res.answer
    assert [(c.number, c.chunk_id) for c in res.sources] == [(1, "c-table"), (2, "c-prose"), (3, "c-business")]
    assert [c.chunk_id for c in res.citations] == ["c-table"]
    assert [n.node.node_id for n in found.nodes] == ["c-table", "c-prose", "c-business"]
    # Passages quoted as they are keep search's order.
    question = "What does Gamma Health say about paid plans in Region North?"
    plan = plan_question(question, Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.",
                                                   "fiscal_year": 2024}]))
    res = answer(question, retrieval(question, nodes[:2], plan), settings_for(None), use_llm=False)
    assert [c.chunk_id for c in res.sources] == ["c-prose", "c-business"]


def test_a_contraction_reads_as_the_word_it_leans_on():
    # "What's" is "what", a question word, not a word the filing must contain.
    assert tokens("What's Apple's cash pile?") == tokens("What is Apple's cash pile?") == ["appl", "cash", "pile"]
    assert tokens("Why didn't margins rise, and won't they?") == tokens("Why did margins rise, and will they?")
    assert tokens("Nike’s stores") == tokens("Nike stores")


def test_the_countrys_abbreviation_and_irregular_verbs_read_as_their_words():
    assert tokens("U.S. retail stores") == tokens("United States retail stores") == tokens("u.s. retail stores")
    assert "unit" not in tokens("non-U.S. sales") and tokens("non-U.S. sales") == tokens("international sales")
    assert stem("paid") == stem("paying") == stem("pays") and stem("sold") == stem("selling")
    # "What drove it" is answered "driven by"; what was written down, by its writing down.
    assert stem("drove") == stem("driven") == stem("driving") and stem("wrote") == stem("written") == stem("writes")


def test_a_question_in_its_own_verbs_is_not_refused_when_the_passage_says_it_in_the_filings():
    # "Wrote down ... what drove it": the filing books an impairment "driven by" its causes. Neither verb is a
    # topic the passage lacks.
    passage = ("The Company recorded an impairment charge of $760 million related to the Omega trademark, which was "
               "primarily driven by revised projections of future operating results and higher discount rates.")
    text = _one_company("gamma wrote down omega in 2024 - how big was the hit and what drove it?", passage)
    assert "do not appear to answer" not in text and "impairment charge of $760 million" in text
    assert "impairment" in spelled_out("Why did Gamma write down the Omega brand?")


_MEMBERS = ("| As of December 31, | 2024 | 2023 | 2022 | (in thousands)\nRegion North\n"
            "Paid members at end of period | 89,625 | 80,128 | 74,296\n"
            "Average monthly revenue per paying member | $17.20 | $16.28 | $15.86")


def test_a_count_from_a_table_in_thousands_is_stated_in_full_for_the_year_asked():
    text = _one_company("How many paid members did Gamma Health have in Region North at the end of 2023?", _MEMBERS)
    line = next(ln for ln in text.splitlines() if ln.startswith("Figure read from the table"))
    assert "**80,128 thousand** (about 80.1 million) for 2023" in line and "under Region North, column 2023 [1]" in line
    # No year asked: the filing's own year's column.
    assert "**89,625 thousand**" in _one_company("How many paid members does Gamma Health have in Region North?",
                                                 _MEMBERS)
    # A region's row answers only for the region: asked for the company, the row is quoted as printed.
    assert "Figure read" not in _one_company("How many paid members does Gamma Health have?", _MEMBERS)
    # Money is not a count, and a year the table does not print gets no figure.
    assert "Figure read from the table" not in _one_company("How many paid members did it have in 2019?", _MEMBERS)
    # An amount per member is money, stated as printed and not scaled by the table's "(in thousands)".
    text = _one_company("How much revenue per paying member in Region North in 2024?", _MEMBERS)
    assert "**$17.20** (in thousands) for 2024" not in text and "**$17.20**" in text


def test_a_year_line_under_a_label_cell_spanning_two_header_rows_keeps_its_first_year():
    # The label column's heading spans both header rows, so the year line starts with a year: each figure is
    # read under its own year, not the next column's.
    table = ("| (in thousands)\nSelected data: | Fiscal | Fiscal\n2024 | 2023\n"
             "Members at end of period | 91,000 | 85,000")
    text = _one_company("How many members did Gamma Health have at the end of 2024?", table)
    assert "**91,000 thousand** (about 91.0 million) for 2024" in text
    assert "column Fiscal / 2024 [1]" in text and "85,000" not in text
    # The label column's own heading is still not read as a column.
    heads = [column_heads(line) for line in ["Year Ended December 31, | 2024 | 2023", "2024 | 2023", "FY2024 | FY2023"]]
    assert heads == [["2024", "2023"], ["2024", "2023"], ["FY2024", "FY2023"]]


# Key-metrics tables as card networks print them, one passage each: growth rates, the volumes, the cash part.
_HEAD = "| Twelve Months Ended June 30, | 2024 | 2023 | (in billions)\n"
_VOLUMES = (_HEAD + "Payments volume growth | 9% | 11%", _HEAD + "Nominal payments volume | $12,984 | $12,087",
            _HEAD + "Cash volume | 2,496 | 2,454")


def test_what_the_question_rules_out_and_growth_rates_do_not_answer_an_amount():
    # "Not counting cash": the cash row is what was left out; "how much volume": a growth rate is not the amount.
    text = _one_company("Not counting cash, how much payments volume did Gamma Health process in 2024?", *_VOLUMES)
    assert "for 2024: `Nominal payments volume`" in text
    assert "'counting'" not in text  # the exclusion phrase is not a word the passages must hold
    # Asked for the cash part, the cash row; asked for the growth, the growth row.
    assert "for 2024: `Cash volume`" in _one_company("How much cash volume did Gamma Health process in 2024?",
                                                     *_VOLUMES)
    grew = _one_company("How much did Gamma Health's payments volume grow in 2024?", *_VOLUMES)
    assert grew.startswith("Figure read from the table: **9%** for 2024: `Payments volume growth`")  # "grow" is held
    # A passage that leaves the same thing out itself is the figure asked for, not the part left out.
    prose = ("Net revenue grew 10% on a constant-currency basis, excluding currency effects. "
             "Currency effects reduced net revenue by $300 million.")
    text = _one_company("How much did Gamma Health's net revenue grow excluding currency effects?", prose)
    assert "constant-currency" in _first_quote(text)


def test_a_count_stated_after_its_noun_leads_and_a_part_of_them_does_not():
    # "Our headcount was 125,665" states the count after its noun; "13,000 of our employees" are some of them.
    text = _one_company("How many employees does Gamma Health have?",
                        "In 2024, over 13,000 of our employees took advantage of opportunities to advance. "
                        "Employees can join our stock plan.",
                        "As of December 31, 2024, our employee headcount worldwide was 125,665.")
    assert "125,665" in _first_quote(text)


def test_a_headcount_of_persons_employed_is_a_count_of_employees():
    # Regulation S-K asks for the "number of persons employed", and filings count them so: that sentence answers
    # "how many employees", ahead of one that shares the question's qualifier and counts contingent workers.
    text = _one_company("How many full-time employees did Gamma Health have at the end of 2024?",
                        "Our employee base is predominantly full-time. To supplement our employee base, we also had "
                        "approximately 5,000 contingent workers.",
                        "As of December 31, 2024, we employed approximately 35,300 persons globally, of which "
                        "approximately 69% were employed outside of the U.S. in more than 90 countries.")
    assert text.startswith("Figure read from prose: **35,300**")


def test_a_hyphenated_qualifier_the_filing_does_not_print_is_one_missing_word():
    # "full-time" is one word of the question: that no passage prints it leaves "employees" answered, not the
    # question off the filings' topic.
    text = _one_company("How many full-time employees did Gamma Health have at the end of 2024?",
                        "As of December 31, 2024, Gamma Health had 183,323 employees.")
    assert "183,323" in text and not text.startswith("The indexed filings do not appear to answer")
    assert "no retrieved passage mentions 'full', 'time'" in text  # still said


def test_counts_listed_with_their_years_answer_with_the_year_asked():
    # "As of December 31, 2024 and 2023, ... 69,700 and 79,100 employees, respectively": the count of 2024 is the
    # first, though the noun follows the second; the quote keeps the years so the pairing can be checked, and
    # elides the other year's figure, which would read as a second answer.
    listed = ("As of December 31, 2024 and 2023, our Company had approximately 69,700 and 79,100 employees, "
              "respectively, of which approximately 8,900 and 9,000, respectively, were located in the United States.")
    text = _one_company("How many employees did Gamma Health have at the end of 2024?", listed)
    assert text.startswith("Figure read from prose: **69,700**")
    assert '"As of December 31, 2024 and 2023, our Company had approximately 69,700 […] employees, ' \
           'respectively" [1]' in text and "79,100" not in text
    text = _one_company("How many employees did Gamma Health have at the end of 2023?", listed)
    assert text.startswith("Figure read from prose: **79,100**") and "approximately […] 79,100 employees, " \
        "respectively" in text and "69,700" not in text
    # No year asked: the filing's own (FY2024).
    assert _one_company("How many employees does Gamma Health have?", listed).startswith(
        "Figure read from prose: **69,700**")


def test_counts_listed_for_several_parts_are_not_read_as_the_one_asked():
    # "657, 215 and 353 holders of record of our class B-1, B-2 and C common stock, respectively": which count is
    # which class is the list's order, so no count is picked by the words of its clause (the question's "class"
    # sits in the last one's); the sentence is quoted whole.
    listed = ("As of November 6, 2024, there were 657, 215 and 353 holders of record of our class B-1, B-2 and C "
              "common stock, respectively. Other holders hold in street name.")
    text = _one_company("How many holders of record did Gamma Health's class A common stock have?", listed)
    assert not text.startswith("Figure read from prose") and "657, 215 and 353 holders of record" in text


def test_shares_bought_back_are_shares_repurchased():
    # "Buy back" is the question's phrasing; the filing says "repurchased". Neither word is missing from the answer.
    text = _one_company("How many shares did Gamma Health buy back in fiscal 2024?",
                        "During fiscal 2024, we repurchased 17 million shares of our common stock for $5.1 billion.")
    assert not text.startswith("The indexed filings do not appear to answer") and "17 million shares" in text
    assert "mentions 'back'" not in text


def test_eps_is_earnings_per_share_as_filings_write_it():
    text = _one_company("What was Gamma Health's class B EPS in fiscal 2024?",
                        "In fiscal 2024, diluted earnings per share of class B common stock were $15.45.")
    assert "$15.45" in text and "mentions 'eps'" not in text


def test_with_no_year_asked_the_latest_filing_speaks_first():
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2023},
                             {"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2025}])
    sources = [Citation(number=i + 1, text=f"As of the end of fiscal {year}, we had approximately {count} employees.",
                        ticker="CCC", company="Gamma Health Inc.", form="10-K", fiscal_year=year)
               for i, (year, count) in enumerate([(2023, "26,196"), (2025, "36,000")])]
    question = "How many employees does Gamma Health have?"
    assert "36,000" in _first_quote(extractive_answer(question, sources, plan_question(question, catalog))[0])
    # A year asked is read as asked.
    question = "How many employees did Gamma Health have in fiscal 2023?"
    assert "26,196" in _first_quote(extractive_answer(question, sources, plan_question(question, catalog))[0])


# A key-metrics table with its figures for three column groups (two regions and the whole company), each with
# two years and the change.
_VOLUME = ("| (in billions)\n| U.S. | International | Gamma Pay\n"
           "| Twelve Months Ended June 30, | Twelve Months Ended June 30, | Twelve Months Ended June 30,\n"
           "| 2024 | 2023 | % Change | 2024 | 2023 | % Change | 2024 | 2023 | % Change\n"
           "Total payments volume | $6,400 | $6,000 | 7% | $6,600 | $6,000 | 10% | $13,000 | $12,000 | 8%")


def _gamma_pay(question: str, text: str) -> str:
    catalog = Catalog.build([{"ticker": "GPAY", "company": "Gamma Pay Inc.", "fiscal_year": 2024}])
    sources = [Citation(number=1, text=text, ticker="GPAY", company="Gamma Pay Inc.", form="10-K", fiscal_year=2024)]
    return extractive_answer(question, sources, plan_question(question, catalog))[0]


def test_a_figure_asked_is_read_from_its_years_column_and_not_quoted_beside_the_other_years():
    text = _gamma_pay("How much payments volume did Gamma Pay process in the twelve months to June 30, 2023?", _VOLUME)
    # No region named: the whole company's group, the year asked, and none of the other columns.
    assert "Figure read from the table: **$12,000 billion** for 2023: `Total payments volume`" in text
    assert "column Gamma Pay / Twelve Months Ended June 30, / 2023 [1]" in text
    assert not {"$13,000", "$6,000", "8%"} & set(text.split())
    # A group the question names; the company's own name in the question does not name its group.
    text = _gamma_pay("What was Gamma Pay's international payments volume in 2024?", _VOLUME)
    assert "**$6,600 billion** for 2024" in text and "column International /" in text
    # "The prior fiscal year" counts back from the latest filing, which the table's filing need not be: no figure.
    assert "Figure read" not in _gamma_pay("How much payments volume did Gamma Pay process in the prior fiscal year?",
                                           _VOLUME)
    # A change asked is not the year's amount; a year the table does not print gets no figure.
    assert "Figure read" not in _gamma_pay("How much did Gamma Pay's payments volume grow in 2024?", _VOLUME)
    assert "Figure read" not in _gamma_pay("How much payments volume did Gamma Pay process in 2021?", _VOLUME)
    # A quarter asked: a column headed by its year alone may be the quarter, the year to date or the year.
    assert "Figure read" not in _gamma_pay("How much payments volume did Gamma Pay process in Q2 2024?", _VOLUME)


def test_a_row_under_dates_or_an_unnamed_group_is_quoted_whole():
    # A retailer's fiscal 2024 ends in February 2025: the date's calendar year is not read as the fiscal year,
    # the filing's own year is (see test_a_table_headed_by_period_end_dates_reads_the_fiscal_year_asked).
    dated = ("| (in millions)\n| February 2, 2025 | January 28, 2024\nTotal assets | $96,100 | $76,500")
    text = _gamma_pay("What were Gamma Pay's total assets at the end of fiscal 2024?", dated)
    assert "**$96,100 million** for 2024" in text and "$76,500" not in text
    # A whole-company group headed "Consolidated" rather than by the company's name.
    consolidated = _VOLUME.replace("Gamma Pay\n", "Consolidated\n")
    assert "**$13,000 billion** for 2024" in _gamma_pay(
        "How much payments volume did Gamma Pay process in 2024?", consolidated)
    # Two regions and no whole-company group: the question must name one.
    regions = _VOLUME.replace("Gamma Pay\n", "Europe\n")
    assert "Figure read" not in _gamma_pay("How much payments volume did Gamma Pay process in 2024?", regions)


def test_a_row_repeated_under_each_region_answers_only_for_the_region_named():
    regions = ("| As of December 31, | 2024 | 2023 | (in thousands)\nUnited States and Canada (UCAN)\n"
               "Paid members at end of period | 89,625 | 80,128\nEurope, Middle East, and Africa (EMEA)\n"
               "Paid members at end of period | 101,133 | 88,813")
    # Gamma's members in all: no region's row is the answer, so the rows are quoted as printed.
    text = _one_company("How many paid members did Gamma Health have at the end of 2023?", regions)
    assert "Figure read" not in text and "`Paid members at end of period | 89,625 | 80,128`" in text
    # Named by its words or by the abbreviation printed beside them.
    for region in ("Europe, the Middle East and Africa", "EMEA"):
        text = _one_company(f"How many paid members did Gamma Health have in {region} at the end of 2023?", regions)
        assert "**88,813 thousand** (about 88.8 million) for 2023" in text and "80,128" not in text


def test_a_verb_of_reporting_a_figure_is_no_missing_word():
    # "generate", "post", "book": the filing states the figure, not the verb the question puts to it.
    text = _gamma_pay("How much payment revenue did Gamma Pay generate in 2024?",
                      "Payment revenue was $1,200 million in 2024, up from $1,100 million in 2023.")
    assert "mentions 'generate'" not in text and "$1,200 million" in text


def test_holders_of_record_are_found_in_the_filings_other_words_for_them():
    text = _gamma_pay("How many holders of record did Gamma Pay's common stock have?",
                      "Our common stock trades under GPAY. As of February 21, 2025, we had approximately 842 "
                      "registered shareholders, not including shares held in street name.")
    assert "mentions 'holders'" not in text and "842 registered shareholders" in text
    # Some filers call their holders shareowners ("shareowner accounts of record").
    text = _gamma_pay("How many holders of record did Gamma Pay's common stock have?",
                      "Our common stock trades under GPAY. As of February 21, 2025, there were 176,283 shareowner "
                      "accounts of record.")
    assert "mentions 'holders'" not in text and "176,283 shareowner accounts of record" in text


def test_a_percentage_is_not_scaled_by_the_tables_unit_note():
    table = ("| (in millions, except percentages) | 2024 | 2023\nRevenues | $1,200 | $1,100\n"
             "Medical cost ratio | 85.5% | 83.2%")
    text = _gamma_pay("What was Gamma Pay's medical cost ratio in 2024?", table)
    assert "**85.5%** for 2024: `Medical cost ratio`" in text and "83.2%" not in text


def test_a_rate_per_item_is_read_only_from_a_row_that_is_one():
    table = ("| Fiscal 2024 | Fiscal 2023\nNet sales | $159,514 | $152,669\nSales per retail square foot | $599.92 | $604.74")
    text = _gamma_pay("What were Gamma Pay's net sales per retail square foot in fiscal 2024?", table)
    assert "**$599.92** for 2024: `Sales per retail square foot`" in text and "$604.74" not in text
    only_totals = "| Fiscal 2024 | Fiscal 2023\nNet sales | $159,514 | $152,669"
    assert "Figure read" not in _gamma_pay("What were Gamma Pay's net sales per store in fiscal 2024?", only_totals)
    # A row that is a rate per another item is not the rate asked.
    per_share = "| Fiscal 2024 | Fiscal 2023\nNet sales | $159,514 | $152,669\nDividends per share | $9.00 | $8.36"
    assert "Figure read" not in _gamma_pay("What were Gamma Pay's net sales per store in fiscal 2024?", per_share)


def test_a_total_row_is_named_by_its_tables_title_and_scaled_by_it():
    # A table that titles itself in its header's first cell, with its unit: "Total" is the carloads' total.
    table = ("Revenue Carloads Thousands | 2024 | 2023 | % Change\nBulk | 1,500 | 1,450 | 3%\n"
             "Total | 8,334 | 8,112 | 3%")
    text = _gamma_pay("How many carloads did Gamma Pay handle in 2023?", table)
    assert "**8,112 thousand** (about 8.1 million) for 2023: `Total`, table Revenue Carloads Thousands" in text
    assert "8,334" not in text


_REGIONS = ("| Year Ended December 31, | 2024 | 2023 | (percent of revenues)\n"
            "United States | 49% | 47%\nInternational | 51% | 53%")


def test_the_row_of_a_place_the_question_leaves_out_is_not_its_figure():
    # "From the U.S." is that row's figure; "from outside the U.S." is everything but that row.
    asked_in = _one_company("What percent of Gamma Health's 2024 revenue came from the U.S.?", _REGIONS)
    assert "Figure read from the table: **49%** for 2024: `United States`" in asked_in
    left_out = _one_company("What percent of Gamma Health's 2024 revenue came from outside the U.S.?", _REGIONS)
    assert "Figure read" not in left_out and "**49%**" not in left_out


_PROPERTIES = ("Item 2. Properties\nWe own our corporate headquarters, located in Springfield, Illinois, and our "
               "principal data center. We lease our regional offices in 12 countries.")


def test_the_words_filings_use_for_properties_and_light_verbs_are_not_missing_words():
    # Item 102 of Regulation S-K asks for properties and whether they are owned or leased: a question's "rent"
    # and "sites" are the passage's "lease" and "offices"/"center", and "put into" or "past" are its phrasing.
    text = _one_company("Where is Gamma Health headquartered, and does it own or rent its main sites?", _PROPERTIES)
    assert not text.startswith("The indexed filings do not appear") and "We own our corporate headquarters" in text
    # A question about something the passage never discusses is still refused.
    text = _one_company("What colour are the carpets in Gamma Health's lobby painted?", _PROPERTIES)
    assert text.startswith("The indexed filings do not appear")


_RESERVE_DEVELOPMENT = ("Medical costs in 2024, 2023 and 2022 included favorable medical cost development related to "
                        "prior years of $700 million, $840 million and $410 million, respectively.")


def test_an_amount_listed_with_its_years_answers_with_the_year_asked():
    # A period trap in prose: the amount of the year asked, by its place in the list "respectively" closes.
    text = _one_company("How much favorable medical cost development did Gamma Health book in 2023?",
                        _RESERVE_DEVELOPMENT)
    assert text.startswith("Figure read from prose: **$840 million** for 2023")
    assert "$700 million" not in text and "$410 million" not in text
    # No year asked: the filing's own (FY2024).
    assert _one_company("How much favorable medical cost development did Gamma Health book?",
                        _RESERVE_DEVELOPMENT).startswith("Figure read from prose: **$700 million** for 2024")
    # A year the list does not hold gets no figure; the sentence is quoted whole.
    text = _one_company("How much favorable medical cost development did Gamma Health book in 2021?",
                        _RESERVE_DEVELOPMENT)
    assert not text.startswith("Figure read") and "$700 million, $840 million and $410 million" in text


_RECURRING = ("Care Cloud annual recurring revenue exiting fiscal 2024 was $3.1 billion, up from $2.6 billion at the "
              "end of fiscal 2023.")


def test_an_amount_compared_with_another_years_answers_with_the_year_asked_alone():
    # A period trap in prose: "was $X, up from $Y at the end of fiscal 2023". Quoted whole, the prior year's
    # figure reads as a second answer.
    text = _one_company("gamma care cloud annual recurring revenue exiting fy24?", _RECURRING)
    assert text.startswith("Figure read from prose: **$3.1 billion** for 2024")
    assert '"Care Cloud annual recurring revenue exiting fiscal 2024 was $3.1 billion" [1]' in text
    assert "$2.6 billion" not in text
    # The figure the comparison sets beside it is the one asked for the other year: no figure is guessed.
    text = _one_company("gamma care cloud annual recurring revenue exiting fy23?", _RECURRING)
    assert not text.startswith("Figure read") and "$2.6 billion" in text
    # A question about why is answered with the sentence, not one of its figures.
    text = _one_company("Why did Care Cloud annual recurring revenue rise in fiscal 2024?", _RECURRING)
    assert not text.startswith("Figure read")
    # The amount a figure changed by is a change, not the level, unless a change is asked.
    moved = ("Care Cloud revenue of $3.18 billion during fiscal 2024 increased by $483 million, or 18%, from $2.70 "
             "billion in fiscal 2023.")
    text = _one_company("gamma care cloud revenue fy2024", moved)
    assert text.startswith("Figure read from prose: **$3.18 billion** for 2024")
    assert '"Care Cloud revenue of $3.18 billion during fiscal 2024" [1]' in text and "$483 million" not in text
    text = _one_company("By how much did Gamma's Care Cloud revenue increase in fiscal 2024?", moved)
    assert not text.startswith("Figure read") and "$483 million" in text
    # A year named further on belongs to something else than the figure before it: both amounts stay.
    program = ("During fiscal 2024 the company spent $4.0 billion under the $15.0 billion repurchase program its "
               "board authorized in 2021.")
    text = _one_company("how much did gamma spend on share repurchases in fiscal 2024?", program)
    assert not text.startswith("Figure read") and "$15.0 billion" in text


_REGION_TABLES = (
    "Latin America (LATAM)\n| As of/Year Ended December 31,\n| 2024 | 2023 | 2022\n| (in thousands)\n"
    "Paid memberships at end of period | 53,327 | 45,997 | 41,699",
    "United States and Canada (UCAN)\n| As of/Year Ended December 31, | Change\n| 2024 | 2023 | 2022 | 2024 vs. 2023\n"
    "| (in thousands, except percentages)\nPaid memberships at end of period | 89,625 | 80,128 | 74,296 | 9,497 | 12%",
)


def test_a_tables_title_names_the_part_its_rows_are_of():
    # One region's table per passage, each titled above its column header and printing the same row label: the
    # region the question names picks the table, whichever passage retrieval ranked first. The change columns
    # ("2024 vs. 2023" over an amount and a percentage) do not shift the year columns before them.
    text = _one_company("How many paid memberships did Gamma have in the U.S. and Canada at the end of 2024?",
                        *_REGION_TABLES)
    assert text.startswith("Figure read from the table: **89,625 thousand** (about 89.6 million) for 2024")
    assert "[2]" in text and "53,327" not in text
    text = _one_company("How many paid memberships did Gamma have in Latin America at the end of 2023?",
                        *_REGION_TABLES)
    assert text.startswith("Figure read from the table: **45,997 thousand**")


_ABROAD = ("The risks described below are not exhaustive and could affect the business, results of operations and "
           "financial condition. The Company has international operations with sales outside the U.S. representing "
           "a majority of its net sales, and its operations outside the U.S. face currency and trade risks.")


def test_a_place_a_prose_question_asks_about_outside_of_is_its_topic():
    # No figure is asked: "outside the U.S." is what the passage must speak of, not a part left out of a figure.
    text = _one_company("What risks does Gamma Health face from its operations outside the U.S.?", _ABROAD)
    assert "sales outside the U.S." in _first_quote(text)


# A revenue table that prints the gross lines, the incentives taken off them and the net figure.
_NET_REVENUE = ("| For the Years Ended June 30, | 2024 | 2023 | (in millions)\n"
                "Service revenue | 16,114 | 15,000\nClient incentives | (13,764) | (12,297)\nNet revenue | 35,926 | 32,653")


def test_the_row_of_an_adjustment_the_figure_is_asked_before_is_not_read_as_the_figure():
    asked = "What was Gamma Pay's gross revenue in 2024, before client incentives are deducted?"
    text = _gamma_pay(asked, _NET_REVENUE)
    assert "Figure read" not in text and "**(13,764)**" not in text
    # Asked for the incentives themselves, their row answers.
    text = _gamma_pay("How much did Gamma Pay pay in client incentives in 2024?", _NET_REVENUE)
    assert "Figure read from the table: **(13,764) million** for 2024: `Client incentives`" in text


def test_a_headcount_stated_as_people_employed_leads_over_a_share_of_employees():
    survey = "In fiscal 2024, 81% of our employees participated in our most recent engagement survey."
    count = "As of November 29, 2024, we employed 30,709 people, of which 50% were in the United States."
    assert "30,709" in _first_quote(_one_company("How many employees does Gamma Health have?", survey, count))


def test_a_passage_holding_a_name_the_question_writes_is_on_topic_however_the_rest_is_put():
    fee = ("In December 2023 we entered into a mutual termination agreement with Zetafin to terminate the proposed "
           "merger, and we paid Zetafin a termination fee of $1 billion.")
    other = "Our effective tax rate for fiscal 2024 remained relatively flat compared to fiscal 2023."
    text = _one_company("How big was the hit Gamma Health took for walking away from the Zetafin deal?", other, fee)
    assert "do not appear to answer" not in text and "$1 billion" in _first_quote(text)
    # Without the name, a question none of whose words a passage holds is still refused.
    assert "do not appear to answer" in _one_company("What colour is the lobby painted?", other, fee)


def test_analysts_words_for_comparable_sales_and_an_employer_are_the_filings_words():
    comps = "All of our other merchandising departments posted negative comparable sales during fiscal 2024."
    text = _one_company("What was behind Gamma Health's negative comps in fiscal 2024?", comps)
    assert "do not appear to answer" not in text and "comparable sales" in _first_quote(text)
    staff = "As of December 31, 2024, we employed approximately 36,000 employees in 38 countries."
    text = _one_company("How big an employer is Gamma Health by headcount, and is it bigger than last year?", staff)
    assert "do not appear to answer" not in text


# A balance sheet as filings print it: the company's name and the statement's title over the column header, the
# unit note in brackets, then rows with a bracket of counts after a dash.
_BALANCE_SHEET = ("GAMMA HEALTH INC. AND SUBSIDIARIES\nCONSOLIDATED BALANCE SHEETS\n(In millions except par value)\n"
                  "December 31, | 2024 | 2023\n"
                  "Treasury stock, at cost — 2,738 and 2,732 shares, respectively | (55,916) | (54,535)\n"
                  "Total equity | 26,372 | 27,480")


def test_lines_above_a_tables_header_are_its_titles_not_a_group_of_its_rows():
    # Typed as terms with one year, the question asks that year's figure; the titles over the header name no part
    # of the company, so the row is read for the year asked, without the other year's figure beside it.
    text = _one_company("Gamma Health treasury stock at cost, year-end 2024", _BALANCE_SHEET)
    assert text.startswith("Figure read from the table: **(55,916) million** for 2024")
    assert "54,535" not in text.split("[1]")[0]
    units = quotable_units(Citation(number=1, text=_BALANCE_SHEET))
    assert {u.group for u in units if u.kind == "row"} == {""}


def test_a_question_of_why_asks_for_no_figure():
    assert not _one_company("Why did Gamma Health's treasury stock grow in 2024?",
                            _BALANCE_SHEET).startswith("Figure read")


_EPS_TABLE = ("| Fiscal | Fiscal\n| 2024 | 2023\n"
              "Non-GAAP diluted earnings per share | $10.05 | $8.77")


def test_a_non_gaap_row_is_no_figure_for_a_gaap_question():
    assert not _one_company("gamma health gaap diluted eps fy2024", _EPS_TABLE).startswith("Figure read")
    both = _EPS_TABLE + "\nDiluted earnings per share | $9.73 | $8.28"
    assert _one_company("gamma health gaap diluted eps fy2024", both).startswith(
        "Figure read from the table: **$9.73** for 2024")


def test_a_size_beside_a_count_is_no_count_of_what_is_asked():
    stores = ("Our stores average approximately 104,000 square feet of enclosed space, with approximately 24,000 "
              "additional square feet of outside garden area.")
    text = _one_company("How many Gamma Health stores were outside the US at the end of 2024?", stores)
    assert not text.startswith("Figure read from prose")


def test_a_sentence_about_another_class_of_stock_comes_after_the_class_asked():
    holders = ("There were approximately 214 holders of record of our non-voting Class B common stock as of "
               "February 7, 2025. At February 7, 2025, we had 67 stockholders of record for our Class A common "
               "stock.")
    text = _one_company("How many record holders does Gamma Health's class A common stock have?", holders)
    assert "67 stockholders of record" in _first_quote(text)
    text = _one_company("How many record holders does Gamma Health's class B common stock have?", holders)
    assert "214 holders of record" in _first_quote(text)


class _Chunk:
    def __init__(self, ticker: str, text: str):
        self.metadata, self.text = {"ticker": ticker}, text


def test_the_word_that_named_the_company_and_an_earnout_are_no_missing_words():
    from rag.answer.terms import coverage_gap

    filings = [{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2024},
               {"ticker": "DDD", "company": "Delta Foods Inc.", "fiscal_year": 2024}]
    # "Zest" is Gamma Health's brand: its filings alone write it, always capitalised.
    catalog = Catalog.build(filings, [_Chunk("CCC", "Zest drinks sold well. " * 16), _Chunk("DDD", "Delta " * 30)])
    question = "zest earnout remeasurement charge 2024"
    plan = plan_question(question, catalog)
    assert plan.tickers == ["CCC"]
    passage = Citation(number=1, ticker="CCC", company="Gamma Health Inc.", fiscal_year=2024, text=(
        "These charges consisted of $3,109 million related to the remeasurement of our contingent consideration "
        "liability to fair value."))
    assert coverage_gap(question, [passage], plan) == []
    assert coverage_gap("zest earnout remeasurement charge for the widget plant", [passage],
                        plan_question("zest earnout remeasurement charge for the widget plant", catalog)) == [
        "widget", "plant"]


_SALES_DATA = ("Selected financial and sales data:\n| Fiscal | Fiscal | Fiscal\n| 2024 | 2023 | 2022\n"
               "Comparable sales (% change) | (1.8)% | (3.2)% | 3.1%\nNet sales | 159,514 | 152,669 | 157,403")


def test_a_row_that_prints_the_change_answers_a_change_asked_for_its_year():
    text = _one_company("Gamma Health comparable sales change for fiscal 2023?", _SALES_DATA)
    assert text.startswith("Figure read from the table: **(3.2)%** for 2023")
    # A change in a row of amounts is computed from two years, never read from one cell.
    assert not _one_company("How did Gamma Health's net sales change in fiscal 2023?", _SALES_DATA).startswith(
        "Figure read")


def test_a_figure_is_read_for_one_company_only():
    # No company named, and passages of two companies: one company's figure would read as the answer for all.
    sources = [Citation(number=1, text=_SALES_DATA, ticker="CCC", company="Gamma Health Inc.", form="10-K",
                        fiscal_year=2024),
               Citation(number=2, text=_SALES_DATA.replace("159,514", "88,000"), ticker="DDD",
                        company="Delta Foods Inc.", form="10-K", fiscal_year=2024)]
    question = "net sales fiscal 2024"
    assert not extractive_answer(question, sources, QuestionPlan(question=question, fiscal_years=[2024]))[0].startswith(
        "Figure read")
    # The passages of one company (chosen in the filters): its figure.
    assert extractive_answer(question, sources[:1], QuestionPlan(question=question, fiscal_years=[2024]))[0].startswith(
        "Figure read from the table: **159,514** for 2024")


# A segment's revenue by offering, as filers print it in MD&A and the segment note, with no member tagged for the
# offerings.
_OFFERINGS = ("Revenue by major offerings in our Care Services segment were as follows:\n\n"
              "(dollars in millions) | 2024 | 2023 | % Change\n"
              "Clinics | $12,682 | $11,517 | 10%\n"
              "Home Visits | 3,182 | 2,699 | 18%\n"
              "Total Care Services revenue | $15,864 | $14,216 | 12%")


def test_a_share_of_an_untagged_part_is_computed_from_its_tables_rows():
    text = _one_company("What % of Gamma Health's Care Services revenue came from Home Visits in 2024?", _OFFERINGS)
    line = next(ln for ln in text.splitlines() if ln.startswith("Share computed from the table"))
    # 3,182 / 15,864, both from the 2024 column, and the inputs named by their rows.
    assert "**20.06%** for 2024" in line and "`Home Visits` 3,182" in line
    assert "`Total Care Services revenue` $15,864 [1]" in line
    # The other year asked reads the other column.
    assert "**18.99%** for 2023" in _one_company(
        "What share of Gamma Health's Care Services revenue came from Home Visits in 2023?", _OFFERINGS)
    # The company's revenue is no segment's total: no share from this table, but one from a table that totals it.
    assert "Share computed" not in _one_company(
        "What % of Gamma Health's revenue came from Home Visits in fiscal 2024?", _OFFERINGS)
    assert "**20.06%** for 2024" in _one_company(
        "What % of Gamma Health's revenue came from Home Visits in fiscal 2024?",
        _OFFERINGS.replace("Total Care Services revenue", "Total revenue"))
    # A part the table has no row for gets none either.
    assert "Share computed" not in _one_company(
        "What % of Gamma Health's Care Services revenue came from telehealth in 2024?", _OFFERINGS)


def test_a_regions_table_gives_no_share_of_the_companys_whole():
    # A region's table by channel prints its own "TOTAL REVENUES": a share of it is no share of the company's.
    region = ("WESTERN REGION\n(Dollars in millions) | 2024 | 2023\n"
              "Home Visits | 3,182 | 2,699\nClinics | 9,000 | 8,000\nTOTAL REVENUES | $12,182 | $10,699")
    question = "What % of Gamma Health's total revenues came from Home Visits in 2024?"
    assert "Share computed" not in _one_company(question, region)
    # Captioned by what it breaks down rather than by a part, the table totals the company's revenues.
    assert "**26.12%** for 2024" in _one_company(question, region.replace("WESTERN REGION", "REVENUES BY CHANNEL"))


def test_a_table_headed_by_period_end_dates_reads_the_fiscal_year_asked():
    # A fiscal year that does not end with the calendar's is headed by its end date: in a fiscal 2024 10-K the
    # latest date is fiscal 2024 (ending in February 2025), each column after it a year earlier.
    table = ("| Year Ended\n| February 2, 2025 | January 28, 2024 | January 29, 2023\n| (In millions)\n"
             "Region North revenue | 17,108 | 10,306 | 5,785")
    text = _one_company("How much revenue did Gamma Health earn in Region North in fiscal 2024?", table)
    assert "Figure read from the table: **17,108 million** for 2024" in text and "10,306" not in text
    text = _one_company("How much revenue did Gamma Health earn in Region North in fiscal 2023?", table)
    assert "**10,306 million** for 2023" in text
    # Dates that are not the filing's own year first, one a year, name no fiscal year: the row is quoted whole.
    skipped = table.replace("February 2, 2025 | January 28, 2024", "February 2, 2022 | January 28, 2021")
    text = _one_company("How much revenue did Gamma Health earn in Region North in fiscal 2024?", skipped)
    assert "Figure read from the table" not in text


def test_a_figure_asked_with_a_verb_of_earning_is_read_from_its_row():
    # "What did it bring in from ...": an amount is asked, so the row that prints one outranks a sentence that
    # only shares its words, and the year's cell is stated alone.
    passage = ("These fees are primarily driven by the cross-border dollar volume of activity.\n\n"
               "| ($ in millions)\n| 2024 | 2023 | 2022\nCross-border fees | 10,181 | 8,409 | 6,597")
    for question in ("What did Gamma Pay bring in from cross-border fees in 2024?",
                     "What did Gamma Pay collect in cross-border fees in 2024?"):
        text = _gamma_pay(question, passage)
        assert "Figure read from the table: **10,181 million** for 2024" in text and "8,409" not in text


def test_a_count_asked_of_a_part_reads_the_row_of_a_table_of_that_count():
    # "How many associates in Canada": the row of a table headed "Number of Associates" beats the sentence that
    # counts every associate.
    sentence = "At the end of fiscal 2024, we employed approximately 470,100 associates."
    table = ("Geographic Location | Number of Associates | % of Total Workforce\nUnited States | 419,600 | 89.3%\n"
             "Canada | 32,000 | 6.8%")
    text = _one_company("How many associates did Gamma Health have in Canada at the end of fiscal 2024?", table,
                        sentence)
    assert "Figure read from the table: **32,000** for 2024: `Canada`, table Geographic Location, column Number of " \
        "Associates [1]" in text and "470,100" not in text
    # No head names what is counted: the row is quoted as printed.
    text = _one_company("How many associates did Gamma Health have in Canada at the end of fiscal 2024?",
                        table.replace("Number of Associates", "Headcount total"), sentence)
    assert "Figure read" not in text and "`Canada | 32,000 | 6.8%`" in text


def test_an_amount_under_in_thousands_is_stated_with_its_scale_word_and_whole():
    # A bare figure under "(in thousands)" reads as millions to anyone who skips the note: the scale goes beside it.
    table = ("| (in thousands)\n| Year ended December 31,\n| 2024 | 2023\n"
             "Region North streaming revenues | $12,387,035 | $10,556,487")
    text = _one_company("Gamma Health Region North streaming revenues in 2024?", table)
    assert "**$12,387,035 thousand** (about $12.39 billion) for 2024" in text
    assert "10,556,487" not in text


def test_a_products_row_below_a_sentence_giving_only_its_share_answers_how_much():
    # The prose that names the product best states its share of revenue, not its sales: the row ranked after it does.
    prose = ("Sales of the Company's largest product, Zentrix, accounted for approximately 13.1% of the Company's "
             "total revenues for fiscal 2024.")
    table = "| (in millions)\n| 2024 | 2023\nZentrix | 11,670 | 9,744"
    text = _one_company("Gamma Health Zentrix sales 2024", prose, table)
    assert text.startswith("Figure read from the table: **11,670 million** for 2024: `Zentrix`")
    assert "9,744" not in text
    # A sentence that does state an amount keeps its place: the row is not read over it.
    stated = "Zentrix sales were $11.7 billion in fiscal 2024, up 19.8%."
    assert not _one_company("Gamma Health Zentrix sales 2024", stated, table).startswith("Figure read from the table")


def test_a_year_end_balance_is_read_from_a_roll_forward_tables_closing_column():
    # Schedule II (valuation and qualifying accounts): rows are years, columns run from the opening balance to the
    # closing one. The opening balance is the prior year's close, the distractor quoting the row would state.
    table = ("(Dollars in millions)\n"
             "Description | Balance at Beginning of Period | Additions | Write-offs | Balance at End of Period\n"
             "Allowance For Doubtful Accounts\n2024 | $658 | $122 | $(199) | $581\n2023 | $631 | $201 | $(174) | $658\n"
             "Allowance For Inventory Losses\n2024 | $310 | $40 | $(50) | $300\n2023 | $290 | $45 | $(25) | $310")
    text = _one_company("What was Gamma Health's year-end 2024 balance of its allowance for doubtful accounts?", table)
    assert text.startswith("Figure read from the table: **$581") and "at the end of 2024" in text
    assert "$658" not in text.split("[1]")[0]
    text = _one_company("Gamma Health allowance for inventory losses balance at the end of 2023", table)
    assert text.startswith("Figure read from the table: **$310") and "at the end of 2023" in text
    # What was added in the year is no balance: the row is not read as one.
    assert not _one_company("How much was added to Gamma Health's allowance for inventory losses in 2024?",
                            table).startswith("Figure read from the table")


def test_a_part_the_question_names_that_the_row_does_not_print_is_not_read_from_the_whole():
    # "<product> net revenues" must not be answered with the company's net revenues row.
    table = ("Worldwide net revenues fell as Zentrix faced competition.\n| (in millions)\n| 2024 | 2023\n"
             "Net revenues | 56,334 | 54,318\nCost of products sold | 16,904 | 20,415")
    text = _one_company("What were Gamma Health's total worldwide Zentrix net revenues in 2024?", table)
    assert not text.startswith("Figure read from the table") and "56,334" in text
    # The part printed as the row's label, or as its group's heading, is read.
    parts = "| (in millions)\n| 2024 | 2023\nZentrix\n| Net revenues | 8,993 | 14,404"
    text = _one_company("What were Gamma Health's total worldwide Zentrix net revenues in 2024?", parts)
    assert "Figure read from the table: **8,993 million** for 2024: `Net revenues`, under Zentrix" in text


def test_a_part_under_its_statement_lines_caption_is_read_by_its_own_label():
    # "Net Sales:" heads the rows that make it up: a question naming a row's label asks that part's figure, with
    # the amount asked as what the company made. A caption of another figure than the one asked is no match.
    table = ("| Year Ended December 31,\n| 2023 | 2024\n| (in millions)\nNet Sales:\n"
             "Advertising services (4) | 46,906 | 56,214\nSubscription services | 40,209 | 44,374\n"
             "Operating expenses:\nFulfillment | 90,619 | 98,505")
    text = _one_company("How much did Gamma Health make from advertising services in 2024?", table)
    assert text.startswith("Figure read from the table: **56,214 million** for 2024: `Advertising services (4)`")
    region = ("| Year Ended December 31,\n| 2023 | 2024\n| (in millions)\nNet sales:\nNorth Region | 352,828 | 387,497\n"
              "Operating income:\nNorth Region | 14,877 | 24,967")
    text = _one_company("What was Gamma Health's North Region operating income in 2024?", region)
    assert text.startswith("Figure read from the table: **24,967 million** for 2024: `North Region`, under "
                           "Operating income") and "387,497 million" not in text


def test_a_row_labelled_as_a_percentage_is_read_as_one():
    table = ("| 2024 | 2023 | 2022 | % Change 2024 v 2023 | % Change 2023 v 2022\n"
             "Operating ratio (%) | 59.9 | 62.3 | 60.1 | (2.4) | pts | 2.2 | pts")
    text = _one_company("Gamma Health operating ratio 2024?", table)
    assert text.startswith("Figure read from the table: **59.9%** for 2024: `Operating ratio (%)`")
    assert "62.3" not in text.split("[1]")[0]


def test_a_sentences_one_count_is_read_only_when_it_counts_the_thing_asked():
    # The best sentence for "holders of record" speaks of the common stock and states one count, of shares: it is
    # not the number of holders. A sentence whose one count is of the thing asked gives it.
    from rag.answer.extractive import _count_asked
    from rag.answer.quotable import QuotableUnit
    from rag.numbers import parse_numbers

    source = Citation(number=1, text="", ticker="AAA", company="Alpha Payments Inc.", fiscal_year=2024)
    counted = ["holders", "of", "record"]
    for text, expected in (
            ("In February 2019, the Board authorized a plan to purchase up to 150 million shares of our common "
             "stock.", None),
            ("As of February 18, 2025, there were 2,342 holders of record of our common stock.", "2,342")):
        unit = QuotableUnit(source, "sentence", text, 0)
        figures = [n for n in parse_numbers(text) if not n.money and not n.pct and n.raw not in ("2019", "2025",
                                                                                                   "18")]
        found = _count_asked(unit, figures, figures, counted, ["holder", "record", "common", "stock"])
        assert (found.raw if found else None) == expected, text


def test_a_figure_listed_for_one_of_several_parts_is_never_compared_as_the_count():
    # "657, 215 and 353 holders of record of our class B-1, B-2 and C stock, respectively": each figure is one
    # class's; the last is not the company's count of holders, nor its class A count.
    texts = ("As of November 6, 2024, there were 657, 215 and 353 holders of record of our class B-1, B-2 and C "
             "common stock, respectively.", "At February 7, 2025, we had 67 stockholders of record for our Class A "
             "common stock.")
    text = _two_companies("Who has more class A holders of record, Alpha Payments or Beta Networks, and by how many?",
                          texts)
    assert "Comparison" not in text and "states the larger, 353" not in text


def test_a_model_number_is_no_count_of_the_things_asked():
    # "the 767 commercial airplane program", "the 767 factory": a model's designation, with no plural noun after
    # it, counts no airplanes delivered, whichever of the question's words its clause holds.
    from rag.answer.extractive import _count_asked
    from rag.answer.quotable import QuotableUnit
    from rag.numbers import parse_numbers

    text = ("The tanker is a derivative of the 767 commercial airplane program with the majority of the costs being "
            "incurred in the 767 factory and the remaining costs in the military finishing and delivery centers.")
    unit = QuotableUnit(Citation(number=1, text=text, ticker="AAA", fiscal_year=2024), "sentence", text, 0)
    figures = parse_numbers(text)
    assert _count_asked(unit, figures, figures, ["commercial", "airplanes"], ["deliveri", "commerci"]) is None
    # Counted in the plural, the same number is a count.
    text = "We delivered 348 commercial airplanes in 2024, and 528 in 2023."
    unit = QuotableUnit(Citation(number=1, text=text, ticker="AAA", fiscal_year=2024), "sentence", text, 0)
    figures = [n for n in parse_numbers(text) if n.raw in ("348", "528")]
    assert _count_asked(unit, figures, figures[:1], ["commercial", "airplanes"], []).raw == "348"


def test_a_count_placed_in_one_place_the_question_does_not_name_is_that_places():
    from rag.answer.extractive import _placed_elsewhere
    from rag.numbers import parse_numbers

    def placed(text: str, question: str) -> bool:
        figure = next(n for n in parse_numbers(text) if n.raw in ("4,605", "2,347"))
        return _placed_elsewhere(text, figure, question)

    one = "Our largest segment operates 4,605 stores in the U.S., including in all 50 states and Puerto Rico."
    assert placed(one, "How many stores does Alpha operate?")
    assert not placed(one, "How many stores does Alpha operate in the U.S.?")
    # Several places listed count them all; a date after "in" is no place.
    assert not placed("We operated 2,347 stores located throughout the U.S. (including Puerto Rico), Canada, and "
                      "Mexico.", "How many stores does Alpha operate?")
    assert not placed("We operated 2,347 stores in December 2024.", "How many stores does Alpha operate?")


def test_a_count_asked_leads_with_the_sentence_that_counts_over_one_of_amounts():
    # "Total headcount": a sentence of amounts ("total SBC expense was $22.8 billion") shares the word "total" and
    # the year, and states no count; the sentence that counts the employees is quoted first.
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Payments Inc.", "fiscal_year": 2024}])
    texts = ("For the years ended December 31, 2023 and 2024, total SBC expense was $22.1 billion and $22.8 billion, "
             "including amounts associated with awards we expect to settle in Alpha stock.",
             "As of December 31, 2024, Alpha had 183,323 employees.")
    sources = [Citation(number=i + 1, text=t, ticker="AAA", company="Alpha Payments Inc.", fiscal_year=2024)
               for i, t in enumerate(texts)]
    question = "What was Alpha Payments' total headcount at the end of 2024?"
    text = extractive_answer(question, sources, plan_question(question, catalog))[0]
    assert "183,323 employees" in text
    assert "SBC" not in text or text.index("183,323 employees") < text.index("SBC")


def test_holders_of_record_are_compared_not_the_street_name_holders_beside_them():
    texts = ("At March 5, 2025, there were approximately 101,000 holders of record of our common stock and "
             "approximately 5,678,000 additional \"street name\" holders whose shares are held of record by banks "
             "and brokers.",
             "As of February 18, 2025, there were 176,283 shareowner accounts of record.")
    text = _two_companies("Which had more holders of record, Alpha Payments or Beta Networks?", texts)
    line = next(ln for ln in text.splitlines() if ln.startswith("Comparison"))
    assert "Beta Networks Inc. states the larger, 176,283 [2], against 101,000 for Alpha Payments Inc. [1]" in line
    assert "5,678,000" not in line
    # Asked of one company, the count of record too, not the street name holders.
    one = _gamma_pay("How many holders of record did Gamma Pay have?", texts[0])
    assert "**101,000**" in one and "**5,678,000**" not in one


def _over_years(question: str, *passages: tuple[int, str]) -> str:
    """The extractive answer over passages of one company's 10-Ks of the years given, numbered in order."""
    filings = [{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": year} for year, _ in passages]
    sources = [Citation(number=i + 1, text=text, ticker="CCC", company="Gamma Health Inc.", form="10-K",
                        fiscal_year=year) for i, (year, text) in enumerate(passages)]
    return extractive_answer(question, sources, plan_question(question, Catalog.build(filings)))[0]


def test_a_change_over_years_of_an_untagged_table_line_reads_each_years_own_filing():
    liquidity = "Cash, cash equivalents and short-term investments"
    older = (2023, f"| January 31, 2023 | January 31, 2022\n| (in millions)\n{liquidity} | $10,250 | $12,400")
    newer = (2025, f"| January 31, 2025 | January 31, 2024\n| (in millions)\n{liquidity} | $25,500 | $18,000")
    text = _over_years("How much did Gamma Health's cash, cash equivalents and short-term investments grow from "
                       "fiscal 2023 to fiscal 2025?", older, newer)
    line = next(ln for ln in text.splitlines() if ln.startswith("Change read from the tables"))
    assert "**$25,500 million** for 2025 [2], against **$10,250 million** for 2023 [1]" in line
    assert "a change of +$15,250 million (+148.8%)" in line
    # A line that names more than the question does ("restricted cash") is another figure: no change is computed.
    text = _over_years("How much did Gamma Health's cash grow from fiscal 2023 to fiscal 2025?", older, newer)
    assert "Change read from the tables" not in text


def _quarterly(question: str, text: str) -> str:
    """The extractive answer over one passage of a company's Q2 FY2025 10-Q."""
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2025, "form": "10-Q",
                              "fiscal_period": "Q2"}])
    source = Citation(number=1, text=text, ticker="CCC", company="Gamma Health Inc.", form="10-Q", fiscal_year=2025,
                      fiscal_period="Q2")
    return extractive_answer(question, [source], plan_question(question, catalog))[0]


def test_a_quarter_is_read_from_the_column_group_whose_head_names_its_months():
    # A 10-Q's statement: the quarter and the year to date side by side, each with the prior year's column.
    table = ("| Three Months Ended | Six Months Ended\n"
             "(in thousands) | June 30, 2025 | June 30, 2024 | June 30, 2025 | June 30, 2024\n"
             "Operating income | 1,827,183 | 1,578,283 | 3,541,500 | 3,549,909\n"
             "Net income | 1,487,610 | 1,440,951 | 2,792,730 | 3,038,398")
    quarter = _quarterly("What was Gamma Health's operating income in Q2 fiscal 2025?", table)
    assert "**1,827,183 thousand**" in quarter and "for Q2 FY2025" in quarter
    assert "column Three Months Ended / June 30, 2025 [1]" in quarter
    # The half year reads the six-month group; the same quarter a year earlier, the group's prior-year column.
    assert "**2,792,730 thousand**" in _quarterly("What was Gamma Health's net income in the first half of fiscal "
                                                 "2025?", table)
    assert "**1,578,283 thousand**" in _quarterly("What was Gamma Health's operating income in Q2 fiscal 2024?",
                                                 table)
    # Heads that do not say the months: the row is quoted whole, no column is guessed.
    unnamed = table.replace("Three Months Ended | Six Months Ended", "Quarter | Year to date")
    assert "Figure read from the table" not in _quarterly(
        "What was Gamma Health's operating income in Q2 fiscal 2025?", unnamed)
    # A count asked for the quarter, with no column for it, is quoted whole too.
    members = unnamed + "\nMembers at end of period | 89,625 | 80,128 | 89,625 | 80,128"
    assert "Figure read from the table" not in _quarterly("How many members did Gamma Health have in Q2 fiscal 2025?",
                                                          members)


def test_a_period_is_read_from_heads_that_each_give_their_own_length_and_date():
    # A PDF's statement: the spanning heads are set before each column's date, one head per column, and the net
    # income follows a group of rows whose own total closed it.
    table = ("(in millions) | For the Three Months Ended June 30, 2025 | For the Three Months Ended June 30, 2024 | "
             "For the Six Months Ended June 30, 2025 | For the Six Months Ended June 30, 2024\n"
             "Other income (expense):\n"
             "Interest expense | (90) | (80) | (175) | (160)\n"
             "Total other income (expense) | (70) | (65) | (140) | (120)\n"
             "Net income attributable to common shareholders | 310 | 250 | 520 | 430")
    half = _quarterly("What was Gamma Health's net income attributable to common shareholders for the six months "
                      "ended June 30, 2025?", table)
    assert "**520 million**" in half and "For the Six Months Ended June 30, 2025" in half
    assert "under Other income" not in half  # the statement's own line, not one of the group's
    assert "**250 million**" in _quarterly("What was Gamma Health's net income attributable to common shareholders "
                                           "in Q2 fiscal 2024?", table)
    # Still a part of the group: the group's own lines keep its heading.
    assert "under Other income (expense)" in _quarterly("What was Gamma Health's interest expense in Q2 fiscal "
                                                        "2025?", table)


def test_a_part_is_read_from_the_rows_of_the_period_group_that_ends_with_the_filing():
    # Columns are segments, row groups are periods: the group must name the months asked and end on the filing's
    # own period end (a year before it for the prior year).
    heads = "(in millions) | North | South | Total\n"
    rows = "Segment net sales | $1,100 | $900 | $2,000\nSegment net income | $140 | $120 | $260"
    question = "What were the segment net sales of Gamma Health's South segment in Q2 fiscal 2025?"
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2025, "form": "10-Q",
                              "fiscal_period": "Q2"}])

    def answer(group: str, period_end: str | None = "2025-06-30", asked: str = question) -> str:
        source = Citation(number=1, text=f"{heads}{group}\n{rows}", ticker="CCC", company="Gamma Health Inc.",
                          form="10-Q", fiscal_year=2025, fiscal_period="Q2", period_end=period_end)
        return extractive_answer(asked, [source], plan_question(asked, catalog))[0]

    this_quarter = answer("Three months ended June 30, 2025")
    assert "**$900 million**" in this_quarter and "under Three months ended June 30, 2025, column South" in this_quarter
    # The prior year's group, a year-to-date group, or no recorded period end: no column is read.
    for group, end in (("Three months ended June 30, 2024", "2025-06-30"), ("Six months ended June 30, 2025",
                                                                             "2025-06-30"),
                       ("Three months ended June 30, 2025", None)):
        assert "Figure read from the table" not in answer(group, end)
    assert "**$900 million**" in answer("Three months ended June 30, 2024", asked=question.replace("2025", "2024"))
    # The period said once over every column instead of as a group heading.
    spanning = Citation(number=1, text="| As of or for the Three Months Ended June 30, 2025\n" + heads + rows,
                        ticker="CCC", company="Gamma Health Inc.", form="10-Q", fiscal_year=2025, fiscal_period="Q2",
                        period_end="2025-06-30")
    assert "**$900 million**" in extractive_answer(question, [spanning], plan_question(question, catalog))[0]


def test_a_part_named_by_the_sentence_that_introduces_the_table_is_read_from_it():
    table = ("| For the Three Months Ended June 30, 2025 | For the Three Months Ended June 30, 2024\n"
             "(In millions)\nOperating revenues | $1,005 | $865\nOperation and maintenance | 345 | 321")
    lead = "Presented in the table below is financial information for the Northern Utilities segment:\n"
    question = "What were the operating revenues of Gamma Health's Northern Utilities segment in Q2 fiscal 2025?"
    assert "**$1,005 million**" in _quarterly(question, lead + table)
    # Without the sentence, nothing says the table is that segment's: the passage is quoted instead.
    assert "Figure read from the table" not in _quarterly(question, table)


def test_a_measured_quantity_asked_leads_with_the_sentence_that_states_it():
    # "What was its payments volume": a volume is a figure, so the sentence that states it comes before one that
    # only names the volume among the causes of a change.
    text = _one_company(
        "What was Gamma Health's payments volume in fiscal 2024?",
        "Net revenue increased in fiscal 2024 over the prior year primarily due to growth in nominal payments volume "
        "and processed transactions, partially offset by higher client incentives.",
        "During fiscal 2024, Gamma Health's total payments and cash volume were $16 trillion across 4.6 billion "
        "credentials.")
    assert "$16 trillion" in _first_quote(text)


def test_a_row_naming_the_same_head_noun_with_other_words_is_not_the_figure_asked():
    # "Interest income" asked, and the statement prints "Net income": one head noun, different words before it, so
    # the row is another line, and no figure is read from it. The row that is asked for still is.
    statement = ("CONSOLIDATED STATEMENTS OF OPERATIONS (in millions)\n| Years ended | 2024 | 2023\n"
                 "Operating income | 123,216 | 114,301\nNet income | 93,736 | 96,995")
    text = _one_company("What was Gamma Health's interest income in fiscal 2024?", statement)
    assert "Figure read from the table" not in text
    assert "**123,216 million** for 2024" in _one_company(
        "What was Gamma Health's operating income in fiscal 2024?", statement)
    # An income earned "on" what the question names is not it.
    income = ("Investment income (in millions)\n| Years ended | 2024 | 2023\n"
              "Interest and dividend income on cash and investments | 992 | 745")
    assert "Figure read from the table" not in _one_company(
        "What were Gamma Health's cash and investments at the end of fiscal 2024?", income)



def test_an_amount_named_a_change_by_its_noun_is_not_the_level_asked():
    # "a $181 million increase from rates" and "an increase of $41 million" are what revenue changed by, as
    # "increased $222 million" is: none of them is the revenue asked, so no figure is read from the sentence.
    text = _one_company(
        "What were Gamma Health's operating revenues in 2024?",
        "For 2024, operating revenues increased $222 million, primarily due to a $181 million increase from "
        "authorized rate increases.")
    assert not text.startswith("Figure read from prose")
    text = _one_company("What were Gamma Health's operating revenues in 2024?",
                        "For 2024, operating revenues rose $222 million, including an increase of $41 million in fees.")
    assert not text.startswith("Figure read from prose")
    text = _one_company("How much cash did Gamma Health have at the end of 2024?",
                        "Net cash provided by operating activities decreased by $722 million in 2024, primarily "
                        "driven by a decrease in net income of $693 million.")
    assert not text.startswith("Figure read from prose: **$693")


def test_what_a_company_does_is_answered_by_the_opening_of_its_item_1():
    """'What does Acme do?' says nothing beyond the company: Item 1 opens with the description of the business
    (Regulation S-K 101(c)), so its first sentences answer, past the preamble and the sentence defining "we";
    the sentences that share most words with the regulation's description ("products", "services", "segments")
    do not. A question with words of its own is answered by those words."""
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Widgets Inc.", "fiscal_year": 2024}])
    head = "Alpha Widgets Inc. (AAA) · 10-K · FY2024 · Item 1: Business\n"
    preamble = head + "PART I Item 1. Business\nAlpha Widgets Inc. was incorporated in Delaware in 1990."
    opening = head + ('The terms "we," "us" and "our" refer to Alpha Widgets Inc. and its subsidiaries. '
                      "Alpha designs and sells industrial widgets to factories around the world. "
                      "Its widgets keep assembly lines running. " + "More on the history of the firm follows. " * 12)
    segments = head + ("Our principal products and services are sold through two reportable segments, and each "
                       "product family earns revenue from services and products. We sell online too.")
    sources = [Citation(number=i + 1, text=t, ticker="AAA", company="Alpha Widgets Inc.", form="10-K",
                        fiscal_year=2024, section="Item 1", char_start=i * 1000)
               for i, t in enumerate([preamble, opening, segments])]

    def answered(question):
        text, refused = extractive_answer(question, sources, plan_question(question, catalog))
        assert not refused, text
        return [line for line in text.splitlines() if line.startswith("- ")]

    assert answered("What does Alpha Widgets do?") == [
        "- Alpha designs and sells industrial widgets to factories around the world. [2]",
        "- Its widgets keep assembly lines running. [2]"]
    assert answered("What kind of company is Alpha Widgets?")[0].startswith("- Alpha designs and sells")
    # The verbs of what a business does are the topic's own words too.
    assert answered("What products does Alpha Widgets make and sell?")[0].startswith("- Alpha designs and sells")
    assert "We sell online too" in " ".join(answered("What does Alpha Widgets sell online?"))


def test_a_question_that_says_nothing_beyond_its_company_is_matched_by_its_items_words():
    """With no opening passage among the sources, 'What does Acme do?' is matched by the regulation's words for
    the Item its topic points to (no word of the question is left to match), and never told that no passage
    mentions words it did not write."""
    catalog = Catalog.build([{"ticker": "AAA", "company": "Alpha Widgets Inc.", "fiscal_year": 2024}])
    head = "Alpha Widgets Inc. (AAA) · 10-K · FY2024 · Item 1: Business\n"
    segments = head + ("Our principal products and services are sold through two reportable segments, and each "
                       "product family earns revenue from services and products.")
    sources = [Citation(number=1, text=segments, ticker="AAA", company="Alpha Widgets Inc.", form="10-K",
                        fiscal_year=2024, section="Item 1", char_start=5000)]
    question = "What does Alpha Widgets do?"
    text, refused = extractive_answer(question, sources, plan_question(question, catalog))
    assert not refused and "two reportable segments" in text and "mentions" not in text


def test_passages_are_numbered_in_the_order_the_answer_cites_them():
    # Search ranked the older filing first; with no year asked the latest filing speaks first, so it is [1] under
    # the answer, and the answer's markers count up from [1] in the order a reader meets them.
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2023},
                             {"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2025}])
    question = "How many employees does Gamma Health have?"
    nodes = [make_node(f"Gamma Health Inc. (CCC) · 10-K · FY{year} · Item 1\nAs of the end of fiscal {year}, we had "
                       f"approximately {count} employees.", f"c-{year}", score, ticker="CCC",
                       company="Gamma Health Inc.", fiscal_year=year, section="Item 1")
             for year, count, score in [(2023, "26,196", 0.033), (2025, "36,000", 0.031)]]
    found = retrieval(question, nodes, plan_question(question, catalog))
    res = answer(question, found, settings_for(None), use_llm=False)
    marks = [int(n) for n in re.findall(r"\[(\d+)\]", res.answer)]
    assert marks and marks == sorted(marks) and marks[0] == 1
    assert res.answer.index("36,000 employees. [1]") < res.answer.index("26,196 employees. [2]")
    assert [(c.number, c.chunk_id) for c in res.sources] == [(1, "c-2025"), (2, "c-2023")]
    # Search's ranking itself is left as it was.
    assert [n.node.node_id for n in found.nodes] == ["c-2023", "c-2025"]


def test_a_figure_read_from_the_text_says_how_it_was_read_not_that_it_is_untagged():
    # The facts layer finding no match does not make a figure untagged: the answer says where this one was read.
    text = _one_company("How many paid members did Gamma Health have in Region North at the end of 2023?", _MEMBERS)
    assert "**80,128 thousand**" in text
    assert "not tagged" not in text
    assert "read from the filing's text, not from its XBRL data" in text


def test_a_quoted_row_names_its_columns_without_the_layouts_unit_sign_cells():
    # A header as a layout leaves it when each unit sign had its own column: "2023%%" and a "$$" cell.
    table = ("Operating results | 2025 | 2024 | 2023%% | $$\nWidget units shipped | 4,100 | 3,900 | 3,500\n"
             "Gadget units shipped | 900 | 800 | 700")
    units = [u for u in quotable_units(Citation(number=1, text=table, ticker="ZZZ", company="Zeta Devices Inc."))
             if u.kind == "row"]
    assert units and units[0].header  # the row keeps its header as read, so its values still align with it
    text = _one_company("How many widget units did Zeta Devices ship?", table)
    shown = _first_quote(text)
    assert "columns: 2025 | 2024 | 2023" in shown
    assert "%%" not in shown and "$$" not in shown


def test_unit_sign_leftovers_are_dropped_only_where_they_are_leftovers():
    from rag.parse.tables import without_unit_leftovers

    assert without_unit_leftovers(" $$ ") == "" and without_unit_leftovers("%") == ""
    assert without_unit_leftovers("2023%%") == "2023" and without_unit_leftovers("(Restated)$$") == "(Restated)"
    assert without_unit_leftovers("12%") == "12%" and without_unit_leftovers("$ 5") == "$ 5"



def test_a_sentence_of_the_year_asked_counts_as_of_that_year_whether_or_not_it_prints_it():
    # Invented: a 10-K's sentences speak of its own fiscal year; one that repeats the year is no better evidence
    # than its neighbour that does not, while a sentence of another year's filing that names no year is.
    from rag.answer.unit_scoring import scored_units

    question = "Why did Gamma Health's Clinics segment revenue decrease in 2024?"
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2024}])
    said = "The decrease in Clinics segment revenue was primarily driven by fewer patient visits"
    sources = [Citation(number=n, text=text, ticker="CCC", company="Gamma Health Inc.", form="10-K", fiscal_year=year)
               for n, (year, text) in enumerate([(2024, f"{said} in 2024. {said} at rural sites."),
                                                 (2023, f"{said} at urban sites.")], start=1)]
    score = {" ".join(u.text.split()[-2:]): u.score for u in scored_units(question, sources, plan_question(question, catalog))}
    assert score["in 2024."] == score["rural sites."] > score["urban sites."]


_SEGMENT_CHANGES = (  # invented: a 10-Q's segment table with change columns between the periods
    "Gamma Health Inc. · 10-Q · Q2 FY2024 · Part I Item 2\n"
    "The following table presents revenue by reportable segment (in millions):\n"
    "| Three months ended June 30, 2024 | Three months ended June 30, 2023 | $ change | % change "
    "| Six months ended June 30, 2024 | Six months ended June 30, 2023 | $ change | % change\n"
    "Clinics | $1,210 | $1,100 | $110 | 10% | $2,400 | $2,150 | $250 | 12%\n"
    "Pharmacy | 640 | 700 | (60) | (9)% | 1,300 | 1,380 | (80) | (6)%")


def test_a_quarters_column_is_read_past_the_change_columns_beside_it():
    question = "What was the revenue of Gamma Health's Clinics segment in Q2 2024?"
    catalog = Catalog.build([{"ticker": "CCC", "company": "Gamma Health Inc.", "fiscal_year": 2024}])
    source = Citation(number=1, text=_SEGMENT_CHANGES, ticker="CCC", company="Gamma Health Inc.", form="10-Q",
                      fiscal_year=2024, fiscal_period="Q2")
    text = extractive_answer(question, [source], plan_question(question, catalog))[0]
    assert text.startswith("Figure read from the table: **$1,210 million** for Q2 FY2024"), text[:300]
    assert "column Three months ended June 30, 2024" in text
    # A year earlier: the prior year's dated column of the same months, not a change column.
    earlier = "What was the revenue of Gamma Health's Clinics segment in Q2 2023?"
    text = extractive_answer(earlier, [source], plan_question(earlier, catalog))[0]
    assert "**$1,100 million**" in text.split("\n")[0] and "June 30, 2023" in text.split("\n")[0], text[:300]


# An invented risk-factors passage of the shape 10-Ks print: a preamble about the Item itself, a heading in capitals,
# then each risk as one headline sentence above the paragraph that explains it.
_RISK_PREAMBLE = ("You should carefully consider the following risk factors together with the other information in "
                  "this report. The risks described below are not the only risks we face. Additional risks not "
                  "known to us may also affect our business.")
_RISK_ONE = "Storms near our coastal plants could interrupt the production of our widgets."
_RISK_ONE_BODY = ("Most of our capacity sits in two coastal regions. A severe storm has closed a plant for weeks in the "
                  "past, and our insurance may not cover every loss that follows such a closure.")
_RISK_TWO = "A shortage of specialty steel could raise our costs and delay our deliveries."


def _risk_sources() -> list[Citation]:
    head = "Acme Widgets Inc. (ACMW) · 10-K · FY2025 · Item 1A: Risk Factors\n"
    meta = dict(ticker="ACMW", company="Acme Widgets Inc.", form="10-K", fiscal_year=2025, section="Item 1A",
                section_title="Risk Factors")
    first = Citation(number=1, text=f"{head}ITEM 1A. RISK FACTORS\n\n{_RISK_PREAMBLE}\n\nRISKS RELATED TO OUR "
                                    f"OPERATIONS\n\n{_RISK_ONE}\n\n{_RISK_ONE_BODY}", char_start=100, **meta)
    # The next chunk opens inside a sentence and ends at a headline whose paragraph is in the chunk after it.
    second = Citation(number=2, text=f"{head}of our widgets in the regions we serve.\n\nWe buy steel from a few "
                                     f"mills. Their prices have risen in recent years.\n\n{_RISK_TWO}",
                      char_start=900, **meta)
    return [second, first]


def test_a_chunks_cut_sentence_pieces_and_capitals_headings_are_not_quotable():
    texts = [u.text for u in quotable_units(_risk_sources()[0])]
    assert texts[0] == "We buy steel from a few mills."  # not "of our widgets in the regions we serve."
    assert not any("of our widgets in the regions" in t for t in texts)
    cut = Citation(number=3, text="Acme (ACMW) · 10-K · FY2025 · Item 7: MD&A\nDemand for widgets rose in every "
                                  "region. Prices held, and the company expects that the coming year's")
    assert [u.text for u in quotable_units(cut)] == ["Demand for widgets rose in every region."]
    assert not any("RISKS RELATED" in u.text for u in quotable_units(_risk_sources()[1]))


def test_a_question_about_an_item_as_a_whole_lists_its_headlines_in_filing_order():
    catalog = Catalog.build([{"ticker": "ACMW", "company": "Acme Widgets Inc.", "fiscal_year": 2025,
                              "form": "10-K"}])
    question = "What are the main risk factors?"
    text, refused = extractive_answer(question, _risk_sources(), plan_question(question, catalog))
    assert not refused
    assert _RISK_ONE in text and _RISK_TWO in text and text.index(_RISK_ONE) < text.index(_RISK_TWO)
    assert "not the only risks" not in text and "carefully consider" not in text
    # A summary of the risk factors lists the headlines as bullets.
    summary = Citation(number=3, text="Beta Tools Corp. (BTLS) · 10-K · FY2025 · Item 1A: Risk Factors\nRisk Factors "
                                      "Summary\n\n• Our largest customer may buy fewer of our tools next year.\n\n"
                                      "• Tariffs on imported motors could raise what our tools cost to make.",
                       ticker="BTLS", company="Beta Tools Corp.", form="10-K", fiscal_year=2025, section="Item 1A",
                       section_title="Risk Factors")
    text, _ = extractive_answer(question, [summary], plan_question(question, catalog))
    assert "- Our largest customer may buy fewer of our tools next year. [3]" in text
    assert "Tariffs on imported motors could raise what our tools cost to make." in text
    # A question with words of its own is answered from the sentences that say them, not from the headlines.
    question = "What risks does Acme Widgets face from specialty steel prices?"
    text, _ = extractive_answer(question, _risk_sources(), plan_question(question, catalog))
    assert "prices have risen" in text or "steel from a few mills" in text
    assert _RISK_ONE not in text


def _widget_catalog() -> Catalog:
    return Catalog.build([{"ticker": "ACMW", "company": "Acme Widgets Inc.", "fiscal_year": 2025, "form": "10-K",
                           "fiscal_period": "FY"}])


def _widget_source(number: int, body: str, section: str = "Item 7") -> Citation:
    return Citation(number=number, text=f"Acme Widgets Inc. (ACMW) · 10-K · FY2025 · {section}: Report\n{body}",
                    ticker="ACMW", company="Acme Widgets Inc.", form="10-K", fiscal_year=2025, fiscal_period="FY",
                    period_end="2025-12-31", section=section)


def test_a_quarter_is_read_from_the_row_of_a_table_whose_columns_are_years():
    # A key metric by quarter, as an annual report's MD&A prints it: quarters down, years across, and the title in
    # the header's value column with its unit note.
    body = ("| Active Members (in thousands, except for dollar amounts)\n"
            "| 2025 | 2024 | 2024 to 2025 % Change\n"
            "Three Months Ended March 31 | 1,100 | 900 | 22.2%\n"
            "Three Months Ended December 31 | 1,450 | 1,010 | 43.6%\n\n"
            "| Revenue per Active Member\n"
            "| 2025 | 2024 | 2024 to 2025 % Change\n"
            "Three Months Ended December 31 | $61.20 | $55.10 | 11.1%")
    catalog = _widget_catalog()
    question = "How many Active Members did Acme Widgets have in the fourth quarter of 2025?"
    text, _ = extractive_answer(question, [_widget_source(1, body)], plan_question(question, catalog))
    assert text.startswith("Figure read from the table: **1,450 thousand**") and "Three Months Ended December 31" in text
    question = "What was Acme Widgets' revenue per Active Member in the fourth quarter of 2025?"
    text, _ = extractive_answer(question, [_widget_source(1, body)], plan_question(question, catalog))
    assert text.startswith("Figure read from the table: **$61.20**")
    # The first quarter is the row that ends in March, and the prior year's quarter is its year's column.
    question = "How many Active Members did Acme Widgets have in the first quarter of 2025?"
    text, _ = extractive_answer(question, [_widget_source(1, body)], plan_question(question, catalog))
    assert "**1,100 thousand**" in text


def test_a_statement_sections_line_is_read_from_its_table_and_a_colon_sentence_with_an_amount_is_quoted():
    body = ("(in thousands)\n| Year Ended December 31,\n| 2025 | 2024\n"
            "Cash flows from investing activities\n"
            "Purchases of property and equipment and delivery vans | (7,915) | (9,364)\n"
            "Net cash used in investing activities | (12,001) | (15,220)\n"
            "| 84")
    catalog = _widget_catalog()
    question = "What did Acme Widgets spend on purchases of property and equipment and delivery vans in 2025?"
    source = _widget_source(1, body, "Item 8")
    text, _ = extractive_answer(question, [source], plan_question(question, catalog))
    assert "Figure read from the table: **(7,915) thousand**" in text and "under Cash flows from investing" in text
    assert not any(u.text == "84" or u.text.strip("| ") == "84" for u in quotable_units(source))
    lead_in = _widget_source(2, "During 2025, the company invested $1.4 billion in new plants, as discussed below:")
    assert [u.text for u in quotable_units(lead_in)] == [
        "During 2025, the company invested $1.4 billion in new plants, as discussed below:"]
    dated = _widget_source(3, "The following table presents our store locations at the end of fiscal 2025:")
    assert quotable_units(dated) == []


def test_a_class_of_stock_is_told_apart_by_its_letter():
    assert "class-a" in tokens("How many shares of Class A common stock were outstanding?")
    assert "class-a" not in tokens("8,602,629 shares of Class B common stock")
    assert "class-a" not in tokens("a class of stock")
    # The note on words no passage holds names the question's words, not the letter's token.
    from rag.answer.terms import coverage_gap
    missing = coverage_gap("How many Class A shares did it buy back?", [Citation(number=1, text="We repurchased shares.")],
                           None)
    assert "class" in missing and not any("-" in w for w in missing)


def test_a_quoted_lead_in_brings_the_list_it_introduces_from_the_passage_that_continues_it():
    """A sentence that leads in to a list ("... as set out below:") says the total; the items, cut into the next
    chunk of the filing, say what it is made of. They follow it, each quoted under its own passage."""
    head = "Acme Widgets Inc. (ACMW) · 10-Q · Q2 FY2025 · Part I Item 2: MD&A\n"
    meta = dict(ticker="ACMW", company="Acme Widgets Inc.", form="10-Q", fiscal_year=2025, fiscal_period="Q2",
                section="Part I Item 2", doc_id="acmw-q2")
    lead = Citation(number=1, text=f"{head}We plan to keep building plants. During the first six months of 2025, "
                                   "the Company invested $640 million in its widget plants, as set out below:",
                    char_start=5000, char_end=5160, **meta)
    items = Citation(number=2, text=f"{head}• $520 million to expand the coastal widget plants; and\n\n"
                                    "• $120 million to buy two rival widget makers.\n\nOther spending was flat.",
                     char_start=5162, char_end=5300, **meta)
    elsewhere = Citation(number=3, text=f"{head}Freight costs rose as fuel prices climbed in the spring.",
                         char_start=9000, char_end=9060, **meta)
    catalog = Catalog.build([{"ticker": "ACMW", "company": "Acme Widgets Inc.", "fiscal_year": 2025, "form": "10-Q",
                              "fiscal_period": "Q2"}])
    question = "How much did Acme invest in its widget plants in the first six months of 2025?"
    text, refused = extractive_answer(question, [lead, elsewhere, items], plan_question(question, catalog))
    assert not refused and "as set out below: [1]" in text
    assert "$520 million to expand the coastal widget plants; and [2]" in text
    assert "$120 million to buy two rival widget makers. [2]" in text
    assert text.index("[1]") < text.index("$520 million") and "Other spending was flat" not in text
    # A passage that does not start where the lead-in's ends is no continuation of it.
    moved = Citation(**{**items.__dict__, "char_start": 7000, "char_end": 7140})
    text, _ = extractive_answer(question, [lead, elsewhere, moved], plan_question(question, catalog))
    assert "$120 million to buy" not in text
