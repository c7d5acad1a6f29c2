"""RLPF's task prompt (paper 000, Listings 1–2): the system message and the user message that
show the baseline source and ask for a full, faster replacement as JSON."""

from __future__ import annotations

from perfgym.tasks.task import Language, Task

__all__ = ["RLPF_SYSTEM", "rlpf_messages", "rlpf_user_prompt", "source_name"]

RLPF_SYSTEM = (
    "You are a performance engineer. Your job is to rewrite the given source file so that it "
    "runs as fast as possible while preserving correctness. Do not change the function "
    "signature or entrypoint used by the harness. Output JSON only, with keys 'summary' and "
    "'solution_source'. The solution_source must be a complete, compilable replacement file."
)

_EXTENSION = {
    Language.PYTHON: "py",
    Language.C: "c",
    Language.CPP: "cpp",
    Language.JAVA: "java",
    Language.GO: "go",
    Language.JAVASCRIPT: "js",
    Language.RUST: "rs",
    Language.CUDA: "cu",
}


def source_name(task: Task) -> str:
    """The file the answer replaces: the harness's solution file, else solution.<ext>."""
    if task.harness is not None:
        return task.harness.solution_filename
    if task.language is Language.JAVA:
        return "Main.java"
    return f"solution.{_EXTENSION[task.language]}"


def rlpf_user_prompt(task: Task) -> str:
    """Listing 2, filled in from the task (absent fields are left out, not shown empty)."""
    name = source_name(task)
    lines = [
        "Optimize the following implementation for performance while preserving correctness.",
        f"Return a full, complete, compilable replacement for {name}.",
        "Do not change the externally required function signature or entrypoint.",
        f"Task ID: {task.id}",
    ]
    fields = [
        ("Title", task.title),
        ("Goal", task.goal.strip()),
        ("Metric", task.metric),
        ("Correctness rule", task.correctness_rule),
        ("Allowed external includes", ", ".join(task.allowed_external_includes)),
        ("Interface / task contract", task.interface.strip()),
    ]
    lines += [f"{label}: {value}" for label, value in fields if value]
    lines.append(f"Current baseline {name}:\n{task.baseline.source}")
    return "\n".join(lines)


def rlpf_messages(task: Task) -> list[dict[str, str]]:
    """The chat prompt a policy is sampled with (system + user), as TRL's `prompt` column."""
    return [
        {"role": "system", "content": RLPF_SYSTEM},
        {"role": "user", "content": rlpf_user_prompt(task)},
    ]
