"""``python -m sklearn_pt``: the ``sklearn-pt`` command line."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
