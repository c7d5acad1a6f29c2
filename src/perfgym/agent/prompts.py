"""The agent's system and instance prompts and the feedback after each submitted patch."""

from __future__ import annotations

SYSTEM_TEMPLATE = """\
You are a performance engineer working in a Python repository at {{cwd}} (a private copy; \
network is off). Make the workload faster without changing what the library computes.
Each reply: a short thought, then exactly ONE bash command in a block:
```mswea_bash_command
<command>
```
Edit files with sed, python or `cat > file <<'EOF'`. When your change is ready, reply with
```mswea_bash_command
echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT
```
perfgym then builds a fresh copy with your diff, runs the affected tests, times the workload \
against the original in fresh processes and profiles it again; you get the result and may \
continue (at most {{iterations}} submissions)."""

INSTANCE_TEMPLATE = """\
Task: {{task_id}}
{{description}}

Rules: keep every test passing and every result identical; do not edit tests, workloads or \
benchmark files; do not cache results between calls or special-case the workload's inputs \
(only the first call in a fresh process is timed, and other inputs are checked too).

The workload (setup() is untimed, experiment(state) is timed):
{{workloads}}

Profile of the original repository:
{{perf_report}}"""

SPEED_GUIDANCE = (
    (1.0, "This is slower than the original: restore your best version or try another idea."),
    (1.2, "Little or no improvement yet: look at the hotspots again."),
    (float("inf"), "Saved as a candidate. Continue if you see more to gain, or submit again."),
)


def speed_guidance(speedup: float) -> str:
    return next(text for bound, text in SPEED_GUIDANCE if speedup < bound)


def measured_feedback(attempt: int, speedup: float, ci: tuple[float, float] | None,
                      significant: bool, per_workload: str, profile: str, left: int) -> str:  # fmt: skip
    ci_text = f" (95% CI {ci[0]:.2f}-{ci[1]:.2f})" if ci else ""
    verdict = ("counted: significantly faster where it is decided (workloads you do not see)"
               if significant else
               "not counted: not significantly faster where it is decided (workloads you do not see)")  # fmt: skip
    return (
        f"Submission {attempt}: tests passed. Speedup {speedup:.2f}x{ci_text}, {verdict}.\n"
        f"{per_workload}\n{speed_guidance(speedup)}\n\nProfile of your version:\n{profile}\n"
        f"{left} submission(s) left."
    )


def failure_feedback(attempt: int, stage: str, detail: str, left: int) -> str:
    return (
        f"Submission {attempt} failed at {stage}:\n{detail[-3000:]}\n"
        f"Fix it and submit again ({left} submission(s) left)."
    )


DUPLICATE_FEEDBACK = (
    "Your diff is byte-identical to an earlier submission, so it was not evaluated again and "
    "did not count. Change something before submitting; submitting the same diff again ends "
    "the run."
)
EMPTY_FEEDBACK = "Your submission changes nothing in the repository. Edit files first."
