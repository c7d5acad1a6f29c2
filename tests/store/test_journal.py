"""Results written as produced: the journal's lines are on disk as each record is appended, a
live journal is locked against a resume, `finish` rewrites it complete and in order; the
readers tolerate a torn last line; the recording judge stores each task's verdicts as soon as
they are judged, so an interrupt after the first task keeps that task's verdicts."""

from __future__ import annotations

import json

import pytest
from small_tasks import SUM, sum_task
from store_helpers import make_verdict

from perfgym.errors import ConfigError
from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.store import RecordingJudge, ResultStore
from perfgym.store.journal import ResultsJournal, is_locked
from perfgym.store.results_file import HEADER_KEY, header, read_results, scan_results
from perfgym.store.stream import judge_streaming

CONFIG = JudgeConfig(repeats=1, noise_rounds=0)


def test_journal_lines_are_on_disk_at_once_and_finish_rewrites_complete(tmp_path):
    path = tmp_path / "r.jsonl"
    a, b, c = (make_verdict(f"t{i}") for i in range(3))
    journal = ResultsJournal(path, header(suite="s"), [a], fsync_every=100, fsync_s=3600)
    assert is_locked(path)
    journal.append([b])
    # Written by one write() each: another reader sees whole lines before any fsync or close.
    assert [json.loads(x) for x in path.read_text().splitlines()][1:] == [
        json.loads(v.model_dump_json()) for v in (a, b)
    ]
    journal.append([c])
    journal.finish([c, a, b], reused=1)
    assert not is_locked(path)
    meta, verdicts = read_results(path)
    assert meta["complete"] is True and meta["reused"] == 1 and verdicts == [c, a, b]


def test_journal_syncs_in_batches(tmp_path):
    journal = ResultsJournal(tmp_path / "r.jsonl", header(), fsync_every=3, fsync_s=3600)
    journal.append([make_verdict("a"), make_verdict("b")])
    assert journal._unsynced == 2
    journal.append([make_verdict("c")])
    assert journal._unsynced == 0
    journal.close()


def test_readers_and_a_torn_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    v = make_verdict("t")
    head = json.dumps(header(suite="s"))
    path.write_text(f"{head}\n{v.model_dump_json()}\n" + '{"task_id": "t2", "sta')
    assert read_results(path)[1] == [v]  # a run killed mid-line: the whole lines are kept
    scan = scan_results(path)
    assert scan.meta["suite"] == "s" and len(scan.records) == 1
    assert len(scan.problems) == 1 and "torn last line" in scan.problems[0]
    path.write_text(f"{head}\nnot json\n{v.model_dump_json()}\n")
    with pytest.raises(ConfigError, match=":2: not JSON"):
        read_results(path)  # a garbage line inside is no torn write: the strict reader refuses
    scan = scan_results(path)
    assert len(scan.records) == 1 and scan.problems == [f"{path}:2: not JSON (Expecting value)"]
    assert HEADER_KEY not in scan.records[0][1]


def _two_tasks() -> list[Candidate]:
    a, b = sum_task("sum-a"), sum_task("sum-b")
    return [Candidate(t, source=src, model="m") for t in (a, b) for src in (SUM, "print(1)\n")]


def test_recording_judge_stores_each_task_as_it_is_judged(tmp_path, counting_sandbox):
    cands = _two_tasks()
    handed: list[list[int]] = []

    def crash_after_first_task(indices, verdicts):
        handed.append(list(indices))
        raise KeyboardInterrupt  # as Ctrl-C would, right after the first task's verdicts

    with ResultStore(tmp_path / "s.sqlite") as store, Judge(CONFIG, sandbox=counting_sandbox) as j:
        with pytest.raises(KeyboardInterrupt):
            RecordingJudge(store, CONFIG, j).judge_many(cands, finished=crash_after_first_task)
        assert handed == [[0, 1]]
        assert store.count_verdicts() == 2  # the first task's verdicts were stored before
        # A store-first judge now judges only the second task.
        again = RecordingJudge(store, CONFIG, j, reuse=True)
        handed.clear()
        verdicts = again.judge_many(cands, finished=lambda i, v: handed.append(list(i)))
    assert (again.replayed, again.judged) == (2, 2)
    assert handed == [[0, 1], [2, 3]] and [v.stage.value for v in verdicts] == ["OK", "WO"] * 2


class NarrowBackend:
    """A backend with only the protocol's `judge_many(candidates, progress)` (as the service
    client and Ray offer): a real judge behind the narrower interface."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.calls = 0

    def judge_many(self, candidates, progress=None):
        self.calls += 1
        return self.judge.judge_many(candidates, progress)

    def close(self) -> None:
        self.judge.close()


def test_streaming_a_backend_without_the_hook_goes_slice_by_slice(counting_sandbox):
    cands = _two_tasks()
    handed = []
    with Judge(CONFIG, sandbox=counting_sandbox) as j:
        narrow = NarrowBackend(j)
        verdicts = judge_streaming(narrow, cands, finished=lambda i, v: handed.append(list(i)),
                                   slice_tasks=1)  # fmt: skip
    assert narrow.calls == 2 and handed == [[0, 1], [2, 3]] and len(verdicts) == 4
