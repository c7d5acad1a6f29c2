"""Judging on a Ray cluster: one `NodeJudge` actor per node, each with its own local judge.

A node's actor reserves all of the node's CPUs and judges one chunk at a time, so the judge's
own rule (one measured run per core, never two on a core) holds per node, with the node's own
warm pools. Each task of a batch is judged wholly on one node (`ray_batch`); a verdict's
`machine` names the node that measured it (`<fingerprint>#ray:<node id>`).
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from perfgym.child_reaper import ChildReaper, children_of
from perfgym.errors import ConfigError
from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Verdict
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.pool import RunRequest
from perfgym.sandbox.pool import usable_cores as _local_cores
from perfgym.service.labels import qualified, unique_candidates
from perfgym.service.ray_batch import Scheduler, task_jobs

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
        import ray

        from perfgym.machine import fingerprint
        from perfgym.niceness import undo_ray_niceness

        # Ray starts workers at nice 15: the judge and the programs it starts would inherit it
        self.niceness_note = undo_ray_niceness()
        self.node_id = ray.get_runtime_context().get_node_id()
        # the node, not only the host: two nodes on one host are two measuring machines
        self.machine = f"{fingerprint()}#ray:{self.node_id[:12]}"
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
        return [v.model_copy(update={"machine": self.machine}).model_dump_json() for v in verdicts]

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
            "node_id": self.node_id,
            "pid": os.getpid(),
            "cores": sorted(os.sched_getaffinity(0)),
        }


class RayCluster:
    """Connects to (or starts) a cluster and keeps one `NodeJudge` per alive node."""

    def __init__(self, config: JudgeConfig, address: str | None = None,
                 init: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        ray = _ray()
        self.ray = ray
        self.config = config
        self.started_here = False
        self._reaper: ChildReaper | None = None
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": False, "namespace": NAMESPACE}  # fmt: skip
            if address is None and not os.environ.get("RAY_ADDRESS"):
                # a cluster of its own: never the latest one Ray finds on this machine (someone
                # else's, in /tmp/ray); --address auto joins that one
                address = "local"
                kwargs["num_cpus"] = len(_local_cores())
            kwargs.update(init or {})
            before = children_of(os.getpid())
            ray.init(address=address, **kwargs)
            self.started_here = True
            started = children_of(os.getpid()) - before  # a local cluster's GCS, raylet, ...
            if started:  # they end with this process however it ends (SIGKILL included)
                self._reaper = ChildReaper(started)
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
        if self._reaper is not None:
            self._reaper.stop()


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

    @property
    def _config_json(self) -> str:
        """The configuration the nodes judge under, read per call (`config` may be replaced
        between calls: a validation's rerun at more repeats). The secret seed of hidden
        workloads travels to the nodes (it is left out of every written config); None there:
        each node's judge draws a fresh one per chunk."""
        return json.dumps({**self.config.model_dump(mode="json"),
                           "hidden_seed": self.config.hidden_seed})  # fmt: skip

    def judge(self, task: Any, completion: str | None = None, *, source: str | None = None,
              model: str = "", sample: int = 0) -> Verdict:  # fmt: skip
        return self.judge_many([Candidate(task, completion, source, model, sample)])[0]

    def judge_many(
        self, candidates: Sequence[Candidate], progress: Progress | None = None
    ) -> list[Verdict]:
        batch = Scheduler(self.cluster, self._config_json, self.max_attempts)
        try:
            return batch.run(candidates, task_jobs(candidates, self.chunk_size), progress)
        finally:
            self.retried += batch.retried

    def close(self) -> None:
        self.cluster.close()

    def __enter__(self) -> RayJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
