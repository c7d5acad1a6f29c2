"""`perfgym report`: it writes the HTML from results and simulation files; bad input is one
line on stderr, exit 2, no traceback."""

import subprocess
import sys

import pytest
from cli_helpers import one_line_error, perfgym
from report_data import RUN_A, RUN_B, run, simulation_file, two_run_files, write
from typer.testing import CliRunner

from perfgym.cli import app


@pytest.fixture
def two_runs(tmp_path):
    return two_run_files(tmp_path)


def test_report_bad_inputs(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"a": 1}\n\xff\xfe\n')
    one_line_error(perfgym("report", bad, "--out", tmp_path / "r.html"), str(bad), "UTF-8")
    (tmp_path / "afile").write_text("x")
    good = tmp_path / "empty.jsonl"
    good.write_text("")
    p = perfgym("report", good, "--out", tmp_path / "afile" / "r.html")
    one_line_error(p, "cannot write report")


def test_cli_entry_point_writes_results_and_simulations(two_runs, tmp_path):
    out = tmp_path / "cli.html"
    sims = simulation_file(tmp_path / "sim.json")
    p = subprocess.run([sys.executable, "-m", "perfgym", "report", *map(str, two_runs), str(sims),
                        "-o", str(out)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "2 results file(s), 1 simulation(s)" in p.stdout
    html = out.read_text()
    assert html.count("<img") == 5 and "Reward simulations" in html


def cli_error(*args):
    result = CliRunner().invoke(app, ["report", *map(str, args)])
    assert result.exit_code == 2, result.stdout
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ")
    return line


def test_cli_errors_are_one_line(tmp_path):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"perfgym_results": {}}\n{"task_id": 1,\n')
    assert "broken.jsonl:2: not JSON" in cli_error(broken, "-o", tmp_path / "x.html")
    assert "no such file" in cli_error(tmp_path / "missing.jsonl")
    mixed = write(tmp_path / "m.jsonl", run("m", RUN_A) + run("n", RUN_B, suite="other"))
    assert "mix suites ['demo', 'other']" in cli_error(mixed)
    empty_sim = tmp_path / "s.json"
    empty_sim.write_text('{"perfgym_simulation": {"header": {}, "simulations": []}}')
    assert "holds no simulations" in cli_error(empty_sim)
