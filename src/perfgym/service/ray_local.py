"""`LocalCluster`: a multi-node Ray cluster on this machine (Ray's own `cluster_utils.Cluster`),
each node on its own cores, for tests, benchmarks and trying node loss before a real cluster.

Every node's processes are started with the CPU affinity of that node's share of the cores, so
its workers (and the `NodeJudge` measuring on them) see only their own cores: two nodes never
measure on one core, as two machines would not. Node death is noticed within seconds (the
health checks are made faster than Ray's defaults, which suit real networks). Every node's
processes end with the process that started the cluster (`child_reaper`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from perfgym.child_reaper import ChildReaper, children_of, end_trees
from perfgym.errors import ConfigError
from perfgym.niceness import RAY_NICENESS_ENV
from perfgym.sandbox.pool import usable_cores

#: The GCS marks a node dead after `failure_threshold` missed checks (~5 s here; short enough
#: for tests, long enough that a node on a loaded machine is not taken for a dead one).
FAST_HEALTH = {"health_check_period_ms": 1000, "health_check_timeout_ms": 3000,
               "health_check_failure_threshold": 5}  # fmt: skip

#: Ray waits a fixed 30 s for a starting node's raylet to register (ray/_private/node.py); on
#: a machine loaded 8 times over it can take longer, so a timed-out start is tried again.
START_ATTEMPTS = 3

T = TypeVar("T")

_affinity = threading.Lock()


def startup_timed_out(exc: BaseException) -> bool:
    """Ray's own error for a node whose raylet did not register in time."""
    return "timed out during startup" in str(exc)


@contextlib.contextmanager
def _on_cores(cores: list[int]) -> Iterator[None]:
    """This thread's affinity is `cores` while a node's processes are started (they inherit it),
    and the node's raylet starts its workers at nice 0, not Ray's 15: a niced worker judging
    beside busy processes gets a sliver of a core (a verl reward loop stalled for minutes)."""
    with _affinity:
        before = os.sched_getaffinity(0)
        niceness = os.environ.get(RAY_NICENESS_ENV)
        os.sched_setaffinity(0, cores)
        os.environ[RAY_NICENESS_ENV] = "0"
        try:
            yield
        finally:
            os.sched_setaffinity(0, before)
            if niceness is None:
                os.environ.pop(RAY_NICENESS_ENV, None)
            else:
                os.environ[RAY_NICENESS_ENV] = niceness


class LocalCluster:
    """A head node and `nodes - 1` worker nodes, the usable cores split evenly between them.

    `add_node()` starts one more node on the cores of `cores_of(slot)`; `remove_node(node)` kills
    one (not gracefully: as a machine would be lost). `address` is what `ray.init` and
    `--address` take.
    """

    def __init__(self, nodes: int = 2, *, object_store_mb: int = 100) -> None:
        from ray.cluster_utils import Cluster

        cores = usable_cores()
        if nodes < 1 or len(cores) < nodes:
            raise ConfigError(f"a local cluster of {nodes} nodes needs at least {nodes} cores "
                              f"(this process may use {len(cores)})")  # fmt: skip
        self.per_node = len(cores) // nodes
        self._cores = cores
        self._store = object_store_mb << 20
        self._slots = nodes
        head = {"num_cpus": self.per_node, "object_store_memory": self._store,
                "include_dashboard": False, "_system_config": FAST_HEALTH}  # fmt: skip
        self._reapers: list[ChildReaper] = []
        self.cluster = self._started(lambda: Cluster(initialize_head=True, head_node_args=head), 0)
        self.head = self.cluster.head_node
        self.workers: list[Any] = []
        try:
            for slot in range(1, nodes):
                self.add_node(slot)
        except BaseException:
            self.shutdown()
            raise

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def cores_of(self, slot: int) -> list[int]:
        """The cores of node `slot` (0: the head), wrapping round past the last slot."""
        slot %= self._slots
        return self._cores[slot * self.per_node : (slot + 1) * self.per_node]

    def add_node(self, slot: int = 1) -> Any:
        # from the main thread only (Ray sets a signal handler for each node it starts)
        node = self._started(lambda: self.cluster.add_node(num_cpus=self.per_node,
                                                           object_store_memory=self._store), slot)  # fmt: skip
        self.workers.append(node)
        self.cluster.wait_for_nodes()  # alive in the GCS before it is handed out
        return node

    def remove_node(self, node: Any) -> None:
        self.cluster.remove_node(node, allow_graceful=False)
        self.workers.remove(node)

    def _started(self, start: Callable[[], T], slot: int) -> T:
        """`start()` a node on the cores of `slot`; a node that Ray's fixed 30 s wait for its
        raylet gave up on (a loaded machine) is ended, then started again, up to
        START_ATTEMPTS times. Whatever starts ends with this process; a failed start leaves
        nothing."""
        for attempt in range(1, START_ATTEMPTS + 1):
            before = children_of(os.getpid())
            try:
                with _on_cores(self.cores_of(slot)):
                    return start()
            except Exception as exc:
                if attempt == START_ATTEMPTS or not startup_timed_out(exc):
                    raise
                end_trees(children_of(os.getpid()) - before)
            finally:
                self._reap(before)
        raise AssertionError("unreachable")

    def _reap(self, before: set[int]) -> None:
        """The processes just started end with this process, however it ends."""
        started = children_of(os.getpid()) - before
        if started:
            self._reapers.append(ChildReaper(started))

    def shutdown(self) -> None:
        self.cluster.shutdown()
        for r in self._reapers:
            r.stop()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
