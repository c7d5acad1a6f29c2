"""The scripted model's answers for repository tasks (`perfgym agent ... --model scripted`): per
task, mini-swe-agent text actions that look at the code, apply the task's expert patch and submit,
so the agent runs offline end to end on any repository suite that ships expert patches."""

from __future__ import annotations

from perfgym.llm.script import Script
from perfgym.repos.task import RepoTask

#: mini-swe-agent's end-of-task line.
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def action(thought: str, command: str) -> str:
    """One answer: a thought and exactly one bash block in mini-swe-agent's text format."""
    return f"{thought}\n```mswea_bash_command\n{command}\n```"


def task_answers(task: RepoTask) -> list[str]:
    """Look, patch, submit (a task without an expert patch only looks and submits)."""
    from perfgym.repos.loading import expert_patch_text

    answers = [action("Where does the profile's time go? The diff so far:", "git status --short")]
    diff = (expert_patch_text(task) or "").rstrip()
    if diff:
        answers.append(action(
            "Apply the optimisation.",
            f"cat > /tmp/perfgym-change.diff <<'PERFGYM_EOF'\n{diff}\nPERFGYM_EOF\n"
            "git apply /tmp/perfgym-change.diff && git diff --stat",
        ))  # fmt: skip
    answers.append(action("Submitting.", SUBMIT))
    return answers


def repo_script(tasks: list[RepoTask], model: str = "scripted") -> Script:
    """The script of every repository task, keyed by task id."""
    return Script(model=model, tasks={t.id: task_answers(t) for t in tasks})
