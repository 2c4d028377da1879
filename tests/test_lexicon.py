"""The word and phrase lists of rag/data/lexicon.toml: each loads, and the phrase lists read what they say."""

from __future__ import annotations

import tomllib

import pytest

from rag.lexicon import _DATA, word_set
from rag.phrasing import PhraseList

with _DATA.open("rb") as _f:
    _PHRASE_LISTS = sorted(tomllib.load(_f)["phrases"])


@pytest.mark.parametrize("name", _PHRASE_LISTS)
def test_each_phrasing_reads_its_own_example(name):
    phrases = PhraseList(name)
    for phrasing in phrases.book.phrasings:
        assert phrases.search(phrasing.example()), (name, phrasing.text)


def _found(name: str, text: str) -> list[str]:
    return [m.group() for m in PhraseList(name).finditer(text)]


def test_one_line_over_another_but_not_over_a_period_an_amount_or_after_a_verb():
    assert _found("line_over_line", "medical costs over premiums") == ["over"]
    assert _found("line_over_line", "r&d divided by revenue") == ["divided by"]
    for text in ("growth over the prior year", "revenue over 2023", "sales over $5 billion", "cash handed over to"
                 " holders", "losses carried over into fiscal 2025"):
        assert _found("line_over_line", text) == [], text


def test_a_hypothetical_change_needs_a_size_or_the_word():
    assert _found("hypothetical_change", "a hypothetical 10% adverse change in rates") == [
        "a hypothetical 10% adverse change"]
    assert _found("hypothetical_change", "a 100 basis point increase in rates") == ["a 100 basis point increase"]
    assert _found("hypothetical_change", "a one percentage point rise") == ["a one percentage point rise"]
    assert _found("hypothetical_change", "a decline in revenue") == []


def test_the_words_that_introduce_a_part_or_a_source():
    assert _found("part_from", "revenue billed to customers") == ["to"]
    assert _found("part_from", "she went to the store") == []
    assert _found("part_is", "were wearables") == ["were"]
    assert _found("part_is", "was from europe") == []
    assert _found("earned_by", "earn hauling coal") == ["earn"]
    assert _found("part_makes_up", "accounted for what share") == ["accounted for what"]


def test_word_lists_are_sets_of_lower_case_words():
    assert {"what", "how", "does"} <= word_set("question_openers")
    assert "in" in word_set("part_ends") and "compared" in word_set("source_ends")
    with pytest.raises(KeyError, match="no list"):
        word_set("no_such_list")
