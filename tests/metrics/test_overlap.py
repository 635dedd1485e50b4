"""One module for the overlap metrics; their former homes forward to it."""

import importlib

import numpy as np
import pytest

import sklearn_pt.metrics as metrics

FORMER = {
    "subspace_overlap": ["sklearn_pt.decomposition", "sklearn_pt.linear_model"],
    "neuron_overlap": ["sklearn_pt.neural_network"],
    "eigenvector_overlap": ["sklearn_pt.spectral"],
    "estimator_overlap": ["sklearn_pt.model_selection"],
}


def test_every_overlap_metric_is_in_metrics():
    assert sorted(metrics.__all__) == sorted(FORMER)


@pytest.mark.parametrize(
    "name, module", [(n, m) for n, modules in FORMER.items() for m in modules]
)
def test_former_paths_forward_with_a_future_warning(name, module):
    former = importlib.import_module(module)
    assert name not in former.__all__
    with pytest.warns(FutureWarning, match=rf"moved to sklearn_pt\.metrics\.{name}"):
        assert getattr(former, name) is getattr(metrics, name)


def test_neuron_overlap_is_the_best_cosine_or_the_subspace_overlap():
    W = np.array([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    assert metrics.neuron_overlap(W, [0.0, 2.0, 0.0]) == pytest.approx(2**-0.5)
    # Two directions: the span of W's rows is span(e1, e2).
    two = np.eye(3)[:, :2]
    assert metrics.neuron_overlap(W, two) == pytest.approx(1.0)
    assert metrics.subspace_overlap(two, np.eye(3)[:, 2]) == pytest.approx(0.0)
