"""One-off conversion of the local sentence-transformers model to ONNX, and its dynamic int8 quantisation.

Made with torch.onnx (the TorchScript exporter) and onnxruntime.quantization directly, not sentence-transformers'
ONNX backend: that one needs optimum-onnx, which pins transformers below the version the project pins.
The exported graph holds the whole sentence-transformers pipeline of a mean-pooling model: the transformer, mean
pooling over the attention mask, and L2 normalisation, so its output is the sentence vector itself.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from pathlib import Path

import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from transformers import AutoModel, AutoTokenizer

OPSET = 17
SENTENCE_OUTPUT = "sentence_embedding"


class MeanPooledNormalised(torch.nn.Module):
    """Transformer -> mean of the token vectors under the attention mask -> unit length (sentence-transformers'
    Pooling(mean) + Normalize modules)."""

    def __init__(self, transformer):
        super().__init__()
        self.transformer = transformer

    def forward(self, input_ids, attention_mask, token_type_ids=None):
        hidden = self.transformer(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(mean, p=2, dim=1)


def export_fp32(model_dir: str, out: Path) -> None:
    """Write the model as an fp32 ONNX graph with batch and sequence length left dynamic."""
    # Eager attention exports as plain MatMul/Softmax, which the int8 pass quantises and every runtime runs.
    transformer = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    sample = tokenizer(["a short sentence", "a somewhat longer second sentence"], padding=True, return_tensors="pt")
    names = [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample]
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    axes[SENTENCE_OUTPUT] = {0: "batch"}
    with torch.no_grad(), _quiet():
        torch.onnx.export(
            MeanPooledNormalised(transformer), tuple(sample[name] for name in names), str(out),
            input_names=names, output_names=[SENTENCE_OUTPUT], dynamic_axes=axes,
            opset_version=OPSET, dynamo=False,
        )


def quantise_int8(fp32: Path, out: Path) -> None:
    """Dynamic int8 weights for the MatMuls, one scale per output channel.

    Per-channel scales keep the vectors close to fp32 (cosine about 0.99 on filing chunks, against about 0.95 with
    one scale per tensor); the word-embedding table stays fp32, as quantising its lookup costs accuracy and no time.
    """
    with _quiet():
        quantize_dynamic(
            str(fp32), str(out), op_types_to_quantize=["MatMul"], per_channel=True, weight_type=QuantType.QInt8
        )


@contextlib.contextmanager
def _quiet():
    """The exporter's tracer warnings and the quantiser's advice (logged on the root logger) concern graphs in
    general, not this one, which the tests check against PyTorch's vectors: a user running the one-off export
    sees nothing. Errors still raise."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)
        # logging.warning() installs a handler on the root logger when it has none; left there, it would print
        # every library's debug lines for the rest of the process.
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
