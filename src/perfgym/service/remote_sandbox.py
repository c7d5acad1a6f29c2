"""`ServiceSandbox`: a `Sandbox` whose runs happen in a `perfgym serve` instance."""

from __future__ import annotations

from perfgym.errors import ConfigError
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Execution
from perfgym.sandbox.run_request import RunRequest
from perfgym.service.client import ServiceClient


class ServiceSandbox(Sandbox):
    """Runs each command through POST /v1/executions; passes `check_sandbox` like local ones.

    `cpu` asks for timing mode (the service pins the run to a core no other measured run
    uses); which core is the service's choice, not the caller's. `hide` names paths of this
    host, which the service's runs do not see anyway: it is not sent.
    """

    name = "service"

    def __init__(self, url: str, *, token: str | None = None) -> None:
        self.client = ServiceClient(url, token=token)

    def _run(self, request: RunRequest) -> Execution:
        if request.binds:
            raise ConfigError("binds name host paths; a remote sandbox takes files instead")
        return self.client.run(request, pin=request.cpu is not None)

    def close(self) -> None:
        self.client.close()
