"""`write_report`: results files (and simulation files) -> one self-contained HTML page."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from perfgym import __version__
from perfgym.errors import ConfigError
from perfgym.machine import fingerprint
from perfgym.metrics import RLPF_THRESHOLDS, BootstrapConfig, PerfCodeBenchConfig
from perfgym.report import audit_section, charts, optimize_section
from perfgym.report.agent_section import render_agent_section
from perfgym.report.runs import ResultsFile, read_file, split_runs
from perfgym.report.sections import POLICY, SuiteSection, suite_section
from perfgym.report.template import CSS, TEMPLATE
from perfgym.report.training_section import training_html
from perfgym.simulate.result import SimulationFile, read_simulations

#: (header, attribute of PerfCodeBenchTable) in RLPF Table 1's order, then Table 8's; each
#: significant decision with the paper's strict rule beside it.
COLUMNS = [("CRR", "crr"), ("FBR", "fbr"), ("FBR strict", "fbr_strict"), ("RBR", "rbr"),
           ("RBR strict", "rbr_strict"), ("Slow/CRR", "slow_over_crr"),
           ("Gap/FBR", "gap_over_fbr"), ("CGRE", "cgre"), ("CGRE strict", "cgre_strict"),
           ("CGRE≥0.8", "cgre_at_least"), ("Slow", "slow"), ("Gap", "gap")]  # fmt: skip

Progress = Callable[[str, int, int], None]


@dataclass
class SimulationBlock:
    path: str
    suite: str
    rank_by: str
    simulations: list[Any]
    chart: str


def _pct(m: Any) -> str:
    return "–" if m is None or m.value is None else f"{100 * m.value:.1f}"


def _ci(m: Any) -> str:
    if m is None or m.ci_low is None or m.ci_high is None:
        return ""
    return f"[{100 * m.ci_low:.1f}, {100 * m.ci_high:.1f}]"


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)  # fmt: skip
    env.filters.update(pct=_pct, ci=_ci, num=_num)
    return env


def _file_row(f: ResultsFile) -> dict[str, Any]:
    machine = f.header.get("machine") or {}
    judge = f.header.get("judge") or {}
    return {
        "path": str(f.path),
        "suite": f.suite,
        "models": ", ".join(sorted({v.model or "(unnamed)" for v in f.verdicts})),
        "n": len(f.verdicts),
        "machine": machine.get("fingerprint", "?") if isinstance(machine, dict) else str(machine),
        "repeats": judge.get("repeats", "?") if isinstance(judge, dict) else "?",
    }


def render_report(
    results_paths: Sequence[Path],
    simulations: Sequence[Path] | None = None,
    *,
    title: str = "perfgym report",
    bootstrap: BootstrapConfig | None = None,
    progress: Progress | None = None,
    training: Sequence[Any] = (),
    optimize: Sequence[Path] | None = None,
    agent_results: Sequence[Path] = (),
    audits: Sequence[Path] = (),
) -> str:
    """The report's HTML text (see `write_report`)."""
    paths = [Path(p) for p in results_paths]
    sim_paths = [Path(p) for p in simulations or []]
    if not (paths or sim_paths or training or optimize or agent_results or audits):
        raise ConfigError("nothing to report: give results files and/or simulation files")
    steps = len(paths) + len(sim_paths) + 2
    done = 0

    def tick(what: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(what, done, steps)

    files = []
    for p in paths:
        files.append(read_file(p))
        tick(f"read {p.name}")
    runs = split_runs(files)
    config = PerfCodeBenchConfig(policy=POLICY, bootstrap=bootstrap or BootstrapConfig())
    sections: list[SuiteSection] = []
    for suite in dict.fromkeys(r.suite for r in runs):
        sections.append(suite_section(suite, [r for r in runs if r.suite == suite], config))
    tick("metrics")
    figures = {
        s.suite: {
            "leaderboard": charts.leaderboard_chart(s.leaderboard),
            "staircase": charts.staircase_chart(s.staircase),
            "speedups": charts.speedup_chart(s.speedup_values),
            "stages": charts.stages_chart(s.stages),
        }
        for s in sections
    }
    tick("charts")
    blocks = []
    for p in sim_paths:
        doc: SimulationFile = read_simulations(p)
        if not doc.simulations:
            raise ConfigError(f"{p}: the simulation file holds no simulations")
        suite = doc.simulations[0].suite
        blocks.append(SimulationBlock(path=str(p), suite=suite, rank_by=doc.rank_by,
                                      simulations=doc.simulations,
                                      chart=charts.simulation_chart(doc.simulations, f"{suite}: {p.name}")))  # fmt: skip
        tick(f"simulation {p.name}")
    page = (
        _environment()
        .from_string(TEMPLATE)
        .render(
            title=title,
            css=CSS,
            created=time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            version=__version__,
            machine=fingerprint(),
            replicates=config.bootstrap.replicates,
            files=[_file_row(f) for f in files],
            suites=sections,
            charts=figures,
            columns=COLUMNS,
            thresholds=[f"{t:g}" for t in RLPF_THRESHOLDS],
            stage_names=["NX", "NC", "NR", "WO", "OK"],
            simulations=blocks,
            training=training_html(training),
            agent_html=render_agent_section(agent_results, _environment()),
        )
    )
    page = optimize_section.with_sections(page, [Path(p) for p in optimize or []])
    return audit_section.with_sections(page, [Path(p) for p in audits])


def write_report(
    results_paths: Sequence[Path],
    out: Path,
    simulations: Sequence[Path] | None = None,
    *,
    title: str = "perfgym report",
    bootstrap: BootstrapConfig | None = None,
    progress: Progress | None = None,
    training: Sequence[Any] = (),
    optimize: Sequence[Path] | None = None,
    agent_results: Sequence[Path] = (),
    audits: Sequence[Path] = (),
) -> Path:
    """Write ONE self-contained HTML report of results files (and simulation JSON files).

    Sections per suite: leaderboard with bootstrap CIs (PerfCodeBench table per model),
    reward staircase, speedup distribution, failure stages, transitions between consecutive
    results files, per-task table; then any simulations. Charts are embedded base64 PNGs; no
    external CSS, JS or fonts. Bad input (an empty or broken file, a file mixing suites, NaN
    durations) raises `ConfigError` naming the file. `progress(step, done, total)` is called
    as the work advances.
    """
    html = render_report(results_paths, simulations, title=title, bootstrap=bootstrap,
                         progress=progress, training=training, optimize=optimize,
                         agent_results=agent_results, audits=audits)  # fmt: skip
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    return out
