"""The model's answer under guards (issue 43), against the scripted fake Ollama: the facts layer's exact figures
come first and stand whatever the model writes; the not-found sentence is a refusal only when it is the whole
answer; placeholder markers are removed; a claim its cited passage does not support is flagged."""

from __future__ import annotations

import pytest

from rag.answer import Citation, answer
from tests.answer_samples import make_node, retrieval, run_stream, settings_for, user_prompt
from tests.fake_ollama import started_fake_ollama

fake_ollama = pytest.fixture(started_fake_ollama, name="fake_ollama")

# Invented filing text and figures (no dev filing's).
TABLE = """Acme Corp (ACME) · 10-K · FY2024 · Item 8: Financial Statements
CONSOLIDATED STATEMENTS OF INCOME (In millions)
| 2024 | 2023
Total revenue | 48,210 | 45,900
Cost of revenue | 30,100 | 29,050"""
MDA = """Acme Corp (ACME) · 10-K · FY2024 · Item 7: MD&A
Total revenue increased 5% in 2024 compared to 2023, driven by higher volumes in the industrial segment. \
Operating expenses grew more slowly than revenue as the company consolidated two distribution centers."""
FACT = Citation(number=0, ticker="ACME", company="Acme Corp", form="10-K", fiscal_year=2024,
                text="us-gaap:Revenues FY2024 (2024-01-01 to 2024-12-31): 48,210,000,000 USD")
BLOCK = "Total revenue, FY2024: $48,210 million [F1]"
QUESTION = "What was Acme's total revenue in fiscal 2024?"


def _retrieval():
    meta = dict(ticker="ACME", company="Acme Corp", doc_id="acme-2024", accession="0000000000-25-000001")
    return retrieval("q", [make_node(TABLE, "c-table", 0.03, **meta),
                           make_node(MDA, "c-mda", 0.02, section="Item 7", section_title="MD&A", **meta)])


def _with_facts(fake, reply: str):
    fake.reply = reply
    return run_stream(QUESTION, _retrieval(), settings_for(fake), facts_block=BLOCK, fact_citations=[FACT])


# ------------------------------------------------------------------------------------- exact figures come first


def test_a_model_that_refuses_does_not_replace_the_exact_figure(fake_ollama):
    pieces, res = _with_facts(fake_ollama, "The provided filings do not contain this information.")
    assert res.answer.startswith("Total revenue, FY2024: $48,210 million [1]")
    assert "do not contain" not in res.answer and "do not contain" not in "".join(pieces)  # held, never streamed
    assert "".join(pieces).strip() == res.answer
    assert not res.refused and res.refusal_reason is None and not res.extractive
    assert [c.number for c in res.citations] == [1] and res.citations[0].kind == "fact"
    assert any("replied that the passages do not hold the answer" in w for w in res.warnings)
    assert "found nothing to add" in res.answer


def test_the_exact_figure_streams_before_the_model_speaks(fake_ollama):
    _pieces, res = _with_facts(fake_ollama, "Revenue rose 5% on higher industrial volumes [3].")
    first = res.answer.split("\n\n")
    assert first[0] == "Total revenue, FY2024: $48,210 million [1]"
    assert first[1] == "Revenue rose 5% on higher industrial volumes [3]."
    assert [c.number for c in res.citations] == [1, 3]
    assert not res.refused


def test_a_partial_answer_under_the_figure_keeps_its_content(fake_ollama):
    _pieces, res = _with_facts(fake_ollama, "Revenue rose 5% on higher industrial volumes [3]. The provided "
                                            "filings do not contain the revenue of each product line.")
    assert "higher industrial volumes [3]" in res.answer and "each product line" in res.answer
    assert not res.refused
    assert any(w.startswith("The answer is partial") and "each product line" in w for w in res.warnings)


