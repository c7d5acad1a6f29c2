"""A finished job's answer is rendered once and kept (red team helper-79: every GET of a
4,096-item job rebuilt it, 0.25 s of server CPU each, and 60 pollers kept /v1/health waiting
4-5 s). The runtime and its queue are real (a SQLite file); nothing is started."""

from __future__ import annotations

import json
import time

import pytest

from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits
from perfgym.service.config import ServiceConfig
from perfgym.service.server.rendered_jobs import RenderedJobs, render
from perfgym.service.server.runtime import PRIVATE_ENV, ServiceRuntime
from perfgym.service.workers.job_queue import NewItem


@pytest.fixture
def runtime(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(PRIVATE_ENV, "")  # the runtime names its state dir there: restored after
    rt = ServiceRuntime(ServiceConfig(port=0, state_dir=str(tmp_path / "state")))
    yield rt
    rt.queue.close()  # (never started: no dispatcher to stop)
    rt.store.close()


def _finished_job(rt: ServiceRuntime, job_id: str, n: int) -> None:
    ex = Execution(status=Status.OK, exit_code=0, stdout=b"out\n", limits=Limits())
    rt.queue.submit(job_id, "exec", job_id, time.time() + 600, {},
                    [NewItem(payload={"request": {}}) for _ in range(n)], {})  # fmt: skip
    for item in rt.queue.lease(n, 1):
        rt.queue.complete(item.job_id, item.idx, 1, "ok",
                          {"execution": ex.model_dump(mode="json"), "reason": ""})  # fmt: skip
    rt.queue.finish_job(job_id, None)


def test_a_finished_job_is_rendered_once_and_answered_the_same(runtime) -> None:  # type: ignore[no-untyped-def]
    _finished_job(runtime, "done", 50)
    first = runtime.finished_body("done")
    assert first is not None and runtime.finished_body("done") is first
    assert runtime.rendered.built == 1
    view = runtime.view("done")
    assert json.loads(first) == json.loads(render(view)) and len(json.loads(first)["items"]) == 50


def test_a_running_or_unknown_job_is_not_kept_and_a_forgotten_one_goes(runtime) -> None:  # type: ignore[no-untyped-def]
    runtime.queue.submit("open", "exec", "open", time.time() + 600, {},
                         [NewItem(payload={"request": {}})], {})  # fmt: skip
    assert runtime.finished_body("open") is None and runtime.finished_body("nope") is None
    _finished_job(runtime, "old", 2)
    assert runtime.finished_body("old") is not None
    assert runtime.queue.gc(retention_s=1e-9) == 1  # the queue forgets it
    assert runtime.finished_body("old") is None and runtime.rendered.built == 1


def test_kept_answers_stay_within_their_bytes() -> None:
    from perfgym.service.models import JobView

    kept = RenderedJobs(max_bytes=3000)
    views = {f"j{k}": JobView(job_id=f"j{k}", kind="exec", state="complete", n_items=0,
                              n_done=0, created=0.0, deadline=0.0, reward_error="x" * 1000)
             for k in range(5)}  # fmt: skip
    for k, view in views.items():
        assert kept.get(k, lambda v=view: v) == render(view)
    assert kept._size <= 3000 and list(kept._kept) == ["j3", "j4"]
    assert kept.get("j0", lambda: None) is None  # dropped, and the job is gone now
