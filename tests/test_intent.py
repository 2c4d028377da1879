"""The intent model (rag.intent): its examples file, how well it generalises, and how a plan's companies are read."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from rag.catalog import Catalog
from rag.config import get_settings
from rag.embedding import get_embed_model
from rag.intent import (
    IN_SCOPE,
    LABELS,
    OUT_OF_SCOPE,
    IntentExamplesError,
    IntentModel,
    load_examples,
    masked_question,
    read_intent,
)
from rag.question import plan_question


@pytest.fixture(scope="module")
def model():
    return IntentModel(get_embed_model(get_settings().embed_model))


def test_every_example_is_labelled_and_every_label_has_examples():
    examples = load_examples()
    assert len(examples) >= 300
    counts = {label: sum(1 for lab, _ in examples if lab == label) for label in LABELS}
    assert all(n >= 10 for n in counts.values()), counts


@pytest.mark.parametrize("line, problem", [
    ('{"intent": "guess", "question": "What now?"}', "unknown intent"),
    ('{"intent": "figure"}', "not an example"),
    ("figure: What was revenue?", "not an example"),
    ('{"intent": "figure", "question": "  "}', "empty or repeated"),
])
def test_a_malformed_examples_file_is_refused_with_its_line(tmp_path, line, problem):
    path = tmp_path / "intents.jsonl"
    path.write_text(json.dumps({"intent": "prose", "question": "Why?"}) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(IntentExamplesError, match=f"line 2: {problem}"):
        load_examples(path)


def test_out_of_scope_questions_are_told_apart_from_questions_the_filings_answer(model):
    """Ten-fold cross-validation over the examples: each example is read by a model fitted without it. Few of the
    questions the filings answer may be refused (that loses an answer), and few of the others answered."""
    examples = model.examples
    labels = np.array([label for label, _ in examples])
    refused = np.zeros(len(examples), dtype=bool)
    for train, test in StratifiedKFold(10, shuffle=True, random_state=0).split(np.zeros(len(labels)), labels):
        intents = model.classify_examples(test, model.fit(train))
        refused[test] = [intent.refused_as is not None for intent in intents]
    inside, outside = np.isin(labels, IN_SCOPE), np.isin(labels, OUT_OF_SCOPE)
    wrongly_refused = refused[inside].mean()
    wrongly_answered = (~refused[outside]).mean()
    assert wrongly_refused <= 0.04, wrongly_refused
    assert wrongly_answered <= 0.12, wrongly_answered


def test_the_companies_a_question_names_become_the_examples_stand_ins():
    catalog = Catalog.build([{"ticker": "ZORB", "company": "Zorblax Industries Inc.", "fiscal_year": 2024},
                             {"ticker": "QUIN", "company": "Quintaphonic Corp.", "fiscal_year": 2024}])
    plan = plan_question("Should I buy Zorblax Industries or Quintaphonic, or sell ZORB?", catalog)
    assert masked_question(plan) == "Should I buy Acme or Globex, or sell Acme?"


def test_a_plan_gets_its_intent(model):
    catalog = Catalog.build([{"ticker": "ZORB", "company": "Zorblax Industries Inc.", "fiscal_year": 2024}])
    advice = read_intent(plan_question("Is Zorblax stock a good buy at today's price?", catalog), model.embed_model)
    figure = read_intent(plan_question("What were Zorblax's total revenues in fiscal 2024?", catalog),
                         model.embed_model)
    assert advice.intent.refused_as == "advice" and advice.intent.in_scope < 0.5
    assert figure.intent.refused_as is None and figure.intent.label == "figure" and figure.intent.in_scope > 0.5
