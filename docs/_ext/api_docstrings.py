"""Small Sphinx extension: two adjustments to docstrings for the API pages.

1. In numpydoc type lines such as ``feature_names_in_ : ndarray of shape
   (n_features_in_,)``, reStructuredText reads ``n_features_in_`` as a
   reference to a target named ``n_features_in`` and fails ("Unknown target
   name"). The trailing underscore of a fitted attribute's name in a *type*
   (the text after `` : ``) is escaped before numpydoc parses the docstring.
   The docstrings themselves stay as scikit-learn writes them.
2. The ``set_{fit,score,...}_request`` methods that scikit-learn adds to
   every estimator for metadata routing are not documented here: their
   docstrings belong to scikit-learn (and link into its glossary).
"""

import re

from sphinx.application import Sphinx

PARAMETER_LINE = re.compile(r"^(\s*[\w*, ]+ : )(.*)$")
TRAILING_UNDERSCORE = re.compile(r"\b([A-Za-z]\w*?[A-Za-z0-9])_(?=[,)\s]|$)")
METADATA_REQUEST = re.compile(r"^set_\w+_request$")


def escape_type_underscores(line: str) -> str:
    """``"x_ : array of shape (n_a_,)"`` -> ``"x_ : array of shape (n_a\\_,)"``."""
    match = PARAMETER_LINE.match(line)
    if match is None:
        return line
    name, kind = match.groups()
    return name + TRAILING_UNDERSCORE.sub(r"\1\\_", kind)


def process_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    lines[:] = [escape_type_underscores(line) for line in lines]


def skip_metadata_requests(app, what, name, obj, skip, options):
    if METADATA_REQUEST.match(name):
        return True
    return None


def setup(app: Sphinx) -> dict:
    # Priority below numpydoc's (500), so that this runs on the raw docstring.
    app.connect("autodoc-process-docstring", process_docstring, priority=400)
    app.connect("autodoc-skip-member", skip_metadata_requests)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
