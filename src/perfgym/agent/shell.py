"""One shell command in perfgym's sandbox on a private writable copy of a repository."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from perfgym.sandbox import Limits, Sandbox
from perfgym.sandbox.bind import Bind

REPO_MOUNT = "/tmp/repo"
"""Where a copy appears inside the sandbox (the run's cwd)."""

CLEAN_ENV: dict[str, str] = {
    "PYTHONPATH": REPO_MOUNT,
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
}
"""The whole environment a command gets besides the sandbox's defaults (PATH, HOME, LANG):
nothing of the host's (mini-swe-agent's LocalEnvironment passes os.environ, keys included)."""


@dataclass(frozen=True)
class ShellResult:
    """What one command did: exit code (None when killed), output, and why it stopped."""

    returncode: int | None
    stdout: str
    stderr: str
    status: str
    reason: str
    wall_s: float
    files: dict[str, bytes]

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.status == "OK"

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_in_copy(
    sandbox: Sandbox,
    copy: Path,
    command: str,
    *,
    limits: Limits,
    files: Mapping[str, str | bytes] | None = None,
    collect: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> ShellResult:
    """Run `command` with bash in the sandbox, cwd the copy (bound writable at REPO_MOUNT).

    `files` go into the run's own work dir (/tmp, outside the copy), `collect` names files there
    to bring back. The copy must be writable by the sandbox's unprivileged uid."""
    script = f"cd {REPO_MOUNT} && {command}"
    ex = sandbox.run(
        ["bash", "-c", script],
        files=dict(files or {}),
        env={**CLEAN_ENV, **(env or {})},
        limits=limits,
        binds=[Bind(host_path=str(copy.resolve()), sandbox_path=REPO_MOUNT, writable=True)],
        collect=collect,
    )
    wall = ex.measurement.wall_s if ex.measurement else 0.0
    return ShellResult(
        returncode=ex.exit_code,
        stdout=ex.stdout.decode("utf-8", errors="replace"),
        stderr=ex.stderr.decode("utf-8", errors="replace"),
        status=ex.status.value if hasattr(ex.status, "value") else str(ex.status),
        reason=ex.reason,
        wall_s=wall,
        files=dict(ex.files),
    )
