"""Replay: stored verdicts come back without executing anything and reproduce the metrics."""

from __future__ import annotations

import pytest
from small_tasks import SLOW_SUM, SUM, sum_task

from perfgym.judge import Candidate, Judge, JudgeConfig
from perfgym.metrics.summary import summarise_models
from perfgym.rewards import get_reward
from perfgym.store import ANY_MACHINE, RecordingJudge, ReplayMissing, ResultStore

CONFIG = JudgeConfig(repeats=3)


def _candidates():
    task = sum_task()
    return [
        Candidate(task, completion=f"```python\n{SUM}```", model="m", sample=0),
        Candidate(task, source=SLOW_SUM, model="m", sample=1),
        Candidate(task, source="print(42)\n", model="m", sample=2),
        Candidate(task, completion="no code here", model="other", sample=0),
    ]


def test_replay_executes_nothing_and_reproduces_metrics(tmp_path, counting_sandbox):
    cands = _candidates()
    with ResultStore(tmp_path / "s.sqlite") as store:
        with Judge(CONFIG, sandbox=counting_sandbox) as judge:
            recording = RecordingJudge(store, CONFIG, judge, run="first")
            first = recording.judge_many(cands)
            ran = counting_sandbox.runs
            assert ran > 0 and recording.judged == len(cands) and recording.replayed == 0
            assert [v.stage.value for v in first] == ["OK", "OK", "WO", "NX"]

            # Same inputs again through a store-first judge: every answer comes from the store
            # and the real sandbox underneath is never asked to run anything.
            again = RecordingJudge(store, CONFIG, judge)
            second = again.judge_many(cands)
            assert counting_sandbox.runs == ran
            assert again.replayed == len(cands) and again.judged == 0

        replay = RecordingJudge(store, CONFIG)  # no inner judge at all: nothing can execute
        third = replay.judge_many(cands)
    assert first == second == third
    assert summarise_models(third) == summarise_models(first)
    reward = get_reward("rlpf")
    assert reward(third) == reward(first)


def test_replay_relabels_and_refuses_what_is_missing(tmp_path, counting_sandbox):
    cands = _candidates()[:2]
    with ResultStore(tmp_path / "s.sqlite") as store:
        with Judge(CONFIG, sandbox=counting_sandbox) as judge:
            RecordingJudge(store, CONFIG, judge).judge_many(cands)
        # Another model producing the same text gets the stored answer under its own name.
        same_text = Candidate(cands[0].task, completion=cands[0].completion, model="twin", sample=7)
        (v,) = RecordingJudge(store, CONFIG).judge_many([same_text])
        assert (v.model, v.sample) == ("twin", 7)
        with pytest.raises(ReplayMissing, match="1 of 1 candidates"):
            RecordingJudge(store, CONFIG).judge_many(
                [Candidate(cands[0].task, source="print(6)\n", model="new")]
            )
        with pytest.raises(ReplayMissing):  # another judge configuration is another key
            RecordingJudge(store, JudgeConfig(repeats=5)).judge_many(cands)
        with pytest.raises(ReplayMissing):  # measurements from other machines only on request
            RecordingJudge(store, CONFIG, machine="other-host/123").judge_many(cands)
        assert len(RecordingJudge(store, CONFIG, machine=ANY_MACHINE).judge_many(cands)) == 2
