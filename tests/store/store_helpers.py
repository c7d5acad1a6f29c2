"""Store test helpers: verdict builders and a sandbox that counts its runs."""

from __future__ import annotations

from perfgym.judge.verdict import Stage, TestResult, Timing, Verdict
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.warm import WarmSandbox


def make_verdict(
    task_id: str = "t", stage: Stage = Stage.OK, estimate: float = 0.5, **kw
) -> Verdict:
    return Verdict(
        task_id=task_id,
        stage=stage,
        language="python",
        tests=[TestResult(id="t1", passed=stage is Stage.OK, status=Status.OK)],
        candidate=Timing(estimate_s=estimate, samples_s=[estimate] * 3, cv=0.0),
        baseline=Timing(estimate_s=1.0, samples_s=[1.0] * 3, cv=0.0),
        **kw,
    )


class CountingSandbox(Sandbox):
    """A real sandbox wrapped to count how many programs it ran (a seam, not a mock)."""

    name = "counting"

    def __init__(self, inner: WarmSandbox) -> None:
        self.inner = inner
        self.config = inner.config
        self.runs = 0

    def run(self, command, **kw):  # type: ignore[no-untyped-def]
        self.runs += 1
        return self.inner.run(command, **kw)

    def close(self) -> None:
        self.inner.close()


def write_verdicts(path: str, worker: int, n: int) -> None:
    """One writer process of the concurrency test: `n` rounds of shared and private keys.

    It lives here, not in the test module, so a spawned child imports it by this top-level
    name: an installed package (verl) ships a top-level `tests` package that shadows ours.
    """
    from perfgym.store import ResultStore, StoreConfig

    with ResultStore(StoreConfig(path=path, busy_timeout_s=5)) as store:
        for i in range(n):
            # Shared keys (i % 10) race between processes; private keys must all land.
            store.put_verdicts([(f"shared-{i % 10}", make_verdict(f"w{worker}")),
                                (f"w{worker}-{i}", make_verdict(f"w{worker}", estimate=i + 1.0))])  # fmt: skip
