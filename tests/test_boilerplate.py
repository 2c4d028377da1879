"""The boilerplate model (rag.boilerplate): a logistic regression over the index's sentence vectors, fitted on
sentences labelled by recurrence across filers (rag.boilerplate_fit). The sentences here are invented."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rag.boilerplate import MODEL_PATH, BoilerplateModel, BoilerplateModelError, boilerplate_model
from rag.boilerplate_fit import company_half
from rag.config import get_settings
from rag.embedding import get_embed_model, text_vectors


@pytest.fixture(scope="module")
def embed_model():
    return get_embed_model(get_settings().embed_model)


# Meta sentences in a filer's own words: no other filing need print them, so recurrence cannot tell.
META = [
    "Statements in this annual report about our plans and expectations are predictions that may prove wrong, and we "
    "undertake no duty to revise them.",
    "Readers should weigh the risks described below together with everything else in this report before deciding to "
    "invest in our shares.",
    "Our audit committee engaged the registered public accounting firm that audited the statements in this report.",
]
SUBSTANCE = [
    "Our glass plant in the valley melts recycled bottles into insulation panels sold to builders in three states.",
    "Freight rates on our barge routes rose in the second half as river levels fell and fewer vessels could load.",
    "We opened eleven clinics last year, most of them in suburbs where our dental plans already had members.",
]


def test_the_shipped_model_rates_meta_sentences_as_boilerplate_and_the_business_as_not(embed_model):
    model = boilerplate_model(embed_model)
    assert model is not None  # the shipped weights were fitted on this embedding model's vectors
    meta = model.likelihood(text_vectors(embed_model, META))
    substance = model.likelihood(text_vectors(embed_model, SUBSTANCE))
    assert meta.min() > substance.max()
    assert np.all((meta >= 0) & (meta <= 1))


def test_weights_fitted_on_another_embedding_model_are_not_used(embed_model, tmp_path):
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    probe = np.asarray(data["probe"])
    data["probe"] = list(np.roll(probe, 7))  # the same length, another model's place for the probe
    path = tmp_path / "boilerplate.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert BoilerplateModel.load(MODEL_PATH).fits(embed_model)
    assert not BoilerplateModel.load(path).fits(embed_model)


def test_a_weights_file_without_its_probe_or_with_nans_is_refused(tmp_path):
    path = tmp_path / "boilerplate.json"
    path.write_text(json.dumps({"coef": [0.1, 0.2], "intercept": 0.0}), encoding="utf-8")
    with pytest.raises(BoilerplateModelError, match="probe"):
        BoilerplateModel.load(path)
    path.write_text(json.dumps({"coef": [0.1, float("nan")], "intercept": 0.0, "probe": [1.0, 0.0]}))
    with pytest.raises(BoilerplateModelError, match="finite"):
        BoilerplateModel.load(path)


def test_companies_fall_in_stable_halves_both_used():
    tickers = [f"T{i:03d}" for i in range(40)]
    halves = [company_half(t) for t in tickers]
    assert halves == [company_half(t) for t in tickers]
    assert 10 <= halves.count("fit") <= 30
