"""The judge builds Python candidates in its warm workers, with the same verdicts as before."""

import sys
import uuid

import pytest
from sum_programs import PROGRAMS, sum_task

from perfgym.judge import Candidate, Stage
from perfgym.judge.variant import built, prepare
from perfgym.tasks.task import Language

# The module whose build stage calls `built` (looked up there on each call).
stages_module = sys.modules["perfgym.judge.stages"]

CORRECT, WRONG, CRASH, BROKEN = PROGRAMS[Language.PYTHON]
SOURCES = {
    "ok": CORRECT,
    "wo": WRONG,
    "nr": CRASH,
    "nc": BROKEN,
    "indent": "import sys\n  print(1)\n",
    "null": "print(1)\x00\n",
    "deep": "a" + ".b" * 1_000_000 + "\n",  # compile() gives up after ~350 MB
}
EXPECTED = {"ok": Stage.OK, "wo": Stage.WO, "nr": Stage.NR, "nc": Stage.NC, "indent": Stage.NC,
            "null": Stage.NC, "deep": Stage.NC}  # fmt: skip


def _judge(judge, monkeypatch, tag: str, warm: bool):  # type: ignore[no-untyped-def]
    """Verdicts of every source and how each candidate's build ran. A first-line comment unique
    to the call keeps the judge's (persistent) build cache from answering."""
    tag = f"{tag} {uuid.uuid4().hex}"
    how: dict[str, str] = {}

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not warm:
            kwargs["workers"] = None
        v = built(*args, **kwargs)
        if v.build_measurement is not None:
            how[v.label] = v.build_measurement.mechanisms.get("build", "fresh sandbox")
        return v

    monkeypatch.setattr(stages_module, "built", spy)
    task = sum_task(Language.PYTHON)
    cands = [Candidate(task, source=f"# {tag}\n{src}", model=name) for name, src in SOURCES.items()]
    return {v.model: v for v in judge.judge_many(cands)}, how


def _seen(v):  # type: ignore[no-untyped-def]
    tests = [(t.id, t.passed, t.status) for t in v.tests]
    return v.stage, v.detail, v.reason, v.build_log, v.infra_error, tests


def test_verdicts_are_the_same_with_and_without_the_warm_build(judge, monkeypatch):
    warm, warm_how = _judge(judge, monkeypatch, "warm", warm=True)
    fresh, fresh_how = _judge(judge, monkeypatch, "sandbox", warm=False)
    for name, stage in EXPECTED.items():
        assert warm[name].stage is stage, (name, warm[name].reason, warm[name].build_log[-300:])
        assert _seen(warm[name]) == _seen(fresh[name]), name
    assert warm["nc"].detail == "COMPILE_ERROR" and "SyntaxError" in warm["nc"].build_log
    assert "RecursionError" in warm["deep"].build_log
    labels = [label for label in warm_how if label.startswith("candidate-")]
    assert len(labels) == len(SOURCES)
    assert all(warm_how[label].startswith("warm Python worker") for label in labels), warm_how
    assert all(fresh_how[label] == "fresh sandbox" for label in labels), fresh_how


@pytest.mark.parametrize("name", ["ok", "nc"])
def test_prepare_with_workers_matches_prepare_without(judge, name):
    task = sum_task(Language.PYTHON)
    a, b = (
        prepare(task, "candidate", source=f"# {how} {uuid.uuid4().hex}\n{SOURCES[name]}",
                sandbox=judge.sandbox, cache=judge.cache, workers=pool)
        for how, pool in (("warm", judge.workers), ("cold", None))
    )  # fmt: skip
    assert a.build_measurement is not None and b.build_measurement is not None
    assert a.build_measurement.mechanisms["build"].startswith("warm Python worker")
    assert "build" not in b.build_measurement.mechanisms
    assert (a.stage, a.detail, a.reason, a.build_log, a.infra) == (
        b.stage, b.detail, b.reason, b.build_log, b.infra)  # fmt: skip
    assert a.ready is (name == "ok") and a.argv == b.argv
    assert [x.sandbox_path for x in a.binds] == [x.sandbox_path for x in b.binds]
