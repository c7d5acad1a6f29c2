"""Scripted model answers for the agent tests: bash actions in mini-swe-agent's text format."""

from __future__ import annotations

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def act(thought: str, command: str) -> str:
    """One answer: a thought and exactly one ```mswea_bash_command block."""
    return f"{thought}\n```mswea_bash_command\n{command}\n```"


def write_file(path: str, text: str) -> str:
    """A `cat > file <<'EOF'` edit."""
    return f"cat > {path} <<'PERFGYM_EOF'\n{text.rstrip()}\nPERFGYM_EOF"


def apply_diff(diff: str) -> str:
    """`git apply` of a diff written with a heredoc."""
    return f"cat > /tmp/change.diff <<'PERFGYM_EOF'\n{diff.rstrip()}\nPERFGYM_EOF\ngit apply /tmp/change.diff && git diff --stat"


def submit() -> str:
    return act("Submitting.", SUBMIT)