def test_the_prompt_says_the_facts_block_answers_and_uses_invented_arithmetic(fake_ollama):
    from rag.answer import SYSTEM_PROMPT

    _with_facts(fake_ollama, "Total revenue was $48,210 million [1].")
    system = fake_ollama.chat_requests()[0]["messages"][0]["content"]
    assert system == SYSTEM_PROMPT and "invented figures" in SYSTEM_PROMPT
    assert "Never say the filings do not contain a figure that block gives" in SYSTEM_PROMPT
    assert "[n]" not in user_prompt(fake_ollama) and "[n]" not in SYSTEM_PROMPT  # nothing to copy literally


# ------------------------------------------------------------------------------------------ refusals that mean it


def test_the_not_found_sentence_alone_is_a_refusal_when_no_passage_matches(fake_ollama):
    fake_ollama.reply = "I'm sorry, but the provided filings do not contain this information."
    res = answer("Who audits Acme's pension plan?", _retrieval(), settings_for(fake_ollama))
    assert res.refused and res.refusal_reason == "not_in_sources" and res.citations == []
    assert not res.extractive and res.model == settings_for(fake_ollama).llm_model


def test_a_models_refusal_gives_way_to_the_passages_that_state_the_figure(fake_ollama):
    # No exact figure and no figure read leads (no plan), but the extractive reader quotes the row that states it:
    # the model's refusal is held back and the quoted passages answer instead.
    fake_ollama.reply = "The provided filings do not contain this information."
    pieces, res = run_stream(QUESTION, _retrieval(), settings_for(fake_ollama))
    assert "do not contain" not in "".join(pieces) and "do not contain" not in res.answer
    assert not res.refused and res.extractive and res.model is None
    assert "48,210" in res.answer and res.citations and res.citations[0].chunk_id == "c-table"
    assert res.answer.startswith("Extractive answer (the model found no answer in the passages)")
    assert "replied that the passages do not hold the answer" in res.warnings[0]
    assert "".join(pieces).strip() == res.answer
    assert res.timings["model_first_token_ms"] is not None  # the model spoke, though its words were not kept


def test_an_answer_that_ends_with_the_not_found_sentence_is_no_refusal(fake_ollama):
    fake_ollama.reply = ("Total revenue was $48,210 million in fiscal 2024 [1]. The provided filings do not contain "
                         "the revenue of each product line.")
    res = answer(QUESTION, _retrieval(), settings_for(fake_ollama))
    assert not res.refused and res.refusal_reason is None
    assert res.answer == fake_ollama.reply  # its content kept as written
    assert [c.number for c in res.citations] == [1]
    assert any(w.startswith("The answer is partial") for w in res.warnings)


def test_an_answer_in_prose_is_followed_by_the_cited_passages_own_words(fake_ollama):
    fake_ollama.reply = "Acme consolidated two distribution centers [2]."
    question = "What did Acme do with its distribution centers in 2024?"
    pieces, res = run_stream(question, _prose_retrieval(question), settings_for(fake_ollama))
    said, _, quoted = res.answer.partition("\n\n**In the filings' own words:**\n")
    assert said == fake_ollama.reply and "".join(pieces).strip() == res.answer
    assert "as the company consolidated two distribution centers" in quoted and quoted.rstrip().endswith("[2]")
    assert "48,210" not in quoted  # nothing off the question's topic is quoted
    # No fewer of the filings' words than the answer without a model quotes.
    assert set(_extractive_quotes(question)) <= {line.rsplit(" [", 1)[0] for line in quoted.splitlines()}
    assert [c.number for c in res.citations] == [2] and not res.extractive and res.warnings == []


def test_no_quotes_follow_a_figure_lead_or_an_answer_not_in_prose(fake_ollama):
    _pieces, res = _with_facts(fake_ollama, "Revenue rose 5% on higher industrial volumes [3].")
    assert "own words" not in res.answer
    fake_ollama.reply = "Total revenue was $48,210 million [1]."  # no intent read as prose
    assert "own words" not in answer(QUESTION, _retrieval(), settings_for(fake_ollama)).answer


CENTERS = "What did Acme do with its distribution centers in 2024?"


