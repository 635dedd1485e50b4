"""Command-line arguments given to each example when the gallery runs it.

Every example takes ``--out DIR`` (the folder it writes its PNG to); in the
documentation build that folder is ``docs/_build/example_outputs``, so that
running the gallery leaves nothing in ``examples/``. The figures shown in the
gallery are scraped from matplotlib, not read from these files.
"""

from pathlib import Path


def reset_argv(gallery_conf: dict, script_vars: dict) -> list[str]:
    """``sys.argv[1:]`` for one example: ``["--out", <build folder>]``."""
    out = Path(gallery_conf["src_dir"]) / "_build" / "example_outputs"
    return ["--out", str(out)]
