"""Turning a `RunRequest` into the supervisor's spec, and its result into an `Execution`."""

from __future__ import annotations

import base64
import os
import signal
from typing import Any

from perfgym.errors import ConfigError
from perfgym.machine import fingerprint
from perfgym.sandbox.cgroups import RunCgroup, cpu_list
from perfgym.sandbox.counters import instructions_unavailable_reason
from perfgym.sandbox.execution import Execution, Measurement, Status
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.run_request import RunRequest, as_bytes, check_name, pinned_cores
from perfgym.sandbox.view import program_env

__all__ = ["RUN_UID", "as_bytes", "build_spec", "check_name", "decode", "sandbox_error"]

#: The unprivileged user programs run as (nobody).
RUN_UID = 65534
#: Set to the number of a pinned run's cores unless the caller's environment sets them.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "GOMAXPROCS")


def build_spec(
    request: RunRequest,
    *,
    stdin: bytes,
    sample_rate_hz: float,
    cgroup: RunCgroup | None,
    exec_stub: str | None = None,
    uid: int = RUN_UID,
) -> dict[str, Any]:
    """The JSON spec the in-sandbox supervisor reads for a checked `request` (`stdin`: what
    the spec carries of it; `exec_stub`: see `sandbox.exec_stub`; `uid`: the program's user and
    group, see `sandbox.run_uids`)."""
    cores = pinned_cores(request.cpu)
    if cores is not None:
        absent = sorted(set(cores) - os.sched_getaffinity(0))
        if absent:
            raise ConfigError(f"cpu {', '.join(map(str, absent))} is not available to this process")
    try:
        full_env = program_env(request.env)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    if cores is not None:
        # Runtimes that size their thread pools from a variable get the run's own cores (the
        # caller's environment wins): OpenMP and Go would read the affinity mask anyway.
        for name in THREAD_VARIABLES:
            if name not in (request.env or {}):
                full_env[name] = str(len(cores))
    limits = request.limits
    return {
        "argv": list(request.command),
        "env": full_env,
        "stdin": base64.b64encode(stdin).decode(),
        "files": {k: base64.b64encode(v).decode() for k, v in request.files.items()},
        "collect": list(request.collect),
        "limits": {**limits.model_dump(), "cpu_s": limits.effective_cpu_s},
        "cpu": None if cores is None else list(cores),
        "uid": uid,
        "gid": uid,
        "sample_rate_hz": sample_rate_hz,
        "cgroups": cgroup.supervisor_paths() if cgroup else {},
        "exec_stub": exec_stub,
    }


def mechanisms(
    cgroup: RunCgroup | None,
    sample_rate_hz: float,
    cpu: int | list[int] | None = None,
    memory_how: str = "",
) -> dict[str, str]:
    """figure -> how it was measured (`memory_how`: the supervisor's account of the memory
    figures, see `_inside/held_memory.py`)."""
    cg = f"cgroup-{cgroup.version}" if cgroup else None
    pinned = pinned_cores(cpu)
    cores = len(pinned) if pinned is not None else len(os.sched_getaffinity(0))
    if cgroup is not None:
        counter = "cpuacct.usage" if cgroup.version == "v1" else "cpu.stat usage_usec"
        cpu_how = (
            f"{cg} {counter} of the run's cgroup (every process it ever held, auto-reaped "
            "ones too), cross-checked against the wait4 rusage of every reaped process (the "
            f"supervisor is PID 1 and reaps all) and wall x {cores} core(s); the larger counts"
        )
    else:
        cpu_how = (
            "no cgroup: the larger of the wait4 rusage of every reaped process and /proc "
            f"samples at {sample_rate_hz / 8:g} Hz of every process seen (a child never waited "
            "for that lives less than one sampling interval can escape both)"
        )
    if pinned is None:
        core_how = "not pinned: the run may use any of this process's cores"
    else:
        which = f"core {pinned[0]}" if len(pinned) == 1 else f"cores {cpu_list(pinned)}"
        if cgroup is not None and (cgroup.cpuset_dir or cgroup.cpuset_v2 == cpu_list(pinned)):
            core_how = (
                f"{cg} cpuset holding only {which}: no process of the run can leave it "
                "(sched_setaffinity cannot widen it; only root moves cgroups)"
            )
        else:
            core_how = (
                f"sched_setaffinity to {which} only: no writable cpuset cgroup, so the program "
                "could move its processes to other cores (flagged cpu_over_wall when it uses "
                "them)"
            )
    return {
        "wall": "supervisor monotonic clock: fork of the program to the exit of its main process",
        "cpu": cpu_how,
        "core": core_how,
        "memory": f"sum of VmRSS over the run's processes sampled at {sample_rate_hz:g} Hz, "
        "and each process's VmHWM high-water mark"
        + (f"; memory held beyond RSS: {memory_how}" if memory_how else ""),
        "memory_integral": "trapezoid rule over the sampled memory figure",
        "memory_limit": "sampled tree RSS against the limit"
        + (f", and a {cg} hard limit of memory + disk quota (tmpfs files count)" if cg else ""),
        "process_limit": f"{cg} pids.max" if cg else "monitor: sampled thread count + RLIMIT_NPROC",
        "cpu_limit": "supervisor check of the tree's CPU time (no RLIMIT_CPU, which would make "
        "the process CPU clock tick-granular)",
        "isolation": "bubblewrap: private pid/net/ipc/uts/mount namespaces, read-only "
        "allow-list view, tmpfs work dir, uid nobody, no capabilities",
    }


