"""Optimisation strategies on the registry (kind strategies): the `Strategy` protocol and the
built-ins, greedy (Afterburner's IOF), best-of-n and evolve.

A strategy says how many proposals a round asks for, what they revise, and what a judged round
leaves behind for the next; `search.decide` (which proposal is accepted) is the same for all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from perfgym.judge.verdict import Verdict
from perfgym.optimize.config import OptimizeConfig
from perfgym.optimize.database import Program, ProgramDatabase, draw_rng
from perfgym.optimize.feedback import BASELINE, of_verdict
from perfgym.optimize.objective import value_of
from perfgym.optimize.search import Request, TaskState, key_of
from perfgym.registry import Kind, register


class Strategy(Protocol):
    """One task's search policy, built by name (`OptimizeConfig.strategy`)."""

    def per_round(self, config: OptimizeConfig) -> int:
        """Proposals asked for in one round."""
        ...

    def start(self, state: TaskState) -> None:
        """Set up a task's state before its first round."""
        ...

    def propose(self, state: TaskState, iteration: int) -> list[Request]:
        """The round's requests."""
        ...

    def after_round(self, state: TaskState, iteration: int, requests: Sequence[Request],
                    verdicts: Sequence[Verdict | None]) -> None:  # fmt: skip
        """What the judged round leaves for the next (after the accepted one is taken)."""
        ...


def _generate(state: TaskState) -> list[Request]:
    return [Request(s, "generate", "", None, None) for s in range(state.config.per_round)]


def _revise_best(state: TaskState, slot: int) -> Request:
    return Request(slot, "optimize", state.best_role, state.best_source, state.best_feedback)


@register(Kind.STRATEGIES, "greedy")
class Greedy:
    """One proposal a round revising the best, with a failed one repaired first (Afterburner's IOF)."""

    def per_round(self, config: OptimizeConfig) -> int:
        return 1

    def start(self, state: TaskState) -> None:
        pass

    def propose(self, state: TaskState, iteration: int) -> list[Request]:
        if state.failed is not None:
            src, fb = state.failed
            return [Request(0, "repair", "failed", src, fb)]
        if state.best_source is None:
            return _generate(state)
        return [_revise_best(state, 0)]

    def after_round(self, state: TaskState, iteration: int, requests: Sequence[Request],
                    verdicts: Sequence[Verdict | None]) -> None:  # fmt: skip
        v0 = verdicts[0] if verdicts else None
        was_repair = requests[0].purpose == "repair" if requests else False
        fresh_failure = v0 is not None and not v0.correct and v0.source and not was_repair
        state.failed = (v0.source, of_verdict(v0)) if fresh_failure and v0 and v0.source else None


@register(Kind.STRATEGIES, "best-of-n")
class BestOfN:
    """n independent proposals a round, each revising the best."""

    def per_round(self, config: OptimizeConfig) -> int:
        return config.n

    def start(self, state: TaskState) -> None:
        pass

    def propose(self, state: TaskState, iteration: int) -> list[Request]:
        if state.best_source is None:
            return _generate(state)
        return [_revise_best(state, s) for s in range(state.config.n)]

    def after_round(self, state: TaskState, iteration: int, requests: Sequence[Request],
                    verdicts: Sequence[Verdict | None]) -> None:  # fmt: skip
        pass


@register(Kind.STRATEGIES, "evolve")
class Evolve:
    """n children a round, parents drawn from a program database's islands."""

    def per_round(self, config: OptimizeConfig) -> int:
        return config.n

    def start(self, state: TaskState) -> None:
        state.db = ProgramDatabase(state.config.islands)
        if state.best_source is not None:
            state.db.seed_with(Program(state.best_source, key_of(state.best_source, state.task),
                                       1.0, BASELINE, 0))  # fmt: skip

    def propose(self, state: TaskState, iteration: int) -> list[Request]:
        if state.best_source is None:
            return _generate(state)
        cfg, db = state.config, state.db
        assert db is not None
        out = []
        for s in range(cfg.n):
            island = s % cfg.islands
            parent = db.parent(island, draw_rng(cfg.seed, state.task.id, iteration, s))
            if parent is None:
                out.append(Request(s, "optimize", state.best_role, state.best_source,
                                   state.best_feedback, island))  # fmt: skip
            else:
                out.append(Request(s, "optimize", f"island-{island}", parent.source,
                                   parent.feedback, island))  # fmt: skip
        return out

    def after_round(self, state: TaskState, iteration: int, requests: Sequence[Request],
                    verdicts: Sequence[Verdict | None]) -> None:  # fmt: skip
        db, obj = state.db, state.config.objective
        assert db is not None
        for r, v in zip(requests, verdicts, strict=True):
            if v is None or not v.correct or v.source is None:
                continue
            a, b = value_of(v.candidate, obj), value_of(v.baseline, obj)
            if a is None or b is None:
                continue
            prog = Program(v.source, key_of(v.source, state.task), a / b, of_verdict(v), iteration)
            db.seed_with(prog)
            db.insert(r.island, prog)
        if iteration % state.config.migrate_every == 0:
            db.migrate()
