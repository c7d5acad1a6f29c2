"""A run stopped by Ctrl-C, then killed with -9, then resumed, reaches the uninterrupted run's
final state: the same steps, verdict stages and decisions, the same best program; the steps
finished before each stop are kept as they were, and no model call is made twice."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from optimize_helpers import ITERATIONS, cli, optimize_args, run_cli

from perfgym.store.optimize_history import OptimizeHistory

# The resumed run must reach the uninterrupted run's decisions, significance calls included:
# beside the other xdist worker's sandboxes a full run once left the uninterrupted run's round-5
# timing unusable ("not significantly better (tie, no usable timing)") where the resumed run's
# was significantly better. Alone (the reference run is made in this module's first test).
pytestmark = pytest.mark.alone


def _judged(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(store, timeout=5) as c:
            return int(c.execute("SELECT COUNT(accepted) FROM optimize_steps WHERE slot >= 0")
                       .fetchone()[0])  # fmt: skip
    except sqlite3.Error:  # the tables are not there yet
        return 0


def _stop_after(store: Path, judged: int, sig: int, *args: str) -> tuple[int, str]:
    p = cli(*args)
    deadline = time.monotonic() + 240
    while _judged(store) < judged and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    p.send_signal(sig)
    _, err = p.communicate(timeout=120)
    return p.returncode, err


def _served_over_logged(store: Path) -> int:
    """Answers the scripted model counted as served less the calls the run logged."""
    memo = json.loads(store.with_name(store.name + ".scripted.json").read_text())
    with sqlite3.connect(store, timeout=5) as c:
        logged = int(c.execute("SELECT COUNT(DISTINCT key) FROM model_calls").fetchone()[0])
    return int(memo["answers_served"]) - logged


def _state(store: Path) -> tuple[list[tuple[int, int, str, bool | None, str]], str]:
    h = OptimizeHistory(store)
    (run,) = [r[0] for r in h._conn.execute("SELECT run FROM optimize_runs")]
    steps = [(s.iteration, s.slot, s.stage, s.accepted, s.purpose) for s in h.steps(run)]
    h.close()
    return steps, run


def _verdicts(store: Path) -> dict[tuple[int, int], str]:
    h = OptimizeHistory(store)
    (run,) = [r[0] for r in h._conn.execute("SELECT run FROM optimize_runs")]
    out = {(s.iteration, s.slot): json.dumps(s.verdict) for s in h.steps(run) if s.judged}
    h.close()
    return out


def test_interrupt_then_kill_then_resume_reaches_the_same_state(tmp_path, core_run):
    store, out = tmp_path / "store.sqlite", tmp_path / "out"
    args = optimize_args(store, out)
    code, err = _stop_after(store, 1, signal.SIGINT, *args)
    assert code == 130, err
    assert "interrupted" in err and "--resume" in err
    kept = _verdicts(store)
    assert len([k for k in kept if k[1] >= 0]) >= 1  # Ctrl-C kept what was finished
    lost_to_interrupt = _served_over_logged(store) != 0  # an answer in flight, or a count short

    code, _ = _stop_after(store, 3, signal.SIGKILL, *args, "--resume")
    assert code == -signal.SIGKILL
    after_kill = _verdicts(store)
    assert {k: after_kill[k] for k in kept} == kept  # the killed run rewrote nothing finished

    done = run_cli(*args, "--resume")
    assert done.returncode == 0, done.stderr
    final = _verdicts(store)
    assert {k: final[k] for k in after_kill} == after_kill

    ref_store, ref_out, _ = core_run
    # No call was asked twice: every call key of the history is in the call log once.
    with sqlite3.connect(store) as c:
        keys = [r[0] for r in c.execute("SELECT call_key FROM optimize_steps WHERE slot >= 0")]
        logged = {r[0] for r in c.execute("SELECT key FROM model_calls")}
    assert len(keys) == len(set(keys)) == ITERATIONS and set(keys) <= logged
    memo = json.loads(store.with_name(store.name + ".scripted.json").read_text())
    state, ref = _state(store), _state(ref_store)
    assert state[1] == ref[1]  # the same run name
    assert [s for s in state[0] if s[1] >= 0][-1][0] == ITERATIONS
    # Each stop can lose the one answer in flight: the scripted server counts an answer as
    # served once it has written it, and a stop before the run logged it leaves it served and
    # unlogged; the resumed run asks again, as it would a real model (the same request gets the
    # memoised answer: one duplicate; a request with feedback of its own, timings measured anew,
    # gets the script's next answer). A SIGKILL after the run logged an answer and before the
    # memo counted it leaves the memo one answer short (a full run: 4 served, 5 logged). Both in
    # one run (full80: an answer lost to the Ctrl-C, asked again, then the memo one short after
    # the kill) read as served == logged with one duplicate.
    served_over_logged = _served_over_logged(store)
    if memo["duplicates"] == 0 and served_over_logged in (0, -1):  # no answer lost in a stop
        assert state == ref  # the same steps, stages and decisions
        assert (out / "best.jsonl").read_text() == (ref_out / "best.jsonl").read_text()
    else:
        assert memo["duplicates"] <= 2 and served_over_logged <= 2, memo  # one per stop at most
        # The run is the same as the uninterrupted one up to the first iteration whose answer
        # a stop may have lost, then carries on from there.
        stop = kept if lost_to_interrupt else after_kill
        lost = max(k[0] for k in stop) + 1
        assert [x for x in state[0] if x[0] < lost] == [x for x in ref[0] if x[0] < lost]
