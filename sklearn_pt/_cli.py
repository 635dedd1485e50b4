"""The ``sklearn-pt`` command line: reproduce the papers' figures, print the
environment.

``sklearn-pt reproduce {partial,deep,two-step,feature-learning,all}`` writes,
for each experiment, ``<name>.png`` (the figure), ``<name>.csv`` (the raw
numbers, the long table) and ``<name>.md`` (the verdicts) into ``--out``;
``sklearn-pt info`` prints versions, the device found and the thread counts;
``sklearn-pt --version`` prints the library's version.
``python -m sklearn_pt`` is the same command.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from . import __version__
from ._config import config_context

__all__ = ["build_parser", "environment_info", "main"]

EXPERIMENT_CHOICES = (
    "partial",
    "partial-approximation",
    "deep",
    "two-step",
    "feature-learning",
    "all",
)
DEVICE_CHOICES = ("cpu", "cuda", "auto")
_VISIBLE_SCALES = ("small", "medium", "paper")
_TEST_SCALE = "tiny"  # accepted, not advertised: a seconds-long run for tests


def _scale(value: str) -> str:
    """argparse type of ``--scale``: a public scale or the hidden test scale."""
    if value in _VISIBLE_SCALES or value == _TEST_SCALE:
        return value
    raise argparse.ArgumentTypeError(
        f"invalid scale {value!r} (choose from {', '.join(_VISIBLE_SCALES)}; "
        "'small' runs every experiment in about a minute on two cores)"
    )


def _positive_int(value: str) -> int:
    """argparse type of ``--seeds``: an int >= 1."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive number of seeds, e.g. 3; got {value!r}"
        )
    return number


def _n_jobs(value: str) -> int:
    """argparse type of ``--n-jobs``: a nonzero int, -1 for all cores."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number == 0:
        raise argparse.ArgumentTypeError(
            f"expected a nonzero number of parallel fits (1, 2, ... or -1 for "
            f"all cores); got {value!r}"
        )
    return number


MAX_DEFAULT_JOBS = 8


def default_n_jobs() -> int:
    """Default of ``--n-jobs``: the cores this process may run on, at most
    :data:`MAX_DEFAULT_JOBS` (the experiments have at most about that many
    seeds to run at once, and each worker process imports torch)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT_JOBS))


