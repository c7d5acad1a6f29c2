"""A job stores at most `max_job_output_bytes` of results, and all jobs at most
`max_stored_output_bytes` (red team helper-79: a 476-byte request of 4 runs of `head -c 32M`
grew the queue by 171-214 MiB, kept for a day, and every GET rendered it; inline tasks were
never deleted). The queue is a real SQLite file; the service test runs real sandboxed runs."""

from __future__ import annotations

import base64
import json
import sqlite3
import time

import httpx
import pytest

from perfgym.sandbox.execution import Execution, Status
from perfgym.sandbox.limits import Limits
from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess
from perfgym.service.server.views import item_result
from perfgym.service.workers.job_queue import JobQueue, NewItem
from perfgym.service.workers.output_budget import cut_to_fit, result_size

KIB = 1024
#: What a run's result takes with no output (status, times, flags, limits): kept past the budget.
RECORD = 2 * KIB


def _execution(stdout: bytes, stderr: bytes = b"", files: dict[str, bytes] | None = None):
    return Execution(status=Status.OK, exit_code=0, stdout=stdout, stderr=stderr, limits=Limits(),
                     files=files or {}).model_dump(mode="json")  # fmt: skip


def _result(stdout: bytes, **kw: object) -> dict:
    return {"execution": _execution(stdout, **kw), "reason": ""}  # type: ignore[arg-type]


def _job(q: JobQueue, job_id: str, n: int, digest: str | None = None) -> None:
    tasks = {digest: "{}"} if digest else {}
    q.submit(job_id, "exec", job_id, time.time() + 600, {},
             [NewItem(payload={"request": {}}, task_digest=digest) for _ in range(n)], tasks)  # fmt: skip


def _run_all(q: JobQueue, job_id: str, results: list[dict], lease: int) -> None:
    leased = q.lease(len(results), lease)
    assert [x.job_id for x in leased] == [job_id] * len(results)
    for item, res in zip(leased, results, strict=True):
        assert q.complete(item.job_id, item.idx, lease, "ok", res).accepted
    q.finish_job(job_id, None)


def test_a_jobs_runs_are_cut_to_what_is_left_of_its_budget(tmp_path) -> None:
    q = JobQueue(tmp_path / "queue.sqlite", max_queue=100, max_attempts=3,
                 max_job_output_bytes=300 * KIB)  # fmt: skip
    _job(q, "big", 4)
    out = bytes(range(256)) * 400  # 100 KiB of stdout each: 137 KiB stored
    _run_all(q, "big", [_result(out, stderr=b"e" * 20 * KIB, files={"f.bin": out})] * 4, 1)
    job = q.job("big")
    assert job is not None and job["out_bytes"] <= 300 * KIB + 4 * RECORD, job["out_bytes"]
    items = [item_result(r, None) for r in q.items("big")]
    assert all(i.execution is not None and i.execution.status is Status.OK for i in items)
    first = items[0].execution
    assert first.stdout == out and first.files == {"f.bin": out} and items[0].reason == ""
    cut = [i for i in items if "output budget of 307200 bytes is spent" in i.reason]
    assert len(cut) >= 3, [i.reason for i in items]
    for i in cut:
        ex = i.execution
        assert ex.stdout_truncated and out.startswith(ex.stdout) and len(ex.stdout) < len(out)
        assert ex.files == {} and "1 collected file(s) left out" in i.reason
    assert items[-1].execution.stdout == b"" and items[-1].execution.stderr_truncated
    q.close()


def test_a_result_that_fits_or_holds_no_run_is_kept_as_it_is() -> None:
    small = _result(b"hello\n")
    assert cut_to_fit(small, result_size(small), 1 << 20) is small
    verdict = {"verdict": {"stage": "OK", "detail": "x" * 5000}, "reason": ""}
    assert cut_to_fit(verdict, 10, 1 << 20) is verdict  # a verdict is never cut
    none = cut_to_fit(_result(b"x" * 50_000), 0, 1 << 20)
    assert base64.b64decode(none["execution"]["stdout"]) == b""
    assert none["execution"]["stdout_truncated"] and none["execution"]["exit_code"] == 0


def test_the_oldest_finished_jobs_go_past_the_stored_cap_with_their_inline_tasks(tmp_path) -> None:
    q = JobQueue(tmp_path / "queue.sqlite", max_queue=100, max_attempts=3,
                 max_job_output_bytes=1 << 20, max_stored_output_bytes=300 * KIB)  # fmt: skip
    for k, name in enumerate(["old", "mid", "new"]):
        _job(q, name, 1, digest=f"task-{name}")
        _run_all(q, name, [_result(b"z" * 100 * KIB)], k + 1)
        time.sleep(0.01)  # distinct completion times
    _job(q, "open", 1, digest="task-open")  # unfinished: never dropped
    assert q.gc(retention_s=86_400) == 1
    assert q.job("old") is None and q.job("mid") is not None and q.job("open") is not None
    with sqlite3.connect(tmp_path / "queue.sqlite") as c:
        tasks = {r[0] for r in c.execute("SELECT digest FROM tasks")}
    assert tasks == {"task-mid", "task-new", "task-open"}
    assert q.gc(retention_s=86_400) == 0  # under the cap now
    q.close()


