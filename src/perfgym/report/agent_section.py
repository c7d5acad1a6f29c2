"""The report's agent section: per task, the per-iteration speedup curve (PerfAgent's per-turn
figure), each submission's outcome and the profiles as speedscope files, from `perfgym agent`'s
results JSONL (plain records: this layer does not import the agent)."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from matplotlib.figure import Figure

from perfgym.errors import ConfigError
from perfgym.simulate.plot import figure_png

#: The curve's line colour (matplotlib's C0); the screenshot test looks for it.
CURVE_RGB = (0x1F, 0x77, 0xB4)


@dataclass
class AgentTask:
    """One task's run as the report shows it."""

    task_id: str
    model: str
    attempts: list[dict[str, Any]]
    curve: list[float]
    best: int | None
    best_speedup: float | None
    best_ci: list[float] | None
    full_suite_passed: bool | None
    expert_speedup: float | None
    speedscope: dict[str, str] = field(default_factory=dict)
    """Speedscope file name → data URI (the file is embedded, the page stays self-contained)."""


def read_agent_results(path: Path) -> list[AgentTask]:
    """The tasks of one results file (`kind` "attempt" and "task" lines; others are skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read agent results {path}: {exc.strerror or exc}") from exc
    attempts: dict[str, list[dict[str, Any]]] = {}
    tasks: list[AgentTask] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{n}: not a JSON line ({exc})") from exc
        kind = rec.get("kind") if isinstance(rec, dict) else None
        if kind == "attempt":
            attempts.setdefault(str(rec.get("task_id")), []).append(rec)
        elif kind == "task":
            tid = str(rec.get("task_id"))
            files = {}
            for a in attempts.get(tid, []) + [rec.get("prep") or {}]:
                name = a.get("speedscope") or ""
                found = _speedscope_file(path, name) if name else None
                if found is not None:
                    data = base64.b64encode(found.read_bytes()).decode("ascii")
                    files[name] = f"data:application/json;base64,{data}"
            tasks.append(AgentTask(task_id=tid, model=str(rec.get("model", "")),
                                   attempts=attempts.get(tid, []), curve=list(rec.get("curve") or []),
                                   best=rec.get("best"), best_speedup=rec.get("best_speedup"),
                                   best_ci=rec.get("best_ci"),
                                   full_suite_passed=rec.get("full_suite_passed"),
                                   expert_speedup=rec.get("expert_speedup"), speedscope=files))  # fmt: skip
    if not tasks:
        raise ConfigError(f"{path}: no finished agent task in this file")
    return tasks


def _speedscope_file(results: Path, name: str) -> Path | None:
    """A profile named in a results file: beside it, or in its `<stem>.files/` folder (where
    `perfgym agent` keeps the copies and profiles of a run)."""
    if "/" in name or name.startswith("."):
        return None
    for folder in (results.parent, results.parent / f"{results.stem}.files"):
        if (folder / name).is_file():
            return folder / name
    return None


def harmonic_mean_curve(tasks: Sequence[AgentTask], turns: int) -> list[float]:
    """Per turn, the harmonic mean over tasks of the best speedup so far (a task's curve holds
    its last value after it stopped), as PerfAgent's Fig. 4."""
    out = []
    for t in range(turns):
        vals = [task.curve[min(t, len(task.curve) - 1)] if task.curve else 1.0 for task in tasks]
        out.append(len(vals) / sum(1.0 / v for v in vals))
    return out


def curve_chart(tasks: Sequence[AgentTask]) -> str:
    """Best speedup kept after each submission, per task and their harmonic mean (base64 PNG)."""
    turns = max((len(t.curve) for t in tasks), default=0) or 1
    fig = Figure(figsize=(7.5, 3.6), dpi=100, layout="constrained")
    ax = fig.subplots()
    # Submission 0 is the original (1.0×): a run of one submission draws a line, not a dot.
    x = list(range(0, turns + 1))
    ax.plot(x, [1.0, *harmonic_mean_curve(tasks, turns)], color="C0", linewidth=3, marker="o",
            label="harmonic mean over tasks")  # fmt: skip
    for i, t in enumerate(tasks):
        if t.curve:
            ax.plot(range(0, len(t.curve) + 1), [1.0, *t.curve], color=f"C{(i % 8) + 2}",
                    linewidth=1.2, linestyle="--", marker=".", label=t.task_id)  # fmt: skip
    ax.axhline(1.0, color="#999999", linewidth=0.8)
    ax.set_xlabel("submission (0: the original)")
    ax.set_ylabel("best speedup kept (×)")
    ax.set_xticks(x)
    top = max([1.2] + [v for t in tasks for v in t.curve if math.isfinite(v)])
    ax.set_ylim(0, top * 1.15)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return base64.b64encode(figure_png(fig)).decode("ascii")


