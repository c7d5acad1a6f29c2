"""Budgets and patience stop new rounds: the round in flight finishes and is kept, the reason is
recorded, nothing further is asked."""

from __future__ import annotations

import pytest
from optimize_helpers import client, core_task

from perfgym.llm.core_script import fenced
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.session import judge_config, run_session
from perfgym.store.optimize_history import OptimizeHistory


@pytest.mark.parametrize(
    ("settings", "why"),
    [({"patience": 1}, "patience: 1 round(s)"), ({"max_tokens": 1}, "token budget")],
)
def test_stops_after_the_first_round(tmp_path, settings, why):
    task = core_task("c-hash-join")
    # The baseline again: never a gain, so patience 1 stops after one round.
    script = Script().add(task.id, fenced(task.baseline.source, task.language, "Try:"))
    history = OptimizeHistory(tmp_path / "h.sqlite")
    config = OptimizeConfig(iterations=4, **settings)  # type: ignore[arg-type]
    with ScriptedServer(script) as srv:
        result = run_session(config, "perfgym-core", [task], client(srv.base_url),
                             judge=judge_config(3), history=history, out=tmp_path / "out",
                             resume=False, report=False)  # fmt: skip
        asked = srv.stats.answers_served
    steps = [s for s in history.steps(result.run) if s.slot >= 0]
    assert [s.iteration for s in steps] == [1] and steps[0].judged and asked == 1
    assert steps[0].tokens > 0
    assert result.states[task.id].stopped.startswith(why)
    assert [r.iteration for r in result.rows] == [1, 2, 3, 4]  # later rows carry the best on
    assert history.run_state(result.run)[0].startswith("stopped: ")  # type: ignore[index]