def _extractive_quotes(question: str) -> list[str]:
    """The quoted lines of the answer without a model, over the same passages, without their [n] (it numbers
    passages in the order it quotes them)."""
    res = answer(question, _prose_retrieval(question), settings_for(None), use_llm=False)
    assert res.extractive and not res.refused
    return [line.rsplit(" [", 1)[0] for line in res.answer.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize("reply", [
    "Acme consolidated two distribution centers.",  # cites nothing
    "Acme consolidated two distribution centers [1].",  # cites only a passage with nothing to quote on it
])
def test_a_prose_answer_without_quotable_citations_quotes_the_extractive_selection(fake_ollama, reply):
    fake_ollama.reply = reply
    pieces, res = run_stream(CENTERS, _prose_retrieval(CENTERS), settings_for(fake_ollama))
    said, _, quoted = res.answer.partition("\n\n**In the filings' own words:**\n")
    assert said == reply and "".join(pieces).strip() == res.answer
    lines = quoted.splitlines()
    assert [line.rsplit(" [", 1)[0] for line in lines] == _extractive_quotes(CENTERS)  # no less than without a model
    assert any("consolidated two distribution centers" in line and line.endswith("[2]") for line in lines)
    # The quotes' passage is cited and listed whole, as the extractive answer lists it.
    assert 2 in [c.number for c in res.citations] and not res.extractive and not res.refused
    quoted_source = next(c for c in res.sources if c.number == 2)
    assert quoted_source.chunk_id == "c-mda" and "two distribution centers" in quoted_source.text
    if "[1]" not in reply:
        assert [c.number for c in res.citations] == [2]
        assert any("cites no source" in w and "without a model" in w for w in res.warnings), res.warnings


def test_an_answer_that_cites_nothing_is_followed_by_the_extractive_selection_whatever_was_asked(fake_ollama):
    from rag.schema import Intent

    retr = _planned_retrieval(CENTERS, figure=False)
    retr.plan.intent = Intent("figure", 0.9, 0.99)  # read as asking for a figure, not prose
    fake_ollama.reply = "Acme consolidated two distribution centers."
    _pieces, res = run_stream(CENTERS, retr, settings_for(fake_ollama))
    said, _, quoted = res.answer.partition("\n\n**In the filings' own words:**\n")
    assert said == fake_ollama.reply
    assert [line.rsplit(" [", 1)[0] for line in quoted.splitlines()] == _extractive_quotes(CENTERS)
    assert [c.number for c in res.citations] == [2]


def test_a_cited_answer_to_a_why_or_how_is_followed_by_the_filings_own_words_whatever_the_intent_model_read(
        fake_ollama):
    from rag.schema import Intent

    retr = _planned_retrieval(CENTERS, figure=False)
    retr.plan.intent = Intent("figure", 0.55, 0.9)  # the intent model unsure, leaning to a figure
    retr.plan.prose_intent = True  # the question's own words ask how or why
    fake_ollama.reply = "Acme consolidated two distribution centers [2]."
    res = answer(CENTERS, retr, settings_for(fake_ollama))
    said, _, quoted = res.answer.partition("\n\n**In the filings' own words:**\n")
    assert said == fake_ollama.reply
    assert set(_extractive_quotes(CENTERS)) <= {line.rsplit(" [", 1)[0] for line in quoted.splitlines()}
    retr.plan.prose_intent = False
    assert "own words" not in answer(CENTERS, retr, settings_for(fake_ollama)).answer


def test_an_uncited_prose_answer_off_the_passages_topic_gets_no_quotes(fake_ollama):
    question = "What colour is Acme's headquarters painted?"
    fake_ollama.reply = "Acme's headquarters are painted blue."
    res = answer(question, _prose_retrieval(question), settings_for(fake_ollama))
    assert "own words" not in res.answer and res.citations == []
    assert any("cites no source" in w for w in res.warnings)


# ------------------------------------------------------------------------------------------------- placeholders


def test_placeholder_markers_are_removed_and_warned_about(fake_ollama):
    fake_ollama.reply = "Total revenue was $48,210 million [n]. Revenue increased 5% [Citation] [2]. Costs [?] rose."
    pieces, res = run_stream(QUESTION, _retrieval(), settings_for(fake_ollama))
    for marker in ("[n]", "[Citation]", "[?]"):
        assert marker not in res.answer and marker not in "".join(pieces)
    assert res.answer == "Total revenue was $48,210 million. Revenue increased 5% [2]. Costs rose."
    warning = next(w for w in res.warnings if w.startswith("Removed [n]"))
    assert "[Citation]" in warning and "[?]" in warning and "placeholder" in warning


# ------------------------------------------------------------------------------------- claims and their citations


def test_a_claim_its_cited_passage_does_not_hold_is_unsupported(fake_ollama):
    fake_ollama.reply = ("The chief legal officer of Acme as of 2025 is Jane Q. Example [1]. Total revenue was "
                         "$48,210 million in 2024 [1].")
    res = answer(QUESTION, _retrieval(), settings_for(fake_ollama))
    assert res.unsupported_claims == ["The chief legal officer of Acme as of 2025 is Jane Q. Example."]
    assert any(w.startswith("Check this claim:") and "Jane Q. Example" in w and "[1]" in w for w in res.warnings)
    assert not res.refused and [c.number for c in res.citations] == [1]


def test_a_name_its_cited_passage_does_not_give_is_unsupported_even_among_its_words(fake_ollama):
    fake_ollama.reply = ("Total revenue increased 5% in 2024 as Jordan Example expanded the industrial segment [2]. "
                         "Operating expenses grew more slowly than revenue [2].")
    res = answer(QUESTION, _retrieval(), settings_for(fake_ollama))
    assert res.unsupported_claims == ["Total revenue increased 5% in 2024 as Jordan Example expanded the industrial "
                                      "segment."]


SIGNATURES = """Acme Corp (ACME) · 10-K · FY2024 · Signatures
/s/ Jane Q. Example | Chief Executive Officer and Director | May 1, 2025
/s/ John R. Sample | Senior Vice President, Chief Financial Officer | May 1, 2025"""


@pytest.mark.parametrize("reply, flagged", [
    ("The CFO of Acme is Jane Q. Example, who signed on May 1, 2025 [1].", True),  # the name, another role's line
    ("The CFO of Acme is John R. Sample, who signed on May 1, 2025 [1].", False),
])
def test_a_name_must_stand_in_its_source_beside_what_the_claim_says_of_it(fake_ollama, reply, flagged):
    meta = dict(ticker="ACME", company="Acme Corp", doc_id="acme-2024", accession="0000000000-25-000001")
    fake_ollama.reply = reply
    res = answer("Who is Acme's CFO?", retrieval("q", [make_node(SIGNATURES, "c-sig", 0.03, **meta)]),
                 settings_for(fake_ollama))
    assert res.unsupported_claims == ([reply.replace(" [1]", "")] if flagged else [])


def test_a_line_of_markers_alone_cites_the_sentence_before_it(fake_ollama):
    fake_ollama.reply = "The chief legal officer of Acme as of 2025 is Jane Q. Example.\n\n[1]"
    res = answer(QUESTION, _retrieval(), settings_for(fake_ollama))
    assert res.unsupported_claims == ["The chief legal officer of Acme as of 2025 is Jane Q. Example."]
    assert any(w.startswith("Check this claim:") and "Jane Q. Example" in w for w in res.warnings)


def test_a_paraphrase_sharing_a_key_word_or_synonym_is_supported(fake_ollama):
    fake_ollama.reply = ("Sales grew on higher industrial volumes [2]. The company consolidated two distribution "
                         "centers [2].")
    res = answer(QUESTION, _retrieval(), settings_for(fake_ollama))
    assert res.unsupported_claims == []
    assert not any(w.startswith("Check this claim:") for w in res.warnings)


# ------------------------------------------------------------------- a model's other figure, shown as contradicting


@pytest.fixture(scope="module")
def ko_layer(tmp_path_factory):
    from rag.config import get_settings
    from rag.facts import FactsLayer, FactStore
    from rag.index import IndexStore
    from tests.filings import SHARED, store_facts

    path = SHARED / "corpus" / "filings" / "KO" / "ko-20241231.htm"
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared corpus (../shared beside the project) is needed for this test")
    settings = get_settings(storage_dir=tmp_path_factory.mktemp("guards-storage"))
    store = FactStore.for_settings(settings)
    chunks: dict[str, tuple[str, dict]] = {}
    store_facts(store, IndexStore(settings).chunker(), path, chunks)
    return FactsLayer(settings, store=store, chunk_lookup=chunks.get)


def _ko_answer(fake, layer, reply: str):
    from rag.answer import answer_stream
    from rag.catalog import Catalog
    from rag.facts import CheckedStream
    from rag.question import plan_question

    question = "What was Coca-Cola's total revenue in fiscal 2024?"
    found = layer.answer_for(plan_question(question, Catalog.build(layer.filings())))
    assert found is not None and "$47,061 million" in found.block
    fake.reply = reply
    retr = retrieval("q", [make_node("Coca Cola Co. (KO) · 10-K · FY2024 · Item 7: MD&A\nNet operating revenues "
                                     "grew 3% on price, product and geographic mix.", "c-mda", ticker="KO",
                                     company="Coca Cola Co.")])
    stream = CheckedStream(answer_stream(question, retr, settings_for(fake), facts_block=found.block,
                                         fact_citations=found.citations), layer, ["KO"], [2024], facts=found)
    pieces = list(stream)
    return pieces, stream.result


def test_a_model_stating_another_figure_is_shown_as_contradicting_the_exact_one(fake_ollama, ko_layer):
    pieces, res = _ko_answer(fake_ollama, ko_layer,
                             "Coca-Cola's total revenue for fiscal 2024 was $45,754 million [2].")
    assert res.answer.index("$47,061 million") < res.answer.index("$45,754 million")  # the exact figure first
    assert res.answer.endswith("rely on the figure first.") and "disagrees with the exact figure" in res.answer
    assert "".join(pieces).strip() == res.answer  # the note streams too
    assert any(w.startswith("Check this figure") and "45,754" in w for w in res.warnings)


def test_a_model_agreeing_with_the_exact_figure_gets_no_note(fake_ollama, ko_layer):
    _pieces, res = _ko_answer(fake_ollama, ko_layer,
                              "Coca-Cola's total revenue for fiscal 2024 was $47,061 million [1].")
    assert "disagrees" not in res.answer and not any(w.startswith("Check this figure") for w in res.warnings)


# ------------------------------------------------------------ without facts: the figure read from a table leads


def _prose_retrieval(question: str):
    """The retrieval of a question the intent model reads as asking for prose (as rag.intent labels it)."""
    from rag.schema import Intent

    retr = _planned_retrieval(question, figure=False)
    retr.plan.intent = Intent("prose", 0.9, 0.99)
    return retr


def _planned_retrieval(question: str, figure: bool = True):
    from rag.catalog import Catalog
    from rag.question import plan_question

    meta = {"ticker": "ACME", "company": "Acme Corp", "fiscal_year": 2024, "form": "10-K", "doc_id": "acme-2024"}
    plan = plan_question(question, Catalog.build([meta]))
    assert bool(plan.metrics) == figure  # a figure question, or one in prose
    retr = _retrieval()
    retr.plan = plan
    return retr


def test_a_figure_read_from_the_table_leads_and_outlives_a_refusal(fake_ollama):
    question = "What was Acme's total revenue in fiscal 2024?"
    fake_ollama.reply = "The provided filings do not contain this information."
    pieces, res = run_stream(question, _planned_retrieval(question), settings_for(fake_ollama))
    assert res.answer.startswith("Figure read from the table: **48,210 million** for 2024")
    assert "do not contain" not in "".join(pieces) and not res.refused and not res.extractive
    assert [c.number for c in res.citations] == [1] and res.citations[0].chunk_id == "c-table"
    assert "".join(pieces).strip() == res.answer


def test_a_fallback_after_the_figure_lead_does_not_repeat_it(fake_ollama):
    question = "What was Acme's total revenue in fiscal 2024?"
    fake_ollama.fail = "error"
    pieces, res = run_stream(question, _planned_retrieval(question), settings_for(fake_ollama))
    assert res.extractive and res.answer.count("48,210 million") == 1
    assert res.answer.startswith("Figure read from the table")
    assert "".join(pieces).strip() == res.answer
    assert [c.number for c in res.citations] == [1]


# ----------------------------------------------------------------------------------------------- the prompt budget

_FILLER_ROWS = "\n".join(f"Other operating line {k} | {k},{k:03d} | {k},{k + 1:03d}" for k in range(1, 40))
_LONG_TABLE = TABLE.replace("Cost of revenue", _FILLER_ROWS + "\nCost of revenue")
_LONG_MDA = MDA + " " + " ".join(f"Paragraph {k} describes facility leases and warehouse logistics in region {k}."
                                 for k in range(1, 30))
_LEGAL = """Acme Corp (ACME) · 10-K · FY2024 · Item 3: Legal Proceedings
Acme is a party to ordinary routine litigation incidental to its business, none of which is material. """ + " ".join(
    f"Matter {k} concerns a supplier contract dispute pending in a state court." for k in range(1, 20))


def _long_retrieval():
    meta = dict(ticker="ACME", company="Acme Corp", doc_id="acme-2024", accession="0000000000-25-000001")
    return retrieval("q", [make_node(_LONG_TABLE, "c-table", 0.03, **meta),
                           make_node(_LONG_MDA, "c-mda", 0.02, section="Item 7", section_title="MD&A", **meta),
                           make_node(_LEGAL, "c-legal", 0.01, section="Item 3", section_title="Legal", **meta)])


def test_a_small_prompt_budget_keeps_the_sentences_that_answer_from_every_passage(fake_ollama):
    fake_ollama.reply = "Total revenue was $48,210 million in 2024 [1]."
    settings = settings_for(fake_ollama, llm_prompt_tokens=1400)
    res = answer("What was Acme's total revenue in fiscal 2024, and what drove it?", _long_retrieval(), settings)
    prompt = user_prompt(fake_ollama)
    assert "Total revenue | 48,210 | 45,900" in prompt  # the row that answers, under its column header
    assert "| 2024 | 2023" in prompt and "in millions" in prompt
    assert "Other operating line 17 |" not in prompt  # rows that do not
    assert "driven by higher volumes in the industrial segment" in prompt
    assert "Paragraph 20 describes" not in prompt
    assert '<source n="3"' in prompt  # a third passage, trimmed, before any passage is given whole
    assert prompt.count("[...]") >= 2
    assert res.prompt_tokens is not None and res.prompt_tokens <= 1400
    system = fake_ollama.chat_requests()[0]["messages"][0]["content"]
    assert (len(system) + len(prompt)) / 3 <= 1400


def test_the_default_budget_gives_short_passages_whole(fake_ollama):
    fake_ollama.reply = "Total revenue was $48,210 million in 2024 [1]."
    retr = _long_retrieval()
    retr.nodes = retr.nodes[:2]  # some 4,700 characters: under the default 2,500 tokens beside the rules
    res = answer(QUESTION, retr, settings_for(fake_ollama, llm_context_window=8192))
    prompt = user_prompt(fake_ollama)
    assert "Other operating line 17 |" in prompt and "Paragraph 20 describes" in prompt  # all fit: nothing cut
    assert "[...]" not in prompt
    assert 1000 < res.prompt_tokens <= 2500


def test_the_models_own_context_length_bounds_the_budget(fake_ollama, monkeypatch):
    from rag.answer import llm, prompt

    monkeypatch.setattr(llm, "_shown", {})
    fake_ollama.reply = "Total revenue was $48,210 million in 2024 [1]."
    settings = settings_for(fake_ollama, llm_context_window=8192, llm_prompt_tokens=8000)
    assert llm.model_context_length(settings) == 8192  # the fake's /api/show model_info
    assert prompt.prompt_budget(settings, 8192) == 8192 - 1024 - 64
    assert prompt.prompt_budget(settings, 2048) == 2048 - 1024 - 64  # a smaller model context wins
    assert prompt.prompt_budget(settings.with_overrides(llm_prompt_tokens=2500), 32768) == 2500