def exit_of(status_word: int | None) -> tuple[int | None, int | None]:
    """(exit code, terminating signal) of a wait status; (None, None) when there is none."""
    if status_word is None:
        return None, None
    if os.WIFEXITED(status_word):
        return os.WEXITSTATUS(status_word), None
    if os.WIFSIGNALED(status_word):
        return None, os.WTERMSIG(status_word)
    return None, None


def classify_exit(
    exit_code: int | None, sig: int | None, output_cut: bool, limits: Limits
) -> tuple[Status, str]:
    """How a run that no limit of ours stopped ended: a limit signal, a crash, a non-zero exit,
    output over its cap, or OK (shared by the sandbox and the Python worker's program mode)."""
    if sig == signal.SIGXCPU:
        return Status.TIMEOUT, f"CPU time over {limits.effective_cpu_s:g} s (RLIMIT_CPU)"
    if sig == signal.SIGXFSZ:
        return Status.RUNTIME_ERROR, f"file larger than {limits.file_size_bytes} bytes"
    if sig is not None:
        return Status.RUNTIME_ERROR, f"killed by signal {signal.Signals(sig).name}"
    if exit_code not in (0, None):
        return Status.RUNTIME_ERROR, f"exit code {exit_code}"
    if output_cut:
        return Status.OUTPUT_LIMIT, "output exceeded its cap and was cut"
    return Status.OK, ""


def decode(
    res: dict[str, Any],
    *,
    limits: Limits,
    backend: str,
    cgroup: RunCgroup | None,
    sample_rate_hz: float,
    cpu: int | list[int] | None = None,
) -> Execution:
    """Classify the supervisor's result into an `Execution` (`cpu`: the core or cores it was
    pinned to)."""
    if "sandbox_error" in res:
        return sandbox_error(limits, backend, res["sandbox_error"])
    if res.get("killed_before_drop"):  # no program code had run: an outside kill of ours
        return sandbox_error(limits, backend, "the run's process was killed before it dropped "
                             "its privileges, before any of the program ran")  # fmt: skip
    exit_code, sig = exit_of(res.get("pid_status"))
    reason = res.get("kill_reason", "")
    killed_for = res.get("killed_for", "")
    stdout_trunc = bool(res.get("stdout_truncated"))
    stderr_trunc = bool(res.get("stderr_truncated"))
    if res.get("exec_error"):
        status, reason = Status.RUNTIME_ERROR, f"could not start the program: {res['exec_error']}"
    elif killed_for:
        status = Status(killed_for)
    elif cgroup is not None and cgroup.was_oom_killed():
        status, reason = Status.MEMORY_LIMIT, f"memory limit of {limits.memory_mb:g} MiB (OOM kill)"
    else:
        status, why = classify_exit(exit_code, sig, stdout_trunc or stderr_trunc, limits)
        reason = why or reason
    no_instr = instructions_unavailable_reason()
    cgroup_s, sampled_s = res.get("cpu_cgroup_s"), res.get("cpu_sampled_s")
    measurement = Measurement(
        wall_s=float(res["wall_s"]),
        cpu_user_s=float(res["cpu_user_s"]),
        cpu_system_s=float(res["cpu_system_s"]),
        cpu_cgroup_s=None if cgroup_s is None else float(cgroup_s),
        cpu_sampled_s=None if sampled_s is None else float(sampled_s),
        peak_rss_mb=float(res["peak_rss_mb"]),
        memory_integral_mb_s=float(res["memory_integral_mb_s"]),
        instructions=None,
        instructions_unavailable=no_instr or "instruction counting not requested",
        sample_rate_hz=sample_rate_hz,
        samples=int(res["samples"]),
        max_processes_seen=int(res.get("max_processes_seen", 0)),
        cores=None if pinned_cores(cpu) is None else list(pinned_cores(cpu) or ()),
        mechanisms=mechanisms(cgroup, sample_rate_hz, cpu, str(res.get("memory_mechanism", ""))),
        host=fingerprint(),
    )
    measurement.flags = accounting_flags(
        measurement, outlived=bool(res.get("outlived")) and not killed_for, cpu=cpu
    )
    return Execution(
        status=status,
        exit_code=exit_code,
        signal=sig,
        stdout=base64.b64decode(res["stdout"]),
        stderr=base64.b64decode(res["stderr"]),
        stdout_truncated=stdout_trunc,
        stderr_truncated=stderr_trunc,
        measurement=measurement,
        limits=limits,
        files={k: base64.b64decode(v) for k, v in res.get("files", {}).items()},
        reason=reason,
        backend=backend,
    )


#: CPU the cgroup (or the samples) may see beyond the reaped processes' rusage without a flag:
#: the two clocks differ by rounding and by what the program's process did before it joined.
HIDDEN_SLACK_S = 0.005
HIDDEN_SLACK_RATIO = 0.02


def accounting_flags(m: Measurement, *, outlived: bool, cpu: int | list[int] | None) -> list[str]:
    """The cross-checks of one run's CPU figures (see `Measurement.flags`)."""
    flags = []
    rusage = m.cpu_user_s + m.cpu_system_s
    seen = max(m.cpu_cgroup_s or 0.0, m.cpu_sampled_s or 0.0)
    if seen - rusage > HIDDEN_SLACK_S + HIDDEN_SLACK_RATIO * rusage:
        flags.append("hidden_cpu")
    if outlived:
        flags.append("outlived_main")
    pinned = pinned_cores(cpu)
    cores = len(pinned) if pinned is not None else len(os.sched_getaffinity(0))
    if m.cpu_s > m.wall_s * cores * 1.05 + 0.01:
        flags.append("cpu_over_wall")
    return flags


def sandbox_error(limits: Limits, backend: str, reason: str) -> Execution:
    return Execution(status=Status.SANDBOX_ERROR, limits=limits, reason=reason, backend=backend)
