"""`JudgeBackend`: the one judging interface, and `make_backend` for local, service and Ray."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from perfgym.errors import ConfigError
from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Candidate, Progress
from perfgym.judge.verdict import Verdict

BACKENDS = ("local", "service", "ray")


@runtime_checkable
class JudgeBackend(Protocol):
    """What the local `Judge`, `ServiceClient`, `RayJudge` and `RecordingJudge` all offer."""

    def judge_many(
        self, candidates: Sequence[Candidate], progress: Progress | None = None
    ) -> list[Verdict]:
        """One verdict per candidate, in order."""
        ...

    def close(self) -> None:
        """Release workers, connections and clusters this backend started."""
        ...


def make_backend(
    name: str,
    config: JudgeConfig,
    *,
    url: str | None = None,
    token: str | None = None,
    address: str | None = None,
) -> JudgeBackend:
    """'local' (a `Judge` on this machine), 'service' (a `perfgym serve` at `url`; its own
    judge configuration applies), or 'ray' (a cluster at `address`, or a local one)."""
    if name == "local":
        from perfgym.judge.judge import Judge

        return Judge(config)
    if name == "service":
        if not url:
            raise ConfigError("the service backend needs a URL (--url http://host:port)")
        from perfgym.service.client import ServiceClient

        return ServiceClient(url, token=token)
    if name == "ray":
        from perfgym.service.ray_backend import RayJudge

        return RayJudge(config, address=address)
    raise ConfigError(f"unknown judge backend {name!r}; choose one of {', '.join(BACKENDS)}")
