"""`ServiceSandbox`: a `Sandbox` whose runs happen in a `perfgym serve` instance."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from perfgym.errors import ConfigError
from perfgym.sandbox.base import Bind, Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.limits import Limits
from perfgym.sandbox.pool import RunRequest
from perfgym.service.client import ServiceClient


def _bytes(data: bytes | str) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


class ServiceSandbox(Sandbox):
    """Runs each command through POST /v1/executions; passes `check_sandbox` like local ones.

    `cpu` asks for timing mode (the service pins the run to a core no other measured run
    uses); which core is the service's choice, not the caller's.
    """

    name = "service"

    def __init__(self, url: str, *, token: str | None = None) -> None:
        self.client = ServiceClient(url, token=token)

    def run(
        self,
        command: Sequence[str],
        *,
        stdin: bytes | str = b"",
        files: Mapping[str, bytes | str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        binds: Sequence[Bind] = (),
        collect: Sequence[str] = (),
        cpu: int | None = None,
    ) -> Execution:
        if binds:
            raise ConfigError("binds name host paths; a remote sandbox takes files instead")
        if isinstance(command, str | bytes) or not command:
            raise ConfigError(
                "command must be a non-empty argv list, e.g. ['python3', '-c', 'pass']"
            )
        request = RunRequest(
            command=[str(a) for a in command],
            stdin=_bytes(stdin),
            files={k: _bytes(v) for k, v in (files or {}).items()},
            env=dict(env) if env is not None else None,
            limits=limits or Limits(),
            collect=list(collect),
        )
        return self.client.run(request, pin=cpu is not None)

    def close(self) -> None:
        self.client.close()
