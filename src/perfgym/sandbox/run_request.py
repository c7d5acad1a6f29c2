"""`RunRequest`: one `Sandbox.run` call as data, checked once before any backend sees it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.sandbox.bind import Bind
from perfgym.sandbox.limits import Limits

#: Where a run is pinned: one core, a set of distinct cores (a multi-core task's run), or None
#: (the run floats over this process's cores).
Pin = int | Sequence[int] | None


class RunRequest(BaseModel):
    """One `Sandbox.run` call as data (what backends, the pool, the service and Ray pass around).

    `cpu` and `hide` belong to this host: a request sent elsewhere (JSON) leaves them out, since
    a remote host pins its own cores (the service's `pin`) and hides its own paths.
    """

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    command: list[str]
    stdin: bytes = b""
    files: dict[str, bytes] = Field(default_factory=dict)
    env: dict[str, str] | None = None
    limits: Limits = Field(default_factory=Limits)
    binds: list[Bind] = Field(default_factory=list)
    collect: list[str] = Field(default_factory=list)
    cpu: int | list[int] | None = Field(
        None,
        exclude=True,
        description="Pin the run to this core, or to these distinct cores (sorted, two or more).",
    )
    hide: list[str] = Field(
        default_factory=list,
        exclude=True,
        description="Host paths covered by an empty tmpfs in this run, beyond the sandbox's own "
        "`SandboxConfig.hide_paths` (a judge hides the suite of the task it judges).",
    )

    def keywords(self) -> dict[str, Any]:
        """The request as `Sandbox.run`'s keywords (to hand it on to another sandbox's `run`)."""
        return {name: getattr(self, name) for name in type(self).model_fields if name != "command"}


def check_command(command: Sequence[str]) -> list[str]:
    """`command` as an argv list of strings: non-empty, not one string, no NUL bytes."""
    if isinstance(command, str | bytes) or not command:
        raise ConfigError("command must be a non-empty argv list, e.g. ['python3', '-c', 'pass']")
    argv = [str(a) for a in command]
    if any("\x00" in a for a in argv):
        raise ConfigError("command arguments must not contain NUL bytes")
    return argv


def check_name(name: str) -> str:
    """A work-dir-relative file name: no absolute paths, no '..', no NUL."""
    if not name or name.startswith("/") or "\x00" in name or ".." in name.split("/"):
        raise ConfigError(f"file name {name!r} must be relative to the work dir, without '..'")
    return name


def check_pin(cpu: Pin) -> int | list[int] | None:
    """`cpu` as a request holds it: None, one core (an int, also for a one-core sequence), or
    the sorted list of two or more distinct cores; ConfigError for anything else."""
    if cpu is None:
        return None
    many = [cpu] if isinstance(cpu, int) else list(cpu) if isinstance(cpu, Sequence) else None
    if (
        not many
        or isinstance(cpu, str | bytes)
        or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in many)
    ):
        raise ConfigError(f"cpu must be a core number or a non-empty list of them, got {cpu!r}")
    if len(set(many)) != len(many):
        raise ConfigError(f"cpu lists a core twice: {cpu!r}")
    return many[0] if len(many) == 1 else sorted(many)


def pinned_cores(cpu: Pin) -> tuple[int, ...] | None:
    """The cores a run pinned by `cpu` may use (sorted), or None for an unpinned run."""
    checked = check_pin(cpu)
    if checked is None:
        return None
    return (checked,) if isinstance(checked, int) else tuple(checked)


def as_bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def make_request(
    command: Sequence[str],
    *,
    stdin: bytes | str,
    files: Mapping[str, bytes | str] | None,
    env: Mapping[str, str] | None,
    limits: Limits | None,
    binds: Sequence[Bind],
    collect: Sequence[str],
    cpu: Pin,
    hide: Sequence[str],
) -> RunRequest:
    """The checked request of one `Sandbox.run` call (argv and file names checked here only)."""
    return RunRequest(
        command=check_command(command),
        stdin=as_bytes(stdin),
        files={check_name(k): as_bytes(v) for k, v in (files or {}).items()},
        env=dict(env) if env is not None else None,
        limits=limits or Limits(),
        binds=list(binds),
        collect=[check_name(c) for c in collect],
        cpu=check_pin(cpu),
        hide=[str(p) for p in hide],
    )
