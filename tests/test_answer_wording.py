"""How an answer's sentences read to an analyst (issue 46, "Answers"): companies named as a reader writes them,
ratios of two figures worded as multiples, no XBRL vocabulary in the sentences. Over real 10-Ks of the shared
corpus, parsed and chunked in place (no embedding)."""

from __future__ import annotations

import html
import re

import pytest

from rag.catalog import Catalog
from rag.companies import reader_name
from rag.config import get_settings
from rag.facts import FactsLayer, FactStore
from rag.question import plan_question
from tests.filings import SHARED, store_facts

CORPUS = SHARED / "corpus" / "filings"
FILES = {("KO", 2024): "KO/ko-20241231.htm", ("ADBE", 2024): "ADBE/adbe-20241129.htm"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if not CORPUS.exists():
        pytest.skip(f"{CORPUS} is absent: the shared corpus (../shared beside the project) is needed for this test")
    from rag.index import IndexStore

    settings = get_settings(storage_dir=tmp_path_factory.mktemp("wording-storage"))
    chunker = IndexStore(settings).chunker()
    store = FactStore.for_settings(settings)
    chunks: dict[str, tuple[str, dict]] = {}
    for rel in FILES.values():
        store_facts(store, chunker, CORPUS / rel, chunks)
    layer = FactsLayer(settings, store=store, chunk_lookup=chunks.get)
    return {"layer": layer, "chunks": chunks}


def ask(corpus, question: str):
    layer = corpus["layer"]
    return layer.answer_for(plan_question(question, Catalog.build(layer.filings())))


def test_conformed_edgar_names_are_written_as_a_reader_writes_them():
    assert reader_name("COCA COLA CO") == "Coca Cola Co."
    assert reader_name("WELLS FARGO & COMPANY/MN") == "Wells Fargo & Company"
    assert reader_name("AMAZON.COM, INC.") == "Amazon.com, Inc."
    assert reader_name("COLGATE-PALMOLIVE COMPANY") == "Colgate-Palmolive Company"
    assert reader_name("ACME HOLDINGS PLC") == "Acme Holdings PLC"
    assert reader_name("3M CO") == "3M Co."
    assert reader_name("BANK OF AMERICA CORP /DE/") == "Bank of America Corp."
    assert reader_name("ACME N.V.") == "Acme N.V."
    # The filer's own mixed-case name is kept as it is.
    assert reader_name("Kraft Heinz Co") == "Kraft Heinz Co"
    assert reader_name("NIKE, Inc.") == "NIKE, Inc."
    assert reader_name(None) == ""


def test_a_figure_answer_names_the_company_as_written_not_as_edgar_conforms_it(corpus):
    fa = ask(corpus, "What was Coca-Cola's total revenue in fiscal 2024?")
    assert "$47,061 million" in fa.block
    assert "Coca Cola Co. (KO)" in fa.block
    assert "COCA COLA CO" not in fa.block


def test_one_figure_several_times_another_is_a_multiple_not_a_percentage(corpus):
    fa = ask(corpus, "Which had more total revenue in fiscal 2024, Coca-Cola or Adobe, and by how much?")
    line = next(ln for ln in fa.block.splitlines() if ln.startswith("- Comparison"))
    # $47,061 million against $21,505 million: 2.19 times, not "118.84% higher".
    assert "(2.2 times as much)" in line
    assert "% higher" not in line


def test_a_figure_is_named_by_the_line_its_filer_prints(corpus):
    # The vocabulary calls it "Total revenue"; Coca-Cola's income statement prints "Net Operating Revenues".
    fa = ask(corpus, "What was Coca-Cola's total revenue in fiscal 2024?")
    assert "· Net Operating Revenues · FY2024" in fa.block


def test_no_xbrl_concept_names_in_the_answer_only_in_its_citation(corpus):
    fa = ask(corpus, "How much revenue did Adobe's Digital Media segment generate in fiscal 2024?")
    assert "$15,864 million" in fa.block
    assert "Digital Media" in fa.block
    assert "us-gaap:" not in fa.block and "XBRL" not in fa.block.split("\n")[0]
    # The concept stays where a reader checks the figure: the citation.
    assert "us-gaap:Revenues" in fa.citations[0].text


def test_a_citation_links_its_filing_on_edgar_when_the_accession_is_known():
    from rag.edgar.record import filing_index_url
    from rag.schema import Citation

    c = Citation.from_chunk(1, "x:1", "text", {"cik": "0000021344", "accession": "0000021344-25-000010",
                                               "source": "/srv/data/ko-20241231.htm"})
    assert filing_index_url(c.cik, c.accession) == \
        "https://www.sec.gov/Archives/edgar/data/21344/000002134425000010/0000021344-25-000010-index.htm"
    # A file indexed from disk has no accession (its id is the index's own): no address is made up.
    assert filing_index_url("0000021344", "local-03e0f59ce1b6115d") is None
    assert filing_index_url(None, "0000021344-25-000010") is None


def test_a_figures_citation_carries_the_row_that_prints_it_and_the_panel_marks_that_row_alone(corpus):
    from ui.text import highlight_html, table_cells

    fa = ask(corpus, "What was Coca-Cola's total revenue in fiscal 2024?")
    row = fa.citations[0].quote
    assert row and row.startswith("Net Operating Revenues") and "47,061" in row
    passage = "Consolidated statements of income\n" + row + "\nCost of goods sold | <b>x</b>"
    shown = highlight_html("before ", passage, " after", quote=row)
    marked = shown.split('<tr class="wb-mark">')[1].split("</tr>")[0]
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", marked)]
    expected = table_cells(row)
    assert cells[:len(expected)] == expected and not any(cells[len(expected):]), (cells, row)
    assert shown.count('class="wb-mark"') == 1
    assert "Cost of goods sold" not in marked and "&lt;b&gt;x&lt;/b&gt;" in shown and "<b>" not in shown
