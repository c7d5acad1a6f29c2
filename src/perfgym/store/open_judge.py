"""`open_judge`: a judge backend behind the result store, the judge `perfgym eval` uses."""

from __future__ import annotations

from perfgym.errors import ConfigError
from perfgym.judge.backend import JudgeBackend, get_backend
from perfgym.judge.config import JudgeConfig
from perfgym.store.replay import RecordingJudge
from perfgym.store.result_store import ResultStore, StoreConfig


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
    """A backend from the registry (`get_backend`), behind the result store when one is given.

    replay: answer only from the store; no backend is built, so nothing can execute.
    With the service backend the verdicts are keyed by the service's own judge configuration.
    """
    if replay and store is None:
        raise ConfigError("--replay needs a result store (--store PATH)")
    inner = None if replay else get_backend(backend, config, url=url, token=token, address=address)
    if store is None:
        assert inner is not None
        return inner
    keyed_by = config
    if backend == "service" and inner is not None:
        keyed_by = inner.config  # type: ignore[attr-defined]
    return RecordingJudge(ResultStore(StoreConfig(path=store, epoch=epoch)), keyed_by, inner,
                          reuse=replay, machine=replay_machine, run=run, close_store=True)  # fmt: skip
