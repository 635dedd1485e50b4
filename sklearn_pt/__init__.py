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
"""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
