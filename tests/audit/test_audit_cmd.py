"""`perfgym audit`: bad input in one line, --json, the --fail-on gate, and resuming a run."""

from __future__ import annotations

import json

from audit_tasks import sum_task
from cli_helpers import one_line_error, perfgym


def _suite(tmp_path, *tasks):
    d = tmp_path / "mini"
    d.mkdir()
    (d / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    return d


def test_an_unknown_probe_is_one_line():
    one_line_error(perfgym("audit", "perfgym-core", "--probes", "lookup-table,bogus"), "bogus")


def test_a_suite_that_does_not_load_is_one_line(tmp_path):
    one_line_error(perfgym("audit", tmp_path / "nope"), "nope")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "tasks.jsonl").write_text('{"id": "x"}\n')
    p = perfgym("audit", bad)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr


def test_a_bad_fail_on_and_bad_repeats_are_one_line(tmp_path):
    one_line_error(perfgym("audit", "perfgym-core", "--fail-on", "severe"), "--fail-on")
    one_line_error(perfgym("audit", "perfgym-core", "--repeats", "0"), "--repeats")


def test_fail_on_gates_a_memorisable_suite_and_passes_a_hidden_input_one(tmp_path):
    fixed = _suite(tmp_path, sum_task(hidden=False, size=500))
    out = tmp_path / "a.jsonl"
    p = perfgym("audit", fixed, "--probes", "lookup-table", "--fail-on", "high", "--json",
                "-o", out, "--repeats", "1", "--no-store")  # fmt: skip
    assert p.returncode == 1, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["tasks"][0]["results"][0]["outcome"] == "scores"
    assert doc["summary"]["lines"][0].startswith("100 % of tasks accept a memorised answer")
    hidden_dir = tmp_path / "h"
    hidden_dir.mkdir()
    hidden = _suite(hidden_dir, sum_task(hidden=True, size=500))
    p = perfgym("audit", hidden, "--probes", "lookup-table", "--fail-on", "high", "-q",
                "-o", tmp_path / "b.jsonl", "--repeats", "1", "--no-store")  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert "0 % of tasks accept a memorised answer (0/1)" in p.stdout


def test_a_rerun_reuses_the_finished_tasks_and_another_audit_is_refused(tmp_path):
    suite = _suite(tmp_path, sum_task(hidden=True, size=500),
                   sum_task(hidden=False, size=500))  # fmt: skip
    out = tmp_path / "r.jsonl"
    args = (
        "audit",
        suite,
        "--probes",
        "constant",
        "-o",
        out,
        "--repeats",
        "1",
        "--json",
        "--no-store",
    )  # the results file alone resumes
    first = perfgym(*args)
    assert first.returncode == 0, first.stderr[-2000:]
    assert json.loads(first.stdout)["reused"] == 0
    again = perfgym(*args)
    assert again.returncode == 0 and json.loads(again.stdout)["reused"] == 2
    other = perfgym("audit", suite, "--probes", "no-output", "-o", out, "--repeats", "1",
                    "--no-store")  # fmt: skip
    one_line_error(other, "another audit")


def test_a_program_suite_given_by_path_is_audited_as_programs(tmp_path):
    # red team helper-99: a folder of program tasks (task.yaml each) was taken for a folder of
    # repository tasks and failed with "unknown field(s)"; the agent names the right command.
    from pathlib import Path

    from perfgym.cli.audit_repos import is_repo_suite

    core = Path(__file__).resolve().parents[2] / "suites"
    assert not is_repo_suite(str(core / "perfgym-core"))
    assert not is_repo_suite(str(core / "perfgym-core" / "py-lis-dp"))
    assert is_repo_suite(str(core / "perfgym-repos"))
    assert is_repo_suite(str(core / "perfgym-repos" / "bloomc"))
    p = perfgym("audit", core / "perfgym-core", "--task", "py-lis-dp", "--probes",
                "hidden-draws", "--json", "-o", tmp_path / "c.jsonl", "--repeats", "1",
                "--no-store")  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    result = json.loads(p.stdout)["tasks"][0]["results"][0]
    assert result["probe"] == "hidden-draws" and result["outcome"] == "sound", result
    one_line_error(perfgym("agent", core / "perfgym-core", "--model", "scripted"),
                   "holds program tasks")  # fmt: skip
