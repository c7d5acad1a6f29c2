"""Bad input to the real `perfgym` CLI is one line on stderr, exit 2, no traceback (issue 13,
hole 9) and, for paths, refused before anything is judged: a verdict is never lost to an
unwritable --out."""

import json
import os
import subprocess
import sys

import pytest

from perfgym.store import ResultStore
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

GOOD = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n"


def perfgym(*args, timeout=300):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    return subprocess.run([sys.executable, "-m", "perfgym", *map(str, args)],
                          capture_output=True, text=True, errors="replace", timeout=timeout,
                          env=env)  # fmt: skip


def one_line_error(p, *needles):
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2, (p.returncode, p.stderr[-3000:])
    assert "Traceback" not in p.stderr
    assert len(lines) == 1 and lines[0].startswith("error:"), p.stderr[-3000:]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def suite(tmp_path):
    d = tmp_path / "suite"
    d.mkdir()
    task = Task(id="sum-a", family="parsing", language=Language.PYTHON, kind=TaskKind.STDIO,
                goal="Sum.", baseline=Solution(label="baseline", source=GOOD),
                references=[Solution(label="reference", source=GOOD)],
                tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6")],
                workloads=[TestCase(id="w1", stdin="2\n1 2\n")],
                oracle=Oracle(kind="tokens"))  # fmt: skip
    (d / "tasks.jsonl").write_text(task.model_dump_json() + "\n")
    return d


def test_non_utf8_candidates_file_names_the_file_and_line(tmp_path, suite):
    cands = tmp_path / "c.jsonl"
    line = json.dumps({"task_id": "sum-a", "source": GOOD}).encode()
    cands.write_bytes(line + b"\n" + b'{"task_id": "sum-a", "source": "\xff"}\n')
    p = perfgym("eval", suite, "--candidates", cands, "--no-store", "--no-report",
                "--out", tmp_path / "o.jsonl")  # fmt: skip
    one_line_error(p, f"{cands}:2:", "not UTF-8", "0xff")


@pytest.mark.parametrize("repeats", ["0", "-3"])
def test_repeats_below_one(tmp_path, suite, repeats):
    p = perfgym("eval", suite, "--repeats", repeats, "--no-store", "--out", tmp_path / "o.jsonl")
    one_line_error(p, "--repeats", repeats)


@pytest.mark.parametrize("where", ["under-a-file", "a-directory"])
def test_unwritable_out_is_refused_before_judging(tmp_path, suite, where):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    out = tmp_path / "afile" / "o.jsonl" if where == "under-a-file" else tmp_path / "adir"
    db = tmp_path / "s.sqlite"
    p = perfgym("eval", suite, "--out", out, "--store", db, "--repeats", "1", "--no-report")
    one_line_error(p, "cannot write results file", str(out))
    # Refused up front: nothing was judged (no verdict reached the store either).
    if db.exists():
        with ResultStore(db) as store:
            assert store.count_verdicts() == 0


def test_unwritable_or_foreign_store(tmp_path, suite):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "o.jsonl"
    p = perfgym("eval", suite, "--store", tmp_path / "afile" / "s.sqlite", "--out", out)
    one_line_error(p, "cannot write result store", "is not a directory")
    notdb = tmp_path / "notdb.sqlite"
    notdb.write_text("this is not SQLite\n" * 100)
    p = perfgym("eval", suite, "--store", notdb, "--out", out, "--repeats", "1", "--no-report")
    one_line_error(p, "result store", "not a database")


def test_report_bad_inputs(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"a": 1}\n\xff\xfe\n')
    one_line_error(perfgym("report", bad, "--out", tmp_path / "r.html"), str(bad), "UTF-8")
    (tmp_path / "afile").write_text("x")
    good = tmp_path / "empty.jsonl"
    good.write_text("")
    p = perfgym("report", good, "--out", tmp_path / "afile" / "r.html")
    one_line_error(p, "cannot write report")


def test_serve_bad_config_is_one_line():
    one_line_error(perfgym("serve", "--port", "-1", timeout=60), "port")


def test_eval_writes_results_and_store_then_reports(tmp_path, suite):
    """The good path still works with the checks in front of it (and a fresh nested --out
    directory is created)."""
    out, db = tmp_path / "new" / "dir" / "o.jsonl", tmp_path / "s.sqlite"
    p = perfgym("eval", suite, "--out", out, "--store", db, "--repeats", "1", "--no-report")
    assert p.returncode == 0, p.stderr[-3000:]
    assert out.is_file() and not list(out.parent.glob("*.probe"))
    with ResultStore(db) as store:  # baseline and reference share a source: one key
        assert store.count_verdicts() >= 1
