"""Building a `JobView` from the queue's rows."""

from __future__ import annotations

import json
import sqlite3

from perfgym.judge.verdict import Verdict
from perfgym.rewards import RewardOutput
from perfgym.sandbox.execution import Execution
from perfgym.service.models import ItemResult, JobView, RewardSpec
from perfgym.service.workers.job_queue import TERMINAL


def item_result(row: sqlite3.Row, reward: RewardOutput | None) -> ItemResult:
    state = row["state"]
    res = json.loads(row["result"]) if row["result"] else {}
    answered = state in TERMINAL
    return ItemResult(
        index=row["idx"],
        status=state if answered else "pending",
        verdict=Verdict.model_validate(res["verdict"]) if res.get("verdict") else None,
        # JSON mode: an execution's bytes are stored base64-encoded.
        execution=Execution.model_validate_json(json.dumps(res["execution"]))
        if res.get("execution")
        else None,
        reward=reward,
        attempts=row["attempts"],
        latency_s=(row["finished"] - row["enqueued"]) if answered and row["finished"] else None,
        reason=str(res.get("reason", "")),
    )


def job_view(job: sqlite3.Row, rows: list[sqlite3.Row]) -> JobView:
    spec = json.loads(job["spec"])
    rewards = json.loads(job["rewards"]) if job["rewards"] else None
    outputs = (rewards or {}).get("outputs") or []
    items = [
        item_result(r, RewardOutput.model_validate(outputs[r["idx"]]) if outputs else None)
        for r in rows
    ]
    if job["completed"] is not None:
        state = "complete"
    elif any(r["state"] != "queued" for r in rows):
        state = "running"
    else:
        state = "queued"
    return JobView(
        job_id=job["id"],
        kind=job["kind"],
        state=state,
        n_items=job["n_items"],
        n_done=job["n_done"],
        retried=job["retried"],
        created=job["created"],
        deadline=job["deadline"],
        reward=RewardSpec.model_validate(spec["reward"]) if spec.get("reward") else None,
        reward_error=(rewards or {}).get("error", ""),
        items=items,
    )
