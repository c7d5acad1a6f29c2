"""`judge_batch`: one batch over a Ray cluster's nodes, each task judged wholly on one node.

A task (its baseline, its reference and every one of its candidates in the batch) goes to one
node: timings are compared only within a node, never across two. A node that fails while it
holds a task (its actor dies, the node leaves the cluster) gives nothing for that task: the
task's finished chunks from it are dropped and the whole task is judged again on another node,
baseline included. Every candidate gets exactly one verdict; a task that fails on every try
gets infrastructure-failure verdicts (rewards None, never 0.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from perfgym.errors import PerfgymError
from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.verdict import Stage, Verdict
from perfgym.service.labels import Origin, restore
from perfgym.store.keys import task_digest

#: Tasks in flight per node: one judged, one waiting (a node that joins mid-batch gets work).
IN_FLIGHT = 2


class NodeLost(PerfgymError):
    """A node's actor died or the node left the cluster while it held a task."""


@dataclass
class TaskJob:
    """One task's candidates in the batch, split into chunks that all go to the same node."""

    digest: str
    task_json: str
    chunks: list[list[int]]
    attempts: int = 0
    node: str | None = None
    refs: dict[Any, int] = field(default_factory=dict)  # in-flight ref -> chunk number
    results: dict[int, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(map(len, self.chunks))


def task_jobs(candidates: Sequence[Candidate], chunk_size: int) -> list[TaskJob]:
    """Group the batch by task (the same Task object), in first-seen order."""
    by_task: dict[int, tuple[str, str, list[int]]] = {}
    for i, c in enumerate(candidates):
        entry = by_task.get(id(c.task))
        if entry is None:
            entry = by_task[id(c.task)] = (task_digest(c.task), c.task.model_dump_json(), [])
        entry[2].append(i)
    return [TaskJob(digest, text, [idx[s : s + chunk_size] for s in range(0, len(idx), chunk_size)])
            for digest, text, idx in by_task.values()]  # fmt: skip


@dataclass
class Scheduler:
    """The driver side of a batch: which node holds which task, and what came back."""

    cluster: Any  # RayCluster
    config_json: str
    max_attempts: int
    wait_s: float = 1.0
    retried: int = 0
    lost_nodes: set[str] = field(default_factory=set)

    def run(self, candidates: Sequence[Candidate], jobs: list[TaskJob],
            progress: Progress | None = None) -> list[Verdict]:  # fmt: skip
        ray = self.cluster.ray
        out: list[Verdict | None] = [None] * len(candidates)
        pending = list(jobs)
        running: dict[Any, TaskJob] = {}  # in-flight ref -> its job
        held: dict[str, list[TaskJob]] = {}
        shown = 0
        while pending or running:
            alive = {n["NodeID"]: n for n in self.cluster.nodes()}
            for node_id in [n for n in held if held[n] and n not in alive]:
                for job in list(held[node_id]):
                    self._lose(job, running, held, pending, out, candidates,
                               f"node {node_id[:12]} left the cluster")  # fmt: skip
            if not alive and not running:
                if not pending:
                    break
                raise PerfgymError("the Ray cluster has no alive node with CPUs")
            self._submit(pending, running, held, alive, candidates)
            if not running:
                continue
            ready, _ = ray.wait(list(running), num_returns=1, timeout=self.wait_s)
            for ref in ready:
                if ref not in running:  # a ref of a task already given up on that node: ignored
                    continue
                job = running.pop(ref)
                number = job.refs.pop(ref)
                try:
                    job.results[number] = ray.get(ref)
                except Exception as exc:  # any failure of the node: the task goes elsewhere
                    self._lose(job, running, held, pending, out, candidates,
                               f"{type(exc).__name__}: {str(exc)[:200]}")  # fmt: skip
                    continue
                if len(job.results) == len(job.chunks):
                    held[job.node or ""].remove(job)
                    self._accept(job, out, candidates)
            done = sum(v is not None for v in out)
            if progress is not None and done > shown:
                shown = done
                progress(done, len(candidates))
        missing = [i for i, v in enumerate(out) if v is None]
        if missing:  # by construction never: every job ends accepted or failed
            raise PerfgymError(f"the Ray batch lost candidates {missing[:8]}")
        return [v for v in out if v is not None]

    def _submit(self, pending: list[TaskJob], running: dict[Any, TaskJob],
                held: dict[str, list[TaskJob]], alive: dict[str, Any],
                candidates: Sequence[Candidate]) -> None:  # fmt: skip
        while pending:
            usable = [n for n in alive if n not in self.lost_nodes] or list(alive)
            free = [n for n in usable if len(held.get(n, [])) < IN_FLIGHT]
            if not free:
                return
            node_id = min(free, key=lambda n: sum(j.size for j in held.get(n, [])))
            job = pending.pop(0)
            actor = self.cluster.actor(alive[node_id])
            job.attempts += 1
            job.node = node_id
            job.results = {}
            held.setdefault(node_id, []).append(job)
            for number, chunk in enumerate(job.chunks):
                texts = [(candidates[i].completion, candidates[i].source) for i in chunk]
                ref = actor.judge_chunk.remote(self.config_json, job.task_json, job.digest, texts)
                job.refs[ref] = number
                running[ref] = job

    def _lose(self, job: TaskJob, running: dict[Any, TaskJob], held: dict[str, list[TaskJob]],
              pending: list[TaskJob], out: list[Verdict | None],
              candidates: Sequence[Candidate], why: str) -> None:  # fmt: skip
        node_id = job.node or ""
        self.cluster.forget(node_id)
        self.lost_nodes.add(node_id)
        if job in held.get(node_id, []):
            held[node_id].remove(job)
        for ref in job.refs:
            running.pop(ref, None)
        job.refs, job.results = {}, {}  # nothing measured on the failing node is kept
        job.errors.append(f"node {node_id[:12]}: {why}")
        if job.attempts < self.max_attempts:
            self.retried += 1
            pending.append(job)
            return
        for chunk in job.chunks:
            for i in chunk:
                out[i] = failed_verdict(candidates[i], job)

    def _accept(self, job: TaskJob, out: list[Verdict | None],
                candidates: Sequence[Candidate]) -> None:  # fmt: skip
        for number, chunk in enumerate(job.chunks):
            for i, text in zip(chunk, job.results[number], strict=True):
                c = candidates[i]
                out[i] = restore(Verdict.model_validate_json(text),
                                 Origin(c.task.id, c.model, c.sample, c.suite))  # fmt: skip


def failed_verdict(c: Candidate, job: TaskJob) -> Verdict:
    return Verdict(task_id=c.task.id, model=c.model, sample=c.sample, stage=Stage.NR,
                   detail="SANDBOX_ERROR", infra_error=True, language=c.task.language.value,
                   reason=f"the Ray nodes failed on all {job.attempts} tries: "
                   + "; ".join(job.errors[-2:]))  # fmt: skip
