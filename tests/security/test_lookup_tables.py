"""A lookup table of every visible output (tests and declared workloads) is rejected on EVERY
perfgym-core task once decisions are made on hidden workloads: it is not accepted by the
optimiser and earns no more reward than a wrong answer. Issue 26 ("Loop integrity"): such a
table for py-lis-dp was accepted as significantly faster (ratio 0.085).

Cheap by construction: the visible outputs two tasks at a time, one judge call for the 40
tables (repeats=1, no noise band, the baseline and the reference not measured: a table that
fails a hidden workload is never timed)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lookup_tables import table_program, visible_outputs

from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.decided_on import DecidedOn
from perfgym.judge.judge import Judge
from perfgym.judge.verdict import Stage
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.search import TaskState, decide
from perfgym.rewards import get_reward
from perfgym.tasks.native import load_task_dir

CORE = Path(__file__).resolve().parents[2] / "suites" / "perfgym-core"

#: The cheapest judge that still decides: one round, nothing measured that is not needed.
CHEAP = {"repeats": 1, "noise_rounds": 0, "measure_baseline": False,
         "measure_reference": False, "test_time_factor": None}  # fmt: skip


@pytest.fixture(scope="module")
def core_tasks():
    return [load_task_dir(d) for d in sorted(CORE.iterdir()) if (d / "task.yaml").is_file()]


def test_a_table_of_every_visible_output_is_rejected_on_every_core_task(core_tasks):
    assert len(core_tasks) == 40
    with Judge(JudgeConfig(hidden_workloads=True, **CHEAP)) as judge:
        # Two tasks' generators and references at a time (sandboxed runs: one per core).
        with ThreadPoolExecutor(2) as pool:
            tables = list(pool.map(lambda t: table_program(t, visible_outputs(judge, t)),
                                   core_tasks))  # fmt: skip
        verdicts = judge.judge_many([Candidate(t, source=src, model="table")
                                     for t, src in zip(core_tasks, tables, strict=True)])  # fmt: skip
    rlpf = get_reward("rlpf")
    for task, v in zip(core_tasks, verdicts, strict=True):
        assert not v.infra_error, (task.id, v.reason)
        assert v.decided_on is DecidedOn.HIDDEN and v.hidden_workloads == len(task.workloads)
        # every visible test passed: the table is what a model that saw them would write
        visible = [r for r in v.tests if not r.id.startswith("hidden-")]
        assert visible and all(r.passed for r in visible), (task.id, v.reason)
        assert v.stage in (Stage.WO, Stage.NR), (task.id, v.stage, v.reason)
        state = TaskState(task, OptimizeConfig())
        assert not decide(state, [v], None, [""])[0].accepted, task.id
        wrong = v.model_copy(update={"stage": Stage.WO, "detail": "WRONG_OUTPUT"})
        got, worst = rlpf.score([v, wrong])
        assert got.value is not None and worst.value is not None
        assert got.value <= worst.value, (task.id, got.value, worst.value)


def test_without_hidden_workloads_the_table_passes(core_tasks):
    """The contrast (what main did): judged on the declared workloads, the table is correct."""
    task = next(t for t in core_tasks if t.id == "py-lis-dp")
    with Judge(JudgeConfig(**CHEAP)) as judge:
        v = judge.judge(task, source=table_program(task, visible_outputs(judge, task)))
    assert v.stage is Stage.OK and v.decided_on is DecidedOn.VISIBLE


def test_the_fast_key_is_the_byte_loop_every_table_program_runs():
    """key_of takes the hash a block at a time; it must be the byte loop's, or no table hits."""
    from lookup_tables import BLOCK, _key_of_bytewise, key_of

    for n in (0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 7):
        text = "".join(chr(32 + (k * 7919) % 95) for k in range(n - 1)) + "é\n"[: max(n, 0)]
        assert key_of(text) == _key_of_bytewise(text), n
