"""Finding a toolchain's executables as a run sees them, and their versions (cached)."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ToolchainMissing
from perfgym.sandbox.view import default_path, program_env

# A version probe that hangs (a broken wrapper script) must not hang the caller.
_PROBE_TIMEOUT_S = 60.0


class ToolVersion(BaseModel):
    """One executable and the version it reports."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Name as the recipe gives it, e.g. 'gcc'.")
    path: str = Field(description="Absolute path it resolves to on the sandbox PATH.")
    short: str = Field(description="Short version, e.g. '12.2.0'.")
    text: str = Field(description="Full version output (part of the build cache key).")


def locate(name: str) -> str | None:
    """`name` resolved on the PATH runs get, so the host probes what the sandbox will execute."""
    return shutil.which(name, path=default_path())


@functools.cache
def probe(name: str, args: tuple[str, ...], regex: str) -> ToolVersion:
    """Run `name args...` once per process and parse its version; raises `ToolchainMissing`.

    The probe runs on the host, not in a sandbox: the sandbox's view of the host is the host's
    own read-only root, with the same PATH and environment that `program_env` gives runs.
    """
    path = locate(name)
    if path is None:
        raise ToolchainMissing(f"{name} not found on the sandbox PATH ({default_path()})")
    try:
        proc = subprocess.run(
            [path, *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=program_env(None),
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolchainMissing(f"{name} ({path}) cannot report its version: {exc}") from exc
    # Some tools print their version on stderr (javac/java), some on stdout.
    text = (proc.stdout + proc.stderr).decode("utf-8", errors="replace").strip()
    if proc.returncode != 0:
        # A rustup proxy without an installed toolchain lands here, for instance.
        detail = text.splitlines()[-1] if text else f"exit code {proc.returncode}"
        raise ToolchainMissing(f"{name} ({path}) is not usable: {detail}")
    match = re.search(regex, text)
    if match is None:
        raise ToolchainMissing(f"{name} ({path}) printed no version matching {regex!r}: {text!r}")
    short = match.group(1) if match.re.groups else match.group(0)
    return ToolVersion(name=name, path=path, short=short, text=text)
