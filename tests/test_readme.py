"""The README's first example runs as written, and prints what it says."""

import re
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def _first_example() -> str:
    section = README.read_text().split("## A first fit", 1)[1]
    return re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)


def test_the_first_example_runs_and_the_network_fits(capsys):
    namespace = {}
    exec(compile(_first_example(), str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "trainable_proportion" in out
    network, kernel = map(float, re.findall(r"R\^2 (-?\d\.\d+)", out))
    # friedman1 with noise 0.5: both explain most of the variance
    assert network > 0.8 and kernel > 0.8
    assert namespace["search"].best_params_ == {
        "partiallytrainableregressor__trainable_proportion": 1.0
    }
