"""``set_output(transform="pandas")`` on every transformer (the ``pandas``
extra: ``pip install sklearn_pt[pandas]``)."""

import numpy as np
import pytest

from sklearn_pt.datasets import make_single_index
from sklearn_pt.decomposition import SpectralEstimator
from sklearn_pt.feature_extraction import TwoStepFeatures
from sklearn_pt.kernels import BiasedReLUFeatures

pd = pytest.importorskip("pandas")

TRANSFORMERS = [
    TwoStepFeatures(hidden_layer_sizes=16, random_state=0),
    BiasedReLUFeatures(n_components=12, random_state=0),
    SpectralEstimator(n_components=2, preprocessing="identity"),
]


@pytest.mark.parametrize("transformer", TRANSFORMERS, ids=lambda t: type(t).__name__)
def test_pandas_output_is_the_array_output_with_feature_names(transformer):
    X, y = make_single_index(80, 6, link="he2", random_state=0)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(6)])
    array = transformer.fit(frame, y).transform(frame)
    result = transformer.set_output(transform="pandas").transform(frame)
    assert isinstance(result, pd.DataFrame)
    assert list(result.columns) == list(transformer.get_feature_names_out())
    assert result.index.equals(frame.index)
    np.testing.assert_array_equal(result.to_numpy(), array)
