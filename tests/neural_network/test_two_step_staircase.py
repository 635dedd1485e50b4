"""The second step's extra spike on a multi-index (staircase) target.

Why a multi-index target: in the expansion of the second gradient step, the
order-``k`` term is (in the population limit) a rank-one matrix whose left
vector is ``a^(k+1)`` (entrywise, times a mean derivative of ``sigma``) and
whose right vector is ``E[y <beta_1, x>^k x]``, ``beta_1`` being the direction
learned by the first step. For a single-index target every such right vector
is parallel to ``beta_1``: the sum of the terms is rank one however many are
large, so the weights show one outlier (what tests/neural_network/
test_two_step.py measures, with the ``spike_count >= 2`` counts as strict
xfails). For ``y = z_1 + z_1 z_2`` (``z_i = <theta_i, x>``) the ``k = 1`` term
points along ``theta_2`` instead (``E[y z_1 x] = theta_2``), so it appears as
a second outlier exactly when it is large, i.e. when
``spike_count(alpha1, alpha2) >= 1`` (``alpha1 + alpha2 > 1/2``).

Measured at d = N = 300, n = 8 d, seeds 0-3, ``c = (2, 2)``, reused batch
(the ratio ``s_2 / s_3`` of the second to the third singular value of
``W_2``, and the best ``|cos|`` of the top two right singular vectors with
``theta_2``): predicted 0 at (0.3, 0.1) and (0.25, 0.2): ratio 1.00-1.05,
cosine 0.08-0.43 (mean 0.18, 0.30); predicted >= 1 at (0.3, 0.3) and
(0.4, 0.45): ratio 1.17-2.95, cosine 0.58-0.75 (mean 0.63, 0.75).
"""

import numpy as np
import pytest

from sklearn_pt.datasets import make_multi_index
from sklearn_pt.neural_network import TwoStepFeatureLearner
from sklearn_pt.theory import spike_count

N_FEATURES = 300
SEEDS = range(4)


# SVD-heavy: one torch thread (see the fixture in tests/conftest.py).
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def staircase(z):
    """``y = z_1 + z_1 z_2``: a linear part, and ``theta_2`` reachable from it."""
    return z[:, 0] + z[:, 0] * z[:, 1]


def second_spike(step_size_exponents, seed):
    """``s_2 / s_3`` of the final weights and the top-two vectors' best
    ``|cos|`` with ``theta_2``."""
    X, y, directions = make_multi_index(
        8 * N_FEATURES,
        N_FEATURES,
        n_directions=2,
        link=staircase,
        random_state=seed,
        return_directions=True,
    )
    learner = TwoStepFeatureLearner(
        hidden_layer_sizes=N_FEATURES,
        step_size_exponents=step_size_exponents,
        step_size_constants=(2.0, 2.0),
        readout_fraction=0.2,
        random_state=seed,
        dtype="float64",
    ).fit(X, y)
    _, s, vt = np.linalg.svd(learner.first_layer_weights_[-1], full_matrices=False)
    return s[1] / s[2], np.abs(vt[:2] @ directions[:, 1]).max()


@pytest.mark.parametrize("step_size_exponents", [(0.3, 0.1), (0.25, 0.2)])
def test_no_second_spike_below_the_line(step_size_exponents):
    assert spike_count(*step_size_exponents) == 0
    ratios, cosines = np.array([second_spike(step_size_exponents, s) for s in SEEDS]).T
    # No outlier: the second singular value sits on the bulk's edge.
    assert ratios.max() < 1.1, ratios
    assert cosines.mean() < 0.4, cosines


@pytest.mark.parametrize("step_size_exponents", [(0.3, 0.3), (0.4, 0.45)])
def test_second_spike_along_theta_2_above_the_line(step_size_exponents):
    assert spike_count(*step_size_exponents) >= 1
    ratios, cosines = np.array([second_spike(step_size_exponents, s) for s in SEEDS]).T
    assert ratios.min() > 1.12, ratios
    assert cosines.min() > 0.5, cosines
