"""perfgym's model adapter in mini-swe-agent's loop with the real client and scripted server:
text actions, tool calls (the tool answer carries the call's id), a format error recovered,
tokens counted, and PerfAgent's continue-after-submit (the dangling message popped)."""

from __future__ import annotations

import json

from scripts import act

from perfgym.agent.environment import SandboxEnvironment
from perfgym.agent.inner import ContinuingAgent
from perfgym.agent.model_adapter import PerfgymModel, close_model
from perfgym.llm.client import ModelClient
from perfgym.llm.config import ModelConfig
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer
from perfgym.repos.copy import make_copy


def _tool(call_id: str, command: str) -> dict:  # type: ignore[type-arg]
    return {"content": "", "finish_reason": "tool_calls", "tool_calls": [{
        "id": call_id, "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]}  # fmt: skip


def _agent(srv, copy, tools, on_submit):  # type: ignore[no-untyped-def]
    client = ModelClient(ModelConfig(model="scripted", base_url=srv.base_url))
    model = PerfgymModel(client, tools=tools)
    agent = ContinuingAgent(model, SandboxEnvironment(copy.path, timeout_s=30),
                            on_submit=on_submit, system_template="sys",
                            instance_template="Task: {{task}}", step_limit=10)  # fmt: skip
    return agent, model, client


def test_tool_calls_and_continue_after_submit(dedup_task):  # type: ignore[no-untyped-def]
    answers = [
        _tool("call-1", "echo 'def double(x):\n    return x + x' > dedup/other.py"),
        _tool("call-2", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
        _tool("call-3", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    copy = make_copy(dedup_task.repo, folder=dedup_task.folder)
    submits: list[int] = []

    def on_submit():  # type: ignore[no-untyped-def]
        submits.append(len(submits) + 1)
        return "Submission 1 measured: keep going." if len(submits) == 1 else None

    try:
        with ScriptedServer(Script(tasks={"tool-task": answers})) as srv:
            agent, model, client = _agent(srv, copy, True, on_submit)
            result = agent.run("tool-task")
            close_model(client)
    finally:
        copy.remove()
    assert result["exit_status"] == "Submitted" and submits == [1, 2]
    roles = [m["role"] for m in agent.messages]
    # the first submit's assistant message was popped and the feedback added as a user message
    assert roles == ["system", "user", "assistant", "tool", "user", "assistant", "exit"]
    assert agent.messages[3]["tool_call_id"] == "call-1"
    assert agent.messages[4]["content"] == "Submission 1 measured: keep going."
    assert model.spend.calls == 3 and model.spend.tokens > 0


def test_text_actions_and_format_error(dedup_task):  # type: ignore[no-untyped-def]
    answers = [
        "I will think without acting.",  # no action: a format error, answered and recovered
        "Fallback fence:\n```bash\nls dedup | head -2\n```",
        act("Done.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    copy = make_copy(dedup_task.repo, folder=dedup_task.folder)
    try:
        with ScriptedServer(Script(tasks={"text-task": answers})) as srv:
            agent, model, client = _agent(srv, copy, False, lambda: None)
            result = agent.run("text-task")
            close_model(client)
    finally:
        copy.remove()
    assert result["exit_status"] == "Submitted"
    user = [m["content"] for m in agent.messages if m["role"] == "user"]
    assert "Format error" in user[1] and "__init__.py" in user[2]
    assert model.spend.calls == 3


def test_token_budget_stops_the_agent(dedup_task):  # type: ignore[no-untyped-def]
    answers = [act("Look.", "ls"), act("Look again.", "ls dedup")]
    copy = make_copy(dedup_task.repo, folder=dedup_task.folder)
    try:
        with ScriptedServer(Script(tasks={"budget-task": answers})) as srv:
            agent, model, client = _agent(srv, copy, False, lambda: None)
            agent.token_limit = 1  # spent by the first call's usage
            result = agent.run("budget-task")
            close_model(client)
    finally:
        copy.remove()
    assert result["exit_status"] == "TokenLimitExceeded"
    assert model.spend.calls == 1 and model.spend.tokens >= 1