_TEMPLATE = """
<h2 id="agent">Repository agent (PerfAgent loop)</h2>
<img class="chart" alt="per-iteration speedup" src="data:image/png;base64,{{ chart }}">
<p class="note">After each submission: the speedup of the best patch kept so far (correct,
significantly faster, no hack finding; 1.0 until one is kept). Speedups are first-call times
of fresh processes, original over patched, over the visible and hidden workloads; brackets are
the 95&nbsp;% intervals of the timing comparison (not the task bootstrap of the tables above).</p>
<table>
<tr><th>task</th><th>model</th><th>best patch</th><th>speed-up [95&nbsp;% CI]</th><th>expert</th>
<th>full suite</th><th>submissions</th></tr>
{% for t in tasks %}
<tr><td>{{ t.task_id }}</td><td>{{ t.model }}</td><td class="num">{% if t.best %}#{{ t.best }}{% else %}none kept{% endif %}</td>
<td class="num">{% if t.best %}{{ t.best_speedup | num(2) }}×{% if t.best_ci %} <span class="ci">[{{ t.best_ci[0] | num(2) }}, {{ t.best_ci[1] | num(2) }}]</span>{% endif %}{% else %}1.00× (the original){% endif %}</td>
<td class="num">{% if t.expert_speedup %}{{ t.expert_speedup | num(2) }}×{% else %}–{% endif %}</td>
<td>{% if t.best %}{{ "passed" if t.full_suite_passed else "failed" }}{% else %}–{% endif %}</td>
<td class="num">{{ t.attempts | length }}</td></tr>
{% endfor %}
</table>
{% for t in tasks %}
<h3>{{ t.task_id }} — {{ t.model }}: best
{% if t.best %}#{{ t.best }} {{ t.best_speedup | num(2) }}×{% if t.best_ci %} [{{ t.best_ci[0] | num(2) }}, {{ t.best_ci[1] | num(2) }}]{% endif %}
, full suite {{ "passed" if t.full_suite_passed else "failed" }}{% else %}none kept{% endif %}
{% if t.expert_speedup %} (expert {{ t.expert_speedup | num(2) }}×){% endif %}</h3>
<table>
<tr><th>#</th><th>stage</th><th>speedup [95% CI]</th><th>hidden</th><th>tests</th><th>hack findings</th><th>profile</th></tr>
{% for a in t.attempts %}
<tr><td class="num">{{ a.index or "–" }}</td><td>{{ a.stage }}</td>
<td class="num">{{ a.speedup | num(2) }}{% if a.ci %} <span class="ci">[{{ a.ci[0] | num(2) }}, {{ a.ci[1] | num(2) }}]</span>{% endif %}{% if a.significant %} ✔{% endif %}</td>
<td class="num">{{ a.hidden_speedup | num(2) }}</td>
<td>{{ a.tests_mode }} {{ a.tests_ran }}{% if a.tests_failed %} <span class="error">{{ a.tests_failed | length }} failed</span>{% endif %}</td>
<td>{% for h in a.hacks %}<span class="error">{{ h.kind }}</span>: {{ h.evidence[:160] }}{% if not loop.last %}<br>{% endif %}{% endfor %}</td>
<td>{% if a.speedscope and a.speedscope in t.speedscope %}<a download="{{ a.speedscope }}" href="{{ t.speedscope[a.speedscope] }}">speedscope</a>{% endif %}</td></tr>
{% endfor %}
</table>
{% for name, uri in t.speedscope.items() if "original" in name %}
<p class="note">Profile of the original: <a download="{{ name }}" href="{{ uri }}">{{ name }}</a>
(open it at speedscope.app).</p>
{% endfor %}
{% endfor %}
"""


def render_agent_section(paths: Sequence[Path], env: jinja2.Environment) -> Markup:
    """The section's HTML (empty without files), rendered with the report's environment."""
    if not paths:
        return Markup("")
    tasks = [t for p in paths for t in read_agent_results(Path(p))]
    html = env.from_string(_TEMPLATE).render(tasks=tasks, chart=curve_chart(tasks))
    return Markup(html)
