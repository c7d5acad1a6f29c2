"""Noise never pays: the baseline's own text, judged again and again through the reward path
(a real judge, then `get_reward("rlpf")`), scores the same every time under the default
decision, padding it with comments earns nothing, and a clearly faster program still earns
the bonus — decided by the statistics, not by the estimates' order."""

from __future__ import annotations

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.rewards import get_reward
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

# sum(i*i % 7 for i < n), `passes` times over: cost ∝ passes.
_LOOP = (
    "import sys\nn = int(sys.stdin.read())\ns = 0\nfor _ in range({passes}):\n"
    "    s = 0\n    for i in range(n):\n        s += i * i % 7\nprint(s)\n"
)
BASELINE = _LOOP.format(passes=6)
REFERENCE = _LOOP.format(passes=1)
# One pass, written differently: not the reference's source, so only the statistics decide.
FAST = (
    "import sys\n\n\ndef total(n):\n    return sum(i * i % 7 for i in range(n))\n\n\n"
    "print(total(int(sys.stdin.read())))\n"
)
PADDED = (
    "# An optimised version.\n"
    + BASELINE.replace("s = 0\n", "s = 0   # accumulator\n\n\n")
    + "\n\n# end\n"
)


def loop_task() -> Task:
    return Task(
        id="noise-loop",
        family="loops",
        language=Language.PYTHON,
        kind=TaskKind.STDIO,
        baseline=Solution(label="baseline", source=BASELINE),
        references=[Solution(label="reference", source=REFERENCE)],
        tests=[TestCase(id="t1", stdin="10", expected=str(sum(i * i % 7 for i in range(10))))],
        workloads=[TestCase(id="w", stdin="300000")],
        oracle=Oracle(kind="tokens"),
        time_limit_s=60,
    )


@pytest.fixture(scope="module")
def single_run_judge():  # type: ignore[no-untyped-def]
    """RLPF's training setting: one timed run per variant, so the noise band decides."""
    with Judge(JudgeConfig(repeats=1)) as judge:
        yield judge


def test_the_baseline_text_scores_the_same_ten_times_and_padding_pays_nothing(
    single_run_judge: Judge,
) -> None:
    task, reward = loop_task(), get_reward("rlpf")
    outs = []
    for k in range(10):
        text = BASELINE if k % 2 == 0 else PADDED
        verdict = single_run_judge.judge(task, source=text, model="copy", sample=k)
        assert verdict.correct, verdict.reason
        assert verdict.same_source == ["baseline"]
        assert verdict.baseline is not None and verdict.baseline.noise_band is not None
        assert verdict.reference is not None and verdict.reference.noise_band is not None
        outs.append(reward.score([verdict])[0])
    assert len({o.value for o in outs}) == 1, [o.value for o in outs]
    assert outs[0].value == pytest.approx(0.15)  # the correctness floor: no speed credit
    for o in outs:
        assert o.components["fbr"] is False and o.components["cgre"] == 0.0
        assert "baseline tie (same-source)" in o.decision
        # slower than the reference, or within its noise band where a loaded full run measured
        # that band wide (a 2.9x gap called a tie once); never faster
        assert "reference slower" in o.decision or "reference tie (noise-band)" in o.decision


def test_a_clearly_faster_program_still_earns_the_bonus(single_run_judge: Judge) -> None:
    out = get_reward("rlpf").score([single_run_judge.judge(loop_task(), source=FAST)])[0]
    assert out.components["fbr"] is True, out.decision
    assert "baseline faster (noise-band)" in out.decision
    assert out.value is not None and out.value > 0.15 + 0.16


def test_a_batch_with_three_rounds_decides_by_the_paired_test() -> None:
    task = loop_task()
    with Judge(JudgeConfig(repeats=3)) as judge:
        cands = [Candidate(task, source=BASELINE, model="copy", sample=k) for k in range(4)]
        cands.append(Candidate(task, source=FAST, model="fast"))
        verdicts = judge.judge_many(cands)
    outs = get_reward("rlpf").score(verdicts)
    assert len({o.value for o in outs[:4]}) == 1 and outs[0].components["fbr"] is False
    fast = outs[4]
    assert fast.components.get("fbr") is True, (fast.reason, fast.stage, verdicts[4].flags)
    assert "baseline faster (paired-t)" in fast.decision
    # The bonus is the decision's: without the statistics (strict), the copies' fate is noise.
    strict = get_reward("rlpf", decision="strict").score(verdicts)
    assert all(o.decision.startswith("strict: ") for o in strict)


def test_the_band_is_measured_only_when_a_candidate_needs_a_decision() -> None:
    """A batch whose candidates all fail their tests has no speed decision to make: no A/A band
    is measured for it (4 x noise_rounds runs per workload saved); the same judge measures it
    for the first candidate that passes, which is still decided by it."""
    task = loop_task()
    with Judge(JudgeConfig(repeats=1)) as judge:
        wrong = judge.judge_many([Candidate(task, source="print(0)\n", model="wrong", sample=k)
                                  for k in range(2)])  # fmt: skip
        assert all(v.stage is Stage.WO for v in wrong), [v.stage for v in wrong]
        assert all(v.baseline is None or v.baseline.noise_band is None for v in wrong)
        fast = judge.judge(task, source=FAST, model="fast")
    assert fast.baseline is not None and fast.baseline.noise_band is not None
    out = get_reward("rlpf").score([fast])[0]
    assert "baseline faster (noise-band)" in out.decision, out.decision


def test_each_single_round_batch_runs_the_baseline_twice_for_its_band(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The baseline's extra runs in a single-round batch (its twins: three in the task's first
    batch, one after) feed the task's band history once per batch that measured a candidate,
    appear in no verdict, and are pooled with the baseline's own run: the baseline every
    verdict of the batch holds is their geometric mean."""
    import math

    from perfgym.judge import judge as judge_module
    from perfgym.judge.noise_bands import TWIN_PREFIX, pool_twins

    pooled: list[tuple[list[float], float]] = []

    def spy(timings):  # type: ignore[no-untyped-def]
        runs = [t.estimate_s for k, t in timings.items() if k == "baseline" or TWIN_PREFIX in k]
        pool_twins(timings)
        pooled.append((runs, timings["baseline"].estimate_s))

    monkeypatch.setattr(judge_module, "pool_twins", spy)
    task = loop_task()
    renamed = BASELINE.replace("s = 0\n", "t = 0\n").replace("s += ", "t += ").replace("(s)", "(t)")
    with Judge(JudgeConfig(repeats=1)) as judge:
        verdicts = [judge.judge(task, source=renamed, model="renamed", sample=k) for k in range(3)]
        history = next(iter(judge._bands._ratios.values()))
        wrong = judge.judge(task, source="print(0)\n", model="wrong")  # nothing measured
        assert len(next(iter(judge._bands._ratios.values()))) == len(history)
    assert len(history) == 3 + 1 + 1
    for v in [*verdicts, wrong]:
        assert TWIN_PREFIX not in v.model_dump_json()
    for v in verdicts:
        assert v.correct and v.same_source == [], v.reason
        assert v.baseline is not None and v.baseline.noise_band is not None
    assert [len(runs) for runs, _ in pooled] == [4, 2, 2]
    for v, (runs, got) in zip(verdicts, pooled, strict=True):
        assert math.isclose(got, math.prod(runs) ** (1 / len(runs)))
        assert v.baseline is not None and v.baseline.estimate_s == got
