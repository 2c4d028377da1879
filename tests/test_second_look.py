"""The second look inside the best passages, and the soft prior for the Items a question's topic points to."""

from __future__ import annotations

import numpy as np
from llama_index.core.schema import NodeWithScore, TextNode

from rag.second_look import SentenceVectors, passage_sentences

TOPICS = ["headcount", "supply", "weather", "stores", "brand"]


class _TopicEmbedding:
    """A stand-in embedder: a sentence's vector points at the topics whose word it holds, unit length."""

    def __init__(self):
        self.batches: list[list[str]] = []

    def get_text_embedding_batch(self, texts):
        self.batches.append(list(texts))
        out = []
        for text in texts:
            v = np.array([1.0 if t in text.lower() else 0.0 for t in TOPICS]) + 1e-3
            out.append((v / np.linalg.norm(v)).tolist())
        return out


def _query(topic):
    v = np.array([1.0 if t == topic else 0.0 for t in TOPICS])
    return v.tolist()


def _passage(name, sentences, section="Item 1"):
    text = f"ACME (ACME) · 10-K · FY2024 · {section}: Business\n" + " ".join(sentences)
    return NodeWithScore(node=TextNode(id_=name, text=text, metadata={"section": section}), score=1.0)


def test_sentences_leave_out_the_header_and_pieces_too_short_to_say_anything():
    text = ("ACME (ACME) · 10-K · FY2024 · Item 1: Business headcount\nHuman Capital\n"
            "We had about 1,250 employees at the end of the year. Most of them work in our plants in Ohio.")
    assert passage_sentences(text) == ["We had about 1,250 employees at the end of the year.",
                                       "Most of them work in our plants in Ohio."]


def test_the_passage_with_the_sentence_that_answers_comes_first():
    # The first passage touches the question's subject in every sentence without one about it alone; the third
    # holds one sentence on exactly that among others.
    mixed = _passage("mixed", ["Headcount and supply costs rose with weather delays in our stores.",
                               "Supply of widgets and headcount planning depend on the weather each year."])
    other = _passage("other", ["Our stores opened in three new states during the year.",
                               "The stores carry about forty thousand products each."])
    answer = _passage("answer", ["Our brand is known around the world for its widgets.",
                                 "Our total headcount at year end was about 1,250 people."])
    tail = _passage("tail", ["Headcount grew in every region we operate in."])
    embedder = _TopicEmbedding()
    vectors = SentenceVectors(embedder)
    ranked = vectors.by_best_sentence([mixed, other, answer, tail], _query("headcount"), k=3)
    assert [r.node.node_id for r in ranked] == ["answer", "mixed", "other", "tail"]  # past k: unchanged
    # Each passage's sentences are embedded once; a later question reads them from memory.
    assert sum(len(b) for b in embedder.batches) == 6
    again = vectors.by_best_sentence([mixed, other, answer], _query("stores"), k=3)
    assert [r.node.node_id for r in again] == ["other", "mixed", "answer"]
    assert sum(len(b) for b in embedder.batches) == 6


def test_a_passage_without_sentences_keeps_its_place_after_those_with_them():
    heading_only = _passage("heading", ["Headcount"])
    answer = _passage("answer", ["Our total headcount at year end was about 1,250 people."])
    ranked = SentenceVectors(_TopicEmbedding()).by_best_sentence([heading_only, answer], _query("headcount"))
    assert [r.node.node_id for r in ranked] == ["answer", "heading"]
