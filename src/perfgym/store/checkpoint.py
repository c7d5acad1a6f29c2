"""`EvalCheckpoint`: `perfgym eval`'s verdicts written as they are judged, and an interrupted
run of the same command resumed from its results file and the store."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Verdict
from perfgym.machine import fingerprint
from perfgym.store.journal import ResultsJournal, is_locked
from perfgym.store.keys import config_digest
from perfgym.store.replay import candidate_keys, relabel
from perfgym.store.result_store import ResultStore, StoreConfig
from perfgym.store.results_file import header as results_header
from perfgym.store.results_file import read_header, scan_results


def run_key(kind: str, parts: Sequence[str]) -> str:
    """What identifies one command's run: same kind, same parts (in order) -> same run."""
    text = json.dumps([kind, *parts], separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class ResumeFrom:
    """Where an unfinished run of the same command is looked for.

    explicit: the results path was given, so only that file; else the newest `prefix*.jsonl`
    beside it (the default names carry a timestamp). enabled: False starts over.
    """

    explicit: bool
    prefix: str
    enabled: bool = True

    def find(self, out: Path, key: str) -> Path | None:
        """The results file of an unfinished run with this run key that no live run is writing."""
        if not self.enabled:
            return None
        if self.explicit:
            found = [out] if out.is_file() else []
        else:
            found = sorted(out.parent.glob(f"{self.prefix}*.jsonl"), key=_mtime, reverse=True)
        for path in found:
            meta = read_header(path)
            unfinished = meta and meta.get("run_key") == key and not meta.get("complete")
            if unfinished and not is_locked(path):
                return path
        return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def summarise_problems(problems: list[str], limit: int = 3) -> str:
    """One line for the unreadable records a resume skipped."""
    shown = "; ".join(problems[:limit]) + ("; ..." if len(problems) > limit else "")
    return f"ignored {len(problems)} unreadable record(s): {shown}"


class EvalCheckpoint:
    """The results file of one `perfgym eval` run while it is judged.

    Opening it looks for an unfinished run of the same command (same candidates, labels, judge
    configuration, machine, epoch; see `run_key`) and reuses its finished verdicts: those in
    its results file, and those the store holds for it (by content key, written by that run).
    `todo` is what is left to judge; hand each task's verdicts to `finished` as they come.
    """

    def __init__(
        self,
        out: Path,
        candidates: Sequence[Candidate],
        config: JudgeConfig,
        *,
        resume: ResumeFrom,
        store: str | None,
        header_fields: dict[str, Any],
        epoch: str = "0",
    ) -> None:
        self.candidates = list(candidates)
        keys = candidate_keys(self.candidates, config)
        labels = [
            f"{k}|{c.model}|{c.sample}|{c.suite}" for k, c in zip(keys, candidates, strict=True)
        ]
        self.run_key = run_key(
            "perfgym eval", [config_digest(config), fingerprint(), epoch, *labels]
        )
        self.resumed_from = resume.find(out, self.run_key)
        self.path = self.resumed_from or out
        self.notes: list[str] = []
        self.from_file = self.from_store = 0
        self.verdicts: list[Verdict | None] = [None] * len(self.candidates)
        if self.resumed_from is not None:
            self._reuse_file(self.resumed_from)
            if store is not None:
                self._reuse_store(store, keys, epoch)
        self.reused = self.from_file + self.from_store
        self.todo = [i for i, v in enumerate(self.verdicts) if v is None]
        head = results_header(**header_fields, run_key=self.run_key, complete=False)
        self.journal = ResultsJournal(self.path, head, [v for v in self.verdicts if v is not None])

    # -- resuming -------------------------------------------------------------------------------
    def _reuse_file(self, path: Path) -> None:
        scan = scan_results(path)
        problems = list(scan.problems)
        at: dict[tuple[str, str, int], int | None] = {}
        for i, c in enumerate(self.candidates):
            ident = (c.task.id, c.model, c.sample)
            at[ident] = None if ident in at else i  # an ambiguous identity is judged again
        for n, obj in scan.records:
            try:
                v = Verdict.model_validate(obj)
            except ValueError as exc:
                problems.append(f"{path}:{n}: not a verdict ({str(exc).splitlines()[0]})")
                continue
            at_i = at.get((v.task_id, v.model, v.sample))
            if at_i is not None and not v.infra_error:  # an infrastructure failure is no answer
                if self.verdicts[at_i] is None:
                    self.from_file += 1
                self.verdicts[at_i] = v
        if problems:
            self.notes.append(summarise_problems(problems))

    def _reuse_store(self, store: str, keys: list[str], epoch: str) -> None:
        missing = [i for i, v in enumerate(self.verdicts) if v is None]
        if not missing:
            return
        problems: list[str] = []
        with ResultStore(StoreConfig(path=store, epoch=epoch)) as s:
            got = s.get_verdicts([keys[i] for i in missing], run=str(self.path), problems=problems)
        for i in missing:
            v = got.get(keys[i])
            if v is not None:
                self.verdicts[i] = relabel(v, self.candidates[i])
                self.from_store += 1
        if problems:
            self.notes.append(f"store {store}: " + summarise_problems(problems))

    # -- writing --------------------------------------------------------------------------------
    @property
    def todo_candidates(self) -> list[Candidate]:
        return [self.candidates[i] for i in self.todo]

    @property
    def kept(self) -> int:
        """Verdicts in the results file now."""
        return sum(v is not None for v in self.verdicts)

    def finished(self, indices: Sequence[int], verdicts: Sequence[Verdict]) -> None:
        """Verdicts of `todo_candidates[indices]`, written at once."""
        fresh = []
        for j, v in zip(indices, verdicts, strict=True):
            i = self.todo[j]
            if self.verdicts[i] is None:
                fresh.append(v)
            self.verdicts[i] = v
        self.journal.append(fresh)

    def finish(
        self, judged: Sequence[Verdict], *, extra: Sequence[Verdict] = (), **header_fields: Any
    ) -> list[Verdict]:
        """Every verdict in candidate order, the results file rewritten complete. `judged` is the
        judge's answer for `todo_candidates` (fills any verdict no hook handed out); `extra`
        verdicts (a missing answer's NX) are written after them and not returned."""
        for i, v in zip(self.todo, judged, strict=True):
            self.verdicts[i] = self.verdicts[i] or v
        missing = [self.candidates[i] for i, v in enumerate(self.verdicts) if v is None]
        if missing:
            c = missing[0]
            raise RuntimeError(
                f"{len(missing)} candidates have no verdict (e.g. {c.task.id}/{c.model})"
            )
        out = [v for v in self.verdicts if v is not None]
        self.journal.finish([*out, *extra], reused=self.reused, **header_fields)
        return out

    def close(self) -> None:
        """Keep what is written (an interrupted run): synced, resumable."""
        self.journal.close()

    def resume_line(self) -> str | None:
        """One line saying what was reused, or None for a fresh run."""
        if self.resumed_from is None:
            return None
        n = len(self.candidates)
        return (f"resuming {self.resumed_from}: reused {self.reused} of {n} verdicts "
                f"({self.from_file} from the results file, {self.from_store} from the store); "
                f"judging {n - self.reused}")  # fmt: skip
