"""`perfgym eval --model` against a scripted server spoiling 20 % of requests and many answers:
every sample is judged with the verdict its answer deserves; no call is duplicated or lost."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.judge.extract import extract
from perfgym.llm.core_script import broken, suite_script
from perfgym.llm.script_faults import Faults
from perfgym.llm.scripted import ScriptedServer
from perfgym.store.calls import CallLog
from perfgym.store.results_file import read_results
from perfgym.tasks.suite import load_suite

TASK = "py-hash-join"
SAMPLES = 8
#: A seed whose draws, for this task's 8 requests, include every answer fault and 429, 500 and
#: a dropped connection (the timeout is exercised in tests/llm/test_client.py). A change to the
#: generation prompt changes the requests' content and so the draws: pick a seed again then.
FAULTS = Faults(seed=102, rate_429=0.05, rate_500=0.05, rate_timeout=0.05, rate_drop=0.05,
                malformed_json=0.1, no_code=0.1, wrong_language=0.1, truncated=0.1,
                timeout_delay_s=4.0, retry_after_s=0.01)  # fmt: skip


def test_faults_get_the_right_verdicts_and_no_duplicate_or_lost_call(tmp_path: Path) -> None:
    task = next(t for t in load_suite("perfgym-core").tasks if t.id == TASK)
    script = suite_script([task])
    intended = [extract(a.content or "", task.language).source for a in script.tasks[TASK]]
    # What each intended program deserves (the script's order: pool, broken, baseline, wrong,
    # reference); a spoiled answer deserves anything but OK, and NX when it holds no code.
    deserved = {
        task.pool[0].source: "OK",
        broken(task.baseline.source): "NC",
        task.baseline.source: "OK",
        task.references[0].source: "OK",
    }
    config = tmp_path / "model.toml"
    out, db = tmp_path / "r.jsonl", tmp_path / "s.sqlite"
    with ScriptedServer(script, faults=FAULTS) as srv:
        config.write_text(f'model = "scripted"\nbase_url = "{srv.base_url}"\ntimeout_s = 2.0\n'
                          "backoff_base_s = 0.02\nbackoff_max_s = 0.1\nmax_retries = 8\n")  # fmt: skip
        result = CliRunner().invoke(app, ["eval", "perfgym-core", "--model", "scripted",
                                          "--model-config", str(config), "-k", str(SAMPLES),
                                          "--task", TASK, "--repeats", "1", "--no-report",
                                          "--json", "-o", str(out), "--store", str(db)])  # fmt: skip
        stats = srv.stats
    assert result.exit_code == 0, (result.stderr, result.exception)
    summary = json.loads(result.stdout)
    _head, verdicts = read_results(out)
    assert sorted(v.sample for v in verdicts) == list(range(SAMPLES))
    spoiled = 0
    for v in verdicts:
        gen = v.meta["generation"]
        want = intended[min(v.sample, len(intended) - 1)]
        if v.source is not None and v.source == want:
            expected = deserved.get(want, "WO")  # the wrong program prints a wrong answer
            assert v.stage.value == expected, (v.sample, v.stage, v.reason)
            continue
        spoiled += 1
        assert v.stage.value != "OK", (v.sample, gen)
        if gen["extraction_rule"] == "none":
            assert v.stage.value == "NX", (v.sample, v.stage)
        if gen["truncated"]:
            assert gen["finish_reason"] == "length"
    answer_faults = {"malformed_json", "no_code", "wrong_language", "truncated"}
    transport = {"429", "500", "drop", "timeout"}
    assert answer_faults <= set(stats.faults), stats.faults
    assert {"429", "500", "drop"} <= set(stats.faults), stats.faults
    assert spoiled == sum(n for k, n in stats.faults.items() if k in answer_faults)
    assert sum(v.meta["generation"]["truncated"] for v in verdicts) == stats.faults["truncated"]
    # Every transport fault was retried and counted; no call was made twice or left unanswered.
    assert summary["model_calls"]["retries"] == sum(
        n for k, n in stats.faults.items() if k in transport
    )
    assert stats.duplicates == 0 and stats.unanswered_keys == []
    assert len(stats.answered_keys) == SAMPLES and stats.answers_served == SAMPLES
    with CallLog(db) as log:
        assert log.count() == SAMPLES


def test_eval_model_error_keeps_verdicts_and_the_rerun_judges_only_the_rest(tmp_path: Path) -> None:
    from perfgym.llm.script import Script, ScriptedAnswer

    ids = ["py-hash-join", "py-lis-dp"]
    # The first task's answer is prose (returned as RLPF's JSON, it does not build: NC, judged
    # without running anything); the second's is empty and late, so the first is judged before
    # the model error stops the run.
    script = (
        Script()
        .add(ids[0], "I cannot improve this.")
        .add(ids[1], ScriptedAnswer(content="", delay_s=1.0))
    )
    config = tmp_path / "model.toml"
    out, db = tmp_path / "r.jsonl", tmp_path / "s.sqlite"
    args = ["eval", "perfgym-core", "--model", "scripted", "--model-config", str(config),
            "--task", ids[0], "--task", ids[1], "--no-report", "--json", "-o", str(out),
            "--store", str(db)]  # fmt: skip
    with ScriptedServer(script) as srv:
        config.write_text(f'model = "scripted"\nbase_url = "{srv.base_url}"\n')
        failed = CliRunner().invoke(app, args)
        lines = [ln for ln in failed.stderr.splitlines() if ln.strip()]
        assert failed.exit_code == 2 and len(lines) == 1, failed.stderr
        assert "empty answer" in lines[0] and "1 verdicts, 1 samples kept" in lines[0]
        _head, kept = read_results(out)
        assert [(v.task_id, v.stage.value) for v in kept] == [(ids[0], "NC")]
        config.write_text(f'model = "scripted"\nbase_url = "{srv.base_url}"\nallow_empty = true\n')
        again = CliRunner().invoke(app, args)
        stats = srv.stats
    assert again.exit_code == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["judged"] == 1 and summary["reused"] == 1
    assert summary["model_calls"]["requests"] == 1  # the first task's sample is in the file
    _head, verdicts = read_results(out)
    assert [(v.task_id, v.stage.value) for v in verdicts] == [(ids[0], "NC"), (ids[1], "NX")]
    assert verdicts[0] == kept[0]  # reused as it was, not judged again
    assert stats.duplicates == 1  # the empty answer, asked again once it is allowed
