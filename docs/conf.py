"""Sphinx configuration of the sklearn_pt documentation.

Build (warnings are errors; the gallery runs every example at small scale)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API pages are written from each public subpackage's ``__all__`` at the
start of every build (:func:`write_api_pages`), so that a name added to an
``__all__`` is documented without editing these files.
"""

import importlib
import os
import sys
from pathlib import Path

import sklearn_pt

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

# Every example reads this variable and shrinks its sizes when it is "small",
# so that the whole gallery runs in a few minutes on two CPU cores. Set it to
# anything else (e.g. SKLEARN_PT_EXAMPLE_SCALE=full) to build the gallery at
# the sizes of the figures quoted in the examples.
os.environ.setdefault("SKLEARN_PT_EXAMPLE_SCALE", "small")

project = "sklearn_pt"
author = "sklearn_pt developers"
copyright = "2026, sklearn_pt developers"
release = sklearn_pt.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "api_docstrings",  # docs/_ext/api_docstrings.py
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "**/sg_execution_times.rst"]
default_role = "literal"

# --- API reference ---------------------------------------------------------
# The public subpackages, in the order of the API page.
API_MODULES = (
    "sklearn_pt.neural_network",
    "sklearn_pt.nn",
    "sklearn_pt.kernels",
    "sklearn_pt.theory",
    "sklearn_pt.datasets",
    "sklearn_pt.model_selection",
    "sklearn_pt.feature_extraction",
    "sklearn_pt.spectral",
    "sklearn_pt.decomposition",
    "sklearn_pt.metrics",
    "sklearn_pt.experiments",
    "sklearn_pt.exceptions",
)


def api_page(module_name: str) -> str:
    """The rst of one subpackage's API page: its docstring, then an
    autosummary table (one generated page per name) of its ``__all__``."""
    module = importlib.import_module(module_name)
    names = sorted(module.__all__, key=str.lower)
    lines = [
        module_name,
        "=" * len(module_name),
        "",
        f".. automodule:: {module_name}",
        "   :no-members:",
        "",
        f".. currentmodule:: {module_name}",
        "",
        ".. autosummary::",
        "   :toctree: generated/",
        "",
        *(f"   {name}" for name in names),
        "",
    ]
    return "\n".join(lines)


def write_api_pages(folder: Path = DOCS / "api") -> None:
    """Write ``api/<module>.rst`` for every module of :data:`API_MODULES`,
    only where the text changed (so that Sphinx rebuilds only what did)."""
    folder.mkdir(exist_ok=True)
    for module_name in API_MODULES:
        page = folder / f"{module_name}.rst"
        text = api_page(module_name)
        if not page.exists() or page.read_text() != text:
            page.write_text(text)


write_api_pages()
autosummary_generate = True
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"  # the numpydoc type lines say it, in words
autoclass_content = "class"

# numpydoc: the autosummary class template lists the methods itself.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# The Attributes sections describe fitted attributes that do not exist on the
# class (they are set by ``fit``): do not try to cross-reference them.
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# Links to the Python, NumPy, scikit-learn and PyTorch docs need their
# inventories from the network; the build must also work offline (a failed
# download is a warning, an error under -W), so they are opt-in:
# SKLEARN_PT_DOCS_INTERSPHINX=1.
intersphinx_mapping = {}
if os.environ.get("SKLEARN_PT_DOCS_INTERSPHINX") == "1":
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "numpy": ("https://numpy.org/doc/stable", None),
        "sklearn": ("https://scikit-learn.org/stable", None),
        "torch": ("https://docs.pytorch.org/docs/stable", None),
    }

# --- gallery ----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    # Execute every script, not only plot_*.py (quickstart.py prints a table).
    "filename_pattern": r"/(plot_|quickstart)",
    "within_subsection_order": "FileNameSortKey",
    # Every example writes its PNG under docs/_build, not into examples/.
    "reset_argv": "gallery_argv.reset_argv",
    "doc_module": ("sklearn_pt",),
    "backreferences_dir": "gen_modules/backreferences",
    "reference_url": {"sklearn_pt": None},
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
}

# --- HTML -------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_pt {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # At 1280 px six header links push the search box onto a second row.
    "header_links_before_dropdown": 4,
}
# The vocabulary table needs the page's whole width at 1280 px.
html_sidebars = {"vocabulary": []}
html_static_path = ["_static"]
# Headings and signatures wrap at narrow widths (docs/_static/custom.css).
html_css_files = ["custom.css"]
