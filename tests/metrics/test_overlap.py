"""One module for the overlap metrics."""

import numpy as np
import pytest

import sklearn_pt.metrics as metrics


def test_every_overlap_metric_is_in_metrics():
    assert sorted(metrics.__all__) == [
        "eigenvector_overlap",
        "estimator_overlap",
        "neuron_overlap",
        "subspace_overlap",
    ]


def test_neuron_overlap_is_the_best_cosine_or_the_subspace_overlap():
    W = np.array([[3.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    assert metrics.neuron_overlap(W, [0.0, 2.0, 0.0]) == pytest.approx(2**-0.5)
    # Two directions: the span of W's rows is span(e1, e2).
    two = np.eye(3)[:, :2]
    assert metrics.neuron_overlap(W, two) == pytest.approx(1.0)
    assert metrics.subspace_overlap(two, np.eye(3)[:, 2]) == pytest.approx(0.0)
