"""The checks on a final answer (rag.answer.figures): figures against the cited sources, and arithmetic."""

from __future__ import annotations

import pytest

from rag.answer import Citation, answer, check_citations
from tests.answer_samples import APPLE_MDA, APPLE_TABLE, retrieval, settings_for
from tests.fake_ollama import started_fake_ollama

fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")


def test_number_not_in_cited_sources_is_flagged(fake_ollama):
    fake_ollama.reply = ("Total net sales were $412,000 million in 2024 [1], or about $391.0 billion [1]; "
                         "services grew 13% [2].")
    res = answer("What were total net sales in 2024?", retrieval("q"), settings_for(fake_ollama))
    assert res.unverified_figures == ["$412,000 million"]
    assert any("412,000" in w and "cited" in w for w in res.warnings)
    assert not any("391.0" in w for w in res.warnings)  # $391.0 billion ~ 391,035 (in millions)
    assert not any("13%" in w for w in res.warnings)


def test_number_only_in_an_uncited_source_is_flagged():
    sources = [Citation(number=1, text=APPLE_TABLE), Citation(number=2, text=APPLE_MDA)]
    cited, warnings, unverified = check_citations("Net sales rose $7.8 billion [1].", sources)
    assert cited == [1] and unverified == ["$7.8 billion"]
    assert "uncited source [2]" in warnings[0]


@pytest.mark.parametrize(
    "text, ok",
    [
        ("Total net sales were 391,035 [1].", True),
        ("Total net sales were $391035 million [1].", True),
        ("Total net sales were $391.0 billion [1].", True),
        ("Total net sales were $391 billion [1].", True),
        ("Total net sales were $391,036 million [1].", False),
        ("Total net sales were $39.1 billion [1].", False),
        ("Gross margin was $(180,683) million [1].", True),
        ("Services were 96.2 billion dollars [1].", True),
        ("Apple's fiscal 2024 ended September 28, 2024 (Item 8, page 28) [1].", True),
        ("1. Products: $294,866 million [1]\n2. Services: $96,169 million [1]", True),
        ("Services were $97,169 million [1].", False),
        ("Products were 75.4% of total net sales [1].", False),
    ],
)
def test_figure_normalisation(text, ok):
    sources = [Citation(number=1, text=APPLE_TABLE)]
    _cited, _warnings, unverified = check_citations(text, sources)
    assert (unverified == []) is ok, unverified


def test_arithmetic_is_recomputed():
    sources = [Citation(number=1, text="Automotive sales | 78,509\nTotal revenues | 96,773")]
    _, warnings, unverified = check_citations("78,509 / 96,773 = 81.1% of revenue [1].", sources)
    assert warnings == [] and unverified == []
    _, warnings, unverified = check_citations("$78,509 million / $96,773 million = 84% [1].", sources)
    assert any("Arithmetic does not check out" in w and "81.13%" in w for w in warnings)
    _, warnings, _ = check_citations("(96,773 - 78,509) = 18,264 [1]", sources)
    assert warnings == []
