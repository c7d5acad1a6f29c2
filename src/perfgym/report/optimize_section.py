"""The report's optimisation section: per-iteration curves and table (Afterburner Table 3 style)
of `perfgym optimize` summary files (`optimize.json`, kind 'perfgym-optimize').

It reads the summary as JSON (the report sits below the optimiser's layer): iterations with
pass@1, FBR, RBR, Beyond-T/M/I and median speedup, and the final best per task."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
from matplotlib.figure import Figure

from perfgym.errors import ConfigError
from perfgym.simulate.plot import figure_png

KIND = "perfgym-optimize"
#: The curves' colours (matplotlib's first defaults: the screenshot test looks for them).
#: Widths fall so that equal values (pass@1 = FBR = RBR = 100 %) still show every colour.
CURVES = (("pass@1", "pass_at_1", "C0", 7.0), ("FBR", "fbr", "C1", 4.5), ("RBR", "rbr", "C2", 2.0))


def is_optimize_file(path: Path) -> bool:
    """A `perfgym optimize` summary (a JSON object of kind 'perfgym-optimize')."""
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
    except (OSError, UnicodeDecodeError):  # not ours: the results reader names the problem
        return False
    return head.lstrip().startswith("{") and f'"{KIND}"' in head


def read_summary(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable optimize summary ({exc})") from None
    if not isinstance(doc, dict) or doc.get("kind") != KIND or not doc.get("iterations"):
        raise ConfigError(f"{path}: not a perfgym optimize summary with iterations")
    return doc


def curves_png(doc: dict[str, Any]) -> str:
    """pass@1, FBR, RBR (and Beyond-T/M/I where computed) per iteration, median speedup on the
    right axis: a base64 PNG."""
    rows = doc["iterations"]
    xs = [r["iteration"] for r in rows]
    fig = Figure(figsize=(8.5, 3.8), dpi=100, layout="constrained")
    ax = fig.subplots()
    for label, key, colour, width in CURVES:
        ax.plot(xs, [r[key] for r in rows], marker="o", ms=2 * width + 2, color=colour,
                label=label, lw=width)  # fmt: skip
    for i, letter in enumerate("TMI"):
        ys = [r["beyond"].get(letter) for r in rows]
        if any(y is not None for y in ys):
            ax.plot(xs, [y if y is not None else float("nan") for y in ys], marker="s",
                    ls="--", color=f"C{4 + i}", label=f"Beyond-{letter}")  # fmt: skip
    ax.set_xlabel("iteration")
    ax.set_ylabel("fraction of tasks")
    ax.set_ylim(-0.03, 1.05)
    ax.set_xticks(xs)
    ax.grid(alpha=0.3)
    right = ax.twinx()
    speed = [r["median_speedup"] if r["median_speedup"] is not None else float("nan") for r in rows]
    right.plot(xs, speed, marker="^", color="C3", lw=2.5, label="median speedup")
    right.set_ylabel("median speedup over the baseline (×)")
    # From 0 (and past 1×): an axis zoomed onto the values made re-measurement noise of an
    # unchanged best (6.27× → 6.40×) look like a swing.
    finite = [v for v in speed if v == v]
    right.set_ylim(0, max([1.0, *finite]) * 1.15)
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper left",
              bbox_to_anchor=(1.12, 1.0))  # fmt: skip
    ax.set_title(f"{doc.get('suite', '')}: {doc.get('strategy', '')}, objective "
                 f"{doc.get('objective', '')}, model {doc.get('model', '')}")  # fmt: skip
    return base64.b64encode(figure_png(fig)).decode("ascii")


SECTION = r"""
{% for d in docs %}
<h2 id="optimize-{{ loop.index }}">Optimisation: {{ d.doc.suite }} ({{ d.doc.strategy }}, {{ d.doc.objective }})</h2>
<p class="meta">Run {{ d.doc.run }}, model {{ d.doc.model }}, {{ d.doc.tasks | length }} task(s),
{{ d.doc.iterations | length }} iteration row(s). Each iteration scores every task's best program
so far; a proposal replaced the best only when significantly better on the objective. Rates are
fractions of tasks; speed-ups are baseline time over the program's, brackets their 95&nbsp;%
interval from the paired rounds of the same measurement.</p>
<img class="chart" alt="optimisation curves" src="data:image/png;base64,{{ d.chart }}">
<table>
<tr><th>iteration</th><th>pass@1</th><th>FBR</th><th>RBR</th><th>Beyond-T</th><th>Beyond-M</th>
<th>Beyond-I</th><th>median speedup</th><th>proposals correct</th><th>accepted</th></tr>
{% for r in d.doc.iterations %}
<tr><td class="num">{{ r.iteration }}</td><td class="num">{{ r.pass_at_1 | pct }}</td>
<td class="num">{{ r.fbr | pct }}</td><td class="num">{{ r.rbr | pct }}</td>
{% for l in "TMI" %}<td class="num">{{ r.beyond.get(l) | pct }}</td>{% endfor %}
<td class="num">{{ r.median_speedup | num }}</td><td class="num">{{ r.proposals_ok | pct }}</td>
<td class="num">{{ r.accepted }}</td></tr>
{% endfor %}
</table>
{% for n in d.notes %}<p class="note">{{ n }}</p>{% endfor %}
<table>
<tr><th>task</th><th>best</th><th>accepted at</th><th>speed-up over the baseline [95&nbsp;% CI]</th>
<th>same source as</th><th>stopped</th></tr>
{% for t in d.doc.tasks %}
<tr><td>{{ t.task_id }}</td><td>{{ t.best }}</td><td class="num">{{ t.iteration }}</td>
{% set ci = t.get("ci") %}
<td class="num">{{ t.get("speedup") | num }}{% if ci %} <span class="ci">[{{ ci[0] | num }}, {{ ci[1] | num }}]</span>{% endif %}</td>
<td>{{ t.get("same_as") | join(", ") if t.get("same_as") else "none (its own source)" }}</td><td>{{ t.get("stopped") or "–" }}</td></tr>
{% endfor %}
</table>
{% endfor %}
"""


def _pct(x: float | None) -> str:
    """A rate as a fraction, three decimals: the format of the console, the JSON and the report."""
    return "–" if x is None else f"{x:.3f}"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}×"


def _interval(c: Sequence[float | None] | None) -> str:
    if not c or len(c) < 3 or c[1] is None or c[2] is None:
        return ""
    return f" [{c[1]:.3f}, {c[2]:.3f}]"


def noise_notes(doc: dict[str, Any]) -> list[str]:
    """A note for each pair of iterations where no task's best changed and the median
    speed-up moved all the same: the same programs measured again, with each task's interval
    at both iterations (overlapping intervals: noise; disjoint ones: the machine changed)."""
    notes = []
    rows = doc["iterations"]
    for a, b in zip(rows, rows[1:], strict=False):
        ma, mb = a.get("median_speedup"), b.get("median_speedup")
        if b.get("accepted") or ma is None or mb is None or round(ma, 3) == round(mb, 3):
            continue
        parts, disjoint = [], []
        for tid, cb in (b.get("speedups") or {}).items():
            ca = (a.get("speedups") or {}).get(tid)
            if not ca:
                continue
            parts.append(f"{tid} {ca[0]:.3f}×{_interval(ca)} → {cb[0]:.3f}×{_interval(cb)}")
            if _interval(ca) and _interval(cb) and (cb[2] < ca[1] or ca[2] < cb[1]):
                disjoint.append(tid)
        verdict = (f"the intervals of {', '.join(disjoint)} do not overlap: the machine's speed "
                   "changed between the measurements" if disjoint else
                   "within the 95 % intervals: measurement noise, not a change")  # fmt: skip
        notes.append(f"Iteration {a['iteration']} → {b['iteration']}: no best changed, yet the "
                     f"median speed-up moved {ma:.3f}× → {mb:.3f}×; the same programs measured "
                     f"again ({'; '.join(parts) or 'no per-task intervals recorded'}): "
                     f"{verdict}.")  # fmt: skip
    return notes


def section_html(paths: Sequence[Path]) -> str:
    """The HTML of the optimisation sections of these summary files ('' when none)."""
    if not paths:
        return ""
    docs = [read_summary(p) for p in paths]
    env = jinja2.Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(pct=_pct, num=_num)
    return env.from_string(SECTION).render(
        docs=[{"doc": d, "chart": curves_png(d), "notes": noise_notes(d)} for d in docs]
    )


def with_sections(html: str, paths: Sequence[Path]) -> str:
    """The report's page with the optimisation sections before its end."""
    extra = section_html(paths)
    return html.replace("</body>", extra + "</body>", 1) if extra else html
