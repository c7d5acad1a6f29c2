"""`RunRequest`: one `Sandbox.run` call as data, checked once before any backend sees it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

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

    @model_validator(mode="after")
    def _checked(self) -> RunRequest:
        """The checks `make_request` makes, for a request built any other way (JSON from a
        service client, a Ray task): input the supervisor could not act on is the caller's
        error here, not the sandbox's failure later."""
        check_command(self.command)
        check_names(self.files)
        for name in self.collect:
            check_name(name)
        for k, v in (self.env or {}).items():
            check_env_entry(k, v)
        return self

    def keywords(self) -> dict[str, Any]:
        """The request as `Sandbox.run`'s keywords (to hand it on to another sandbox's `run`)."""
        return {name: getattr(self, name) for name in type(self).model_fields if name != "command"}


def check_command(command: Sequence[str]) -> list[str]:
    """`command` as an argv list of strings: non-empty, not one string, no NUL bytes, each one
    a string the system can take (no lone surrogate outside os.fsencode's escapes)."""
    if isinstance(command, str | bytes) or not command:
        raise ConfigError("command must be a non-empty argv list, e.g. ['python3', '-c', 'pass']")
    argv = [str(a) for a in command]
    if any("\x00" in a for a in argv):
        raise ConfigError("command arguments must not contain NUL bytes")
    for a in argv:
        _encodable(a, "a command argument")
    return argv


def check_env_entry(key: str, value: str) -> None:
    """One environment entry: strings, a name without '=', no NUL, encodable."""
    if (
        not isinstance(key, str)
        or not isinstance(value, str)
        or "=" in key
        or "\x00" in key + value
    ):
        raise ConfigError(f"invalid environment entry {key!r}={value!r}")
    _encodable(key, "an environment name")
    _encodable(value, "an environment value")


def _encodable(text: str, what: str) -> None:
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        raise ConfigError(
            f"{what} is not valid Unicode text (a lone surrogate): {text[:60]!r}"
        ) from None


#: The most directories a work-dir file name may go down, and its longest encoded form.
MAX_NAME_DEPTH = 64
MAX_NAME_BYTES = 1024


def check_name(name: str) -> str:
    """A work-dir-relative file name: not absolute, no '..' or '.' or empty component (so no
    trailing '/'), no NUL, encodable, at most MAX_NAME_DEPTH components and MAX_NAME_BYTES
    bytes (each component at most 255, the file system's own limit)."""
    parts = name.split("/") if isinstance(name, str) else []
    if not name or "\x00" in name or any(p in ("", ".", "..") for p in parts):
        raise ConfigError(
            f"file name {name!r} must be relative to the work dir, without '..', '.' or "
            "empty components"
        )
    _encodable(name, "a file name")
    if len(parts) > MAX_NAME_DEPTH or len(os.fsencode(name)) > MAX_NAME_BYTES:
        raise ConfigError(
            f"file name {name[:60]!r}... is too deep or too long (at most {MAX_NAME_DEPTH} "
            f"components, {MAX_NAME_BYTES} bytes)"
        )
    if any(len(os.fsencode(p)) > 255 for p in parts):
        raise ConfigError(f"file name {name[:60]!r} has a component over 255 bytes")
    return name


def check_names(names: Iterable[str]) -> None:
    """Each of `names` (see `check_name`), and no name both a file and another's directory."""
    names = [check_name(n) for n in names]
    dirs = {n.rsplit("/", i)[0] for n in names for i in range(1, n.count("/") + 1)}
    clash = sorted(dirs.intersection(names))
    if clash:
        raise ConfigError(f"file name {clash[0]!r} is also a directory of another file's name")


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
        files={k: as_bytes(v) for k, v in _checked_files(files or {}).items()},
        env=_checked_env(env),
        limits=limits or Limits(),
        binds=list(binds),
        collect=[check_name(c) for c in collect],
        cpu=check_pin(cpu),
        hide=[str(p) for p in hide],
    )


def _checked_files(files: Mapping[str, bytes | str]) -> Mapping[str, bytes | str]:
    check_names(files)
    return files


def _checked_env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    if env is None:
        return None
    for k, v in env.items():
        check_env_entry(k, v)
    return dict(env)
