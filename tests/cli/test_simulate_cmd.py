"""`perfgym simulate` end to end through the real CLI, on recorded perfgym-core durations.

One test runs the installed entry point in a subprocess; the others call the same typer app
in-process (CliRunner), which spares a Python start-up per case on a 2-core machine.
"""

import gzip
import json
import subprocess
import sys
from types import SimpleNamespace

import pytest
from sim_data import FIXTURES, core_suite_copy
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.simulate import read_simulations

TASKS = ["c-hamming-pairs", "py-lis-dp", "cpp-topk-stream", "py-hash-join"]


def subprocess_perfgym(*args):
    return subprocess.run([sys.executable, "-m", "perfgym", *args], capture_output=True,
                          text=True, timeout=180)  # fmt: skip


def perfgym(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout, stderr=result.stderr)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("simcmd")
    suite = core_suite_copy(root, TASKS)
    results = root / "results.jsonl"
    results.write_bytes(
        gzip.decompress((FIXTURES / "perfgym-core-solutions.jsonl.gz").read_bytes())
    )
    return root, suite, results


def one_error_line(p):
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


def test_json_out_and_plot(setup):
    root, suite, results = setup
    out, png = root / "sim.json", root / "curves.png"
    p = subprocess_perfgym("simulate", str(suite), "--results", str(results), "--reward", "rlvr",
                           "--reward", "rlpf", "--json", "--out", str(out), "--plot", str(png))  # fmt: skip
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["suite"] == "perfgym-core" and doc["rank_by"] == "spearman"
    assert [s["reward"] for s in doc["simulations"]] == ["rlpf", "rlvr"]
    assert all("points" not in s for s in doc["simulations"])
    assert any("not in the suite" in n for n in doc["notes"])  # the other 31 tasks' results
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = read_simulations(out)
    assert len(saved.simulations[0].points) == sum(4 + 3 + (s == "cpp-topk-stream")
                                                   + (s in ("c-hamming-pairs", "py-lis-dp"))
                                                   for s in TASKS)  # fmt: skip


def test_sweep_table(setup):
    _, suite, results = setup
    p = perfgym("simulate", str(suite), "--results", str(results), "--reward", "percentile",
                "--sweep", "tau=10,50,100", "--rank-by", "diagonal")  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "ranked by diagonal" in p.stdout
    for tau in (10, 50, 100):
        assert f"percentile (tau={tau})" in p.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--reward", "nope"], "no reward named 'nope'"),
        (["--reward", "percentile", "--param", "tau=0"], "tau"),
        (["--reward", "rlpf", "--param", "alpha_f"], "key=value"),
        (["--reward", "rlpf", "--failures", "NX,XX"], "invalid simulator settings"),
        (["--reward", "rlpf", "--window", "2"], "smooth_window"),
        (["--reward", "rlpf", "--rank-by", "auc"], "unknown --rank-by"),
    ],
)
def test_bad_arguments_are_one_line(setup, args, message):
    _, suite, results = setup
    line = one_error_line(perfgym("simulate", str(suite), "--results", str(results), *args))
    assert message in line


def test_bad_results_are_one_line(setup):
    root, suite, results = setup
    lines = results.read_text().splitlines()
    broken = root / "broken.jsonl"
    broken.write_text("\n".join(lines[:5] + ['{"task_id": "x",', *lines[5:]]) + "\n")
    assert "broken.jsonl:6: not JSON" in one_error_line(
        perfgym("simulate", str(suite), "--results", str(broken), "--reward", "rlpf")
    )
    empty = root / "empty.jsonl"
    empty.write_text(lines[0] + "\n")
    assert "holds no verdicts" in one_error_line(
        perfgym("simulate", str(suite), "--results", str(empty), "--reward", "rlpf")
    )
    mixed = root / "mixed.jsonl"
    other = json.loads(lines[1])
    other["suite"] = "enamel"
    mixed.write_text("\n".join([lines[0], json.dumps(other), *lines[2:]]) + "\n")
    assert "mix suites" in one_error_line(
        perfgym("simulate", str(suite), "--results", str(mixed), "--reward", "rlpf")
    )
    nan = root / "nan.jsonl"
    row = json.loads(lines[1])
    row["reference"]["estimate_s"] = float("nan")
    nan.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    assert "is not a finite number" in one_error_line(
        perfgym("simulate", str(suite), "--results", str(nan), "--reward", "rlpf")
    )
