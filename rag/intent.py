"""What a question intends, read from labelled examples instead of phrase rules.

`rag/data/intents.jsonl` holds questions an analyst might type, one a line, each labelled with what it asks: a
figure, a count, a calculation or comparison, prose, or a list (what the filings answer), or investment advice,
market data, a forecast, or something unrelated to filings (what they cannot). A logistic regression is fitted on
them when first needed, over each question's vector from the index's own embedding model and its words; a question
is read with the companies it names replaced by the stand-ins the examples use. A new way of asking is a new line
of data, and tests/test_intent.py cross-validates the whole file.
"""

from __future__ import annotations

import json
import threading
import weakref
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from .schema import Intent, QuestionPlan

EXAMPLES_PATH = Path(__file__).parent / "data" / "intents.jsonl"
# The labels the examples may carry, which of them the filings answer, and the stand-ins the examples write for the
# companies a question names (in the order it names them).
_LABELS = json.loads((Path(__file__).parent / "data" / "intent_labels.json").read_text(encoding="utf-8"))
IN_SCOPE: tuple[str, ...] = tuple(_LABELS["in_scope"])
OUT_OF_SCOPE: tuple[str, ...] = tuple(_LABELS["out_of_scope"])
LABELS = IN_SCOPE + OUT_OF_SCOPE
STAND_INS: tuple[str, ...] = tuple(_LABELS["stand_ins"])

# A question is out of scope when the examples of what filings cannot answer take more than this share of the
# probability. Chosen with FIT_STRENGTH by ten-fold cross-validation over the examples (tests/test_intent.py keeps
# it honest): 3.3% of the in-scope examples and 10% of the out-of-scope ones land on the wrong side of it; a lower
# threshold trades refused answers (worse for an analyst) for caught refusals.
REFUSE_ABOVE = 0.5
# How closely the fit follows the examples (scikit-learn's C): 16 fitted them closer and generalised worse.
FIT_STRENGTH = 4.0


class IntentExamplesError(ValueError):
    """The examples file is malformed: a line that is not JSON, an unknown label, a question left empty."""


@lru_cache(maxsize=2)
def load_examples(path: Path = EXAMPLES_PATH) -> tuple[tuple[str, str], ...]:
    """(label, question) pairs, validated: every label known, every question written once."""
    pairs, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            label, question = row["intent"], " ".join(str(row["question"]).split())
        except (ValueError, KeyError, TypeError) as exc:
            raise IntentExamplesError(f"{path.name} line {number}: not an example ({exc})") from None
        if label not in LABELS:
            raise IntentExamplesError(f"{path.name} line {number}: unknown intent {label!r}")
        if not question or question.lower() in seen:
            raise IntentExamplesError(f"{path.name} line {number}: empty or repeated question")
        seen.add(question.lower())
        pairs.append((label, question))
    return tuple(pairs)


def masked_question(plan: QuestionPlan) -> str:
    """The question with each company it names written as a stand-in, so that who is asked about does not pull
    it towards examples of another kind."""
    question = plan.question
    names = sorted((start, end, value) for start, end, dimension, value in plan.spans if dimension == "ticker")
    stand_in: dict[object, str] = {}
    out, last = [], 0
    for start, end, value in names:
        if start < last:
            continue
        stand_in.setdefault(value, STAND_INS[min(len(stand_in), len(STAND_INS) - 1)])
        out += [question[last:start], stand_in[value]]
        last = end
    out.append(question[last:])
    masked = "".join(out)
    for name in [*plan.unknown_companies, *plan.ambiguous_companies]:
        if name and name in masked:
            masked = masked.replace(name, STAND_INS[min(len(stand_in), len(STAND_INS) - 1)])
    return masked


