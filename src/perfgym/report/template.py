"""The report's jinja2 template and stylesheet, inline so the package ships them without data
files, and the page stays one self-contained file (no external CSS, JS, fonts or images)."""

from __future__ import annotations

#: Table headers use this exact colour; the screenshot test looks for it.
HEADER_RGB = (0x24, 0x52, 0x7A)

CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px 32px;
       color: #1b1b1b; background: #ffffff; font-size: 14px; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 20px; border-bottom: 2px solid #24527a; padding-bottom: 4px; margin-top: 36px; }
h3 { font-size: 16px; margin-top: 24px; }
.meta, .note { color: #555555; font-size: 12px; }
table { border-collapse: collapse; margin: 8px 0 12px 0; }
th { background: #24527a; color: #ffffff; padding: 5px 9px; text-align: left;
     font-weight: 600; }
td { padding: 4px 9px; border-bottom: 1px solid #d8d8d8; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ci { color: #666666; font-size: 11px; }
td.ref { background: #b7e4b9; } td.fast { background: #def2d3; } td.slow { background: #f4f0c8; }
td.fail { background: #f6d0cc; } td.infra { background: #dddddd; } td.same { background: #e4e9f2; }
img.chart { display: block; max-width: 100%; margin: 6px 0 4px 0; border: 1px solid #e4e4e4; }
nav a { margin-right: 14px; }
.error { color: #a0241b; }
"""

TEMPLATE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
<h1>{{ title }}</h1>
<p class="meta">Generated {{ created }} by perfgym {{ version }} on {{ machine }}.
Rates are fractions of tasks (0–1, as in the console and the JSON) unless stated; brackets are 95&nbsp;% bootstrap intervals
resampling tasks ({{ replicates }} replicates).</p>
<nav>{% for s in suites %}<a href="#suite-{{ loop.index }}">{{ s.suite }}</a>{% endfor %}
{% if simulations %}<a href="#simulations">reward simulations</a>{% endif %}</nav>

{% if files %}
<h2 id="inputs">Inputs</h2>
<table>
<tr><th>results file</th><th>suite</th><th>models</th><th>verdicts</th><th>machine</th><th>judge repeats</th></tr>
{% for f in files %}
<tr><td>{{ f.path }}</td><td>{{ f.suite }}</td><td>{{ f.models }}</td><td class="num">{{ f.n }}</td>
<td>{{ f.machine }}</td><td class="num">{{ f.repeats }}</td></tr>
{% endfor %}
</table>
{% endif %}

{% for s in suites %}
<h2 id="suite-{{ loop.index }}">Suite {{ s.suite }}</h2>

<h3>Leaderboard (PerfCodeBench)</h3>
<table>
<tr><th>model</th><th>tasks</th>{% for c in columns %}<th>{{ c[0] }}</th>{% endfor %}</tr>
{% for run, table in s.leaderboard.items() %}
<tr><td>{{ run }}</td><td class="num">{{ table.n_tasks }}</td>
{% for c in columns %}{% set m = table[c[1]] %}
<td class="num">{{ m | pct }}<br><span class="ci">{{ m | ci }}</span></td>
{% endfor %}</tr>
{% endfor %}
</table>
<img class="chart" alt="leaderboard chart" src="data:image/png;base64,{{ charts[s.suite].leaderboard }}">
{% for n in s.notes %}<p class="note">{{ n }}</p>{% endfor %}

<h3>Reward staircase (RLPF reward per rung)</h3>
<img class="chart" alt="reward staircase" src="data:image/png;base64,{{ charts[s.suite].staircase }}">
<table>
<tr><th>model</th>{% for r in s.staircase.rungs %}<th>{{ r }}</th>{% endfor %}<th>unscored</th></tr>
{% for run in s.staircase.counts %}
<tr><td>{{ run }}</td>{% for r in s.staircase.rungs %}
<td class="num">{{ s.staircase.counts[run][r] }}<br><span class="ci">{{ s.staircase.mean_reward[run][r] | num }}</span></td>
{% endfor %}<td class="num">{{ s.staircase.unscored[run] }}</td></tr>
{% endfor %}
</table>
<p class="note">Each cell: results on that rung, then their mean RLPF reward (Eqs. 1–7, αF = 0.16,
αR = 0.10; faster and reference-level by the significant decision, so noise earns no bonus).
Unscored: correct results lacking a usable duration.</p>

<h3>Speedup distribution (RLPF Table 13)</h3>
<img class="chart" alt="speedup distribution" src="data:image/png;base64,{{ charts[s.suite].speedups }}">
<table>
<tr><th>model</th><th>faster than baseline</th>{% for t in thresholds %}<th>≥ {{ t }}×</th>{% endfor %}<th>median</th></tr>
{% for run, d in s.speedups.items() %}
<tr><td>{{ run }}</td><td class="num">{{ d.n }}</td>
{% for c in d.counts %}<td class="num">{{ c }}</td>{% endfor %}
<td class="num">{{ d.median | num }}{% if d.median is not none %}×{% endif %}</td></tr>
{% endfor %}
</table>

<h3>Failure stages</h3>
<img class="chart" alt="failure stages" src="data:image/png;base64,{{ charts[s.suite].stages }}">
<table>
<tr><th>model</th><th>results</th>{% for st in stage_names %}<th>{{ st }}</th>{% endfor %}<th>NR causes</th><th>infra (excluded)</th></tr>
{% for run, f in s.stages.items() %}
<tr><td>{{ run }}</td><td class="num">{{ f.n }}</td>
{% for st in stage_names %}<td class="num">{{ f.by_stage.get(st, 0) }}</td>{% endfor %}
<td>{% for k, v in f.nr_causes.items() %}{{ k }}: {{ v }}{% if not loop.last %}, {% endif %}{% endfor %}</td>
<td class="num">{{ f.infra_errors }}</td></tr>
{% endfor %}
</table>

{% if s.transitions %}
<h3>Transitions between runs (RLPF Table 12)</h3>
<table>
<tr><th>from → to</th><th>tasks</th><th>fail → correct</th><th>not fast → FBR</th><th>not ref → RBR</th>
<th>lost correct</th><th>lost FBR</th><th>lost RBR</th></tr>
{% for b in s.transitions %}
{% if b.result %}{% set t = b.result %}
<tr><td>{{ b.before }} → {{ b.after }}</td><td class="num">{{ t.n_tasks }}</td>
<td class="num">{{ t.fail_to_correct }}</td><td class="num">{{ t.notfast_to_fbr }}</td>
<td class="num">{{ t.notref_to_rbr }}</td><td class="num">{{ t.lost_correct }}</td>
<td class="num">{{ t.lost_fbr }}</td><td class="num">{{ t.lost_rbr }}</td></tr>
{% else %}
<tr><td>{{ b.before }} → {{ b.after }}</td><td colspan="7" class="error">{{ b.error }}</td></tr>
{% endif %}
{% endfor %}
</table>
{% endif %}

<h3>Per-task results</h3>
<table>
<tr><th>task</th>{% for run in s.leaderboard %}<th>{{ run }}</th>{% endfor %}</tr>
{% for tid in s.tasks %}
<tr><td>{{ tid }}</td>{% for run in s.leaderboard %}{% set c = s.cells[tid].get(run) %}
{% if c %}<td class="{{ c.css }}" title="{{ c.title }}">{{ c.text }}</td>{% else %}<td>–</td>{% endif %}
{% endfor %}</tr>
{% endfor %}
</table>
<p class="note">Cells: speedup Tb/Tc of a correct result; green = reaches the reference,
light green = faster than the baseline, blue-grey = level with the baseline (within noise, or
its own source), yellow = slower than the baseline, red = failed (stage and cause), grey =
sandbox failure. Faster, level and slower are the comparison's significant decisions (paired
by round, with the equivalence margin), not the estimates' order; the leaderboard's "strict"
columns count the estimates' order, as the paper does.</p>
{% endfor %}

{% if simulations %}
<h2 id="simulations">Reward simulations (offline, DMC-Optim §E)</h2>
{% for sim in simulations %}
<h3>{{ sim.path }} — suite {{ sim.suite }}, ranked by {{ sim.rank_by or "spearman" }}</h3>
<img class="chart" alt="simulation curves" src="data:image/png;base64,{{ sim.chart }}">
<table>
<tr><th>#</th><th>reward</th><th>Spearman ρ</th><th>ρ smoothed</th><th>AUC</th><th>steepness</th>
<th>variance</th><th>|diag dev|</th><th>diag bias</th><th>monotone</th><th>points</th></tr>
{% for s in sim.simulations %}{% set d = s.diagnostics %}
<tr><td class="num">{{ loop.index }}</td><td>{{ s.title }}</td>
<td class="num">{{ d.spearman | num }}{% if d.spearman_ci %}<br><span class="ci">[{{ d.spearman_ci[0] | num }}, {{ d.spearman_ci[1] | num }}]</span>{% endif %}</td>
<td class="num">{{ d.spearman_smoothed | num }}</td><td class="num">{{ d.auc | num }}</td>
<td class="num">{{ d.steepness | num }}</td><td class="num">{{ d.variance | num(4) }}</td>
<td class="num">{{ d.diagonal_deviation | num }}</td><td class="num">{{ d.diagonal_bias | num }}</td>
<td class="num">{{ d.monotonicity | num }}</td><td class="num">{{ d.n_points }}</td></tr>
{% endfor %}
</table>
{% endfor %}
{% endif %}
{{ training | safe }}
{{ agent_html }}
</body>
</html>
"""
