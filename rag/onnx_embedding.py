"""The embedding model on ONNX Runtime, as a LlamaIndex BaseEmbedding (the pipeline and retriever need no change).

The ONNX file is made from the local sentence-transformers folder on first use and cached as
<models_dir>/<model>-<backend>.onnx; a concurrent first use waits on a file lock, and a killed export leaves only
a temporary file, as the cached one appears by rename.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

import numpy as np
import onnxruntime as ort
from filelock import FileLock
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import Field, PrivateAttr
from transformers import AutoTokenizer

QUANTISED_BACKEND = "onnx-int8"
DEFAULT_MAX_TOKENS = 256


class OnnxModelError(RuntimeError):
    pass


def onnx_model_file(models_dir: Path, model_name: str, backend: str) -> Path:
    """Where the export of a model setting for a backend is cached."""
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", model_name).strip("-.") or "model"
    return Path(models_dir) / f"{slug}-{backend}.onnx"


def read_model_config(model_dir: str) -> int:
    """The model's max_seq_length, after checking that its sentence pipeline is what the export reproduces:
    a transformer, mean pooling, (normalisation)."""
    folder = Path(model_dir)
    if not (folder / "modules.json").is_file():
        raise OnnxModelError(f"{model_dir} is not a local sentence-transformers folder (no modules.json)")
    modules = json.loads((folder / "modules.json").read_text())
    pooling = [m for m in modules if m.get("type", "").endswith(".Pooling")]
    if len(pooling) != 1:
        raise OnnxModelError(f"{model_dir}: expected one pooling module, found {len(pooling)}")
    config = json.loads((folder / pooling[0]["path"] / "config.json").read_text())
    modes = [key for key, on in config.items() if key.startswith("pooling_mode_") and on]
    if modes != ["pooling_mode_mean_tokens"]:
        raise OnnxModelError(f"{model_dir}: the ONNX backend does mean pooling only; this model uses {modes}")
    st_config = folder / "sentence_bert_config.json"
    if st_config.is_file():
        return int(json.loads(st_config.read_text()).get("max_seq_length") or DEFAULT_MAX_TOKENS)
    return DEFAULT_MAX_TOKENS


def ensure_onnx_model(model_dir: str, models_dir: Path, model_name: str, backend: str) -> Path:
    """The cached ONNX file for the backend, exported (and quantised for int8) on first use."""
    target = onnx_model_file(models_dir, model_name, backend)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if target.is_file():  # another process exported it while we waited
            return target
        # torch is needed for the export only: a process that finds the file cached never loads it.
        from . import onnx_export

        tmp = target.with_name(f".tmp-{uuid.uuid4().hex[:8]}-{target.name}")
        try:
            if backend == QUANTISED_BACKEND:
                fp32 = ensure_onnx_model(model_dir, models_dir, model_name, "onnx")
                onnx_export.quantise_int8(fp32, tmp)
            else:
                onnx_export.export_fp32(model_dir, tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    return target


def onnx_providers() -> list[str]:
    """CUDA when this onnxruntime build and machine have it, else the CPU."""
    available = ort.get_available_providers()
    return [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]


class OnnxEmbedding(BaseEmbedding):
    """Sentence vectors from an exported model: the model's own tokenizer, truncation at its max_seq_length,
    mean pooling and L2 normalisation inside the graph, so inner product is cosine as with the PyTorch model."""

    backend: str = Field(description="the EMBED_BACKENDS value this model serves")
    max_length: int = Field(default=DEFAULT_MAX_TOKENS, description="word pieces read per text, the rest dropped")
    _session: ort.InferenceSession = PrivateAttr()
    _tokenizer: object = PrivateAttr()
    _inputs: list = PrivateAttr()
    _batched: bool = PrivateAttr(default=False)

    def __init__(self, model_file: Path, model_dir: str, *, backend: str, model_name: str,
                 max_length: int = DEFAULT_MAX_TOKENS, embed_batch_size: int = 32):
        super().__init__(model_name=model_name, backend=backend, max_length=max_length,
                         embed_batch_size=embed_batch_size)
        self._session = ort.InferenceSession(str(model_file), providers=onnx_providers())
        self._tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self._inputs = [i.name for i in self._session.get_inputs()]
        self._batched = "CUDAExecutionProvider" in self._session.get_providers()

    @classmethod
    def class_name(cls) -> str:
        return "OnnxEmbedding"

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if self._batched:
            encoded = self._tokenizer(list(texts), padding=True, truncation=True,
                                      max_length=self.max_length, return_tensors="np")
            return self._run(encoded).tolist()
        # On the CPU one text per run: no work on padding (measured faster than padded batches of chunks of
        # mixed length), and int8 activations are scaled per run, so a text's vector must not depend on which
        # texts share its batch: a query then gets exactly the vector the same text got when it was indexed.
        encoded = self._tokenizer(list(texts), truncation=True, max_length=self.max_length)
        rows = [{name: [encoded[name][i]] for name in self._inputs} for i in range(len(texts))]
        return np.vstack([self._run(row) for row in rows]).tolist()

    def _run(self, encoded) -> np.ndarray:
        feed = {name: np.asarray(encoded[name], dtype=np.int64) for name in self._inputs}
        return self._session.run(None, feed)[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query])[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)


def load_onnx_embedding(model_dir: str, models_dir: Path, model_name: str, backend: str,
                        batch_size: int = 32) -> OnnxEmbedding:
    max_length = read_model_config(model_dir)
    model_file = ensure_onnx_model(model_dir, models_dir, model_name, backend)
    return OnnxEmbedding(model_file, model_dir, backend=backend, model_name=model_name, max_length=max_length,
                         embed_batch_size=batch_size)
