"""The metric vocabulary is data (rag/data/metrics.toml): every phrasing in it must link to its own metric and to
no other, and a mistake in the file must be named when it loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.facts.mentions import find_mentions
from rag.facts.metrics import METRICS, PHRASEBOOK, VERB_PHRASINGS, _load
from rag.phrasing import Phrasebook, Phrasing

_PHRASINGS = [(m.key, text) for m in METRICS for text in m.phrases]


@pytest.mark.parametrize(("key", "text"), _PHRASINGS, ids=[f"{k}:{t}" for k, t in _PHRASINGS])
def test_every_phrasing_links_to_its_own_metric_and_no_other(key, text):
    example = Phrasing(text, None).example()
    question = f"What was Initech's {example} in fiscal 2024?"
    mentions = [m for m in find_mentions(question, {"initech"}) if not m.vetoed]
    assert mentions, f"{text!r} written as {example!r} links to nothing"
    # The longest reading names the metric; a shorter phrase of another metric inside it does not count.
    longest = max(mentions, key=lambda m: m.end - m.start)
    assert longest.metric_key == key, f"{example!r} links to {longest.metric_key}, not {key}"
    assert question[longest.start:longest.end].lower() in example.lower()


def test_a_verb_with_no_object_names_its_figure_only_alone():
    verbs = [p for p in PHRASEBOOK.phrasings if id(p) in VERB_PHRASINGS]
    assert verbs
    for p in verbs:
        example = p.example()
        alone = find_mentions(f"Tell me, {example} in 2024?")
        assert [m.metric_key for m in alone] == [p.names.key], example
    # A wording added as one line of data ("haul in") links like the others.
    assert [m.metric_key for m in find_mentions("How much did Initech haul in during fiscal 2024?", {"initech"})] \
        == ["revenue"]
    # With an object, the object is the figure: "how much operating cash flow did it bring in".
    both = find_mentions("How much operating cash flow did Initech bring in during 2024?", {"initech"})
    assert [m.metric_key for m in both] == ["operating_cash_flow"]


def test_phrasings_match_plurals_possessives_and_punctuation_but_not_inside_a_compound():
    book = Phrasebook([Phrasing("total liability", "L"), Phrasing("operating income", "O"),
                       Phrasing("selling general and administrative", "S")])
    assert [p.names for *_, p in book.find("total liabilities were up")] == ["L"]
    assert [p.names for *_, p in book.find("selling, general and administrative")] == ["S"]
    assert book.find("non-operating income rose") == []
    # A word marked "=" is itself only: "share of" asks a share, "shares of common stock" names the stock.
    share_of = Phrasebook([Phrasing("share=/percent of", "S")])
    assert share_of.find("what share of revenue") and share_of.find("what percents of revenue")
    assert share_of.find("how many shares of common stock") == []
    assert book.find("operating incomes") and not book.find("operating income-tax")


def test_contexts_gaps_and_clause_ends():
    book = Phrasebook([Phrasing("(!how) profitable", "P"), Phrasing("earn <end>", "E"),
                       Phrasing("cash did … generate", "C"), Phrasing("authority (… left)", "A")])
    assert [p.names for *_, p in book.find("was it profitable?")] == ["P"]
    assert book.find("how profitable was it") == []
    assert [p.names for *_, p in book.find("what did it earn in 2024")] == ["E"]
    assert book.find("did it earn interest") == []
    assert [p.names for *_, p in book.find("how much cash did the two units generate")] == ["C"]
    assert book.find("how much cash did the four big operating units there generate") == []  # past the gap
    found = book.find("how much authority did it have left")
    assert [(s, e) for s, e, _ in found] == [(9, 18)]  # the context after is not part of the span


def test_a_mistake_in_the_vocabulary_is_named_when_it_loads(tmp_path: Path):
    good = (Path(__file__).resolve().parent.parent / "rag" / "data" / "metrics.toml").read_text(encoding="utf-8")
    cases = {
        'kind = "per_share"': 'kind = "per_shares"',
        'derive = ["sub", "operating_cash_flow", "capex"]': 'derive = ["sub", "operating_cash_flow", "capexx"]',
        '"us-gaap:Revenues"': '"Revenues"',
    }
    for before, after in cases.items():
        assert before in good
        bad = tmp_path / "metrics.toml"
        bad.write_text(good.replace(before, after, 1), encoding="utf-8")
        with pytest.raises(ValueError, match="metrics.toml"):
            _load(bad)
    with pytest.raises(ValueError, match="not a word"):
        Phrasing("net sale$", None)
