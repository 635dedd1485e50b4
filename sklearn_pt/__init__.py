"""scikit-learn estimators wrapping PyTorch models to study phase transitions.

Subpackages
-----------
nn
    ``torch.nn.Module`` building blocks (usable with skorch).
neural_network
    scikit-learn estimators such as :class:`PartiallyTrainableRegressor`.
theory
    Pure functions for the papers' formulas.
kernels
    Limit kernels, random features and ridge leverage scores.
datasets
    Synthetic data of the papers: index models, phase retrieval,
    compositional targets.
feature_extraction
    Learned features as transformers (two steps of GD).
decomposition
    The spectral estimator of phase retrieval and multi-index models (a
    transformer estimating directions).
spectral
    Weight and Hessian spectra.
metrics
    Overlaps of learned directions with the true ones.
model_selection
    Sweeps over the trainable proportion and the sample ratio, and their
    displays.
experiments
    Reproductions of the papers' figures (``sklearn-pt reproduce``).

Settings
--------
:func:`config_context`, :func:`set_config` and :func:`get_config` (as in
scikit-learn) hold ``torch_threads``, the torch threads of the library's
fits: one on a busy or small machine (:ref:`defaults_threads`).
"""

from ._config import config_context, get_config, set_config

__version__ = "0.1.0.dev0"

__all__ = ["__version__", "config_context", "get_config", "set_config"]
