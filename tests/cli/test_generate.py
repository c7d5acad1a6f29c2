"""`perfgym generate` end to end: offline with --model scripted, resumed, killed, bad input."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perfgym.evaluation.candidates_file import read_candidates
from perfgym.llm.core_script import suite_script
from perfgym.llm.scripted import ScriptedServer
from perfgym.store.calls import CallLog
from perfgym.tasks.suite import load_suite

TASKS = ["py-hash-join", "c-hash-join", "go-hash-join"]


@pytest.fixture(scope="module")
def core():  # type: ignore[no-untyped-def]
    return load_suite("perfgym-core")


def script_of(core, ids):  # type: ignore[no-untyped-def]
    return suite_script([t for t in core.tasks if t.id in ids])


def task_args(ids: list[str]) -> list[str]:
    return [a for t in ids for a in ("--task", t)]


def invoke(*args: object):  # type: ignore[no-untyped-def]
    """The perfgym CLI in this process (no interpreter start-up); stdout and stderr apart."""
    from typer.testing import CliRunner

    from perfgym.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_scripted_offline_then_resumed_without_a_call(tmp_path: Path, core) -> None:  # type: ignore[no-untyped-def]
    out, db = tmp_path / "c.jsonl", tmp_path / "s.sqlite"
    args = ["generate", "perfgym-core", "--model", "scripted", "-k", "3", "-o", out,
            "--store", db, "--json", *task_args(TASKS[:2])]  # fmt: skip
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["new"] == 6 and summary["requests"] == 6 and summary["retries"] == 0
    cands, problems = read_candidates(out, core)
    assert problems == [] and len(cands) == 6
    by = {(c.task.id, c.sample): c for c in cands}
    assert by[("py-hash-join", 1)].completion is None  # the broken one: extracted, NC later
    gen = by[("py-hash-join", 0)].meta["generation"]
    assert gen["template_id"] == "perfgym/generate" and len(gen["template_sha256"]) == 64
    assert (
        gen["usage"]["completion_tokens"] > 0 and gen["extraction_rule"] == "json.solution_source"
    )
    assert [c.task.id for c in cands] == [TASKS[0]] * 3 + [TASKS[1]] * 3  # task, then sample order
    before = out.read_bytes()
    again = invoke(*args)
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["requests"] == 0 and out.read_bytes() == before
    more = invoke(*[a if a != "3" else "4" for a in args])
    assert json.loads(more.stdout)["new"] == 2 and json.loads(more.stdout)["requests"] == 2


def _generate_proc(url: str, out: Path, db: Path, ids: list[str]) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "perfgym", "generate", "perfgym-core", "--model", "scripted",
           "--base-url", url, "-k", "4", "--concurrency", "2", "-o", str(out), "--store", str(db),
           "-q", *task_args(ids)]  # fmt: skip
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_kill_9_then_rerun_gives_the_same_file_and_no_stored_call_again(
    tmp_path: Path, core
) -> None:  # type: ignore[no-untyped-def]
    script = script_of(core, TASKS)
    with ScriptedServer(script, latency_s=0.15) as whole_srv:
        whole = _generate_proc(
            whole_srv.base_url, tmp_path / "whole.jsonl", tmp_path / "w.sqlite", TASKS
        )
        assert whole.wait(timeout=120) == 0, whole.stderr.read() if whole.stderr else ""
    out, db = tmp_path / "c.jsonl", tmp_path / "s.sqlite"
    with ScriptedServer(script, latency_s=0.15) as srv:
        proc = _generate_proc(srv.base_url, out, db, TASKS)
        deadline = time.monotonic() + 60
        while _lines(out) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        time.sleep(0.4)  # the server's answers in flight fail against the closed sockets
        answered = len(srv.stats.answered_keys)
        with CallLog(db) as log:
            stored = log.count()
        assert 3 <= _lines(out) < 12 and stored < 12
        rerun = _generate_proc(srv.base_url, out, db, TASKS)
        assert rerun.wait(timeout=120) == 0, rerun.stderr.read() if rerun.stderr else ""
        stats = srv.stats
    # Byte-identical but for the call keys, which name the endpoint (the two servers' ports).
    assert _keyless(out) == _keyless(tmp_path / "whole.jsonl")
    # Only an answer the server sent but the killed process never stored is requested again
    # (it was in flight); none of the stored ones is.
    lost_in_flight = answered - stored
    assert 0 <= lost_in_flight <= 2
    assert stats.duplicates == lost_in_flight
    assert len(stats.answered_keys) == 12 and stats.unanswered_keys == []


def _keyless(path: Path) -> bytes:
    return re.sub(rb'"call_key": ?"[0-9a-f]{64}"', b'"call_key": ""', path.read_bytes())


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_line(result, *needles: str) -> str:  # type: ignore[no-untyped-def]
    """The CliRunner twin of cli_helpers.one_line_error (in-process: no interpreter start-up)."""
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_bad_input_is_one_line_and_keeps_what_was_written(
    tmp_path: Path,
    core,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    def run(*args: object):  # type: ignore[no-untyped-def]
        return invoke(*base, *args)

    out, db = tmp_path / "c.jsonl", tmp_path / "s.sqlite"
    base = ["generate", "perfgym-core", "-o", out, "--store", db, "--max-retries", "1"]
    url = f"http://127.0.0.1:{closed_port()}/v1"
    one_line(run("--model", "m", "--base-url", url, "--task", TASKS[0]),
             "cannot reach the model endpoint", url)  # fmt: skip
    script = script_of(core, TASKS[:1]).add(TASKS[1], "")
    monkeypatch.setenv("PG_GEN_KEY", "the-wrong-key-0000")
    with ScriptedServer(script, api_key="the-right-key-1111") as srv:
        ok = ["--base-url", srv.base_url, "--api-key-env", "PG_GEN_KEY"]
        line = one_line(run("--model", "scripted", *ok, "--task", TASKS[0]),
                        "refused the API key", "$PG_GEN_KEY")  # fmt: skip
        assert "wrong-key" not in line
        monkeypatch.setenv("PG_GEN_KEY", "the-right-key-1111")
        one_line(run("--model", "gpt-nope", *ok, "--task", TASKS[0]),
                 "does not serve model 'gpt-nope'")  # fmt: skip
        good = run("--model", "scripted", *ok, "-k", "2", "--task", TASKS[0])
        assert good.exit_code == 0, good.stderr
        kept = out.read_bytes()
        one_line(run("--model", "scripted", *ok, "-k", "2", *task_args(TASKS[:2])),
                 "empty answer", "2 samples kept")  # fmt: skip
    assert out.read_bytes().startswith(kept) and _lines(out) == 2
    bad = tmp_path / "model.toml"
    bad.write_text("model = 'm'\ntemperature = 'hot'\n")
    one_line(run("--model-config", bad, "--task", TASKS[0]), "temperature")
    one_line(run("--task", TASKS[0]), "--model is required")
    for f in tmp_path.iterdir():
        assert b"the-right-key" not in f.read_bytes()
