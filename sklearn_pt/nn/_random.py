"""Local random generators: every draw of a module or an estimator comes from
a :class:`torch.Generator` of its own, never from a global random state."""

from __future__ import annotations

import numbers

import numpy as np
import torch

__all__ = ["make_generator"]


def make_generator(random_state) -> torch.Generator:
    """A local CPU :class:`torch.Generator` seeded from ``random_state``.

    Parameters
    ----------
    random_state : int, RandomState instance, torch.Generator or None
        An int gives the same generator on every call. A ``RandomState``
        instance is advanced by one draw. A ``torch.Generator`` is returned as
        it is. ``None`` seeds from fresh operating-system entropy, so that
        NumPy's global random state is neither read nor changed (this differs
        from :func:`~sklearn.utils.check_random_state`,
        which would draw from the global state).

    Returns
    -------
    torch.Generator
        A CPU generator. Every random draw of an estimator (initialisation,
        neuron selection, mini-batch order) uses it, on CPU, so that results do
        not depend on the training device.

    Examples
    --------
    >>> import torch
    >>> from sklearn_pt.nn._random import make_generator
    >>> a = torch.rand(2, generator=make_generator(0))
    >>> b = torch.rand(2, generator=make_generator(0))
    >>> bool(torch.equal(a, b))
    True
    """
    if random_state is None:
        seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
    elif isinstance(random_state, torch.Generator):
        return random_state
    else:
        seed = int(_random_state(random_state).randint(np.iinfo(np.int32).max))
    return torch.Generator().manual_seed(seed)


def _random_state(random_state) -> np.random.RandomState:
    """``random_state`` as a RandomState: the same seeds as scikit-learn's
    ``check_random_state`` (an int seeds a new one, an instance is used)."""
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, numbers.Integral):
        return np.random.RandomState(random_state)
    raise ValueError(
        f"{random_state!r} cannot be used to seed a random generator: pass an int, "
        "a numpy RandomState, a torch.Generator or None."
    )
