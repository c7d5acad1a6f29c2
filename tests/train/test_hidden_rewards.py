"""Training rewards are decided on hidden workloads: a policy that learnt the declared
workloads' answers (a lookup table) earns a wrong answer's reward, not the reference's; every
batch draws fresh hidden inputs unless a seed fixes them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from train_helpers import fence

from perfgym.judge.decided_on import DecidedOn
from perfgym.judge.hidden import is_hidden
from perfgym.train.batch import BatchReward, training_judge_config
from perfgym.train.verl_score import ScorerConfig

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "security"))
from lookup_tables import table_program, visible_outputs  # noqa: E402

TASK = "py-prefix-range-sums"
WRONG = "import sys\nprint(sys.stdin.read()[:3])\n"


def _hidden_ids(reward: BatchReward) -> set[str]:
    return {w for v in reward.last_verdicts if v.candidate for w in v.candidate.per_workload_s}


def test_a_table_of_the_visible_answers_earns_a_wrong_answers_reward(core):
    task = next(t for t in core.tasks if t.id == TASK)
    with BatchReward(core, "rlpf", reward_params={"alpha_f": 0.16, "alpha_r": 0.10},
                     judge_config=training_judge_config(noise_rounds=0)) as reward:  # fmt: skip
        assert reward.config.hidden_workloads
        table = table_program(task, visible_outputs(reward.judge, task))  # type: ignore[arg-type]
        got = reward.score([(TASK, fence(table)), (TASK, fence(WRONG)),
                            (TASK, fence(task.references[0].source))])  # fmt: skip
        verdicts = list(reward.last_verdicts)
    cheat, wrong, ref = got
    assert cheat.stage == "WO" and wrong.stage == "WO" and ref.stage == "OK"
    assert cheat.value is not None and wrong.value is not None and ref.value is not None
    assert cheat.value <= wrong.value < ref.value
    assert all(v.decided_on is DecidedOn.HIDDEN for v in verdicts)


def test_each_batch_draws_fresh_hidden_inputs_unless_a_seed_fixes_them(core):
    task = next(t for t in core.tasks if t.id == TASK)
    item = [(TASK, fence(task.references[0].source))]
    cheap = {"noise_rounds": 0, "measure_baseline": False}
    with BatchReward(core, "rlpf", judge_config=training_judge_config(**cheap)) as reward:
        reward.score(item)
        first = _hidden_ids(reward)
        reward.score(item)
        second = _hidden_ids(reward)
    assert first and second and first.isdisjoint(second)
    assert all(is_hidden(w) for w in first | second)
    fixed = []
    for _ in range(2):
        config = training_judge_config(hidden_seed=99, **cheap)
        with BatchReward(core, "rlpf", judge_config=config) as reward:
            reward.score(item)
            reward.score(item)
            fixed.append(_hidden_ids(reward))
    assert fixed[0] == fixed[1] and len(fixed[0]) == len(task.workloads)


def test_verl_reward_kwargs_can_fix_the_seed():
    config = ScorerConfig.from_kwargs({"hidden_seed": 7}, "perfgym-core")
    assert config.hidden_seed == 7


def test_a_pool_reward_on_hidden_workloads_is_refused_not_silently_none(core) -> None:
    """red team helper-82: `percentile` with the training default gave every correct program
    None (its durations are keyed by the batch's hidden inputs, which no stored pool holds), so
    a trainer saw only 0s. It is refused when built, saying what to do; on declared workloads
    it is built."""
    from perfgym.errors import ConfigError

    for name in ("percentile", "percentile_qar"):
        with pytest.raises(ConfigError, match="pool measured on the same inputs"):
            BatchReward(core, name)
        with pytest.raises(ConfigError, match="hidden_workloads=False"):
            BatchReward(core, name, backend="service", url="http://127.0.0.1:9")
    declared = BatchReward(core, "percentile",
                           judge_config=training_judge_config(hidden_workloads=False))  # fmt: skip
    declared.close()