def test_a_queue_written_before_budgets_opens_and_counts(tmp_path) -> None:
    path = tmp_path / "queue.sqlite"
    with sqlite3.connect(path) as c:  # the jobs table as it was, without out_bytes
        c.execute("CREATE TABLE jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, digest TEXT NOT "
                  "NULL, created REAL NOT NULL, deadline REAL NOT NULL, spec TEXT NOT NULL, "
                  "n_items INTEGER NOT NULL, n_done INTEGER NOT NULL DEFAULT 0, retried INTEGER "
                  "NOT NULL DEFAULT 0, completed REAL, rewards TEXT)")  # fmt: skip
        c.execute("INSERT INTO jobs (id, kind, digest, created, deadline, spec, n_items) "
                  "VALUES ('before', 'exec', 'd', 0, 0, '{}', 0)")  # fmt: skip
    q = JobQueue(path, max_queue=10, max_attempts=3)
    assert q.job("before")["out_bytes"] == 0
    _job(q, "after", 1)
    _run_all(q, "after", [_result(b"ok")], 1)
    assert q.job("after")["out_bytes"] > 0
    q.close()


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory):  # type: ignore[no-untyped-def]
    state = tmp_path_factory.mktemp("budget")
    cfg = ServiceConfig(port=0, state_dir=str(state), judge={"repeats": 1}, workers=1,
                        max_job_output_bytes=1 << 20)  # fmt: skip
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc, state


def test_a_small_request_for_a_lot_of_output_stores_only_the_budget(budgeted) -> None:  # type: ignore[no-untyped-def]
    """helper-79's amplification, scaled down: 4 runs of `head -c 600000`, 1 MiB budget."""
    svc, state = budgeted
    run = {"command": ["head", "-c", "600000", "/dev/zero"], "limits": {"stdout_bytes": 1 << 20}}
    body = {"job_id": "amp", "wait": True, "requests": [run] * 4}
    r = httpx.post(f"{svc.url}/v1/executions", json=body, timeout=120)
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert [i["status"] for i in items] == ["ok"] * 4
    execs = [Execution.model_validate_json(json.dumps(i["execution"])) for i in items]
    assert all(e.exit_code == 0 for e in execs)
    whole = [e for e in execs if len(e.stdout) == 600_000 and not e.stdout_truncated]
    cut = [i for i, e in zip(items, execs, strict=True) if e.stdout_truncated]
    assert len(whole) == 1 and len(cut) == 3, [len(e.stdout) for e in execs]
    assert all("output budget" in i["reason"] for i in cut)
    assert sum(len(e.stdout) for e in execs) <= (1 << 20) * 3 // 4
    with sqlite3.connect(state / "queue.sqlite") as c:
        stored = c.execute("SELECT out_bytes FROM jobs WHERE id = 'amp'").fetchone()[0]
    assert stored <= (1 << 20) + 4 * RECORD  # the budget, and each run's own record
    again = [httpx.get(f"{svc.url}/v1/jobs/amp", timeout=30) for _ in range(2)]  # kept answers
    assert [a.status_code for a in again] == [200, 200] and again[0].content == again[1].content
    assert again[0].json()["items"] == items


def test_the_service_trims_the_build_caches_it_fills(tmp_path) -> None:
    """Entries of the judge's build cache past `max_build_cache_bytes` are trimmed once the
    service runs (checked at start, then every minute)."""
    from perfgym.tasks.task import Language
    from perfgym.toolchains import Build, BuildCache, BuildStatus
    from perfgym.toolchains.cache_trim import _size

    cache = BuildCache.at(tmp_path / "builds")
    for k in range(3):
        with cache.stage(f"{k:064x}") as st:
            (st.artifact / "prog").write_bytes(bytes(700 * KIB))
            cache.publish(st, Build(status=BuildStatus.OK, language=Language.C, recipe="c",
                                    key=f"{k:064x}"))  # fmt: skip
    assert _size(cache.root) > 2 << 20
    state = tmp_path / "state"
    state.mkdir()
    cfg = ServiceConfig(port=0, state_dir=str(state), workers=1, build_cache_keep_s=0,
                        max_build_cache_bytes=1 << 20,
                        judge={"repeats": 1, "build_cache": str(cache.root)})  # fmt: skip
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        for _ in range(100):
            if _size(cache.root) <= 1 << 20:
                break
            time.sleep(0.1)
        assert httpx.get(f"{svc.url}/v1/health").status_code == 200
    assert _size(cache.root) <= 1 << 20
    assert sum(cache.lookup(f"{k:064x}") is not None for k in range(3)) == 1
