"""Boilerplate told by recurrence (rag/recurring.py): a sentence other companies' filings print too is not quoted."""

from __future__ import annotations

import pytest

from rag.config import get_settings
from rag.engine import Engine
from rag.index import IndexStore
from rag.recurring import OTHER_COMPANIES
from tests.filings import ACME, BOLT, write_filing

EVERY_FILER = "Supply of widget parts may be disrupted, which could harm results."  # printed by every test filing
OWN_RISK = "Acme's supply of zorblax couplers depends on one foundry, and an outage there would stop shipments."
QUESTION = "What are Acme's main supply risks?"
OTHERS = [dict(company=f"{name} Holdings Inc.", ticker=name.upper()[:4], fiscal_year=2024, period_end="2024-12-31",
               revenue=(1000 + i, 900 + i)) for i, name in enumerate(["Cobalt", "Dynamo", "Ember"])]


def _engine(folder, companies, monkeypatch) -> Engine:
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # nothing listens there: the extractive answer
    settings = get_settings(storage_dir=folder / "storage", data_dir=folder / "data")
    IndexStore(settings).add([write_filing(folder / "in", f"{c['ticker'].lower()}.htm", **c) for c in companies])
    return Engine(settings)


@pytest.fixture(scope="module")
def acme():
    return dict(ACME, risk_phrase=OWN_RISK)


def test_a_sentence_every_filer_prints_is_not_quoted_once_enough_companies_show_it(tmp_path, monkeypatch, acme):
    companies = [acme, BOLT] + OTHERS
    assert len(companies) > OTHER_COMPANIES
    engine = _engine(tmp_path, companies, monkeypatch)
    recurring = engine.retriever().recurring
    assert recurring([(EVERY_FILER, "ACME"), (OWN_RISK, "ACME")]) == [True, False]
    answer = engine.ask(QUESTION, use_llm=False).answer
    assert "zorblax couplers" in answer and "widget parts" not in answer
    # The Item's heading is where the text is, not what it says: never a quote.
    assert not any(line.lstrip("- ").startswith("Item 1A") for line in answer.splitlines())


def test_an_index_of_few_companies_cannot_tell_boilerplate_and_quotes_what_matches(tmp_path, monkeypatch, acme):
    engine = _engine(tmp_path, [acme, BOLT], monkeypatch)
    assert engine.retriever().recurring([(EVERY_FILER, "ACME")]) == [False]
    assert "widget parts" in engine.ask(QUESTION, use_llm=False).answer


def test_a_sentence_stating_a_figure_is_a_copy_only_with_the_same_figure():
    from rag.recurring import near_copy

    ours = "As of January 31, 2031, there were 1,234 holders of record of our common stock."
    theirs = "As of January 31, 2031, there were 5,678 holders of record of our common stock."
    assert not near_copy(ours, theirs) and near_copy(ours, "Holders. " + ours.replace("our", "the"))
    # A note every filer prints with the same figures (the standard's number and date) is a copy.
    note = "In November 2031, the FASB issued ASU 2031-07, which requires disclosure of significant segment expenses."
    assert near_copy(note, "Recent pronouncements. " + note.replace("which requires", "requiring"))
