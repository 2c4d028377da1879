"""The optional cross-encoder reranker (RAG_RERANK_MODEL), with a small real CrossEncoder built here: no trained
reranker exists offline, so what is tested is the plumbing: the model's scores decide the order of a search's
candidates, the setting reaches the engine, and a model that cannot be loaded gets a clear message."""

from __future__ import annotations

import pytest
import torch
from llama_index.core.schema import QueryBundle
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

from rag.config import get_settings
from rag.engine import Engine
from rag.index import IndexStore
from rag.rerank import RerankerUnavailable, load_reranker
from rag.retrieve import Retriever
from tests.filings import ACME, BOLT, write_filing

QUESTION = "zorblax coupler net sales"


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory):
    """A one-layer BERT cross-encoder with random weights (its scores are arbitrary but fixed), saved as
    sentence-transformers reads one."""
    folder = tmp_path_factory.mktemp("cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"zorblax coupler net sales acme bolt the of and".split()]
    torch.manual_seed(7)
    # Weights drawn wider than BERT's own initialisation, so that passages get scores far enough apart to order.
    model = BertForSequenceClassification(BertConfig(
        vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
        num_labels=1, max_position_embeddings=512, initializer_range=0.5))
    model.save_pretrained(folder)
    BertTokenizerFast(vocab={word: i for i, word in enumerate(words)}).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rerank")
    store = IndexStore(get_settings(storage_dir=tmp / "storage", data_dir=tmp / "data"))
    store.add([write_filing(tmp / "in", "acme.htm", **ACME), write_filing(tmp / "in", "bolt.htm", **BOLT)])
    return store


def _search(retriever: Retriever, store, k: int) -> list:
    bundle = QueryBundle(QUESTION, embedding=store.embed_model().get_query_embedding(QUESTION))
    return retriever._search(bundle, "hybrid", k, None, [])


def test_the_models_scores_decide_which_candidates_come_first(small_store, cross_encoder_dir):
    index = small_store.load()
    assert len(index) <= 20  # every chunk is a candidate of a hybrid search (it searches 20 deep)
    reranker = load_reranker(str(cross_encoder_dir))
    everything = index.nodes_at(range(len(index)))
    scores = reranker.model.predict([(QUESTION, n.get_content()) for n in everything])
    assert len({round(float(s), 6) for s in scores}) == len(everything)  # no ties: one right order
    scored = sorted(zip(scores, everything), key=lambda pair: -pair[0])
    expected = [n.node_id for _score, n in scored[:3]]

    plain = _search(Retriever(index, small_store.embed_model()), small_store, 3)
    reranked = _search(Retriever(index, small_store.embed_model(), reranker=reranker), small_store, 3)
    assert [r.node.node_id for r in reranked] == expected
    assert [r.score for r in reranked] == pytest.approx([float(s) for s, _n in scored[:3]], rel=1e-5)
    assert [r.node.node_id for r in plain] != expected  # the model changed the order fusion gave


def test_the_setting_reaches_the_engine_and_a_bad_model_is_named(small_store, cross_encoder_dir, tmp_path):
    settings = small_store.settings.with_overrides(rerank_model=str(cross_encoder_dir))
    engine = Engine(settings)
    assert engine.retriever().reranker.name == str(cross_encoder_dir)
    assert engine.retrieve(QUESTION, top_k=3).nodes
    assert Engine(small_store.settings).retriever().reranker is None  # unset: no reranking

    missing = tmp_path / "no-such-model"
    with pytest.raises(RerankerUnavailable, match="RAG_RERANK_MODEL"):
        Engine(small_store.settings.with_overrides(rerank_model=str(missing))).retriever()
