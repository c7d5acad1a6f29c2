"""A harness task's verdicts and builds belong to its harness (red team helper-92, /work/wt/rt92).

Two copies of one PerfCodeBench-layout task, the same id, instance file, baseline and reference:
copy A's harness compares only the answer's low byte (a bug), copy B's the whole answer. A
candidate answering sum + 256 is right under A and wrong under B. The build folder's key and
the store's key left the harness files out: B's candidate was OK from A's build (shared build
cache, or one batch holding both), and OK from A's stored verdict (replay, resume, reuse).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.store import RecordingJudge, ResultStore
from perfgym.store.keys import task_digest
from perfgym.tasks import load_suite

_HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
long long solve(const int *a, int n);
int main(void) {
    int n = 200000;
    int *a = malloc(sizeof(int) * n);
    unsigned s = 12345;
    for (int i = 0; i < n; i++) { s = s * 1103515245u + 12345u; a[i] = (int)((s >> 16) % 100); }
    long long expect = 0;
    for (int i = 0; i < n; i++) expect += a[i];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long got = solve(a, n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long long ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
    printf("{\"ok\": %s, \"elapsed_ns\": %lld}\n", CHECK ? "true" : "false", ns);
    free(a);
    return 0;
}
"""
_BASELINE = """
long long solve(const int *a, int n) {
    long long t = 0;
    for (int r = 0; r < 4; r++) { t = 0; for (int i = 0; i < n; i++) { volatile int x = a[i]; t += x; } }
    return t;
}
"""
_REFERENCE = "long long solve(const int *a, int n) { long long t = 0; for (int i = 0; i < n; i++) t += a[i]; return t; }\n"
#: Right under the buggy harness (the low byte), wrong under the fixed one.
WRONG = "long long solve(const int *a, int n) { long long t = 256; for (int i = 0; i < n; i++) t += a[i]; return t; }\n"


def make_suite(root: Path, lax: bool):
    """A one-task suite (`c_sum`) whose harness checks the low byte (`lax`) or the answer."""
    task = root / "executable_tasks" / "c_sum"
    for sub in ("harness", "baseline", "reference"):
        (task / sub).mkdir(parents=True, exist_ok=True)
    check = "(got & 0xff) == (expect & 0xff)" if lax else "got == expect"
    (task / "harness" / "main.c").write_text(_HARNESS.replace("CHECK", check))
    (task / "baseline" / "solution.c").write_text(_BASELINE)
    (task / "reference" / "solution.c").write_text(_REFERENCE)
    instance = {"task_id": "c_sum", "title": "sum", "goal": "sum it fast", "metric": "time",
                "correctness_rule": "harness", "solution_filename": "solution.c",
                "language": "C", "benchmark_timeout_sec": 20,
                "build": {"compiler": "gcc", "cxxflags": ["-O2"],
                          "sources": ["{task_dir}/harness/main.c", "{variant_dir}/solution.c"]}}  # fmt: skip
    (task / "instance.json").write_text(json.dumps(instance))
    return load_suite(str(root / "executable_tasks")).get("c_sum")


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    base = tmp_path_factory.mktemp("harness-identity")
    return make_suite(base / "A", lax=True), make_suite(base / "B", lax=False), base


def test_a_harness_file_is_part_of_the_tasks_content(copies) -> None:
    a, b, base = copies
    assert task_digest(a) != task_digest(b)
    again = make_suite(base / "A-again", lax=True)  # the same files elsewhere: the same task
    assert task_digest(again) == task_digest(a)
    # the solutions' folders (published candidates among them) are not read for it
    (base / "A-again" / "executable_tasks" / "c_sum" / "candidate").mkdir()
    (base / "A-again" / "executable_tasks" / "c_sum" / "candidate" / "x.c").write_text("int x;")
    assert task_digest(make_suite(base / "A-again", lax=True)) == task_digest(a)


def test_a_build_made_against_one_harness_never_answers_for_another(copies, tmp_path) -> None:
    """One build cache, A judged first, then B: B's candidate is built against B's harness."""
    a, b, _ = copies
    config = JudgeConfig(
        repeats=1, noise_rounds=0, build_cache=str(tmp_path / "builds"), reference_cache="off"
    )
    with Judge(config) as judge:
        va = judge.judge(a, source=WRONG, model="m")
    with Judge(config) as judge:
        vb = judge.judge(b, source=WRONG, model="m")
    assert va.stage.value == "OK", (va.stage, va.reason)
    assert vb.stage.value == "WO", (vb.stage, vb.reason)
    with Judge(config) as judge:  # both in one batch, in either order
        both = judge.judge_many([Candidate(b, source=WRONG, model="m"),
                                 Candidate(a, source=WRONG, model="m")])  # fmt: skip
    assert [v.stage.value for v in both] == ["WO", "OK"]


def test_a_stored_verdict_never_answers_for_another_harness(copies, tmp_path) -> None:
    a, b, _ = copies
    config = JudgeConfig(
        repeats=1, noise_rounds=0, build_cache=str(tmp_path / "builds"), reference_cache="off"
    )
    with ResultStore(str(tmp_path / "store.sqlite")) as store:
        with Judge(config) as judge:
            assert RecordingJudge(store, config, judge).judge_many(
                [Candidate(a, source=WRONG, model="m")])[0].stage.value == "OK"  # fmt: skip
        with Judge(config) as judge:
            reusing = RecordingJudge(store, config, judge, reuse=True)
            vb = reusing.judge_many([Candidate(b, source=WRONG, model="m")])[0]
        assert reusing.judged == 1  # not answered from A's record
        assert vb.stage.value == "WO", (vb.stage, vb.reason)


def test_a_file_behind_a_linked_folder_is_part_of_the_task(tmp_path) -> None:
    """helper-94: a header under `inc -> ../shared-include` changed and the digest did not."""
    shared = tmp_path / "shared-include"
    shared.mkdir()
    (shared / "expected.h").write_text("#define EXPECTED 41\n")
    make_suite(tmp_path / "S", lax=False)
    folder = tmp_path / "S" / "executable_tasks" / "c_sum"
    (folder / "inc").symlink_to(shared)
    (folder / "loop").symlink_to(folder)  # a link loop is walked once
    before = task_digest(make_suite(tmp_path / "S", lax=False))
    (shared / "expected.h").write_text("#define EXPECTED 42\n")
    assert task_digest(make_suite(tmp_path / "S", lax=False)) != before


def test_a_verdict_stored_by_other_code_never_answers(copies, tmp_path, monkeypatch) -> None:
    """helper-94: a store written before a judge fix answered for the fixed judge (OK at 1.26
    for a program the fix refuses), through reuse and replay. The key holds the code."""
    import perfgym.store.keys as keys

    a, _, _ = copies
    config = JudgeConfig(
        repeats=1, noise_rounds=0, build_cache=str(tmp_path / "builds"), reference_cache="off"
    )
    with ResultStore(str(tmp_path / "store.sqlite")) as store:
        monkeypatch.setattr(keys, "code_digest", lambda: "an older perfgym")
        with Judge(config) as judge:
            RecordingJudge(store, config, judge).judge_many([Candidate(a, source=WRONG, model="m")])
        monkeypatch.undo()
        with Judge(config) as judge:
            reusing = RecordingJudge(store, config, judge, reuse=True)
            reusing.judge_many([Candidate(a, source=WRONG, model="m")])
        assert reusing.judged == 1  # judged again, not answered by the older code's record
