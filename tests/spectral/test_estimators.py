"""hessian_spectrum and WeightSpectrum.from_estimator over every public
estimator: a result where they make sense, a TypeError naming the estimator
where they do not (issue 18's probes: a raw torch RuntimeError from
TwoStepFeatures, 'Expected 2D array' from FirstLayerGDRegressor)."""

import numpy as np
import pytest

from sklearn_pt.spectral import WeightSpectrum, hessian_spectrum
from tests.test_bad_input import ESTIMATORS, estimator_id, fit_estimator, make_data

HESSIAN = {"PartiallyTrainableRegressor", "FirstLayerGDRegressor"}
"""Estimators whose module_ makes the predictions from X."""
WEIGHTS = {
    "PartiallyTrainableRegressor",
    "FirstLayerGDRegressor",
    "TwoStepFeatureLearner",
    "TwoStepFeatures",
}
"""Estimators with first-layer weights."""


def hessian(fitted, X, y):
    result = hessian_spectrum(fitted, X, y, k=2, method="dense")
    return result.eigenvalues


def weights(fitted, X, y):
    spectrum = WeightSpectrum.from_estimator(fitted)
    assert spectrum.shape_[1] == X.shape[1]
    return spectrum.singular_values_


@pytest.mark.parametrize(
    ("analysis", "supported"), [(hessian, HESSIAN), (weights, WEIGHTS)]
)
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=estimator_id)
def test_spectra_work_or_name_the_estimator(estimator, analysis, supported):
    X, y = make_data()
    fitted = fit_estimator(estimator, X, y)
    name = type(fitted).__name__
    if name in supported:
        assert np.all(np.isfinite(analysis(fitted, X, y)))
        return
    with pytest.raises(TypeError, match=name):
        analysis(fitted, X, y)
