"""mini-swe-agent's environment protocol on perfgym's sandbox: every command on a private copy.

mini-swe-agent's LocalEnvironment runs on the host with `os.environ` (keys included) and merges
`os.environ` into its template variables; this one runs each command with
`perfgym.repos.shell.run_shell` (network off, limits on, a clean environment, only the copy
writable) and its template variables name nothing of the host."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minisweagent.exceptions import Submitted

from perfgym.repos.shell import REPO_DIR, CommandStatus, run_shell
from perfgym.sandbox import Sandbox

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


@dataclass
class MiniSweEnvConfig:
    """What mini-swe-agent reads of `env.config`."""

    cwd: str = REPO_DIR
    timeout: float = 60.0
    memory_mb: int = 2048


class SandboxEnvironment:
    """Runs the agent's bash commands in the sandbox on `copy` (seen at REPO_DIR)."""

    def __init__(self, copy: Path, *, sandbox: Sandbox | None = None, timeout_s: float = 60.0,
                 memory_mb: int = 2048) -> None:  # fmt: skip
        self.copy = copy
        self.sandbox = sandbox
        self.config = MiniSweEnvConfig(timeout=timeout_s, memory_mb=memory_mb)
        self.commands = 0

    def execute(self, action: dict[str, Any], cwd: str = "", *, timeout: float | None = None) -> dict[str, Any]:  # fmt: skip
        command = str(action.get("command", ""))
        if cwd:
            command = f"cd {shlex.quote(cwd)} && {command}"
        self.commands += 1
        res = run_shell(self.copy, command, timeout_s=timeout or self.config.timeout,
                        memory_mb=self.config.memory_mb, sandbox=self.sandbox)  # fmt: skip
        info = ""
        if res.timed_out:
            info = f"the command was stopped after {timeout or self.config.timeout:g} s"
        elif res.status not in (CommandStatus.OK, CommandStatus.RUNTIME_ERROR) and res.reason:
            info = f"the command was stopped: {res.reason}"
        output = {"output": res.output, "returncode": res.returncode, "exception_info": info}
        self._check_finished(output)
        return output

    @staticmethod
    def _check_finished(output: dict[str, Any]) -> None:
        """mini-swe-agent's submit rule: the output's first line is the marker and exit code 0."""
        lines = str(output.get("output", "")).lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT_MARKER and output.get("returncode") == 0:
            rest = "".join(lines[1:])
            raise Submitted({"role": "exit", "content": rest,
                             "extra": {"exit_status": "Submitted", "submission": rest}})  # fmt: skip

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {"cwd": REPO_DIR, "timeout": self.config.timeout, "system": "Linux", **kwargs}

    def serialize(self) -> dict[str, Any]:
        return {
            "info": {
                "config": {
                    "environment": {"cwd": REPO_DIR, "timeout": self.config.timeout},
                    "environment_type": f"{type(self).__module__}.{type(self).__name__}",
                }
            }
        }
