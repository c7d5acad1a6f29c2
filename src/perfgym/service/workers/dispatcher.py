"""`Dispatcher`: feeds queued items to worker processes, records results, replaces dead workers.

Each worker owns a disjoint share of the cores (set as its CPU affinity), so however many
workers run, no two measured runs ever share a core on this node.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.pool import usable_cores
from perfgym.service.config import ServiceConfig
from perfgym.service.models import RewardSpec
from perfgym.service.rewarding import job_rewards
from perfgym.service.status import ItemStatus
from perfgym.service.workers import framing
from perfgym.service.workers.job_queue import JobQueue, Leased
from perfgym.service.workers.stats import ServiceStats
from perfgym.store.result_store import ResultStore
from perfgym.toolchains.cache import DEFAULT_ROOT
from perfgym.toolchains.cache_trim import trim

#: Counters a worker process reports of its warm Python workers (judge's and checkers').
POOL_COUNTERS = ("python_worker_restarts", "failed_cleanups")
_EXPIRE_EVERY_S = 0.2
#: Expired jobs are forgotten, and the stored results held to their cap, this often (a sum
#: over the jobs table and an indexed delete: well under a millisecond for thousands of jobs).
_GC_EVERY_S = 5.0
#: The build caches are held to their size this often (a walk of every entry).
_TRIM_EVERY_S = 60.0


def core_shares(n_workers: int | None, timing_mode: bool) -> list[list[int]]:
    """Split the usable cores among the workers, round-robin."""
    cores = usable_cores()
    n = n_workers or len(cores)
    if n > len(cores) and timing_mode:
        raise ConfigError(
            f"{n} workers on {len(cores)} cores would put two measured runs on one core; "
            f"use at most {len(cores)} workers (or judge.timing_mode=false)"
        )
    if n > len(cores):
        return [[cores[k % len(cores)]] for k in range(n)]
    return [cores[k::n] for k in range(n)]


class WorkerProcess:
    """One `perfgym.service.workers.worker_main` process and what it is working on."""

    def __init__(self, wid: int, cores: list[int]) -> None:
        self.wid = wid
        self.cores = cores
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.ready = False
        self.lease: int | None = None
        self.items: dict[tuple[str, int], Leased] = {}
        self.next_start = 0.0
        self.failures = 0
        #: The process's warm Python worker counters, as its last `done` reported them.
        self.pool_stats: dict[str, int] = {}

    def start(self, judge_json: dict[str, Any]) -> None:
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "perfgym.service.workers.worker_main", str(theirs.fileno()),
             str(os.getpid())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        theirs.close()
        self.sock = ours
        self.ready = False
        framing.send(ours, {"op": "init", "cores": self.cores, "judge": judge_json})

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.sock is not None

    def stop(self, timeout: float = 5.0) -> None:
        if self.sock is not None:
            try:
                framing.send(self.sock, {"op": "stop"})
            except OSError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.discard()

    def discard(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.ready = False


class Dispatcher:
    """The loop between the persisted queue and the worker processes (one thread)."""

    def __init__(
        self,
        queue: JobQueue,
        config: ServiceConfig,
        stats: ServiceStats,
        store: ResultStore | None,
        on_job: Callable[[str], None],
    ) -> None:
        self.queue = queue
        self.config = config
        self.stats = stats
        self.store = store
        self.on_job = on_job
        self.workers = [
            WorkerProcess(k, share)
            for k, share in enumerate(core_shares(config.workers, config.judge.timing_mode))
        ]
        self._judge_json = config.judge.model_dump(mode="json")
        self._leases = itertools.count(int(time.time() * 1000))
        self._stop = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._thread = threading.Thread(target=self._run, name="perfgym-dispatcher", daemon=True)
        self._task_cache: dict[str, str] = {}
        self._to_finish: set[str] = set()
        self._to_finish_lock = threading.Lock()

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        requeued, unfinished = self.queue.recover()
        self.stats.add("retried", requeued)
        for job_id in unfinished:
            self._finish(job_id)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self.wake()
        self._thread.join(30)
        for w in self.workers:
            w.stop()
        self._wake_r.close()
        self._wake_w.close()

    def wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass

    def finish_soon(self, job_id: str) -> None:
        """Compute a job's rewards on the dispatcher thread (a job answered without workers)."""
        with self._to_finish_lock:
            self._to_finish.add(job_id)
        self.wake()

    def alive_workers(self) -> int:
        return sum(1 for w in self.workers if w.alive and w.ready)

    def pool_counters(self) -> dict[str, int]:
        """Warm Python worker restarts and failed cleanups, over every worker process so far."""
        total = {k: self.stats.retired_pools.get(k, 0) for k in POOL_COUNTERS}
        for w in self.workers:
            for k, v in dict(w.pool_stats).items():
                total[k] += v
        return total

    def in_flight(self) -> int:
        return sum(len(w.items) for w in self.workers)

    # -- the loop -----------------------------------------------------------------------------------
    def _run(self) -> None:
        next_expire = next_gc = next_trim = 0.0
        while not self._stop.is_set():
            try:
                now = time.monotonic()
                self._respawn(now)
                with self._to_finish_lock:
                    pending, self._to_finish = self._to_finish, set()
                for job_id in pending:
                    self._finish(job_id)
                if now >= next_expire:
                    done, missed = self.queue.expire()
                    if missed:  # answered 'deadline' here, never by a worker (helper-79)
                        self.stats.add("deadline_missed", missed)
                        self.stats.note_finished(missed)
                    for job_id in done:
                        self._finish(job_id)
                    next_expire = now + _EXPIRE_EVERY_S
                if now >= next_gc:
                    self.queue.gc(self.config.retention_s)
                    next_gc = now + _GC_EVERY_S
                if now >= next_trim:
                    self._trim_build_caches()
                    next_trim = now + _TRIM_EVERY_S
                self._hand_out()
                self._receive(0.05)
            except Exception as exc:  # never let one bad message stop the service
                print(f"perfgym serve: dispatcher error: {type(exc).__name__}: {exc}",
                      file=sys.stderr, flush=True)  # fmt: skip
                time.sleep(0.1)

    def build_caches(self) -> list[Path]:
        """The build caches this service fills: the judge's and /run_code's."""
        judge_root = self.config.judge.build_cache or DEFAULT_ROOT
        return [Path(judge_root), Path(self.config.state_dir) / "run_code_builds"]

    def _trim_build_caches(self) -> None:
        for root in self.build_caches():
            trim(root, self.config.max_build_cache_bytes, self.config.build_cache_keep_s)

    def _respawn(self, now: float) -> None:
        for w in self.workers:
            if w.alive or now < w.next_start or self._stop.is_set():
                continue
            if w.proc is not None or w.lease is not None:
                self._lost(w, "the worker process died")
            try:
                w.start(self._judge_json)
            except OSError as exc:
                w.discard()
                w.failures += 1
                print(f"perfgym serve: cannot start a worker: {exc}", file=sys.stderr, flush=True)
            # Back off when workers keep dying at once (a broken sandbox), not when killed once.
            w.next_start = now + min(0.2 * 2 ** min(w.failures, 6), 10.0)

    def _hand_out(self) -> None:
        idle = [w for w in self.workers if w.alive and w.ready and w.lease is None]
        if not idle:
            return
        # Share the backlog among the idle workers: one big batch must not land on one
        # worker's cores while the others wait.
        waiting = self.queue.queued()
        size = max(1, min(self.config.lease_size, -(-waiting // len(idle))))
        for w in idle:
            lease = next(self._leases)
            items = self.queue.lease(size, lease)
            if not items:
                return
            w.lease = lease
            w.items = {(it.job_id, it.idx): it for it in items}
            msg: dict[str, Any] = {"op": items[0].kind, "lease": lease, "tasks": {}, "items": []}
            for it in items:
                if it.task_digest and it.task_digest not in msg["tasks"]:
                    msg["tasks"][it.task_digest] = self._task_json(it.task_digest)
                msg["items"].append({"job_id": it.job_id, "idx": it.idx, "task": it.task_digest,
                                     "payload": it.payload})  # fmt: skip
            try:
                assert w.sock is not None
                framing.send(w.sock, msg)
            except OSError:
                self._lost(w, "the worker process died")
            for job_id in {it.job_id for it in items}:
                self.on_job(job_id)

    def _task_json(self, digest: str) -> str:
        text = self._task_cache.get(digest)
        if text is None:
            if len(self._task_cache) > 512:
                self._task_cache.clear()
            text = self._task_cache[digest] = self.queue.task_json(digest)
        return text

    def _receive(self, timeout: float) -> None:
        socks = {w.sock: w for w in self.workers if w.sock is not None}
        try:
            ready, _, _ = select.select([self._wake_r, *socks], [], [], timeout)
        except (OSError, ValueError):
            return
        for s in ready:
            if s is self._wake_r:
                try:
                    while self._wake_r.recv(4096):
                        pass
                except BlockingIOError:
                    pass
                continue
            w = socks[s]
            try:
                msg = framing.recv(s)
            except (EOFError, OSError, json.JSONDecodeError):
                self._lost(w, "the worker process died")
                continue
            self._handle(w, msg)

    def _handle(self, w: WorkerProcess, msg: dict[str, Any]) -> None:
        op = msg.get("op")
        if op == "ready":
            w.ready = True
            w.failures = 0
        elif op == "results" and w.lease is not None and msg.get("lease") == w.lease:
            touched = set()
            for r in msg["results"]:
                item = w.items.pop((r["job_id"], r["idx"]), None)
                if item is None:
                    continue
                self._record(item, r["status"], r["result"], w.lease)
                touched.add(item.job_id)
            for job_id in touched:
                self.on_job(job_id)
        elif op == "done" and msg.get("lease") == w.lease:
            pools = msg.get("pools")
            if isinstance(pools, dict):
                w.pool_stats = {k: int(v) for k, v in pools.items()
                                if k in POOL_COUNTERS and isinstance(v, int)}  # fmt: skip
            if w.items:  # the worker skipped some: treat as an interruption
                self._release(w, "the worker returned without an answer")
            w.lease = None
            w.items = {}

    def _record(self, item: Leased, status: str, result: dict[str, Any], lease: int) -> None:
        done = self.queue.complete(item.job_id, item.idx, lease, status, result)
        if not done.accepted:
            return
        if done.retried:
            self.stats.add("retried")
            self.wake()
            return
        self.stats.answered(status, time.time() - item.enqueued)
        key = item.payload.get("key")
        if status == ItemStatus.OK and key and self.store is not None and "verdict" in result:
            try:
                verdict = Verdict.model_validate(result["verdict"])
                if verdict.candidate is not None:
                    t = verdict.candidate
                    self.stats.timing(t.status.value, t.status_reason)
                self.store.put_verdicts([(key, verdict)], run=f"service:{item.job_id}")
            except Exception as exc:  # the answer stands even if it cannot be archived
                print(f"perfgym serve: store write failed: {exc}", file=sys.stderr, flush=True)
        if done.job_done:
            self._finish(item.job_id)

    def _lost(self, w: WorkerProcess, reason: str) -> None:
        if w.proc is not None:
            self.stats.add("worker_restarts")
        self.stats.retire_pools(w.pool_stats)
        w.pool_stats = {}
        self._release(w, reason)
        w.discard()
        w.failures += 1

    def _release(self, w: WorkerProcess, reason: str) -> None:
        if w.lease is None:
            return
        for job_id, _idx, requeued, job_done in self.queue.release(w.lease, reason):
            if requeued:
                self.stats.add("retried")
            else:
                self.stats.answered("infra_error", None)
            if job_done:
                self._finish(job_id)
            self.on_job(job_id)
        w.lease = None
        w.items = {}
        self.wake()

    # -- finishing a job --------------------------------------------------------------------------
    def _finish(self, job_id: str) -> None:
        job = self.queue.job(job_id)
        if job is None or job["completed"] is not None:
            return
        spec = json.loads(job["spec"])
        rewards: dict[str, Any] | None = None
        if job["kind"] == "judge" and spec.get("reward"):
            rows = self.queue.items(job_id)
            verdicts = []
            for r in rows:
                res = json.loads(r["result"]) if r["result"] else {}
                v = res.get("verdict")
                verdicts.append(Verdict.model_validate(v) if v is not None else None)
            try:
                outs = job_rewards(RewardSpec.model_validate(spec["reward"]),
                                   spec.get("columns") or {}, verdicts)  # fmt: skip
                rewards = {"outputs": outs, "error": ""}
            except Exception as exc:  # a reward bug must not lose the verdicts
                rewards = {"outputs": None, "error": f"{type(exc).__name__}: {exc}"}
        self.queue.finish_job(job_id, rewards)
        self.on_job(job_id)
