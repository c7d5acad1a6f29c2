"""py-spy over a workload in perfgym's sandbox on a copy: the hotspots and a speedscope file."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from perfgym.agent.errors import ProfileError
from perfgym.agent.hotspots import (
    HotspotReport,
    folded_text,
    hotspots,
    parse_folded,
    speedscope_json,
    summary_text,
    under_experiment,
)
from perfgym.agent.shell import REPO_MOUNT, run_in_copy
from perfgym.repos.runner import WORKLOAD_NAME
from perfgym.repos.shell import CommandStatus
from perfgym.sandbox import Limits, Sandbox

_DRIVER = """\
import importlib.util, sys, time, traceback
sys.path.insert(0, {repo!r})
try:
    spec = importlib.util.spec_from_file_location("perfgym_workload", {script!r})
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    state = mod.setup()
    start, loops = time.perf_counter(), 0
    while True:
        mod.experiment(state)
        loops += 1
        if time.perf_counter() - start >= {seconds!r}:
            break
except BaseException as exc:
    traceback.print_exc()
    print("PERFGYM_PROFILE_ERROR", type(exc).__name__, str(exc)[:200], file=sys.stderr)
    raise SystemExit(1)
print("PERFGYM_PROFILE_LOOPS", loops, file=sys.stderr)
"""
_DONE = "PERFGYM_PROFILE_LOOPS"
_OUT = "perfgym_profile.raw"


class ProfileConfig(BaseModel):
    """py-spy's settings. `idle` keeps samples of a main thread waiting on native helper threads
    (PerfAgent); `native` adds C frames; `seconds` is how long the workload is looped."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: int = 100
    native: bool = False
    subprocesses: bool = True
    idle: bool = True
    seconds: float = 1.0
    top: int = 10
    max_chars: int = 3000


class Profile(BaseModel):
    """One profile of one workload: the hotspots, the prompt block and the files for the report."""

    workload: str
    loops: int
    wall_s: float
    report: HotspotReport
    summary: str
    folded: str
    speedscope: str


def pyspy_command(cfg: ProfileConfig, driver: str) -> str:
    flags = ["-r", str(cfg.rate), "-f", "raw", "--full-filenames", "-o", f"/tmp/{_OUT}"]
    flags += ["--native"] * cfg.native + ["--subprocesses"] * cfg.subprocesses
    flags += ["--idle"] * cfg.idle
    return f"py-spy record {' '.join(flags)} -- python3 /tmp/{driver}"


def profile_workload(
    sandbox: Sandbox | None,
    copy: Path,
    workload_name: str,
    workload_source: str,
    *,
    config: ProfileConfig | None = None,
    limits: Limits,
) -> Profile:
    """Profile `experiment()` of a workload script (setup/experiment contract) on `copy`.

    py-spy exits 0 when the child fails and 1 without a file when the child ends before it
    attaches, so both the exit code, the driver's end marker and the output file are checked."""
    cfg = config or ProfileConfig()
    script = WORKLOAD_NAME
    driver = "perfgym_profile_driver.py"
    source = _DRIVER.format(repo=REPO_MOUNT, script=f"/tmp/{script}", seconds=cfg.seconds)
    res = run_in_copy(
        sandbox,
        copy,
        pyspy_command(cfg, driver),
        limits=limits,
        files={script: workload_source, driver: source},
        collect=(_OUT,),
    )
    tail = res.stderr.strip().splitlines()[-3:]
    if res.status is not CommandStatus.OK and res.returncode is None:
        raise ProfileError(f"profiling {workload_name}: {res.status.value} {res.reason}".strip())
    if res.returncode != 0 or _OUT not in res.files:
        raise ProfileError(
            f"py-spy failed on {workload_name} (exit {res.returncode}): {' / '.join(tail)}"
        )
    marker = [ln for ln in res.stderr.splitlines() if ln.startswith(_DONE)]
    if not marker:
        errors = [ln for ln in res.stderr.splitlines() if ln.startswith("PERFGYM_PROFILE_ERROR")]
        why = errors[-1].removeprefix("PERFGYM_PROFILE_ERROR ") if errors else " / ".join(tail)
        raise ProfileError(f"workload {workload_name} failed under py-spy: {why}")
    stacks = parse_folded(res.files[_OUT].decode("utf-8", errors="replace"))
    report = hotspots(stacks, script, REPO_MOUNT, top=cfg.top)
    kept = under_experiment(stacks, script)
    return Profile(
        workload=workload_name,
        loops=int(marker[-1].split()[1]),
        wall_s=res.wall_s,
        report=report,
        summary=f"workload {workload_name}: " + summary_text(report, cfg.max_chars),
        folded=folded_text(kept),
        speedscope=speedscope_json(kept, f"{workload_name} experiment()"),
    )
