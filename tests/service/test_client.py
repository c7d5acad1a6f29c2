"""The HTTP clients implement the judge interface: the judge conformance check passes through
them and agrees with the local judge; the service-backed sandbox passes the sandbox checks."""

from __future__ import annotations

import asyncio

import pytest

from perfgym.judge import Judge, JudgeConfig
from perfgym.judge.backend import JudgeBackend
from perfgym.sandbox.conformance import CHECKS, check_sandbox
from perfgym.service.client import AsyncServiceClient, ServiceClient, judge_request
from perfgym.service.judge_conformance import candidates, check_judge, essence
from perfgym.service.models import RewardSpec
from perfgym.service.remote_sandbox import ServiceSandbox

QUICK = ["bad_inputs", "memory_bomb", "loopback_connect", "write_outside", "output_flood",
         "other_runs_invisible"]  # fmt: skip


def test_service_client_is_a_judge_and_agrees_with_the_local_one(service):
    with ServiceClient(service.url) as client:
        assert isinstance(client, JudgeBackend)
        assert client.config == JudgeConfig(repeats=1, noise_rounds=0, test_time_factor=None)
        remote = check_judge(client)
    with Judge(JudgeConfig(repeats=1, noise_rounds=0, test_time_factor=None)) as local:
        here = check_judge(local)
    assert [essence(v) for v in remote] == [essence(v) for v in here]


def test_async_client_judges_and_streams(service):
    cands, wanted = candidates()

    async def go():
        async with AsyncServiceClient(service.url) as client:
            verdicts = await client.judge_many(cands[:3], reward=RewardSpec(name="rlvr"))
            request = judge_request(cands[:2], job_id="async-1", reward=RewardSpec(name="rlvr"))
            job = await client.judge_batch(request)
            lines = [line async for line in client.events("async-1")]
            return verdicts, job, lines

    verdicts, job, lines = asyncio.run(go())
    assert [v.stage for v in verdicts] == [w[0] for w in wanted[:3]]
    assert [i.reward.value for i in sorted(job.items, key=lambda i: i.index)] == [1.0, 0.0]
    assert lines[-1]["event"] == "complete" and lines[-1]["job"]["job_id"] == "async-1"


def test_service_sandbox_quick_conformance(service):
    with ServiceSandbox(service.url) as sb:
        assert check_sandbox(sb, only=QUICK) == [c.name for c in CHECKS if c.name in QUICK]


@pytest.mark.slow
def test_service_sandbox_full_conformance(service):
    with ServiceSandbox(service.url) as sb:
        assert len(check_sandbox(sb)) == len(CHECKS)
