"""`check_sandbox(backend)`: the conformance suite every sandbox backend must pass.

Each check runs real programs (attacks and ground-truth measurements) through the backend and
asserts containment, status and measurement. Local, HTTP-service and Ray backends all run it.
"""

from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.conformance_containment import (
    cpu_limit_enforced,
    double_fork_escape,
    fd_exhaustion,
    fill_disk,
    fork_bomb,
    ignores_sigterm,
    kill_parent,
    loopback_connect,
    memory_bomb,
    no_privileges,
    other_runs_invisible,
    output_flood,
    process_clock_is_fine_grained,
    sleeps_past_wall,
    slow_memory_bomb,
    write_outside,
)
from perfgym.sandbox.conformance_kit import Check, ConformanceError
from perfgym.sandbox.conformance_measurement import (
    bad_inputs,
    child_does_the_work,
    hidden_cpu_counted,
    memory_ground_truth,
    pinned_core_exclusive,
    socket_buffers_count,
)

__all__ = ["CHECKS", "Check", "ConformanceError", "check_sandbox"]


CHECKS: tuple[Check, ...] = tuple(
    Check(f.__name__, f)
    for f in (
        bad_inputs,
        fork_bomb,
        memory_bomb,
        slow_memory_bomb,
        ignores_sigterm,
        cpu_limit_enforced,
        process_clock_is_fine_grained,
        sleeps_past_wall,
        double_fork_escape,
        loopback_connect,
        write_outside,
        other_runs_invisible,
        output_flood,
        fill_disk,
        fd_exhaustion,
        kill_parent,
        no_privileges,
        memory_ground_truth,
        socket_buffers_count,
        child_does_the_work,
        hidden_cpu_counted,
        pinned_core_exclusive,
    )
)


def check_sandbox(backend: Sandbox, only: list[str] | None = None) -> list[str]:
    """Run every conformance check (or those named in `only`); raise on the first failure.

    Returns the names of the checks that passed.
    """
    passed = []
    for check in CHECKS:
        if only is not None and check.name not in only:
            continue
        try:
            check.fn(backend)
        except ConformanceError as exc:
            raise ConformanceError(f"{backend.name}: {check.name}: {exc}") from None
        passed.append(check.name)
    return passed
