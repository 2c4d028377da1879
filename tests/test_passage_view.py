"""How the citation panel draws a passage (ui.text, no Streamlit): tables as tables built from escaped cells, the
layout's unit-sign leftovers gone, the figure's row or a prose answer's sentence marked rather than the whole
passage; and a timing caption whose parts add up to its total. Invented text throughout."""

from __future__ import annotations

import html
import re

from ui.text import highlight_html, supporting_quotes, table_cells, timings_label

STATEMENT = ("Results of operations\n"
             "| Year Ended | Change\n"
             "(Dollars in millions) | 2025 | 2024 | 2023%% | $$\n"
             "Widget sales | $1,200 | $1,100 | $900 | $100 | 9%\n"
             "Gadget <b>sales</b> | 300 | 280 | 250 | 20 | 7%\n")


def _rows(shown: str) -> list[tuple[str, list[str]]]:
    """(row class, cell texts) of every table row drawn."""
    return [(cls, [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)])
            for cls, row in re.findall(r'<tr(?: class="([^"]*)")?>(.*?)</tr>', shown)]


def test_unit_signs_left_by_the_layout_are_not_cells():
    assert table_cells("(Dollars in millions) | 2025 | 2024 | 2023%% | $$") == ["(Dollars in millions)", "2025",
                                                                               "2024", "2023"]
    assert table_cells("| 2025 | 2024 |") == ["", "2025", "2024"]
    # Figures keep their own signs: a currency sign before, a percent or a bracket after.
    assert table_cells("Margin | $(6,029) | (8)% | 15%") == ["Margin", "$(6,029)", "(8)%", "15%"]


def test_a_statement_is_drawn_as_a_table_and_its_cells_are_escaped():
    shown = highlight_html("", STATEMENT, "", mark=False)
    rows = _rows(shown)
    assert [cells for _, cells in rows] == [
        ["", "Year Ended", "Change", "", "", ""],
        ["(Dollars in millions)", "2025", "2024", "2023", "", ""],
        ["Widget sales", "$1,200", "$1,100", "$900", "$100", "9%"],
        ["Gadget <b>sales</b>", "300", "280", "250", "20", "7%"],
    ]
    assert "%%" not in shown and "$$" not in shown
    assert "<b>" not in shown and "&lt;b&gt;sales&lt;/b&gt;" in shown
    assert 'class="wb-mark"' not in shown and "<mark" not in shown
    assert shown.count("<table") == 1 and "Results of operations" in shown.split("<table")[0]


def test_a_row_heading_between_rows_stays_inside_its_table():
    text = ("| 2025 | 2024\nRevenues\nWidget sales | 1,200 | 1,100\nCosts\nWidget costs | 700 | 650\n\n"
            "Costs rose with volume.\n")
    shown = highlight_html("", text, "", mark=False)
    assert shown.count("<table") == 1
    assert [cells[0] for _, cells in _rows(shown)] == ["", "Revenues", "Widget sales", "Costs", "Widget costs"]
    assert "Costs rose with volume." not in shown.split("</table>")[0], "a sentence after the table stays text"


def test_the_figures_row_is_marked_and_the_rest_of_the_passage_shaded():
    row = "Widget sales | $1,200 | $1,100 | $900 | $100 | 9%"
    shown = highlight_html("Before the passage.\n", STATEMENT, "After it.", quote=row)
    marked = [cells for cls, cells in _rows(shown) if cls == "wb-mark"]
    assert marked == [["Widget sales", "$1,200", "$1,100", "$900", "$100", "9%"]]
    assert [cls for cls, _ in _rows(shown)] == ["wb-chunk", "wb-chunk", "wb-mark", "wb-chunk"]
    assert "<mark" not in shown.split("<table")[0], "the text before the passage is not marked"


def test_a_figure_marked_inside_its_cell():
    text = "| 2025 | 2024\nWidget sales | $1,200 | $1,100\n"
    at = text.index("1,200")
    shown = highlight_html(text[:at], "1,200", text[at + 5:])
    assert '<td class="wb-num">$<mark class="wb-mark">1,200</mark></td>' in shown


PASSAGE = ("Item 1A. Risk Factors\n\n"
           "Supply of widget parts may be disrupted by storms at sea, which could harm results. "
           "Demand for gadgets rose in the north. Prices held steady.\n\n"
           "Example Corp. risk paragraph: the company discusses its markets.")


def test_a_prose_answers_quoted_sentence_is_what_is_marked():
    answer = ("**[1] Example Corp. · 10-K · FY2025 · Item 1A**\n"
              "- Supply of widget parts may be disrupted by storms at sea, which could harm results. [1]\n"
              "- Something else entirely [2]\n")
    quotes = supporting_quotes(answer, 1, PASSAGE)
    assert quotes == ["Supply of widget parts may be disrupted by storms at sea, which could harm results."]
    shown = highlight_html("", PASSAGE, "", quote=quotes)
    marks = re.findall(r'<mark class="wb-mark">(.*?)</mark>', shown)
    assert marks == [quotes[0]]
    assert "Demand for gadgets" not in "".join(marks)
    assert '<span class="wb-chunk">' in shown, "the rest of the passage is shaded, not marked"


def test_a_restated_sentence_is_found_by_its_words_and_other_citations_are_not():
    said = "Example Corp. warns that storms at sea may disrupt the supply of widget parts and harm results [2, 1]."
    assert supporting_quotes(said, 1, PASSAGE) == [
        "Supply of widget parts may be disrupted by storms at sea, which could harm results."]
    assert supporting_quotes(said, 3, PASSAGE) == []
    # A claim the passage does not make marks nothing: the whole passage is then what is cited.
    assert supporting_quotes("Revenue doubled on new orders from abroad [1].", 1, PASSAGE) == []


def test_the_timing_caption_adds_up():
    for timings in ({"retrieval_ms": 12295.04, "first_token_ms": 36.75, "total_ms": 36.79},
                    {"retrieval_ms": 219.32, "first_token_ms": 1.84, "total_ms": 501.87},
                    {"retrieval_ms": 1849.0, "first_token_ms": 900.0, "total_ms": 4151.0}):
        label = timings_label(timings)
        m = re.match(r"search ([\d,.]+) (ms|s) \+ answer ([\d,.]+) \2 = ([\d,.]+) \2 · first words at ", label)
        assert m, label
        search, answer, total = (float(m.group(i).replace(",", "")) for i in (1, 3, 4))
        assert round(search + answer, 6) == total, label
        exact = (timings["retrieval_ms"] + timings["total_ms"]) / (1 if m.group(2) == "ms" else 1000)
        assert abs(total - exact) <= (1 if m.group(2) == "ms" else 0.1), label
    assert timings_label({"retrieval_ms": 12295.04, "first_token_ms": 36.75, "total_ms": 36.79}).endswith(
        "first words at 12.3 s")
    assert timings_label({"total_ms": 40.0}) == "total 40 ms"  # a question that failed before the search
