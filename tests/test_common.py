"""scikit-learn's estimator checks over every public estimator and transformer.

Each estimator is listed with tiny settings so that the whole suite runs in
seconds on a CPU.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.kernels import BiasedReLUFeatures
from sklearn_pt.neural_network import (
    FirstLayerGDRegressor,
    PartiallyTrainableRegressor,
    TwoStepFeatureLearner,
)
from sklearn_pt.spectral import WeightSpectrum

ESTIMATORS = [
    # The default precision, float32.
    PartiallyTrainableRegressor(
        hidden_layer_sizes=(32,),
        trainable_proportion=0.5,
        max_iter=30,
        learning_rate_init=1e-2,
        random_state=0,
    ),
    # float64, several layers, full-batch solvers, no sphere projection.
    PartiallyTrainableRegressor(
        hidden_layer_sizes=(16, 16),
        trainable_proportion=(0.5, 0.25),
        project_to_sphere=False,
        solver="lbfgs",
        max_iter=30,
        random_state=0,
        dtype="float64",
    ),
    PartiallyTrainableRegressor(
        hidden_layer_sizes=(32,),
        trainable_proportion=0.0,
        readout="ridge",
        random_state=0,
        dtype="float64",
    ),
    PartiallyTrainableRegressor(
        hidden_layer_sizes=(32,),
        trainable_proportion=0.5,
        trainable_selection="leverage",
        learning_rate_init=1e-2,
        max_iter=30,
        random_state=0,
        dtype="float64",
    ),
    # The theory's design: leverage-sampled trainable neurons, readout
    # re-solved in closed form after training.
    PartiallyTrainableRegressor(
        hidden_layer_sizes=(32,),
        trainable_proportion=0.5,
        trainable_selection="leverage",
        readout="ridge",
        learning_rate_init=1e-2,
        max_iter=30,
        random_state=0,
        dtype="float64",
    ),
    BiasedReLUFeatures(n_components=16, random_state=0),
    # Two gradient steps, in float64.
    TwoStepFeatureLearner(hidden_layer_sizes=16, random_state=0, dtype="float64"),
    TwoStepFeatureLearner(
        hidden_layer_sizes=(16,),
        activation="tanh",
        step_batches="fresh",
        loss="squared",
        random_state=0,
        dtype="float64",
    ),
    TwoStepFeatures(hidden_layer_sizes=16, random_state=0, dtype="float64"),
    TwoStepFeatures(
        hidden_layer_sizes=16,
        n_steps=1,
        step_batches="fresh",
        random_state=0,
        dtype="float64",
    ),
    # First-layer GD (float64, its default).
    FirstLayerGDRegressor(
        hidden_layer_sizes=4, learning_rate_init=0.1, max_iter=20, random_state=0
    ),
    FirstLayerGDRegressor(
        hidden_layer_sizes=4,
        activation="tanh",
        second_layer="signs",
        init=SpectralEstimator(preprocessing="identity"),
        learning_rate_init=0.1,
        max_iter=20,
        random_state=0,
    ),
    SpectralEstimator(),
    SpectralEstimator(n_components=2, preprocessing="trimming"),
    # fit(W) on a weight matrix (one row per neuron); no predict/transform.
    WeightSpectrum(),
    WeightSpectrum(edge="mp", margin=0.02),
]

# scikit-learn's check_methods_subset_invariance and
# check_methods_sample_order_invariance compare predict on a subset (or a
# permutation) of X with predict on all of X at rtol=1e-7, below float32's
# precision when BLAS picks different kernels for different numbers of rows
# (it does with MKL on AVX-512: 4.8e-7 at a prediction of 2.17). predict and
# transform evaluate a float32 module in float64 and round once
# (sklearn_pt._torch_bridge.predict_numpy), so every row's float32 output is the
# same whatever its batch, and these checks run as every other check, here
# and on the defaults below.


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


DEFAULT_ESTIMATORS = [
    PartiallyTrainableRegressor(random_state=0),
    TwoStepFeatureLearner(random_state=0),
    TwoStepFeatures(random_state=0),
    FirstLayerGDRegressor(random_state=0),
    BiasedReLUFeatures(random_state=0),
    SpectralEstimator(),
    WeightSpectrum(),
]


@parametrize_with_checks(DEFAULT_ESTIMATORS)
def test_sklearn_compatible_on_defaults(estimator, check):
    """Every check on the defaults a user starts from (float32 where that is
    the default), not only on the tiny settings above."""
    check(estimator)
