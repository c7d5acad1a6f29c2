"""`RunRequest`: one `Sandbox.run` call as data, checked once before any backend sees it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import ConfigError
from perfgym.sandbox.bind import Bind
from perfgym.sandbox.limits import Limits


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
    cpu: int | None = Field(None, exclude=True, description="Pin the run to this core.")
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
    cpu: int | None,
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
        cpu=cpu,
        hide=[str(p) for p in hide],
    )
