"""`run_workload`: one workload script in a fresh sandboxed process on a copy (the contract in
`perfgym.repos.task`): import, setup() and the first experiment() call timed by a parent process
the workload cannot reach (`_inside/workload_timer.py`), each phase reported, a digest of repr."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from perfgym.repos.copy import RepoCopy
from perfgym.repos.shell import REPO_DIR, ShellResult, run_shell
from perfgym.repos.task import RepoTask, Workload
from perfgym.sandbox.base import Sandbox

RUNNER = Path(__file__).resolve().parent / "_inside" / "workload_runner.py"
TIMER = Path(__file__).resolve().parent / "_inside" / "workload_timer.py"
#: Shipped beside the runner under the name the tests' process has it by too (`call_depth`).
CALL_DEPTH = Path(__file__).resolve().parent / "_inside" / "call_depth.py"
_MARK = "PERFGYM_WORKLOAD "
_RUNNER_NAME = "perfgym_workload_runner.py"
_TIMER_NAME = "perfgym_workload_timer.py"
_NONCE_NAME = "perfgym_workload_nonce"
#: The workload script's name in every run, visible or hidden.
WORKLOAD_NAME = "perfgym_workload.py"


@dataclass(frozen=True)
class WorkloadRun:
    """One fresh-process run of a workload, every time stamped by the timer process: `total_s`
    (import + setup + first call + its digest: what counts), its phases, later calls, digests;
    `inproc_first_s` is the workload process's own (forgeable) time of the first call, kept
    for the cross-check; `cpu_s` the sandbox's CPU of every process the run had."""

    workload: str
    ok: bool
    first_s: float = 0.0
    repeat_s: tuple[float, ...] = ()
    digests: tuple[str, ...] = ()
    error: str = ""
    total_s: float = 0.0
    import_s: float = 0.0
    setup_s: float = 0.0
    digest_s: float = 0.0
    inproc_first_s: float = 0.0
    process_s: float = 0.0
    child_cpu_s: float = 0.0
    timer_cpu_s: float = 0.0
    cpu_s: float = 0.0
    #: The workload's processes' CPU over the counted time (R -> H), read by the timer; None
    #: where /proc could not be read.
    window_cpu_s: float | None = None
    #: Where the timer read it: 'cgroup' (the run's counter: every process it ever had) or
    #: 'proc' (the visible processes' and their reaped children's clock ticks).
    window_cpu_from: str = ""
    shell: ShellResult | None = field(default=None, repr=False, compare=False)

    @property
    def digest(self) -> str:
        return self.digests[0] if self.digests else ""


#: Library thread pools of one thread in every workload run. Parallel CPU a patch adds over the
#: original is charged to its time (`measure._parallel_charges`); a pool that spins on its own
#: (numpy's OpenBLAS threads spun 20-55 ms after import in peakscan's original, varying from
#: run to run) would hide a patch's own parallel work in its noise (helper-46: forked helpers
#: 1.18-1.67x uncharged). A patch that raises a pool again is charged what its threads add.
ONE_THREAD_POOLS = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                           "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
                                           "VECLIB_MAXIMUM_THREADS")}  # fmt: skip


def workload_path(task: RepoTask, workload: Workload) -> Path:
    base = task.folder or Path.cwd()
    path = Path(workload.script)
    return path if path.is_absolute() else base / path


def _tail(text: str, n: int = 400) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else "")[-n:]


def run_workload(
    task: RepoTask,
    copy: RepoCopy | Path,
    workload: Workload,
    *,
    repeats: int = 0,
    sandbox: Sandbox | None = None,
) -> WorkloadRun:
    """Run `workload` once in a fresh process on `copy` (`repeats` more calls after the timed
    one, in the same process). A crash, timeout or missing result is `ok=False` with the error."""
    script = workload_path(task, workload)
    # one name for every workload: a patch reads its process's argv, and a name saying
    # "hidden" told it which runs decide (red team helper-81)
    name = WORKLOAD_NAME
    nonce = secrets.token_hex(16)
    res = run_shell(
        copy,
        f"python3 /tmp/{_TIMER_NAME} /tmp/{_RUNNER_NAME} /tmp/{name} {REPO_DIR} {int(repeats)} "
        f"/tmp/{_NONCE_NAME}",
        timeout_s=task.limits.workload_s,
        memory_mb=task.limits.memory_mb,
        files={
            _TIMER_NAME: TIMER.read_bytes(),
            _RUNNER_NAME: RUNNER.read_bytes(),
            name: script.read_bytes(),
            _NONCE_NAME: nonce,
            "perfgym_call_depth.py": CALL_DEPTH.read_bytes(),
            "perfgym_fd_layout.py": (CALL_DEPTH.parent / "fd_layout.py").read_bytes(),
        },  # fmt: skip
        sandbox=sandbox,
        env=ONE_THREAD_POOLS,
        # Read-only: a file one round writes in the copy (its answer) would make every later
        # round's first call a cache hit. Scratch space is /tmp, fresh for every run.
        writable=False,
    )
    lines = [ln for ln in res.output.splitlines() if ln.startswith(_MARK)]
    if res.timed_out:
        return WorkloadRun(workload.name, False, error=f"timed out after {res.wall_s:.1f} s",
                           shell=res)  # fmt: skip
    if res.returncode != 0 or not lines:
        why = _tail(res.output) or res.reason or f"exit code {res.returncode}"
        return WorkloadRun(workload.name, False, error=f"workload crashed: {why}", shell=res)
    if len(lines) > 1 or (lines and not lines[0].startswith(f"{_MARK}{nonce} ")):
        # the patch's code printed a result line of its own
        return WorkloadRun(workload.name, False, shell=res,
                           error="workload output holds a result line the runner did not write")  # fmt: skip
    data = json.loads(lines[0][len(_MARK) + len(nonce) + 1 :])
    if "error" in data:
        why = str(data["error"])
        tail = _tail(res.output.split(_MARK)[0])
        return WorkloadRun(workload.name, False, shell=res,
                           error=f"workload crashed: {why}" + (f": {tail}" if tail else ""))  # fmt: skip
    return WorkloadRun(
        workload=workload.name,
        ok=True,
        first_s=float(data["first_s"]),
        repeat_s=tuple(float(x) for x in data["repeat_s"]),
        digests=tuple(data["digests"]),
        total_s=float(data["total_s"]),
        import_s=float(data["import_s"]),
        setup_s=float(data["setup_s"]),
        digest_s=float(data["digest_s"]),
        inproc_first_s=float(data["inproc_first_s"]),
        process_s=float(data["process_s"]),
        child_cpu_s=float(data["child_cpu_s"]),
        timer_cpu_s=float(data["timer_cpu_s"]),
        cpu_s=res.cpu_s,
        window_cpu_s=None if data.get("window_cpu_s") is None else float(data["window_cpu_s"]),
        window_cpu_from=str(data.get("window_cpu_from", "")),
        shell=res,
    )
