"""The reference's runs kept on disk between judges (`perfgym.judge.reference_disk`): a second
judge takes them instead of running the reference, with the same verdicts; an entry changed
on disk is detected (its HMAC) or cannot turn a right answer wrong (a wrong answer judged
against a kept output stands only when a fresh reference run agrees); nothing is kept when
turned off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfgym.judge import Judge, JudgeConfig
from perfgym.judge.reference_disk import ENV, ReferenceDisk
from perfgym.tasks.humaneval import load_humanevalplus

TASK = "HumanEval/55"  # fib: 50 tests


@pytest.fixture(scope="module")
def task():
    return next(t for t in load_humanevalplus().tasks if t.id == TASK)


def judged(task, root: Path | None, *sources: str) -> tuple[list, int]:
    """The verdicts of `sources` by a fresh judge keeping runs under `root`, and how many
    calls its workers served (a batch is one: the reference's, each candidate's)."""
    config = JudgeConfig(repeats=1, reference_cache=None if root is None else str(root))
    with Judge(config) as j:
        verdicts = [j.judge(task, source=s) for s in sources]
        return verdicts, j.workers.stats()["calls"]


def entries(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.json"))


def wrong(task) -> str:
    return task.reference.source.replace("return b", "return b + (n == 7)")


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)


def test_a_second_judge_takes_the_kept_runs_and_judges_alike(task, tmp_path) -> None:
    canonical = task.reference.source
    first, calls_cold = judged(task, tmp_path, canonical)
    assert len(entries(tmp_path)) == 1  # the reference's runs on the task's 50 tests
    second, calls_warm = judged(task, tmp_path, canonical)
    assert calls_cold - calls_warm == 1  # the reference's one batch is not run again
    assert first[0].stage.value == second[0].stage.value == "OK"
    # a wrong answer judged against a kept output: the same verdict as without the cache (the
    # reference runs once more, on the failed test alone, to confirm it)
    kept, calls_kept = judged(task, tmp_path, wrong(task))
    fresh, calls_fresh = judged(task, None, wrong(task))
    assert kept[0].stage.value == fresh[0].stage.value == "WO"
    assert kept[0].reason == fresh[0].reason and calls_kept == calls_fresh
    assert (tmp_path / ".hmac-key").stat().st_mode & 0o077 == 0


def test_an_entry_changed_without_its_key_is_ignored(task, tmp_path) -> None:
    judged(task, tmp_path, task.reference.source)
    (path,) = entries(tmp_path)
    mac, _, body = path.read_bytes().partition(b"\n")
    doc = json.loads(body)
    doc["outputs"] = [None] * len(doc["outputs"])  # `return None` would pass every test
    path.write_bytes(mac + b"\n" + json.dumps(doc).encode())
    returns_none = task.reference.source.replace("return b", "return None")
    verdicts, calls = judged(task, tmp_path, returns_none, task.reference.source)
    assert [v.stage.value for v in verdicts] == ["WO", "OK"]
    _, calls_fresh = judged(task, None, returns_none, task.reference.source)
    assert calls == calls_fresh  # the reference ran again: the entry did not check


def test_a_wrong_kept_output_cannot_fail_a_right_answer(task, tmp_path) -> None:
    judged(task, tmp_path, task.reference.source)
    (path,) = entries(tmp_path)
    disk = ReferenceDisk.open(str(tmp_path))
    assert disk is not None
    _mac, _, body = path.read_bytes().partition(b"\n")
    doc = json.loads(body)
    doc["outputs"][0] = -1  # authenticated (written with the key), but wrong
    body = json.dumps(doc).encode()
    path.write_bytes(disk._mac(body) + b"\n" + body)
    verdicts, _ = judged(task, tmp_path, task.reference.source, task.reference.source + "\n")
    assert [v.stage.value for v in verdicts] == ["OK", "OK"]
    # the wrong entry was found out and replaced by a fresh one
    (again,) = entries(tmp_path)
    assert json.loads(again.read_bytes().partition(b"\n")[2])["outputs"][0] != -1


def test_unreadable_entries_and_foreign_roots_are_not_used(task, tmp_path) -> None:
    judged(task, tmp_path, task.reference.source)
    (path,) = entries(tmp_path)
    path.write_bytes(path.read_bytes()[:100])  # cut short
    verdicts, calls = judged(task, tmp_path, task.reference.source)
    _, calls_fresh = judged(task, None, task.reference.source)
    assert verdicts[0].stage.value == "OK" and calls == calls_fresh
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    assert ReferenceDisk.open(str(shared)) is None  # others may write there
    assert ReferenceDisk.open("relative/dir") is None


def test_turned_off_nothing_is_kept(task, tmp_path, monkeypatch) -> None:
    _, calls_fresh = judged(task, None, task.reference.source)
    monkeypatch.setenv(ENV, "off")
    _, calls = judged(task, tmp_path, task.reference.source)
    assert calls == calls_fresh and not entries(tmp_path)
    monkeypatch.setenv(ENV, str(tmp_path / "elsewhere"))
    judged(task, tmp_path, task.reference.source)
    assert not entries(tmp_path) and len(entries(tmp_path / "elsewhere")) == 1


def test_the_key_holds_what_the_runs_depended_on(tmp_path: Path) -> None:
    import sys

    from perfgym.judge.reference_context import code_digest, runtime_context

    here = runtime_context(sys.executable, site_hooks=False)
    assert here is not None and sys.version in here and code_digest() in here
    assert runtime_context(sys.executable, site_hooks=True) != here
    assert runtime_context(str(tmp_path / "no-python"), site_hooks=False) is None
    a = ReferenceDisk.open(str(tmp_path), here)
    b = ReferenceDisk.open(str(tmp_path), here.replace(sys.version, "3.11.2 (other)"))
    assert a is not None and b is not None
    args = ("task@1", "reference", "def f(x): return x", {"cpu_s": 1.0}, [])
    assert a.key(*args) != b.key(*args)
    # an interpreter that cannot be named keeps nothing
    assert ReferenceDisk.open(str(tmp_path), None) is None
