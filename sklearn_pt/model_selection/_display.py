"""PhaseTransitionDisplay: error against the trainable proportion P."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._plotting import import_matplotlib
from ._proportion_curve import proportion_curve

__all__ = ["PhaseTransitionDisplay"]


class PhaseTransitionDisplay:
    """Train/test error against the trainable proportion, with bands over seeds.

    Build it with :meth:`from_estimator` (runs :func:`proportion_curve`) or
    :meth:`from_results` (errors already computed), then call :meth:`plot`;
    several curves (one per init scale or depth) go on one axes by passing the
    same ``ax``. matplotlib is imported only when plotting.

    Parameters
    ----------
    proportions : array-like of shape (n_proportions,)
    train_errors, test_errors : array-like of shape (n_proportions, ...)
        Errors (lower is better); trailing axes (seeds, folds) are averaged
        and their standard deviation drawn as a band. ``test_errors`` may be
        None.
    label : str, default=None
        Legend label of this curve.

    Attributes
    ----------
    ax_, figure_ : matplotlib Axes and Figure
        Set by :meth:`plot`.
    lines_ : list of matplotlib lines

    Examples
    --------
    >>> from sklearn_pt.model_selection import PhaseTransitionDisplay
    >>> display = PhaseTransitionDisplay([0, 0.5, 1], [[0.3, 0.32], [0.1, 0.12],
    ...                                  [0.05, 0.05]], label="tau=1")
    >>> display.train_errors.shape
    (3, 2)
    """

    def __init__(self, proportions, train_errors, test_errors=None, *, label=None):
        self.proportions = np.asarray(proportions, dtype=float)
        self.train_errors = np.asarray(train_errors, dtype=float)
        self.test_errors = None if test_errors is None else np.asarray(test_errors)
        self.label = label

    @classmethod
    def from_results(
        cls,
        proportions,
        train_errors,
        test_errors=None,
        *,
        label=None,
        ax=None,
        **plot_kwargs,
    ) -> PhaseTransitionDisplay:
        """Plot errors computed elsewhere; see :meth:`plot` for ``plot_kwargs``."""
        return cls(proportions, train_errors, test_errors, label=label).plot(
            ax=ax, **plot_kwargs
        )

    @classmethod
    def from_estimator(
        cls,
        estimator,
        X,
        y,
        *,
        proportions: Sequence[float] = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0),
        param_name: str = "trainable_proportion",
        scoring: str = "neg_mean_squared_error",
        cv=None,
        random_states: Sequence[int] = (0, 1, 2),
        n_jobs: int | None = None,
        verbose: int = 0,
        label=None,
        ax=None,
        **plot_kwargs,
    ) -> PhaseTransitionDisplay:
        """Run :func:`proportion_curve` and plot ``-score`` as the error.

        ``scoring`` must be a ``neg_*`` error scorer (the default is the mean
        squared error), so that ``-score`` is an error. ``verbose=1`` shows
        :func:`proportion_curve`'s progress bar.
        """
        if not str(scoring).startswith("neg_"):
            raise ValueError(
                f"scoring must be an error scorer named 'neg_...' so that its "
                f"negation is an error; got {scoring!r}."
            )
        curve = proportion_curve(
            estimator,
            X,
            y,
            proportions=proportions,
            param_name=param_name,
            scoring=scoring,
            cv=cv,
            random_states=random_states,
            n_jobs=n_jobs,
            verbose=verbose,
        )
        train, test = curve.train_scores, curve.test_scores
        return cls(proportions, -train, -test, label=label).plot(ax=ax, **plot_kwargs)

    def plot(
        self,
        ax=None,
        *,
        log_x=False,
        log_y=True,
        show_test=True,
        ylabel="mean squared error",
    ) -> PhaseTransitionDisplay:
        """Draw the curves on ``ax`` (a new figure when None).

        Parameters
        ----------
        ax : matplotlib Axes, default=None
        log_x, log_y : bool, default=False, True
            Logarithmic axes (``log_x`` uses a symmetric log scale so that
            ``P = 0`` stays visible).
        show_test : bool, default=True
            Also draw the test errors (dashed), when there are any.
        ylabel : str, default="mean squared error"

        Returns
        -------
        self : PhaseTransitionDisplay
        """
        plt = import_matplotlib("PhaseTransitionDisplay")
        if ax is None:
            _, ax = plt.subplots()
        self.lines_ = []
        curves = [("train", self.train_errors, "-")]
        if show_test and self.test_errors is not None:
            curves.append(("test", self.test_errors, "--"))
        color = None
        for kind, errors, style in curves:
            flat = errors.reshape(len(self.proportions), -1)
            mean, std = flat.mean(axis=1), flat.std(axis=1)
            name = kind if self.label is None else f"{self.label} ({kind})"
            (line,) = ax.plot(
                self.proportions, mean, style, marker="o", color=color, label=name
            )
            color = line.get_color()
            ax.fill_between(
                self.proportions, mean - std, mean + std, color=color, alpha=0.2
            )
            self.lines_.append(line)
        if log_x:
            ax.set_xscale("symlog", linthresh=0.01)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel("trainable proportion P")
        ax.set_ylabel(ylabel)
        ax.legend()
        self.ax_, self.figure_ = ax, ax.figure
        return self
