"""`RecordingJudge`: reuse stored verdicts, judge only what is missing, store what was judged
(task by task, as the verdicts are ready).

With no inner judge it is a pure replay: nothing can execute, and a candidate without a stored
verdict is an error (`ReplayMissing`), never a silent re-run.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfgym.errors import PerfgymError
from perfgym.judge.backend import JudgeBackend
from perfgym.judge.candidate import Candidate, Finished, Progress
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Verdict
from perfgym.store.keys import config_digest, task_digest, verdict_key
from perfgym.store.result_store import ResultStore
from perfgym.store.stream import judge_streaming


class ReplayMissing(PerfgymError):
    """Replay was asked for a candidate the store has no verdict for."""


def candidate_keys(candidates: Sequence[Candidate], config: JudgeConfig) -> list[str]:
    """The store key of every candidate (task digests computed once per task object)."""
    cfg = config_digest(config)
    digests: dict[int, str] = {}
    keys = []
    for c in candidates:
        d = digests.get(id(c.task))
        if d is None:
            d = digests[id(c.task)] = task_digest(c.task)
        keys.append(verdict_key(d, cfg, completion=c.completion, source=c.source))
    return keys


def relabel(verdict: Verdict, candidate: Candidate) -> Verdict:
    """A stored verdict answers for its content; who asked (model, sample, suite) is the caller's."""
    return verdict.model_copy(update={"model": candidate.model, "sample": candidate.sample,
                                      "suite": candidate.suite or verdict.suite})  # fmt: skip


class RecordingJudge:
    """Judge-shaped (`judge_many`, `judge`, `close`) front of a `ResultStore`.

    inner:  the judge that runs what the store lacks; None means replay only.
    reuse:  answer from the store when it has the key (else always judge, and store).
    machine: whose measurements to reuse (default: this machine; ANY_MACHINE for any).
    close_store: `close()` closes the store too (when this judge opened it).
    """

    def __init__(
        self,
        store: ResultStore,
        config: JudgeConfig,
        inner: JudgeBackend | None = None,
        *,
        reuse: bool = True,
        machine: str | None = None,
        run: str = "",
        close_store: bool = False,
    ) -> None:
        self.store = store
        self.config = config
        self.inner = inner
        self.reuse = reuse or inner is None
        self.machine = machine
        self.run = run
        self.replayed = 0
        self.judged = 0
        self._close_store = close_store

    def judge_many(
        self,
        candidates: Sequence[Candidate],
        progress: Progress | None = None,
        finished: Finished | None = None,
    ) -> list[Verdict]:
        """One verdict per candidate, in order. Each task's fresh verdicts are stored as soon as
        the inner judge hands them out (so an interrupt keeps them); `finished` then receives
        them, and receives the reused ones first, at once."""
        keys = candidate_keys(candidates, self.config)
        stored = self.store.get_verdicts(keys, machine=self.machine) if self.reuse else {}
        missing = [i for i, k in enumerate(keys) if k not in stored]
        if missing and self.inner is None:
            first = ", ".join(
                f"{candidates[i].task.id}/{candidates[i].model}#{candidates[i].sample}"
                for i in missing[:5]
            )
            raise ReplayMissing(
                f"replay: {len(missing)} of {len(candidates)} candidates have no stored verdict "
                f"for this judge configuration, machine {self.machine or self.store.machine} and "
                f"epoch {self.store.config.epoch} (e.g. {first}); run without --replay to judge them"
            )
        out: list[Verdict | None] = [
            relabel(stored[k], c) if k in stored else None
            for k, c in zip(keys, candidates, strict=True)
        ]
        self.replayed += len(candidates) - len(missing)
        if finished is not None and len(missing) < len(candidates):
            reused = [i for i, v in enumerate(out) if v is not None]
            finished(reused, [v for v in out if v is not None])
        if missing:
            assert self.inner is not None
            done_before = len(candidates) - len(missing)

            def inner_progress(done: int, total: int) -> None:
                if progress is not None:
                    progress(done_before + done, len(candidates))

            def inner_finished(sub: Sequence[int], fresh: Sequence[Verdict]) -> None:
                at = [missing[j] for j in sub]
                # Infrastructure failures are not answers: never store them for reuse.
                keep = [(keys[i], v) for i, v in zip(at, fresh, strict=True) if not v.infra_error]
                if keep:
                    self.store.put_verdicts(keep, run=self.run)
                for i, v in zip(at, fresh, strict=True):
                    out[i] = v
                self.judged += len(at)
                if finished is not None:
                    finished(at, fresh)

            fresh = judge_streaming(self.inner, [candidates[i] for i in missing],
                                    inner_progress, inner_finished)  # fmt: skip
            for i, v in zip(missing, fresh, strict=True):
                out[i] = out[i] or v
        elif progress is not None:
            progress(len(candidates), len(candidates))
        return [v for v in out if v is not None]

    def judge(self, task, completion=None, *, source=None, model="", sample=0) -> Verdict:  # type: ignore[no-untyped-def]
        """Judge one candidate (raw model text or source)."""
        return self.judge_many([Candidate(task, completion, source, model, sample)])[0]

    def close(self) -> None:
        if self.inner is not None:
            self.inner.close()
        if self._close_store:
            self.store.close()

    def __enter__(self) -> RecordingJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
