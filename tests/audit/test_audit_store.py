"""`perfgym audit` keeps its results in the SQLite store: a rerun after SIGINT audits only the
tasks the interrupted run did not finish; another audit, or --no-resume, reads none of them."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from audit_tasks import sum_task

from perfgym.audit.history import AuditHistory


def _suite(tmp_path, n):
    d = tmp_path / "four"
    d.mkdir()
    tasks = [sum_task(hidden=True, size=300, id=f"sum-{i}") for i in range(n)]
    (d / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    return d


def _stored(db):
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM audit_tasks").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not there yet
        return 0


def _cmd(suite, out, db, *extra):
    return [sys.executable, "-m", "perfgym", "audit", str(suite), "--probes", "constant",
            "--repeats", "1", "-o", str(out), "--store", str(db), "--json", *extra]  # fmt: skip


@pytest.mark.slow
def test_sigint_mid_suite_then_a_rerun_audits_only_the_rest(tmp_path):
    suite, out, db = _suite(tmp_path, 4), tmp_path / "a.jsonl", tmp_path / "s.sqlite"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    p = subprocess.Popen(_cmd(suite, out, db), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)  # fmt: skip
    end = time.monotonic() + 600  # a hang guard
    while _stored(db) == 0 and p.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=240)
    kept = _stored(db)
    assert 1 <= kept < 4, (kept, err[-2000:])  # the interrupt landed mid-suite
    assert p.returncode == 130 and "interrupted" in err and "Traceback" not in err, err[-2000:]
    out.unlink()  # the store alone resumes the run
    before = AuditHistory(db)
    ((run, _header),) = before.runs()
    first = before.done(run)
    before.close()
    again = subprocess.run(_cmd(suite, out, db), capture_output=True, text=True, env=env,
                           timeout=300)  # fmt: skip
    assert again.returncode == 0, again.stderr[-2000:]
    doc = json.loads(again.stdout)
    assert doc["reused"] == kept and len(doc["tasks"]) == 4
    by_id = {t["task_id"]: t for t in doc["tasks"]}
    for task_id, audit in first.items():  # reused as stored, not audited again
        assert by_id[task_id]["elapsed_s"] == audit.elapsed_s
    assert _stored(db) == 4
    # --no-resume starts over (here on one task, --limit 1)
    again = subprocess.run(_cmd(suite, out, db, "--no-resume", "--limit", "1"), capture_output=True,
                           text=True, env=env, timeout=300)  # fmt: skip
    assert again.returncode == 0 and json.loads(again.stdout)["reused"] == 0, again.stderr[-2000:]


def test_a_store_that_is_not_sqlite_is_one_line(tmp_path):
    from cli_helpers import one_line_error, perfgym

    suite, bad = _suite(tmp_path, 1), tmp_path / "s.sqlite"
    bad.write_text("not a database\n" * 100)
    one_line_error(perfgym("audit", suite, "--probes", "constant", "--store", bad, "-o",
                           tmp_path / "a.jsonl"), "store")  # fmt: skip
