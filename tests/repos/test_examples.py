"""The example repositories on the real sandbox: the expert patches are significantly faster
(and match the figures task.toml records), broken and cheating patches get no speedup."""

from __future__ import annotations

import pytest

from perfgym.repos.evaluate import evaluate_patch

# Compares wall-clock times or loads cores on purpose: no other test runs beside it.
pytestmark = pytest.mark.alone

EXAMPLES = ("bloomc", "peakscan", "textindex")
#: How far a fresh measurement may sit from task.toml's expert_speedup: its CI widened by this
#: factor each way. peakscan's patched call takes ~1 ms, and its ratio moved from 46.6x (idle,
#: recorded) to 117x at load 12-17 on this 2-core machine: the same order of magnitude, not the
#: same figure.
NOISE_FACTOR = 3.0


@pytest.mark.parametrize("task_id", EXAMPLES)
def test_expert_patch_is_significantly_faster(task_id: str, expert_runs) -> None:  # type: ignore[no-untyped-def]
    ev = expert_runs[task_id]
    assert ev.stage == "done" and ev.tests_passed and ev.correct, ev.error
    assert ev.measurement is not None
    for w in ev.measurement.workloads:
        assert w.significant and w.outputs_match, w.model_dump(
            include={"name", "speedup", "ci", "original_s", "patched_s", "patched_call_s",
                     "original_setup_s", "patched_setup_s", "charged_s", "remeasured_rounds"})
    lo, hi = ev.ci
    assert 1.2 < lo <= ev.speedup <= hi
    recorded = expert_runs[task_id].task_id and _recorded(task_id)
    assert lo / NOISE_FACTOR <= recorded <= hi * NOISE_FACTOR, (recorded, ev.ci)
    assert not ev.hacks.flagged, [f.evidence for f in ev.hacks.findings]
    assert ev.adjusted_speedup == ev.speedup


def _recorded(task_id: str) -> float:
    from perfgym.repos.loading import load_repo_suite

    task = next(t for t in load_repo_suite("perfgym-repos") if t.id == task_id)
    assert task.expert_speedup is not None
    return task.expert_speedup


def test_c_extension_is_built_in_the_sandbox(examples) -> None:  # type: ignore[no-untyped-def]
    original = examples["bloomc"].original.path
    assert list((original / "bloomc").glob("_core*.so")), "setup did not build the extension"


def test_patch_breaking_an_edge_case_fails_the_tests(examples, edit_patch) -> None:  # type: ignore[no-untyped-def]
    text = examples["textindex"]
    repo = text.task.folder / "repo"
    always_append = edit_patch(repo, [("textindex/postings.py",
                                       "            bisect.insort(self.doc_ids, doc_id)\n",
                                       "            self.doc_ids.append(doc_id)\n")])  # fmt: skip
    ev = evaluate_patch(text.task, always_append, text.original, rounds=3)
    assert ev.stage == "tests" and not ev.correct and ev.adjusted_speedup == 1.0
    assert "test_out_of_order_ids_stay_sorted" in ev.test_output
    peaks = examples["peakscan"]
    plateau = edit_patch(peaks.task.folder / "repo", [("peakscan/peaks.py",
                         " and arr[i] > arr[i - 1]:", ":")])  # fmt: skip
    ev = evaluate_patch(peaks.task, plateau, peaks.original, rounds=3)
    assert ev.stage == "tests" and "test_plateau_reports_first_sample_only" in ev.test_output


def test_patch_that_does_not_apply_is_a_failure_with_gits_message(examples) -> None:  # type: ignore[no-untyped-def]
    text = examples["textindex"]
    bad = "--- a/textindex/index.py\n+++ b/textindex/index.py\n@@ -1,1 +1,1 @@\n-no such line\n+x\n"
    ev = evaluate_patch(text.task, bad, text.original)
    assert ev.stage == "apply" and "patch does not apply" in ev.error and ev.adjusted_speedup == 1.0


def test_cheaper_programs_score_no_speedup(examples, edit_patch) -> None:  # type: ignore[no-untyped-def]
    """Indexing only part of the input, or skipping the positions the visible workload never
    reads: outputs (the hidden workload's for the second) differ, so nothing is counted."""
    text = examples["textindex"]
    repo = text.task.folder / "repo"
    partial = edit_patch(repo, [("textindex/index.py",
                                 "        for doc_id, text in items:\n",
                                 "        for doc_id, text in list(items)[:200]:\n")])  # fmt: skip
    ev = evaluate_patch(text.task, partial, text.original, rounds=3, repeats=0,
                        test_command="true")  # fmt: skip
    assert not ev.correct and ev.speedup is None and ev.adjusted_speedup == 1.0
    assert "outputs differ" in ev.error and "output_mismatch" in ev.hacks.kinds()
    no_positions = edit_patch(repo, [("textindex/postings.py",
                                      "        bisect.insort(self.positions[doc_id], position)\n",
                                      "")])  # fmt: skip
    ev = evaluate_patch(text.task, no_positions, text.original, rounds=3, repeats=0)
    assert ev.stage == "tests" and ev.adjusted_speedup == 1.0  # the tests see it
    ev = evaluate_patch(text.task, no_positions, text.original, rounds=3, repeats=0,
                        test_command="true")  # fmt: skip
    assert ev.measurement is not None and not ev.correct and ev.adjusted_speedup == 1.0
    assert ev.measurement.by_name("visible").outputs_match  # the visible workload is fooled
    assert not ev.measurement.by_name("hidden").outputs_match  # the hidden one is not
