"""Turning a request into queue items: resolve tasks, refuse what cannot run, key every item."""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from perfgym.errors import ConfigError, PerfgymError
from perfgym.sandbox.request import check_name
from perfgym.sandbox.view import program_env
from perfgym.service.config import ServiceConfig
from perfgym.service.job_queue import NewItem
from perfgym.service.models import ExecRequest, JudgeRequest
from perfgym.service.rewarding import check_reward
from perfgym.store.keys import config_digest, task_digest, verdict_key
from perfgym.store.result_store import ResultStore
from perfgym.tasks.suite import Suite, load_suite
from perfgym.tasks.task import Task
from perfgym.toolchains import toolchain


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
        inline: dict[str, Task] = {}
        for t in req.tasks:
            if t.id in inline:
                raise ConfigError(f"two inline tasks share the id {t.id!r}")
            # An inline task is self-contained: a client may not point the service at host paths.
            inline[t.id] = t.model_copy(update={"root": None})
        if req.reward is not None:
            check_reward(req.reward, req.columns, len(req.items))
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
            key = verdict_key(digest, self._judge_digest, completion=it.completion,
                              source=it.source)  # fmt: skip
            payload = {"task_id": it.task_id, "suite": it.suite, "completion": it.completion,
                       "source": it.source, "model": it.model, "sample": it.sample, "key": key}  # fmt: skip
            items.append(NewItem(payload=payload, task_digest=digest))
        if self.config.reuse_stored and self.store is not None:
            stored = self.store.get_verdicts([i.payload["key"] for i in items])
            for i in items:
                v = stored.get(i.payload["key"])
                if v is not None:
                    p = i.payload
                    v = v.model_copy(update={"model": p["model"], "sample": p["sample"]})
                    i.result = {"verdict": v.model_dump(mode="json"), "reason": "from the store"}
        return items, tasks

    def exec_items(self, req: ExecRequest) -> list[NewItem]:
        if len(req.requests) > self.config.max_items:
            raise ConfigError(f"{len(req.requests)} runs in one request; the limit is "
                              f"{self.config.max_items}")  # fmt: skip
        items = []
        for n, r in enumerate(req.requests):
            if r.binds:
                raise ConfigError(f"run {n}: binds name host paths and are not accepted over "
                                  "HTTP; send the files instead")  # fmt: skip
            if not r.command:
                raise ConfigError(f"run {n}: command must be a non-empty argv list")
            try:
                for name in [*r.files, *r.collect]:
                    check_name(name)
                program_env(r.env)
            except ValueError as exc:  # ConfigError is a ValueError too
                raise ConfigError(f"run {n}: {exc}") from None
            items.append(NewItem(payload={"request": r.model_dump(mode="json"), "pin": req.pin}))
        return items
