"""Boilerplate by what it says, in any index: a logistic regression over the embedding model's sentence vectors,
its weights saved as data in `rag/data/boilerplate.json`.

rag.recurring tells boilerplate by asking the index whether other companies print a sentence too, which needs an
index of several companies and a near copy. This model learned from that test, run over a large index (`python -m
rag.boilerplate_fit`), what such sentences are like (cover-page checkboxes, auditors' and internal-control
statements, cautions on forward-looking statements), so it rates a sentence in an index of one company too, where
recurrence can say nothing. A filer's own meta sentences, in words no other filer prints, it rates lower.

The weights only mean something for vectors of the model they were fitted on: the file keeps the vector of a fixed
probe sentence, and an embedding model that places the probe elsewhere gets no boilerplate likelihood at all.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .embedding import text_vectors

MODEL_PATH = Path(__file__).resolve().parent / "data" / "boilerplate.json"

# Any fixed sentence serves: its vector identifies the embedding model the weights were fitted on.
PROBE = "The probe sentence: a factory in a small town ships blue widgets to customers by rail every Tuesday."
# Cosine of the probe's vector under the model in use and under the fitted one: the same model's int8 export places
# it at about 0.98; another model's space is unrelated (near 0).
SAME_MODEL = 0.9


class BoilerplateModelError(ValueError):
    """The weights file is not one this code can read."""


@dataclass(frozen=True)
class BoilerplateModel:
    coef: np.ndarray
    intercept: float
    probe: np.ndarray

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> BoilerplateModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        try:
            coef = np.asarray(data["coef"], dtype=np.float32)
            probe = np.asarray(data["probe"], dtype=np.float32)
            intercept = float(data["intercept"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BoilerplateModelError(f"{path.name}: needs coef, intercept and probe ({exc})") from exc
        if coef.ndim != 1 or coef.shape != probe.shape or not np.all(np.isfinite(coef)) or not np.isfinite(intercept):
            raise BoilerplateModelError(f"{path.name}: coef and probe must be finite vectors of one length")
        return cls(coef, intercept, probe)

    def fits(self, embed_model) -> bool:
        """Are the weights for this embedding model's vectors (its vector of the probe is the saved one)?"""
        vector = text_vectors(embed_model, [PROBE])[0]
        return vector.shape == self.probe.shape and float(vector @ self.probe) >= SAME_MODEL

    def likelihood(self, vectors: np.ndarray) -> np.ndarray:
        """For unit-length sentence vectors (one a row), how likely each is boilerplate, 0 to 1."""
        return 1.0 / (1.0 + np.exp(-(vectors @ self.coef + self.intercept)))


_FITTING: dict[int, tuple[object, BoilerplateModel | None]] = {}
_LOCK = threading.Lock()


def boilerplate_model(embed_model) -> BoilerplateModel | None:
    """The shipped model when its weights fit this embedding model's vectors, else None (checked once a model)."""
    with _LOCK:
        held = _FITTING.get(id(embed_model))
        if held is not None and held[0] is embed_model:
            return held[1]
    model = BoilerplateModel.load()
    found = model if model.fits(embed_model) else None
    with _LOCK:
        _FITTING[id(embed_model)] = (embed_model, found)
    return found
