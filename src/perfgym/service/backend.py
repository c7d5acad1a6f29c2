"""`make_backend` (local, service or Ray) and `open_judge`, the judge `perfgym eval` uses."""

from __future__ import annotations

from perfgym.errors import ConfigError
from perfgym.judge.backend import JudgeBackend
from perfgym.judge.config import JudgeConfig

__all__ = ["BACKENDS", "JudgeBackend", "make_backend", "open_judge"]

BACKENDS = ("local", "service", "ray")


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


def open_judge(
    config: JudgeConfig,
    *,
    backend: str = "local",
    url: str | None = None,
    token: str | None = None,
    address: str | None = None,
    store: str | None = None,
    replay: bool = False,
    replay_machine: str | None = None,
    epoch: str = "0",
    run: str = "",
) -> JudgeBackend:
    """The judge `perfgym eval` uses: a backend, behind the result store when one is given.

    replay: answer only from the store; no backend is built, so nothing can execute.
    With the service backend the verdicts are keyed by the service's own judge configuration.
    """
    from perfgym.store.replay import RecordingJudge
    from perfgym.store.result_store import ResultStore, StoreConfig

    if replay and store is None:
        raise ConfigError("--replay needs a result store (--store PATH)")
    inner = None if replay else make_backend(backend, config, url=url, token=token, address=address)
    if store is None:
        assert inner is not None
        return inner
    keyed_by = config
    if backend == "service" and inner is not None:
        keyed_by = inner.config  # type: ignore[attr-defined]
    return RecordingJudge(ResultStore(StoreConfig(path=store, epoch=epoch)), keyed_by, inner,
                          reuse=replay, machine=replay_machine, run=run, close_store=True)  # fmt: skip
