"""`perfgym eval humanevalplus`: correctness only by default (pass@k, "not timed"), timed on
--time-largest K or --perf-inputs FILE; bad values are one-line errors; an interrupted run
keeps what it judged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from perfgym.cli import app


def _eval(tmp: Path, *extra: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["eval", "humanevalplus", "--solutions", "reference",
                                 "--no-store", "--no-report", "--repeats", "1",
                                 "-o", str(tmp / "out.jsonl"), *extra])  # fmt: skip
    return r.exit_code, r.stdout, r.stderr


def test_correctness_only_prints_pass_at_1_with_its_ci_and_not_timed(tmp_path):
    code, out, err = _eval(tmp_path, "--task", "HumanEval/1", "--task", "HumanEval/6")
    assert code == 0, err
    assert "pass@1" in out.lower() and "1.000 [1.000, 1.000]" in out and "not timed" in out
    verdicts = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()[1:]]
    assert [v["stage"] for v in verdicts] == ["OK", "OK"]
    assert all("not_timed" in v["flags"] and v["candidate"] is None for v in verdicts)


@pytest.mark.alone
def test_time_largest_times_the_largest_tests(tmp_path):
    code, _out, err = _eval(tmp_path, "--task", "HumanEval/6", "--time-largest", "2", "--json")
    assert code == 0, err
    (v,) = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()[1:]]
    assert v["stage"] == "OK" and v["candidate"] is not None and "not_timed" not in v["flags"]


def test_bad_timing_options_are_one_line_errors(tmp_path):
    code, _out, err = _eval(tmp_path, "--task", "HumanEval/6", "--time-largest", "0")
    assert code == 2 and "--time-largest must be at least 1" in err and len(err.splitlines()) == 1
    bad = tmp_path / "perf.jsonl"
    for text, why in [("{nope\n", "not JSON"), ('{"task_id": "HumanEval/6"}\n', "pe_input"),
                      ('{"task_id": "HumanEval/6", "pe_input": "[1, 2]"}\n', "argument lists"),
                      ('{"task_id": "HumanEval/99", "pe_input": [["x"]]}\n', "names none")]:  # fmt: skip
        bad.write_text(text)
        code, _out, err = _eval(tmp_path, "--task", "HumanEval/6", "--perf-inputs", str(bad))
        assert code == 2 and why in err and len(err.strip().splitlines()) == 1, err
    code, _out, err = _eval(tmp_path, "--time-largest", "1", "--perf-inputs", str(bad))
    assert code == 2 and "time one set of inputs" in err


def test_perf_inputs_are_what_is_timed(tmp_path):
    perf = tmp_path / "perf.jsonl"
    perf.write_text(json.dumps({"task_id": "HumanEval/6", "pe_input": json.dumps(
        [["(()()) ((())) () ((())()())"] * 1]) }) + "\n")  # fmt: skip
    code, _out, err = _eval(tmp_path, "--task", "HumanEval/6", "--perf-inputs", str(perf))
    assert code == 0, err
    (v,) = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()[1:]]
    assert v["stage"] == "OK" and v["candidate"] is not None
    assert [t["id"] for t in v["tests"] if t["id"].startswith("perf-")] == ["perf-0"]


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


#: 30 HumanEval+ tasks with few tests (50-260 each; the suite's first ones have ~1,000): a
#: task is still seconds of one process per test, so the run is far from done when the signal
#: lands, and the tasks in flight then finish soon.
FEW_TESTS = [f"HumanEval/{i}" for i in (55, 6, 63, 41, 1, 75, 106, 83, 100, 147, 138, 130, 139,
                                        19, 46, 15, 123, 25, 36, 5, 60, 31, 24, 77, 107, 59, 7,
                                        96, 129, 79)]  # fmt: skip


def test_an_interrupted_run_keeps_every_verdict_it_judged(tmp_path):
    out = tmp_path / "run.jsonl"
    tasks = [arg for task in FEW_TESTS for arg in ("--task", task)]
    args = [sys.executable, "-m", "perfgym", "eval", "humanevalplus", "--solutions", "reference",
            *tasks, "--isolate-tests", "--no-store", "--no-report", "--repeats", "1",
            "-o", str(out)]  # fmt: skip
    # One process per test (~1 s a task here): the run is still going when the signal lands.
    # Batched, a loaded run once finished all 60 of the suite's first tasks before it did.
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 120
    while _lines(out) < 3 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, "the run ended before it could be interrupted"
    p.send_signal(signal.SIGINT)
    _stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr
    assert "interrupted: kept" in stderr and "Traceback" not in stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    kept = [r for r in rows if "task_id" in r]
    assert 2 <= len(kept) < len(FEW_TESTS) and all(r["stage"] == "OK" for r in kept)
