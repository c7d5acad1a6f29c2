"""A service worker process: holds one local `Judge` on its share of the cores and answers leases.

Started by the service as `python -m perfgym.service.workers.worker_main FD PARENT_PID`; it
talks over the inherited socket FD and dies with its parent (a killed service leaves no worker
measuring).
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import sys
from typing import Any

from perfgym.judge import oracle
from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Judge
from perfgym.sandbox.execution import Status
from perfgym.sandbox.pool import RunRequest, SandboxPool
from perfgym.service.labels import Origin, qualified, restore, unique_candidates
from perfgym.service.workers import framing
from perfgym.tasks.task import Task

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class Worker:
    def __init__(self, sock: socket.socket, judge: Judge) -> None:
        self.sock = sock
        self.judge = judge
        self.tasks: dict[str, Task] = {}
        self._pools: dict[bool, SandboxPool] = {}

    def _task(self, digest: str, text: str | None) -> Task:
        task = self.tasks.get(digest)
        if task is None:
            if text is None:
                raise KeyError(f"task {digest} was never sent")
            if len(self.tasks) > 256:
                self.tasks.clear()
            task = self.tasks[digest] = qualified(Task.model_validate_json(text), digest)
        return task

    def judge_lease(self, msg: dict[str, Any]) -> None:
        groups: dict[str, list[dict[str, Any]]] = {}
        for item in msg["items"]:
            groups.setdefault(item["task"], []).append(item)
        for digest, items in groups.items():
            results = []
            try:
                task = self._task(digest, msg["tasks"].get(digest))
                pairs = [(it["payload"]["completion"], it["payload"]["source"]) for it in items]
                verdicts = self.judge.judge_many(unique_candidates(task, pairs))
                for it, v in zip(items, verdicts, strict=True):
                    p = it["payload"]
                    v = restore(
                        v, Origin(p["task_id"], p["model"], p["sample"], p.get("suite") or "")
                    )
                    results.append(self._result(it, "infra_error" if v.infra_error else "ok",
                                                verdict=v.model_dump(mode="json"), reason=v.reason))  # fmt: skip
            except Exception as exc:  # the judge itself broke: ours, never the program's
                why = f"judge failed: {type(exc).__name__}: {exc}"
                results = [self._result(it, "infra_error", reason=why) for it in items]
            framing.send(self.sock, {"op": "results", "lease": msg["lease"], "results": results})

    def exec_lease(self, msg: dict[str, Any]) -> None:
        by_pin: dict[bool, list[dict[str, Any]]] = {}
        for item in msg["items"]:
            by_pin.setdefault(bool(item["payload"].get("pin")), []).append(item)
        for pin, items in by_pin.items():
            pool = self._pools.get(pin)
            if pool is None:
                pool = self._pools[pin] = SandboxPool(self.judge.sandbox, timing=pin)
            results = []
            try:
                # JSON mode: the request's bytes travel base64-encoded.
                reqs = [RunRequest.model_validate_json(json.dumps(it["payload"]["request"]))
                        for it in items]  # fmt: skip
                for it, ex in zip(items, pool.run_many(reqs), strict=True):
                    status = "infra_error" if ex.status is Status.SANDBOX_ERROR else "ok"
                    results.append(self._result(it, status, execution=ex.model_dump(mode="json"),
                                                reason=ex.reason))  # fmt: skip
            except Exception as exc:
                why = f"sandbox failed: {type(exc).__name__}: {exc}"
                results = [self._result(it, "infra_error", reason=why) for it in items]
            framing.send(self.sock, {"op": "results", "lease": msg["lease"], "results": results})

    def pool_stats(self) -> dict[str, int]:
        """Restarts and failed cleanups of this process's warm Python workers (the judge's and
        the checkers'), for the service's health."""
        pools = [getattr(self.judge, "_workers", None), oracle.checker_pool_if_started()]
        total = {"python_worker_restarts": 0, "failed_cleanups": 0}
        for pool in pools:
            stats = getattr(pool, "stats", None)
            if not callable(stats):
                continue
            s = stats()
            total["python_worker_restarts"] += int(s.get("restarts", 0))
            total["failed_cleanups"] += int(s.get("failed_cleanups", 0))
        return total

    @staticmethod
    def _result(item: dict[str, Any], status: str, **result: Any) -> dict[str, Any]:
        return {"job_id": item["job_id"], "idx": item["idx"], "status": status, "result": result}

    def serve(self) -> None:
        framing.send(self.sock, {"op": "ready", "pid": os.getpid()})
        while True:
            try:
                msg = framing.recv(self.sock)
            except (EOFError, OSError):
                return
            op = msg.get("op")
            if op == "stop":
                return
            if op == "judge":
                self.judge_lease(msg)
            elif op == "exec":
                self.exec_lease(msg)
            framing.send(self.sock, {"op": "done", "lease": msg.get("lease"),
                                     "pools": self.pool_stats()})  # fmt: skip

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self.judge.close()


def main(argv: list[str]) -> int:
    fd, parent = int(argv[1]), int(argv[2])
    die_with_parent(parent)
    sock = socket.socket(fileno=fd)
    init = framing.recv(sock)
    cores = [int(c) for c in init["cores"]]
    if cores:
        os.sched_setaffinity(0, cores)
    worker = Worker(sock, Judge(JudgeConfig.model_validate(init["judge"])))
    try:
        worker.serve()
    finally:
        worker.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
