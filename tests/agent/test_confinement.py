"""The agent's commands are confined: the scripted model drives mini-swe-agent's DefaultAgent
loop (perfgym's model adapter over the real client, perfgym's sandbox environment) through
`rm -rf ~`, a network call, reading /root, killing a host process and writing outside its copy;
the host repository stays byte-identical and the host is untouched."""

from __future__ import annotations

import os
import socket
import subprocess
import uuid
from pathlib import Path

import pytest
from scripts import act

from perfgym.agent.environment import SandboxEnvironment
from perfgym.agent.inner import ContinuingAgent
from perfgym.agent.model_adapter import PerfgymModel, close_model
from perfgym.llm.client import ModelClient
from perfgym.llm.config import ModelConfig
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer
from perfgym.repos.copy import make_copy


@pytest.fixture()
def canary() -> Path:
    """A secret on the host, in a place no sandboxed run may see."""
    d = Path("/root") / f"perfgym-agent-canary-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    (d / "secret.txt").write_text("host secret\n")
    yield d
    for p in d.iterdir():
        p.unlink()
    d.rmdir()


def test_hostile_commands_are_contained(dedup_task, digest, canary, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PERFGYM_CANARY_API_KEY", "sk-canary-123")
    host_repo = dedup_task.folder / "repo"
    before = digest(host_repo)
    victim = subprocess.Popen(["sleep", "120"])
    outside = host_repo.parent / "escaped.txt"
    copy = make_copy(dedup_task.repo, folder=dedup_task.folder)
    listener = None
    try:
        listener = socket.create_server(("127.0.0.1", 0))  # a real listener on the host
        port = listener.getsockname()[1]
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # reachable from here
        commands = [
            "rm -rf ~ ; rm -rf " + str(canary) + " ; ls -a ~ ; echo rm-done",
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\" 2>&1 | tail -1; "
            "python3 -c \"import urllib.request; urllib.request.urlopen('http://pypi.org', timeout=3)\" 2>&1 | tail -1",
            f"cat {canary}/secret.txt; ls /root 2>&1 | head -3; cat /root/.bash_history 2>&1 | head -1",
            f"kill -9 {victim.pid}; echo kill-exit=$?; ps -e | wc -l",
            f"echo pwned > {outside}; echo pwned > /work/escaped.txt; echo pwned > {host_repo}/dedup/_core.py; "
            "echo ok-inside > inside.txt; env",
            "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
        ]
        script = Script(tasks={"confine-me": [act(f"step {i}", c) for i, c in enumerate(commands)]})
        with ScriptedServer(script) as srv:
            client = ModelClient(ModelConfig(model="scripted", base_url=srv.base_url))
            agent = ContinuingAgent(
                PerfgymModel(client), SandboxEnvironment(copy.path, timeout_s=30),
                on_submit=lambda: None, system_template="You are confined.",
                instance_template="Task: confine-me", step_limit=20,
            )  # fmt: skip
            result = agent.run("")
            close_model(client)
        outputs = [m["content"] for m in agent.messages if m["role"] == "user"][1:]
        assert result["exit_status"] == "Submitted" and len(outputs) == len(commands) - 1
        rm, net, read, kill, write = outputs
        print("\n---\n".join(outputs))
        assert "rm-done" in rm
        assert "refused" in net.lower() or "unreachable" in net.lower() or "errno" in net.lower()
        assert "host secret" not in read and "No such file" in read
        assert "kill-exit=1" in kill
        assert "sk-canary-123" not in write and "PERFGYM_CANARY" not in write
        assert victim.poll() is None  # the host process lives
        assert (canary / "secret.txt").read_text() == "host secret\n"
        assert not outside.exists() and not Path("/work/escaped.txt").exists()
        assert digest(host_repo) == before  # the host repository is byte-identical
        assert (copy.path / "inside.txt").read_text() == "ok-inside\n"  # the copy is writable
    finally:
        if listener is not None:
            listener.close()
        victim.kill()
        victim.wait()
        copy.remove()
        if outside.exists():
            outside.unlink()


def test_environment_template_vars_hold_no_host_variables(monkeypatch, tmp_path):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PERFGYM_CANARY_API_KEY", "sk-canary-456")
    env = SandboxEnvironment(tmp_path)
    assert "sk-canary-456" not in repr(env.get_template_vars())
    assert "PERFGYM_CANARY_API_KEY" not in env.get_template_vars()
    assert set(env.get_template_vars()) <= {"cwd", "timeout", "system"}
    assert os.environ["PERFGYM_CANARY_API_KEY"] == "sk-canary-456"
