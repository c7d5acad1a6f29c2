"""Every stage NX/NC/NR/WO/OK produced by a real candidate, in six languages."""

import pytest
from sum_programs import FENCE, PROGRAMS, sum_task

from perfgym.judge import Candidate, Stage
from perfgym.tasks.task import Language


@pytest.mark.parametrize("language", list(PROGRAMS), ids=lambda lang: lang.value)
def test_each_stage(judge, language):
    task = sum_task(language)
    correct, wrong, crash, broken = PROGRAMS[language]
    fence = FENCE[language]
    cands = [
        Candidate(task, completion="I would rather not write code today.", model="nx"),
        Candidate(task, completion=f"```{fence}\n{broken}```", model="nc"),
        Candidate(task, completion=f"Here:\n```{fence}\n{crash}```", model="nr"),
        Candidate(task, completion=f"```{fence}\n{wrong}```", model="wo"),
        Candidate(task, completion=f"```{fence}\n{correct}```\nDone.", model="ok"),
    ]
    verdicts = {v.model: v for v in judge.judge_many(cands)}
    for model, stage in (("nx", Stage.NX), ("nc", Stage.NC), ("nr", Stage.NR), ("wo", Stage.WO),
                         ("ok", Stage.OK)):  # fmt: skip
        v = verdicts[model]
        assert v.stage is stage, (model, v.stage, v.detail, v.reason, v.build_log[-500:])
        assert not v.infra_error, v.reason
    assert verdicts["nr"].detail == "RUNTIME_ERROR"
    assert verdicts["nc"].build_log or verdicts["nc"].reason
    ok = verdicts["ok"]
    assert ok.extraction_rule == f"fence:{language.value}:longest"
    assert ok.candidate is not None and ok.candidate.estimate_s > 0
    assert [t.id for t in ok.tests] == ["t1", "t2", "w1"] and all(t.passed for t in ok.tests)


def test_timeout_and_memory_are_nr_with_detail(judge):
    task = sum_task(Language.PYTHON).model_copy(update={"time_limit_s": 3.0, "memory_limit_mb": 64})
    loop = "while True:\n    pass\n"
    hog = "x = bytearray(512 * 2**20)\nfor i in range(0, len(x), 4096): x[i] = 1\n"
    vs = judge.judge_many(
        [Candidate(task, source=loop, model="t"), Candidate(task, source=hog, model="m")]
    )
    assert (vs[0].stage, vs[0].detail) == (Stage.NR, "TIMEOUT")
    assert (vs[1].stage, vs[1].detail) == (Stage.NR, "MEMORY_LIMIT")


def test_wrong_on_a_workload_is_wo(judge):
    task = sum_task(Language.PYTHON)
    # Right on the small tests, wrong once inputs grow: the workload check catches it.
    src = "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:4])))\n"
    (v,) = judge.judge_many([Candidate(task, source=src, model="m")])
    assert v.stage is Stage.WO and v.reason.startswith("w1")


def test_a_source_too_deep_to_compile_is_nc_and_loses_nothing_else(judge):
    """A function-task candidate nested past what the parser or compiler can take is the
    candidate's failure (NC), and the rest of its batch is judged as usual."""
    from perfgym.tasks import load_suite

    task = load_suite("humaneval").get("HumanEval/0")
    assert task.reference is not None
    bombs = ["x = " + "-" * 1_000_000 + "1\n", "x = a" + ".b" * 200_000 + "\n"]
    good = task.reference.source
    out = judge.judge_many([Candidate(task, source=s, sample=k)
                            for k, s in enumerate([*bombs, good])])  # fmt: skip
    assert [v.stage.name for v in out[:2]] == ["NC", "NC"], [v.reason for v in out]
    assert all(("MemoryError" in v.reason or "RecursionError" in v.reason) for v in out[:2])
    assert out[2].stage.name == "OK", out[2].reason