def _threads(value: str) -> int:
    """argparse type of ``--threads``: an int >= 0 (0: torch's default)."""
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(
            f"expected a number of threads >= 0 (0 keeps torch's default); got "
            f"{value!r}"
        )
    return number


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``sklearn-pt`` and its subcommands.

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> from sklearn_pt._cli import build_parser
    >>> args = build_parser().parse_args(["reproduce", "partial"])
    >>> args.experiment, args.scale, args.device, args.out
    ('partial', 'small', 'cpu', 'results')
    """
    parser = argparse.ArgumentParser(
        prog="sklearn-pt",
        description="Reproduce the phase transitions studied by sklearn_pt.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}",
        help="print the version of sklearn_pt and exit",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    reproduce = commands.add_parser(
        "reproduce",
        help="run an experiment and write its figure, CSV and summary",
        description="Run one experiment (or all) and write <name>.png, "
        "<name>.csv and <name>.md into --out.",
    )
    reproduce.add_argument(
        "experiment",
        choices=EXPERIMENT_CHOICES,
        help="partial: error vs trainable proportion P, and the best "
        "approximation error the bound is about (partial-approximation alone); "
        "deep: the same by depth; two-step: spectra and outliers after two GD "
        "steps; feature-learning: Hessian threshold and success rate vs n/d; "
        "all: every experiment",
    )
    reproduce.add_argument(
        "--scale",
        type=_scale,
        default="small",
        metavar="{small,medium,paper}",
        help="size of the runs (default: small, about a minute on two cores for all)",
    )
    reproduce.add_argument(
        "--device",
        choices=DEVICE_CHOICES,
        default="cpu",
        help="where the networks train (default: cpu; auto: a GPU if present)",
    )
    reproduce.add_argument(
        "--seeds",
        type=_positive_int,
        default=None,
        metavar="N",
        help="repetitions per configuration (default: the scale's)",
    )
    reproduce.add_argument(
        "--out",
        default="results",
        metavar="DIR",
        help="output folder, created if missing (default: ./results)",
    )
    reproduce.add_argument(
        "--n-jobs",
        type=_n_jobs,
        default=None,
        metavar="N",
        help="joblib workers over the fits (default: the available cores, at "
        f"most {MAX_DEFAULT_JOBS}; 1: in this process; -1: all cores)",
    )
    reproduce.add_argument(
        "--threads",
        type=_threads,
        default=1,
        metavar="N",
        help="torch threads of every fit, in every worker (default: 1, the "
        "fastest for these small networks; 0: torch's default)",
    )
    reproduce.add_argument("--quiet", action="store_true", help="no progress bars")
    reproduce.set_defaults(handler=_reproduce)

    info = commands.add_parser(
        "info", help="print versions, the device found and thread counts"
    )
    info.set_defaults(handler=_info)
    return parser


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment_info() -> dict[str, str]:
    """Versions, the accelerator found and the thread counts, as text.

    Returns
    -------
    dict of str to str
        Keys ``sklearn_pt``, ``python``, ``torch``, ``scikit-learn``,
        ``numpy``, ``scipy``, ``skorch``, ``matplotlib``, ``tqdm``,
        ``platform``, ``cuda available``, ``cuda devices`` (name and memory
        of each, when any), ``torch threads``, ``torch interop threads``,
        ``cpu count``.

    Examples
    --------
    >>> from sklearn_pt._cli import environment_info
    >>> info = environment_info()
    >>> info["cuda available"] in ("yes", "no")
    True
    """
    import numpy
    import sklearn
    import torch

    import sklearn_pt

    info = {
        "sklearn_pt": sklearn_pt.__version__,
        "python": f"{platform.python_version()} ({sys.executable})",
        "torch": f"{torch.__version__} (CUDA build: {torch.version.cuda or 'none'})",
        "scikit-learn": sklearn.__version__,
        "numpy": numpy.__version__,
        "scipy": _version("scipy"),
        "skorch": _version("skorch"),
        "matplotlib": _version("matplotlib"),
        "tqdm": _version("tqdm"),
        "platform": platform.platform(),
    }
    available = torch.cuda.is_available()
    info["cuda available"] = "yes" if available else "no"
    if available:
        devices = []
        for index in range(torch.cuda.device_count()):
            properties = torch.cuda.get_device_properties(index)
            memory = properties.total_memory / 2**30
            devices.append(f"cuda:{index} {properties.name} ({memory:.0f} GiB)")
        info["cuda devices"] = "; ".join(devices)
    info["torch threads"] = str(torch.get_num_threads())
    info["torch interop threads"] = str(torch.get_num_interop_threads())
    info["cpu count"] = str(os.cpu_count())
    return info


def _info(args: argparse.Namespace) -> int:
    info = environment_info()
    if info["matplotlib"] == "not installed":
        info["matplotlib"] += " (figures need it: pip install sklearn_pt[plot])"
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key + ':':<{width + 1}} {value}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from ._plotting import PlotDependencyError, import_matplotlib
    from ._torch_bridge import resolve_device

    try:  # fail before the runs, not after them
        import_matplotlib("sklearn-pt reproduce", "matplotlib.figure")
        from .experiments import COMMANDS, EXPERIMENTS
    except (PlotDependencyError, ImportError) as exc:
        print(f"sklearn-pt reproduce: error: {exc}", file=sys.stderr)
        return 1
    try:
        device = str(resolve_device(args.device))
    except ValueError as exc:
        print(
            f"sklearn-pt reproduce: error: --device {args.device}: {exc} On the "
            "command line: --device cpu, or --device auto.",
            file=sys.stderr,
        )
        return 2
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"sklearn-pt reproduce: error: --out {args.out}: {exc}", file=sys.stderr)
        return 2
    if args.experiment == "all":
        names = list(EXPERIMENTS)
    else:
        names = list(COMMANDS.get(args.experiment, (args.experiment,)))
    with config_context(torch_threads=args.threads or None):
        return _run_experiments([EXPERIMENTS[name] for name in names], args, device)


def _run_experiments(experiments, args, device) -> int:
    from .experiments import run

    total = 0.0
    for experiment in experiments:
        result = run(
            experiment,
            scale=args.scale,
            device=device,
            seeds=args.seeds,
            n_jobs=default_n_jobs() if args.n_jobs is None else args.n_jobs,
            progress=not args.quiet,
        )
        files = result.write(args.out)
        total += result.seconds
        written = ", ".join(str(path) for path in files.values())
        print(f"{result.name}: {result.seconds:.1f} s; wrote {written}")
        for line in result.verdict_lines():
            print(f"  {line}", flush=True)
    if len(experiments) > 1:
        print(f"all: {total:.1f} s")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sklearn-pt`` with the given arguments.

    Parameters
    ----------
    argv : sequence of str, default=None
        The arguments after the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status: 0 on success; 2 for a usage error (argparse's
        convention, with the message on stderr), including ``--device cuda``
        without CUDA and an ``--out`` folder that cannot be created; 1 when
        matplotlib is missing.

    Examples
    --------
    >>> from sklearn_pt._cli import main
    >>> main(["reproduce", "no-such-experiment"])
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help (0)
        return exc.code if isinstance(exc.code, int) else 1
    return args.handler(args)
