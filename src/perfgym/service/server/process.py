"""Running the service: `serve(config)` in this process, or `ServiceProcess` as a child process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from perfgym.errors import PerfgymError
from perfgym.service.config import ServiceConfig


def serve(config: ServiceConfig, *, log_level: str = "warning") -> None:
    """Serve until interrupted (uvicorn, one process; the judging happens in worker processes)."""
    import uvicorn

    from perfgym.service.server.app import create_app
    from perfgym.service.server.head_timeout import HeadTimeoutH11

    config.check_bind()
    app = create_app(config)
    uvicorn.run(app, host=config.host, port=config.port, log_level=log_level,
                timeout_graceful_shutdown=5,
                http=type("HeadTimeout", (HeadTimeoutH11,),
                          {"head_timeout_s": config.head_timeout_s}))  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServiceProcess:
    """`perfgym serve` in a child process, for benchmarks, tests and trainers on one machine.

    `restart()` starts it again on the same port and state directory (the queue survives);
    `kill()` ends it with SIGKILL, as a crash would.
    """

    def __init__(self, config: ServiceConfig, *, log: Path | None = None) -> None:
        if config.port == 0:
            config = config.model_copy(update={"port": free_port()})
        self.config = config
        self.url = f"http://{config.host}:{config.port}"
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> ServiceProcess:
        out: Any = subprocess.DEVNULL
        if self.log is not None:
            out = self.log.open("ab")
        env = dict(os.environ)
        if self.config.token:
            env["PERFGYM_TOKEN"] = self.config.token
        cfg = self.config.model_dump(mode="json", exclude={"token"})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "perfgym.service.server.process", json.dumps(cfg),
             str(os.getpid())],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, start_new_session=True,
        )  # fmt: skip
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        headers = {"Authorization": f"Bearer {self.config.token}"} if self.config.token else {}
        while time.monotonic() < end:
            if self.proc is not None and self.proc.poll() is not None:
                raise PerfgymError(f"the service exited with code {self.proc.returncode}")
            try:
                r = httpx.get(f"{self.url}/v1/health", headers=headers, timeout=2.0)
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise PerfgymError(f"the service at {self.url} was not healthy within {timeout:g} s")

    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILL the service (its workers die with it)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self, timeout: float = 30.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def restart(self, timeout: float = 60.0) -> None:
        self.kill()
        self.start(timeout)

    def __enter__(self) -> ServiceProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _main(argv: list[str]) -> int:
    from perfgym.collector import pace_for_long_runs
    from perfgym.parent_watch import watch_parent

    pace_for_long_runs()
    if len(argv) > 2:  # started by ServiceProcess: end with the process that started it
        watch_parent(int(argv[2]))
    config = ServiceConfig.model_validate_json(argv[1])
    token = os.environ.get("PERFGYM_TOKEN")
    if token:
        config = config.model_copy(update={"token": token})
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
