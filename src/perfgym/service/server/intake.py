"""Turning a request into queue items: resolve tasks, refuse what cannot run, key every item."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from perfgym.errors import ConfigError, PerfgymError
from perfgym.judge.verdict import Stage, Verdict
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.request import check_name
from perfgym.sandbox.view import program_env
from perfgym.service.config import ServiceConfig
from perfgym.service.models import ExecRequest, JudgeRequest
from perfgym.service.rewarding import check_reward_request
from perfgym.service.workers.job_queue import NewItem
from perfgym.store.keys import config_digest, task_digest, verdict_key
from perfgym.store.result_store import ResultStore
from perfgym.tasks.suite import Suite, load_suite
from perfgym.tasks.task import Task
from perfgym.toolchains import toolchain

#: The fields of a /v1/executions run's limits held to `ServiceConfig.exec_ceiling`.
EXEC_CEILING_FIELDS = ("wall_s", "cpu_s", "memory_mb", "max_processes", "stdout_bytes",
                       "stderr_bytes", "file_size_bytes", "disk_bytes", "open_files")  # fmt: skip


def bad_text(value: Any, where: str = "body") -> str | None:
    """Where `value` (parsed JSON) holds a string that is not valid Unicode text (a lone
    surrogate, which JSON's \\uD800 escapes can carry but UTF-8 cannot encode), else None."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError as exc:
                    return f"{at} (position {exc.start})"
        elif isinstance(v, dict):
            for k, x in v.items():
                stack.append((k, f"{at} key"))
                stack.append((x, f"{at}.{k}"))
        elif isinstance(v, list | tuple):
            stack.extend((x, f"{at}[{n}]") for n, x in enumerate(v))
    return None


def _invalid_text_verdict(task: Task, item: Any, where: str, judge: Any) -> Verdict:
    """The verdict of a candidate whose text is not valid Unicode: NX (no program), judged
    without running anything, so one bad character costs its own item, not the batch."""
    return Verdict(task_id=item.task_id, suite=item.suite or "", model=item.model,
                   sample=item.sample, stage=Stage.NX, detail="INVALID_TEXT",
                   reason=f"the candidate's {where} is not valid Unicode text (a lone surrogate)",
                   language=task.language.value, config=judge.model_dump(mode="json"))  # fmt: skip


class UnknownTask(PerfgymError, LookupError):
    """A request named a suite or task this service does not have."""


class Unsupported(PerfgymError, ValueError):
    """A request needs something this service cannot do (a language without a toolchain)."""


def request_digest(kind: str, body: dict[str, Any]) -> str:
    """What makes two submissions the same job (the delivery options are left out)."""
    body = {k: v for k, v in body.items() if k not in ("job_id", "deadline_s", "wait")}
    text = json.dumps({"kind": kind, "body": body}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Intake:
    """Resolves task references against the suites the service serves (loaded once each)."""

    def __init__(self, config: ServiceConfig, store: ResultStore | None) -> None:
        self.config = config
        self.store = store
        self._suites: dict[str, Suite] = {}
        self._lock = threading.Lock()
        self._judge_digest = config_digest(config.judge)
        self._language_ok: dict[str, str | None] = {}

    def suite(self, name: str) -> Suite:
        if name not in self.config.suites:
            raise UnknownTask(
                f"unknown suite {name!r}: this service serves {', '.join(self.config.suites)}"
            )
        with self._lock:
            if name not in self._suites:
                self._suites[name] = load_suite(name)
            return self._suites[name]

    def _check_language(self, task: Task) -> None:
        lang = task.language.value
        if lang not in self._language_ok:
            self._language_ok[lang] = toolchain(task.language).missing()
        why = self._language_ok[lang]
        if why:
            raise Unsupported(f"task {task.id!r}: language {lang!r} is not supported here: {why}")

    def judge_items(self, req: JudgeRequest) -> tuple[list[NewItem], dict[str, str]]:
        """(items, task digest -> task JSON). Raises UnknownTask, Unsupported or ConfigError."""
        if len(req.items) > self.config.max_items:
            raise ConfigError(f"{len(req.items)} items in one request; the limit is "
                              f"{self.config.max_items}")  # fmt: skip
        for n, it in enumerate(req.items):
            where = bad_text([it.task_id, it.suite, it.model], f"items[{n}]")
            if where:
                raise ConfigError(f"{where} is not valid Unicode text (a lone surrogate)")
        where = bad_text([t.model_dump(mode="python") for t in req.tasks], "tasks")
        where = where or bad_text([req.columns, req.reward and req.reward.params], "reward")
        if where:
            raise ConfigError(f"{where} is not valid Unicode text (a lone surrogate)")
        inline: dict[str, Task] = {}
        for t in req.tasks:
            if t.id in inline:
                raise ConfigError(f"two inline tasks share the id {t.id!r}")
            # An inline task is self-contained: a client may not point the service at host paths.
            inline[t.id] = t.model_copy(update={"root": None})
        if req.reward is not None:
            check_reward_request(req.reward, req.columns, len(req.items))
        elif req.columns:
            raise ConfigError("columns are reward inputs: give a reward too")
        resolved: dict[tuple[str | None, str], tuple[Task, str]] = {}
        tasks: dict[str, str] = {}
        items = []
        for n, it in enumerate(req.items):
            ref = (it.suite, it.task_id)
            if ref not in resolved:
                if it.suite is None:
                    task = inline.get(it.task_id)
                    if task is None:
                        raise UnknownTask(f"item {n}: task {it.task_id!r} is neither inline in "
                                          "this request nor given a suite")  # fmt: skip
                else:
                    try:
                        task = self.suite(it.suite).get(it.task_id)
                    except KeyError:
                        raise UnknownTask(f"item {n}: suite {it.suite!r} has no task "
                                          f"{it.task_id!r}") from None  # fmt: skip
                self._check_language(task)
                digest = task_digest(task)
                resolved[ref] = (task, digest)
                tasks[digest] = task.model_dump_json()
            task, digest = resolved[ref]
            text_field = "completion" if it.completion is not None else "source"
            if bad_text(it.completion if it.completion is not None else it.source):
                # Answered here (NX) and keyed by the text's surrogate-escaped bytes.
                raw = (it.completion or it.source or "").encode("utf-8", "surrogatepass")
                stand_in = "\x00invalid-text:" + hashlib.sha256(raw).hexdigest()
                completion = stand_in if text_field == "completion" else None
                source = None if completion is not None else stand_in
                key = verdict_key(digest, self._judge_digest, completion=completion,
                                  source=source)  # fmt: skip
                payload = {"task_id": it.task_id, "suite": it.suite, "completion": completion,
                           "source": source, "model": it.model, "sample": it.sample, "key": key}  # fmt: skip
                nx = _invalid_text_verdict(task, it, text_field, self.config.judge)
                items.append(NewItem(payload=payload, task_digest=digest,
                                     result={"verdict": nx.model_dump(mode="json"),
                                             "reason": "invalid text"}))  # fmt: skip
                continue
            key = verdict_key(digest, self._judge_digest, completion=it.completion,
                              source=it.source)  # fmt: skip
            payload = {"task_id": it.task_id, "suite": it.suite, "completion": it.completion,
                       "source": it.source, "model": it.model, "sample": it.sample, "key": key}  # fmt: skip
            items.append(NewItem(payload=payload, task_digest=digest))
        # A verdict decided on hidden inputs drawn fresh per batch is that draw's alone: reusing
        # it would keep one lucky draw's answer for good (red team round 2).
        fresh_draws = self.config.judge.hidden_workloads and self.config.judge.hidden_seed is None
        if self.config.reuse_stored and self.store is not None and not fresh_draws:
            stored = self.store.get_verdicts([i.payload["key"] for i in items])
            for i in items:
                if i.result is not None:
                    continue
                v = stored.get(i.payload["key"])
                if v is not None:
                    p = i.payload
                    v = v.model_copy(update={"model": p["model"], "sample": p["sample"]})
                    i.result = {"verdict": v.model_dump(mode="json"), "reason": "from the store"}
        return items, tasks

    def _within_ceiling(self, n: int, limits: Limits, deadline_s: float | None) -> None:
        """ConfigError when run `n` asks more than `exec_ceiling` allows, or more wall or CPU
        time than its request's deadline."""
        ceiling = self.config.exec_ceiling
        for name in EXEC_CEILING_FIELDS:
            asked, most = getattr(limits, name), getattr(ceiling, name)
            if name == "cpu_s" and most is None:
                most = ceiling.wall_s
            if asked is not None and most is not None and asked > most:
                raise ConfigError(f"run {n}: limits.{name} {asked:g} is above this service's "
                                  f"ceiling of {most:g}")  # fmt: skip
        deadline = min(deadline_s or self.config.default_deadline_s, self.config.max_deadline_s)
        for name in ("wall_s", "cpu_s"):
            asked = getattr(limits, name)
            if asked is not None and asked > deadline:
                raise ConfigError(f"run {n}: limits.{name} {asked:g} is longer than the "
                                  f"request's deadline of {deadline:g} s")  # fmt: skip

    def exec_items(self, req: ExecRequest) -> list[NewItem]:
        if len(req.requests) > self.config.max_items:
            raise ConfigError(f"{len(req.requests)} runs in one request; the limit is "
                              f"{self.config.max_items}")  # fmt: skip
        items = []
        for n, r in enumerate(req.requests):
            where = bad_text(r.model_dump(mode="python"), f"run {n}")
            if where:
                raise ConfigError(f"{where} is not valid Unicode text (a lone surrogate)")
            if r.limits.network and not self.config.allow_network:
                raise ConfigError(f"run {n}: limits.network=true is refused: this service does "
                                  "not lend the host's network to runs (a run would reach its "
                                  "loopback); the operator may opt in with allow_network")  # fmt: skip
            if r.binds:
                raise ConfigError(f"run {n}: binds name host paths and are not accepted over "
                                  "HTTP; send the files instead")  # fmt: skip
            if not r.command:
                raise ConfigError(f"run {n}: command must be a non-empty argv list")
            self._within_ceiling(n, r.limits, req.deadline_s)
            try:
                for name in [*r.files, *r.collect]:
                    check_name(name)
                program_env(r.env)
            except ValueError as exc:  # ConfigError is a ValueError too
                raise ConfigError(f"run {n}: {exc}") from None
            items.append(NewItem(payload={"request": r.model_dump(mode="json"), "pin": req.pin}))
        return items
