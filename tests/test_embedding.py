"""Embedding backends: the ONNX exports give the PyTorch model's vectors, are made once and reused, the backend
setting is checked, and the index keys its vectors on the backend so a switch re-embeds."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

from rag.config import EMBED_BACKENDS, Settings, get_settings
from rag.embedding import EmbeddingModelError, get_embed_model, resolve_model_path
from rag.index import IndexStore
from rag.index.chunking import chunker_version
from tests.filings import ACME, write_filing

ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (requirements.txt)")
onnx_embedding = pytest.importorskip("rag.onnx_embedding")

MODEL = get_settings().embed_model
TEXTS = [
    "Net sales increased 8% compared to the prior fiscal year, driven by higher services revenue.",
    "Item 1A. Risk Factors",
    "The Company's operations are subject to risks from changes in foreign currency exchange rates. " * 30,
    "Unresolved staff comments: none.",
]


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory):
    """One export per test session (about 10 s on two busy cores): both ONNX backends, cached here."""
    folder = tmp_path_factory.mktemp("models")
    for backend in ("onnx", "onnx-int8"):
        get_embed_model(MODEL, backend=backend, models_dir=folder)
    return folder


def _vectors(model, texts):
    return np.asarray(model.get_text_embedding_batch(texts), dtype="float32")


@pytest.mark.parametrize("backend, floor", [("onnx", 0.9999), ("onnx-int8", 0.98)])
def test_onnx_vectors_match_pytorch(models_dir, backend, floor):
    """Same tokenizer, truncation at 256 word pieces (the long text), mean pooling, unit length."""
    reference = _vectors(get_embed_model(MODEL), TEXTS)
    vectors = _vectors(get_embed_model(MODEL, backend=backend, models_dir=models_dir), TEXTS)
    assert vectors.shape == reference.shape
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.min(np.sum(vectors * reference, axis=1)) > floor


def test_query_and_text_embeddings_agree(models_dir):
    model = get_embed_model(MODEL, backend="onnx-int8", models_dir=models_dir)
    query = np.asarray(model.get_query_embedding(TEXTS[0]))
    text = _vectors(model, TEXTS[:2])[0]
    # One text per run on the CPU: a query gets exactly the vector its text got at indexing, whatever its batch.
    assert np.allclose(query, text, atol=1e-6)


def test_export_is_cached_and_reused(models_dir, monkeypatch):
    from rag import onnx_export

    cached = {b: onnx_embedding.onnx_model_file(models_dir, MODEL, b) for b in ("onnx", "onnx-int8")}
    assert all(path.is_file() for path in cached.values())
    assert not [p for p in models_dir.iterdir() if p.name.startswith(".tmp-")], "a temporary export was left"
    stamps = {b: os.stat(path).st_mtime_ns for b, path in cached.items()}

    def no_export(*args):
        raise AssertionError("exported again although the file is cached")

    monkeypatch.setattr(onnx_export, "export_fp32", no_export)
    monkeypatch.setattr(onnx_export, "quantise_int8", no_export)
    path = resolve_model_path(MODEL)
    for backend, file in cached.items():
        assert onnx_embedding.ensure_onnx_model(path, models_dir, MODEL, backend) == file
        assert os.stat(file).st_mtime_ns == stamps[backend]


def test_failed_export_leaves_no_cached_file(tmp_path, monkeypatch):
    """An export that dies half-way must not leave a file the next run would take for a finished export."""
    from rag import onnx_export

    def half_written(model_dir, out):
        out.write_bytes(b"partial")
        raise RuntimeError("export died")

    monkeypatch.setattr(onnx_export, "export_fp32", half_written)
    with pytest.raises(RuntimeError, match="export died"):
        onnx_embedding.ensure_onnx_model(resolve_model_path(MODEL), tmp_path, MODEL, "onnx")
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


def test_backend_setting_is_validated(monkeypatch):
    monkeypatch.setenv("RAG_EMBED_BACKEND", "onnx-int4")
    with pytest.raises(ValueError, match="RAG_EMBED_BACKEND must be one of torch, onnx, onnx-int8"):
        Settings()
    monkeypatch.setenv("RAG_EMBED_BACKEND", "onnx")
    assert Settings().embed_backend == "onnx"
    with pytest.raises(EmbeddingModelError, match="unknown embedding backend"):
        get_embed_model(MODEL, backend="tensorrt")
    with pytest.raises(EmbeddingModelError, match="needs a folder"):
        get_embed_model(MODEL, backend="onnx")


def test_fingerprint_changes_with_backend(tmp_path):
    prints = {b: IndexStore(get_settings(storage_dir=tmp_path, embed_backend=b)).fingerprint for b in EMBED_BACKENDS}
    assert len(set(prints.values())) == len(EMBED_BACKENDS)
    # torch keeps the fingerprint indexes had before backends existed, so they are not rebuilt for nothing.
    settings = get_settings(storage_dir=tmp_path)
    legacy = f"{settings.embed_model}|{settings.chunk_tokens}/{settings.statement_chunk_tokens}|{chunker_version()}"
    assert prints["torch"] == hashlib.sha256(legacy.encode()).hexdigest()[:10]


def test_backend_switch_re_embeds_every_chunk(models_dir, tmp_path):
    """Vector reuse keys on the backend: no torch vector ends up in an int8 index; the index says which made it."""
    acme = write_filing(tmp_path / "in", "acme.htm", **ACME, business_paragraphs=6)
    storage = tmp_path / "storage"
    (storage / "models").mkdir(parents=True)
    for file in models_dir.glob("*.onnx"):  # the session's export, so this test does not export again
        (storage / "models" / file.name).symlink_to(file)
    torch_store = IndexStore(get_settings(storage_dir=storage, embed_backend="torch"))
    assert torch_store.add([acme]).rows[0]["status"] == "indexed"

    int8_store = IndexStore(get_settings(storage_dir=storage, embed_backend="onnx-int8"))
    row = int8_store.add([acme]).rows[0]
    assert row["status"] == "indexed" and row["chunks"] > 0
    assert row["reused"] == 0, "vectors of another backend were reused"
    index = int8_store.load()
    assert index.manifest["embed_backend"] == "onnx-int8"
    assert {f["embed_backend"] for f in index.manifest["filings"].values()} == {"onnx-int8"}
    stored = index.vector_store.client.reconstruct_n(0, len(index))
    fresh = _vectors(int8_store.embed_model(), [n.text for n in index.nodes])
    assert np.allclose(stored, fresh, atol=1e-5)
    # Indexing again with the same backend skips the unchanged filing.
    assert int8_store.add([acme]).rows[0]["status"] == "skipped"
