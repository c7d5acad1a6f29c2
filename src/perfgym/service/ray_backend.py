"""Judging on a Ray cluster: one `NodeJudge` actor per node, each with its own local judge.

A node's actor reserves all of the node's CPUs and judges one batch at a time, so the judge's
own rule (one measured run per core, never two on a core) holds per node. Chunks of candidates
go to the least-busy node; a chunk whose actor dies is retried (an infrastructure failure), and
one that lands on another machine the second time keeps its correctness but not its timings.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from perfgym.errors import ConfigError, PerfgymError
from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Stage, TimingStatus, Verdict
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.pool import RunRequest
from perfgym.sandbox.pool import usable_cores as _local_cores
from perfgym.service.labels import Origin, qualified, restore, unique_candidates
from perfgym.store.keys import task_digest

NAMESPACE = "perfgym"


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("the Ray backend needs ray: pip install 'ray>=2.9'") from exc
    return ray


class NodeJudge:
    """The per-node actor (wrapped by `ray.remote` at first use): local judges and a sandbox.

    One actor per node whatever the judge configuration (a judge per configuration lives
    inside it), so two configurations never measure on the same cores at once.
    """

    def __init__(self) -> None:
        from perfgym.machine import fingerprint

        self.machine = fingerprint()
        self._judges: dict[str, Any] = {}
        self._judging = threading.Lock()
        self._making = threading.Lock()
        self._runs = ThreadPoolExecutor(max_workers=32, thread_name_prefix="perfgym-run")
        self._cores: queue.Queue[int] = queue.Queue()
        for c in _local_cores():
            self._cores.put(c)

    def _judge(self, config_json: str) -> Any:
        from perfgym.judge.judge import Judge

        with self._making:
            judge = self._judges.get(config_json)
            if judge is None:
                judge = Judge(JudgeConfig.model_validate_json(config_json))
                self._judges[config_json] = judge
            return judge

    def judge_chunk(self, config_json: str, task_json: str, digest: str,
                    texts: list[tuple[str | None, str | None]]) -> list[str]:  # fmt: skip
        from perfgym.tasks.task import Task

        task = qualified(Task.model_validate_json(task_json), digest)
        with self._judging:  # one batch at a time: one measured run per core on this node
            verdicts = self._judge(config_json).judge_many(unique_candidates(task, texts))
        return [v.model_dump_json() for v in verdicts]

    def run(self, request_json: str, pin: bool) -> str:
        # Runs go through threads that live as long as the actor: bubblewrap's launcher dies
        # with the thread that started it, so a short-lived thread would take it down mid-run.
        return str(self._runs.submit(self._run_one, request_json, pin).result())

    def _run_one(self, request_json: str, pin: bool) -> str:
        req = RunRequest.model_validate_json(request_json)
        sandbox = self._judge(JudgeConfig().model_dump_json()).sandbox
        core = self._cores.get() if pin else None
        try:
            ex = sandbox.run(req.command, **{**req.keywords(), "cpu": core})
        finally:
            if core is not None:
                self._cores.put(core)
        return ex.model_dump_json()

    def info(self) -> dict[str, Any]:
        import os

        return {
            "machine": self.machine,
            "pid": os.getpid(),
            "cores": sorted(os.sched_getaffinity(0)),
        }


@dataclass
class _Chunk:
    digest: str
    task_json: str
    indices: list[int]
    attempts: int = 0
    first_machine: str | None = None
    node: str | None = None
    errors: list[str] = field(default_factory=list)


class RayCluster:
    """Connects to (or starts) a cluster and keeps one `NodeJudge` per alive node."""

    def __init__(self, config: JudgeConfig, address: str | None = None,
                 init: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        ray = _ray()
        self.ray = ray
        self.config = config
        self.started_here = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": False, "namespace": NAMESPACE}  # fmt: skip
            if address is None:
                kwargs["num_cpus"] = len(_local_cores())
            kwargs.update(init or {})
            ray.init(address=address, **kwargs)
            self.started_here = True
        self._cls = ray.remote(NodeJudge)
        self._actors: dict[str, Any] = {}
        self._lock = threading.Lock()

    def nodes(self) -> list[dict[str, Any]]:
        return [n for n in self.ray.nodes() if n.get("Alive") and n["Resources"].get("CPU", 0) > 0]

    def actor(self, node: dict[str, Any]) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node_id = node["NodeID"]
        with self._lock:
            a = self._actors.get(node_id)
            if a is None:
                cpus = node["Resources"].get("CPU", 1)
                a = self._cls.options(
                    name=f"perfgym-node-{node_id}",
                    namespace=NAMESPACE,
                    get_if_exists=True,
                    num_cpus=cpus,  # the node's cores belong to measurement while it judges
                    max_concurrency=64,  # raw runs proceed while judge calls wait their turn
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                ).remote()
                self._actors[node_id] = a
            return a

    def forget(self, node_id: str) -> None:
        with self._lock:
            self._actors.pop(node_id, None)

    def close(self) -> None:
        if self.started_here and self.ray.is_initialized():
            self.ray.shutdown()


class RayJudge:
    """`judge_many` across a Ray cluster (`address=None`: a local cluster on this machine)."""

    def __init__(self, config: JudgeConfig | None = None, *, address: str | None = None,
                 chunk_size: int = 64, max_attempts: int = 3,
                 init: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.config = config or JudgeConfig()
        self.cluster = RayCluster(self.config, address, init)
        self.chunk_size = chunk_size
        self.max_attempts = max_attempts
        self.retried = 0
        # the secret seed of hidden workloads travels to the nodes (it is left out of every
        # written config); None there: each node's judge draws a fresh one per chunk
        self._config_json = json.dumps({**self.config.model_dump(mode="json"),
                                        "hidden_seed": self.config.hidden_seed})  # fmt: skip

    def judge(self, task: Any, completion: str | None = None, *, source: str | None = None,
              model: str = "", sample: int = 0) -> Verdict:  # fmt: skip
        return self.judge_many([Candidate(task, completion, source, model, sample)])[0]

    def judge_many(
        self, candidates: Sequence[Candidate], progress: Progress | None = None
    ) -> list[Verdict]:
        ray = self.cluster.ray
        chunks = self._chunks(candidates)
        out: list[Verdict | None] = [None] * len(candidates)
        running: dict[Any, tuple[_Chunk, str]] = {}
        pending = list(chunks)
        load: dict[str, int] = {}
        done = 0
        while pending or running:
            nodes = self.cluster.nodes()
            if not nodes:
                raise PerfgymError("the Ray cluster has no alive node with CPUs")
            while pending:
                chunk = pending.pop(0)
                node = min(nodes, key=lambda n: load.get(n["NodeID"], 0))
                actor = self.cluster.actor(node)
                texts = [(candidates[i].completion, candidates[i].source) for i in chunk.indices]
                ref = actor.judge_chunk.remote(self._config_json, chunk.task_json, chunk.digest,
                                               texts)  # fmt: skip
                chunk.attempts += 1
                chunk.node = node["NodeID"]
                load[chunk.node] = load.get(chunk.node, 0) + 1
                running[ref] = (chunk, node["NodeID"])
            ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in ready:
                chunk, node_id = running.pop(ref)
                load[node_id] -= 1
                try:
                    texts_out = ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                        ray.exceptions.ObjectLostError) as exc:  # fmt: skip
                    self.cluster.forget(node_id)
                    chunk.errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                    if chunk.attempts < self.max_attempts:
                        self.retried += 1
                        pending.append(chunk)
                    else:
                        for i in chunk.indices:
                            out[i] = _failed(candidates[i], chunk)
                        done += len(chunk.indices)
                    continue
                for i, text in zip(chunk.indices, texts_out, strict=True):
                    c = candidates[i]
                    v = restore(Verdict.model_validate_json(text),
                                Origin(c.task.id, c.model, c.sample, c.suite))  # fmt: skip
                    if chunk.first_machine is None:
                        chunk.first_machine = v.machine
                    if chunk.attempts > 1 and v.machine != chunk.first_machine:
                        v = _degrade_timings(v, chunk.first_machine)
                    out[i] = v
                done += len(chunk.indices)
                if progress is not None:
                    progress(done, len(candidates))
        return [v for v in out if v is not None]

    def _chunks(self, candidates: Sequence[Candidate]) -> list[_Chunk]:
        by_task: dict[int, tuple[str, str, list[int]]] = {}
        for i, c in enumerate(candidates):
            entry = by_task.get(id(c.task))
            if entry is None:
                entry = by_task[id(c.task)] = (task_digest(c.task), c.task.model_dump_json(), [])
            entry[2].append(i)
        chunks = []
        for digest, text, idx in by_task.values():
            for start in range(0, len(idx), self.chunk_size):
                chunks.append(_Chunk(digest, text, idx[start : start + self.chunk_size]))
        return chunks

    def close(self) -> None:
        self.cluster.close()

    def __enter__(self) -> RayJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _failed(c: Candidate, chunk: _Chunk) -> Verdict:
    return Verdict(task_id=c.task.id, model=c.model, sample=c.sample, stage=Stage.NR,
                   detail="SANDBOX_ERROR", infra_error=True, language=c.task.language.value,
                   reason=f"the Ray node failed on all {chunk.attempts} tries: "
                   + "; ".join(chunk.errors[-2:]))  # fmt: skip


def _degrade_timings(v: Verdict, first: str | None) -> Verdict:
    """The timing issue's fallback rule: a retry on another machine keeps correctness, drops
    durations (they would not be comparable with the rest of the batch)."""
    why = f"retried on {v.machine} after {first} failed: durations not comparable"
    update = {}
    for name in ("candidate", "baseline", "reference"):
        t = getattr(v, name)
        if t is not None:
            update[name] = t.model_copy(update={"status": TimingStatus.DEGRADED,
                                                "status_reason": why})  # fmt: skip
    return v.model_copy(update=update)


class RaySandbox(Sandbox):
    """A `Sandbox` whose runs happen in a node's `NodeJudge` actor (`check_sandbox` runs on it)."""

    name = "ray"

    def __init__(self, config: JudgeConfig | None = None, *, address: str | None = None,
                 init: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.cluster = RayCluster(config or JudgeConfig(), address, init)

    def _run(self, req: RunRequest) -> Execution:
        ray = self.cluster.ray
        node = self.cluster.nodes()[0]
        try:
            text = ray.get(
                self.cluster.actor(node).run.remote(req.model_dump_json(), req.cpu is not None)
            )
        except ray.exceptions.RayActorError as exc:
            self.cluster.forget(node["NodeID"])
            return Execution(status=Status.SANDBOX_ERROR, limits=req.limits, backend=self.name,
                             reason=f"the Ray node failed: {exc}")  # fmt: skip
        ex = Execution.model_validate_json(text)
        return ex.model_copy(update={"backend": f"ray/{ex.backend}"})

    def close(self) -> None:
        self.cluster.close()


def describe(judge: RayJudge) -> dict[str, Any]:
    """Which nodes judge and with how many cores (for logs and result headers)."""
    ray = judge.cluster.ray
    infos = [ray.get(judge.cluster.actor(n).info.remote()) for n in judge.cluster.nodes()]
    return {"nodes": infos, "config": json.loads(judge.config.model_dump_json())}
