"""`JudgeBackend`: the judging interface the local judge, its HTTP client and Ray all offer;
`get_backend(name, config, ...)` builds one from the registry (kind backends)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from perfgym.judge.candidate import Candidate, Progress
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Verdict
from perfgym.registry import Kind, get


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


class BackendOptions(BaseModel):
    """Where a backend judges: the service's `url` and `token` (retrying an unreachable one for
    `retry_for_s`, the client's default when None; a batch's `deadline_s`), a Ray `address`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = None
    token: str | None = None
    address: str | None = None
    retry_for_s: float | None = None
    deadline_s: float | None = None


def get_backend(
    name: str,
    config: JudgeConfig,
    *,
    url: str | None = None,
    token: str | None = None,
    address: str | None = None,
    retry_for_s: float | None = None,
    deadline_s: float | None = None,
) -> JudgeBackend:
    """The judge backend registered as `name` ('local', 'service', 'ray', `perfgym list
    backends`), built for `config`; an unknown name is a ConfigError listing the known ones."""
    factory = get(Kind.BACKENDS, name)
    options = BackendOptions(url=url, token=token, address=address, retry_for_s=retry_for_s,
                             deadline_s=deadline_s)  # fmt: skip
    backend: JudgeBackend = factory(config, options)
    return backend
