"""One shell command in the sandbox on a repository copy, with files brought back from its /tmp.

`perfgym.repos.shell.run_shell` merges output and brings nothing back; the profiler and the
test runs need py-spy's and testmon's files, which live in the run's /tmp (outside the copy,
so they never enter a patch)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from perfgym.repos.copy_guard import CopyGuard
from perfgym.repos.shell import REPO_DIR, CommandStatus, shared_sandbox, shell_limits
from perfgym.sandbox import Limits, Sandbox
from perfgym.sandbox.bind import Bind

REPO_MOUNT = REPO_DIR
"""Where a copy appears inside the sandbox (the run's cwd), as for `perfgym.repos.shell.run_shell`."""
command_limits = shell_limits
"""Limits of a build, test or workload command (forking tools allowed, network off)."""

CLEAN_ENV: dict[str, str] = {
    "PYTHONPATH": f"{REPO_MOUNT}:/tmp",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
}
"""The whole environment a command gets besides the sandbox's defaults (PATH, HOME, LANG):
nothing of the host's (mini-swe-agent's LocalEnvironment passes os.environ, keys included)."""


@dataclass(frozen=True)
class AgentShellResult:
    """What one command did: exit code (None when killed), output, and why it stopped."""

    returncode: int | None
    stdout: str
    stderr: str
    status: CommandStatus
    reason: str
    wall_s: float
    files: dict[str, bytes]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.status is CommandStatus.OK

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_in_copy(
    sandbox: Sandbox | None,
    copy: Path,
    command: str,
    *,
    limits: Limits,
    files: Mapping[str, str | bytes] | None = None,
    collect: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> AgentShellResult:
    """Run `command` with bash in the sandbox, cwd the copy (bound writable at REPO_MOUNT).

    `files` go into the run's own work dir (/tmp, outside the copy), `collect` names files there
    to bring back. The copy must be writable by the sandbox's unprivileged uid."""
    script = f"cd {REPO_MOUNT} && {command}"
    with CopyGuard(copy) as guard:  # a cap on what the command leaves in the copy
        ex = (sandbox or shared_sandbox()).run(
            ["bash", "-c", script],
            files=dict(files or {}),
            env={**CLEAN_ENV, **(env or {})},
            limits=limits,
            binds=[Bind(host_path=str(copy.resolve()), sandbox_path=REPO_MOUNT, writable=True)],
            collect=collect,
        )
    wall = ex.measurement.wall_s if ex.measurement else 0.0
    if guard.breached is not None:
        return AgentShellResult(returncode=125, stdout=ex.stdout.decode("utf-8", errors="replace"),
                           stderr=guard.message, status=CommandStatus.COPY_LIMIT, reason=guard.message,
                           wall_s=wall, files=dict(ex.files))  # fmt: skip
    return AgentShellResult(
        returncode=ex.exit_code,
        stdout=ex.stdout.decode("utf-8", errors="replace"),
        stderr=ex.stderr.decode("utf-8", errors="replace"),
        status=CommandStatus.of(ex.status),
        reason=ex.reason,
        wall_s=wall,
        files=dict(ex.files),
    )
