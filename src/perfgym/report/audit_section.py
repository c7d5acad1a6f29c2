"""The report's audit section: per `perfgym audit` results file, the suite summary, the probes'
shares and the per-task table (each probe's outcome, coloured by what it means, and the task's
worst severity)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
from pydantic import ValidationError

from perfgym.audit.results import AuditSummary, TaskAudit
from perfgym.audit.summary import summarise
from perfgym.errors import ConfigError

#: A probe outcome's cell class (the report's colours: red scores, yellow weak, green fine).
OUTCOME_CLASS = {"scores": "fail", "weak": "slow", "does not score": "fast", "sound": "fast",
                 "not applicable": "infra", "infra error": "infra"}  # fmt: skip
OUTCOME_MARK = {"scores": "SCORES", "weak": "WEAK", "does not score": "–", "sound": "ok",
                "not applicable": "n/a", "infra error": "ERR"}  # fmt: skip
SEVERITY_CLASS = {"high": "fail", "medium": "slow", "low": "same", "info": "same", "none": "fast"}

SECTION = """
<h2 id="audit-{{ n }}">Audit: {{ a.suite }}</h2>
<p class="meta">{{ a.path }}: {{ a.summary.tasks }} tasks; probes judged
{% if a.header.kind == "repository" %}as patches through the agent's patch evaluation{% else %}
on {{ "hidden" if a.header.hidden else "visible" }} workloads{% endif %},
{{ a.header.repeats }} measured rounds; machine {{ a.header.machine }}.</p>
<ul>{% for line in a.summary.lines %}<li>{{ line }}</li>{% endfor %}</ul>
<p class="meta">Worst severity per task:
{% for s, k in a.summary.severities.items() if k %}{{ s }} {{ k }}{{ ", " if not loop.last }}{% endfor %}.</p>
<table>
<tr><th>probe</th><th>flagged</th><th>applicable</th><th>not applicable</th><th>errors</th></tr>
{% for name, s in a.summary.shares.items() %}
<tr><td>{{ name }}</td><td class="num{{ ' fail' if s.flagged }}">{{ s.flagged }}</td>
<td class="num">{{ s.applicable }}</td><td class="num">{{ s.not_applicable }}</td>
<td class="num">{{ s.errors }}</td></tr>
{% endfor %}
</table>
<div style="overflow-x: auto"><table>
<tr><th>task</th><th>language</th>{% for p in a.probes %}<th>{{ p }}</th>{% endfor %}<th>worst</th></tr>
{% for t in a.tasks %}
<tr><td>{{ t.task_id }}</td><td>{{ t.language }}</td>
{% for c in t.cells %}<td class="{{ c.cls }}" title="{{ c.detail }}">{{ c.text }}</td>{% endfor %}
<td class="{{ t.worst_cls }}">{{ t.worst }}</td></tr>
{% endfor %}
</table></div>
"""


def is_audit_file(path: Path) -> bool:
    """A `perfgym audit` results file: its first line is the audit's header."""
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline(65536)
    except (OSError, UnicodeDecodeError):
        return False
    try:
        doc = json.loads(first)
    except ValueError:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("audit"), dict)


def read_audit(path: Path) -> dict[str, Any]:
    """The header, the tasks and their summary; ConfigError naming the file and line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read audit results {path}: {exc}") from None
    header = json.loads(lines[0])["audit"] if lines else None
    if not isinstance(header, dict):
        raise ConfigError(f"{path}: not a perfgym audit results file")
    tasks: list[TaskAudit] = []
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            tasks.append(TaskAudit.model_validate_json(line))
        except ValidationError as exc:
            raise ConfigError(
                f"{path}:{n}: not a task audit ({exc.error_count()} error(s))"
            ) from None
    if not tasks:
        raise ConfigError(f"{path}: no audited task in this file")
    probes = [str(p) for p in header.get("probes", [])]
    return {"path": str(path), "suite": str(header.get("suite", "")), "header": header,
            "probes": probes, "tasks": tasks, "summary": summarise(tasks, probes)}  # fmt: skip


def _cell(t: TaskAudit, probe: str) -> dict[str, str]:
    r = t.result(probe)
    if r is None:
        return {"cls": "", "text": "", "detail": ""}
    text = OUTCOME_MARK[r.outcome.value]
    if r.value is not None and r.kind.value == "measurability":
        text += f" {r.value:.3g}"
    return {"cls": OUTCOME_CLASS[r.outcome.value], "text": text, "detail": r.detail}


def section_html(paths: Sequence[Path]) -> str:
    """The HTML of the audit sections of these results files ('' when none)."""
    if not paths:
        return ""
    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(SECTION)
    out = []
    for n, p in enumerate(paths, 1):
        a = read_audit(p)
        summary: AuditSummary = a["summary"]
        rows = [{"task_id": t.task_id, "language": t.language,
                 "cells": [_cell(t, name) for name in a["probes"]],
                 "worst": t.worst().value, "worst_cls": SEVERITY_CLASS[t.worst().value]}
                for t in a["tasks"]]  # fmt: skip
        out.append(template.render(n=n, a={**a, "tasks": rows, "summary": summary}))
    return "".join(out)


def with_sections(html: str, paths: Sequence[Path]) -> str:
    """The report's page with the audit sections before its end."""
    extra = section_html(paths)
    return html.replace("</body>", extra + "</body>", 1) if extra else html
