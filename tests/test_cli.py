"""The ``sklearn-pt`` command line: ``info``, ``reproduce`` and usage errors.

The reproductions run at the hidden ``--scale tiny`` (about a second per
experiment): ``--scale small`` takes about a minute for the five on two
cores (the partial sweep about 55-60 s, the others 4-10 s each), too long
for the suite. ``tiny`` checks the pipeline
(files, columns, summaries), not the papers' claims.
"""

import csv
import os
import re
import subprocess
import sys

import pytest
import torch

import sklearn_pt
import sklearn_pt.experiments
from sklearn_pt._cli import MAX_DEFAULT_JOBS, main
from sklearn_pt.experiments import EXPERIMENTS, Experiment, run

PARTIAL_COLUMNS = [
    "seed",
    "selection",
    "init_scale",
    "trainable_proportion",
    "epochs",
    "train_mse",
    "test_mse",
    "n_features",
]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
NUMBER = re.compile(r"\d+\.\d+")


def read_csv(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def test_info_prints_versions_device_and_threads(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    fields = dict(line.split(":", 1) for line in out.splitlines())
    fields = {key: value.strip() for key, value in fields.items()}
    assert fields["sklearn_pt"] == sklearn_pt.__version__
    assert fields["torch"].startswith(torch.__version__)
    for name in ("scikit-learn", "numpy", "python"):
        assert re.match(r"\d+\.\d+", fields[name]), name
    assert fields["cuda available"] == ("yes" if torch.cuda.is_available() else "no")
    assert fields["torch threads"] == str(torch.get_num_threads())
    assert fields["torch interop threads"] == str(torch.get_num_interop_threads())


def test_reproduce_partial_writes_figure_table_and_summary(tmp_path, capsys):
    status = main(["reproduce", "partial", "--scale", "tiny", "--out", str(tmp_path)])
    assert status == 0
    assert (tmp_path / "partial.png").read_bytes()[:8] == PNG_SIGNATURE
    header, rows = read_csv(tmp_path / "partial.csv")
    assert header == PARTIAL_COLUMNS
    # tiny: (2 selections at 5 epochs, leverage at 1) x 2 init scales x 4
    # proportions x 2 paired seeds
    assert len(rows) == 48
    assert {row[1] for row in rows} == {"leverage", "random"}
    assert {float(row[2]) for row in rows} == {1.0, 10.0}
    assert {row[4] for row in rows} == {"1", "5"}
    assert all(float(value) >= 0 for row in rows for value in row[5:7])
    summary = (tmp_path / "partial.md").read_text()
    assert summary.split("\n")[2] == "## Verdict"
    assert "paired seeds" in summary and NUMBER.search(summary)
    captured = capsys.readouterr()
    # the same command runs the approximation-error experiment
    assert (tmp_path / "partial-approximation.png").read_bytes()[:8] == PNG_SIGNATURE
    assert (tmp_path / "partial-approximation.md").read_text().startswith("# ")
    assert "partial:" in captured.out and "partial-approximation:" in captured.out
    # the verdicts, on stdout
    assert "the transition is sharper for the larger init scale" in captured.out
    # the progress bar, on by default, on stderr: one task per paired seed
    assert re.search(r"partial: .*\b2/2\b", captured.err)


def test_quiet_prints_no_progress_bar(tmp_path, capsys):
    args = ["reproduce", "partial", "--scale", "tiny", "--out", str(tmp_path)]
    assert main([*args, "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "fit/s" not in captured.out and "%|" not in captured.out
    assert (tmp_path / "partial.md").exists()


def test_reproduce_all_writes_every_experiment(tmp_path, capsys):
    args = ["reproduce", "all", "--scale", "tiny", "--quiet", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    for name in EXPERIMENTS:
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == PNG_SIGNATURE
        header, rows = read_csv(tmp_path / f"{name}.csv")
        assert rows and all(len(row) == len(header) for row in rows)
        markdown = (tmp_path / f"{name}.md").read_text()
        assert markdown.startswith("# ") and NUMBER.search(markdown)
        assert f"{name}: " in out
    assert re.search(r"^all: \d+\.\d s$", out, flags=re.MULTILINE)


@pytest.mark.parametrize(
    "args, message",
    [
        (["reproduce", "everything"], "invalid choice: 'everything'"),
        (["reproduce", "partial", "--scale", "huge"], "invalid scale 'huge'"),
        (["reproduce", "partial", "--device", "tpu"], "invalid choice: 'tpu'"),
        (["reproduce", "partial", "--seeds", "0"], "positive number of seeds"),
        (["reproduce", "partial", "--n-jobs", "0"], "nonzero number"),
        (["reproduce", "partial", "--threads", "-1"], "number of threads >= 0"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        ([], "required: COMMAND"),
    ],
)
def test_argument_errors_exit_2_with_a_message(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_scale_error_names_the_public_scales_only(capsys):
    main(["reproduce", "partial", "--scale", "huge"])
    err = capsys.readouterr().err
    assert "small, medium, paper" in err and "tiny" not in err


def test_missing_cuda_is_a_usage_error_that_says_the_fix(no_cuda, tmp_path, capsys):
    args = ["reproduce", "partial", "--device", "cuda", "--out", str(tmp_path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "CUDA is not available" in err and "--device cpu" in err
    assert not any(tmp_path.iterdir())


def test_version_prints_the_library_version_and_exits_0(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"sklearn-pt {sklearn_pt.__version__}\n"


def test_version_without_importing_torch():
    # the command line parses (and prints --version) before torch is loaded
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom sklearn_pt._cli import main\n"
            "code = main(['--version'])\n"
            "print('torch' in sys.modules, code)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.stdout.splitlines() == [
        f"sklearn-pt {sklearn_pt.__version__}",
        "False 0",
    ]


def test_python_dash_m_runs_the_same_command():
    completed = subprocess.run(
        [sys.executable, "-m", "sklearn_pt", "reproduce", "partial", "--scale", "x"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert "invalid scale 'x'" in completed.stderr
    assert completed.stderr.startswith("usage: sklearn-pt reproduce")


def test_cli_scales_are_the_experiments_scales():
    # _cli keeps its own copy so that parsing does not import torch
    from sklearn_pt import _cli
    from sklearn_pt.experiments import SCALES
    from sklearn_pt.experiments._runner import TEST_SCALE

    assert _cli._VISIBLE_SCALES == SCALES
    assert _cli._TEST_SCALE == TEST_SCALE


def test_unwritable_out_fails_before_running(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    args = ["reproduce", "partial", "--scale", "tiny", "--out", str(blocker / "sub")]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert "--out" in captured.err and captured.out == ""


def _record_threads(config, seed):
    return [{"torch_threads": torch.get_num_threads()}]


THREADS = Experiment(
    "deep",
    "Threads seen by a fit",
    "-",
    {"tiny": {"seeds": 2, "grid": [{}]}},
    _record_threads,
    claims=[],
)


@pytest.mark.parametrize("threads, expected", [("1", 1), ("0", None)])
@pytest.mark.parametrize("n_jobs", ["1", "2"])
def test_threads_apply_to_every_fit_and_are_restored(
    threads, expected, n_jobs, tmp_path, monkeypatch
):
    monkeypatch.setitem(EXPERIMENTS, "deep", THREADS)
    original = torch.get_num_threads()
    torch.set_num_threads(2)  # differs from --threads 1; restored below
    try:
        args = ["reproduce", "deep", "--scale", "tiny", "--quiet", "--out"]
        args += [str(tmp_path), "--threads", threads, "--n-jobs", n_jobs]
        assert main(args) == 0
        header, rows = read_csv(tmp_path / "deep.csv")
        seen = {int(row[header.index("torch_threads")]) for row in rows}
        if expected is None:  # torch's own setting: 2 here, a worker's own there
            assert n_jobs == "2" or seen == {2}
        else:
            assert seen == {expected}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(original)


@pytest.mark.parametrize("cores, expected", [(1, 1), (2, 2), (64, MAX_DEFAULT_JOBS)])
def test_n_jobs_defaults_to_the_available_cores_capped(
    cores, expected, tmp_path, monkeypatch
):
    seen = []

    def recording_run(experiment, **kwargs):
        seen.append(kwargs["n_jobs"])
        return run(experiment, **{**kwargs, "n_jobs": 1})

    monkeypatch.setitem(EXPERIMENTS, "deep", THREADS)
    monkeypatch.setattr(sklearn_pt.experiments, "run", recording_run)
    monkeypatch.setattr(
        os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False
    )
    args = ["reproduce", "deep", "--scale", "tiny", "--quiet", "--out"]
    assert main([*args, str(tmp_path)]) == 0
    assert main([*args, str(tmp_path), "--n-jobs", "3"]) == 0
    assert seen == [expected, 3]