class IntentModel:
    """A logistic regression over two views of a question: its sentence vector (what it means) and its words and
    word pairs, tf-idf weighted (how it is put: "should I", "will it"). Fitted on the examples when first used."""

    def __init__(self, embed_model, examples: tuple[tuple[str, str], ...] | None = None):
        self.embed_model = embed_model
        self.examples = examples if examples is not None else load_examples()
        self._fitted = None
        self._vectors: np.ndarray | None = None
        self._lock = threading.Lock()

    def _features(self, texts: list[str], vectorizer, vectors=None):
        if vectors is None:
            vectors = self.embed_model.get_text_embedding_batch(texts)
        return sparse.hstack([sparse.csr_matrix(_unit(vectors)), vectorizer.transform(texts)]).tocsr()

    def example_vectors(self) -> np.ndarray:
        with self._lock:
            if self._vectors is None:
                self._vectors = _unit(self.embed_model.get_text_embedding_batch([q for _, q in self.examples]))
            return self._vectors

    def fit(self, indices=None):
        """The fitted (vectorizer, model) on all examples, or on those at `indices` (cross-validation)."""
        chosen = list(range(len(self.examples))) if indices is None else list(indices)
        texts = [self.examples[i][1] for i in chosen]
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True).fit(texts)
        model = LogisticRegression(C=FIT_STRENGTH, max_iter=3000)
        model.fit(self._features(texts, vectorizer, self.example_vectors()[chosen]),
                  [self.examples[i][0] for i in chosen])
        return vectorizer, model

    def fitted(self):
        if self._fitted is None:
            fitted = self.fit()
            with self._lock:
                self._fitted = self._fitted or fitted
        return self._fitted

    def classify_text(self, text: str, fitted=None) -> Intent:
        vectorizer, model = fitted or self.fitted()
        text = " ".join(text.split())
        probabilities = model.predict_proba(self._features([text], vectorizer))[0]
        return intent_of(dict(zip(model.classes_, probabilities)))

    def classify_examples(self, indices, fitted) -> list[Intent]:
        """The intents a fit gives the examples at `indices`, from their stored vectors (cross-validation)."""
        vectorizer, model = fitted
        texts = [self.examples[i][1] for i in indices]
        rows = model.predict_proba(self._features(texts, vectorizer, self.example_vectors()[list(indices)]))
        return [intent_of(dict(zip(model.classes_, row))) for row in rows]

    def classify(self, plan: QuestionPlan) -> Intent:
        return self.classify_text(masked_question(plan))


def intent_of(probabilities: dict[str, float]) -> Intent:
    """The Intent the model's class probabilities give."""
    label = max(probabilities, key=probabilities.get)
    in_scope = sum(p for name, p in probabilities.items() if name in IN_SCOPE)
    out = {name: p for name, p in probabilities.items() if name in OUT_OF_SCOPE}
    refused_as = max(out, key=out.get) if out and 1 - in_scope > REFUSE_ABOVE else None
    return Intent(str(label), round(float(probabilities[label]), 3), round(float(in_scope), 3),
                  str(refused_as) if refused_as else None)


def _unit(vectors) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


# One classifier per embedding model in this process: id(model) -> (a weak reference to it, its classifier).
_CLASSIFIERS: dict[int, tuple[weakref.ref, IntentModel]] = {}
_CLASSIFIERS_LOCK = threading.Lock()


def classifier_for(embed_model) -> IntentModel:
    with _CLASSIFIERS_LOCK:
        held = _CLASSIFIERS.get(id(embed_model))
        if held is None or held[0]() is not embed_model:
            held = _CLASSIFIERS[id(embed_model)] = (weakref.ref(embed_model), IntentModel(embed_model))
        return held[1]


def read_intent(plan: QuestionPlan, embed_model) -> QuestionPlan:
    """The plan with its `intent` read (in place, and returned); a retriever without an embedding model (keyword
    search only) leaves it None, and only the closed-vocabulary refusals apply."""
    if embed_model is not None and plan.question.strip():
        plan.intent = classifier_for(embed_model).classify(plan)
    return plan
