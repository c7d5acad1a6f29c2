"""Every command's console table fits 100 columns by its own design (rendered on a 1,000-column
console, so rich's shrinking cannot hide a wide table), with the long names and many models,
probes and columns a real run has; the rest is in the JSON and the HTML report. The commands
that print lines, not tables (`generate`, `agent`), wrap them at the console's width (their
runs are checked at COLUMNS=100 in test_pass_at_k.py and test_generate_width below)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from small_tasks import SUM, sum_task

from perfgym.audit.results import (
    AuditSummary,
    Outcome,
    ProbeKind,
    ProbeResult,
    Severity,
    SuiteAudit,
    TaskAudit,
)
from perfgym.cli.audit_cmd import task_table
from perfgym.cli.eval_output import summary_table
from perfgym.cli.optimize_cmd import rows_table
from perfgym.cli.validate_cmd import validation_table
from perfgym.judge.validate import SolutionCheck, TaskValidation
from perfgym.judge.verdict import Stage
from perfgym.llm.script import Script
from perfgym.llm.scripted import ScriptedServer
from perfgym.metrics.summary import ModelSummary
from perfgym.optimize.curves import IterationRow

WIDTH = 100
LONG_TASK = "pcb-cpp-0042-sparse-matrix-vector-multiply"


def _widest(table: object) -> int:
    out = io.StringIO()
    Console(file=out, width=1000, color_system=None).print(table)
    return max(len(line.rstrip()) for line in out.getvalue().splitlines())


def test_eval_summary_fits_for_three_models_with_pass_at_k() -> None:
    cell = (0.123, 0.05, 0.25)
    rows = [ModelSummary(model=m, n=164, samples=164 * 10, stages={"OK": 900}, infra_errors=0,
                         metrics={k: cell for k in ("pass@1", "pass@10", "fbr", "rbr", "cgre")})
            for m in ("Qwen/Qwen2.5-Coder-7B", "baseline", "reference")]  # fmt: skip
    assert _widest(summary_table(rows, "perfgym eval humanevalplus --model x")) <= WIDTH


def test_optimize_table_fits_with_beyond_columns() -> None:
    rows = [IterationRow(iteration=i, tasks=40, pass_at_1=0.975, fbr=0.5, rbr=0.125,
                         median_speedup=12.345, beyond={"T": 0.61, "M": 0.5, "I": 0.4},
                         proposals_ok=0.75, accepted=12) for i in range(9)]  # fmt: skip
    assert _widest(rows_table(rows, "perfgym-core: evolve, objective time, 40 task(s)")) <= WIDTH


def test_validate_table_fits_with_a_failure_and_a_long_task_id() -> None:
    ok = [SolutionCheck(label="baseline", stage=Stage.OK, estimate_s=1.2345),
          SolutionCheck(label="reference", stage=Stage.OK, estimate_s=0.0123)]  # fmt: skip
    bad = [SolutionCheck(label="baseline", stage=Stage.NR, detail="TIMEOUT"),
           SolutionCheck(label="reference", stage=Stage.OK, estimate_s=0.5)]  # fmt: skip
    rows = [TaskValidation(task_id=LONG_TASK, language="cpp", family="linear-algebra",
                           split="test", solutions=ok, speedup=100.4),
            TaskValidation(task_id="py-hash-join", language="python", family="joins",
                           split="train", solutions=bad,
                           problems=["baseline: TIMEOUT after 10.0 s on workload w3 " * 3])]  # fmt: skip
    table = validation_table(rows, "perfgym validate perfgym-core")
    assert _widest(table) <= WIDTH
    out = io.StringIO()
    Console(file=out, width=1000, color_system=None).print(table)
    assert "baseline:TIMEOUT" in out.getvalue()  # a failure still names its solution


def test_audit_table_fits_fifteen_probes() -> None:
    from perfgym.audit import list_probes

    probes = list_probes()
    results = [ProbeResult(probe=p, kind=ProbeKind.GAMEABILITY, outcome=Outcome.SCORES,
                           severity=Severity.HIGH) for p in probes[:10]]  # fmt: skip
    results += [ProbeResult(probe=p, kind=ProbeKind.MEASURABILITY, outcome=Outcome.WEAK,
                            severity=Severity.LOW, value=1.234) for p in probes[10:]]  # fmt: skip
    task = TaskAudit(task_id=LONG_TASK, language="cpp", kind="stdio", results=results)
    audit = SuiteAudit(suite="perfcodebench", probes=probes, tasks=[task],
                       summary=AuditSummary(tasks=1))  # fmt: skip
    table = task_table(audit)
    assert _widest(table) <= WIDTH
    out = io.StringIO()
    Console(file=out, width=1000, color_system=None).print(table)
    assert all(p in out.getvalue() for p in probes)  # every finding is still named


def test_generate_width(tmp_path: Path) -> None:
    """`generate`'s closing line wraps at COLUMNS=100 instead of running past it."""
    suite = tmp_path / "tasks.jsonl"
    suite.write_text(sum_task("sum-width-a").model_dump_json() + "\n")
    out = tmp_path / ("a-rather-long-folder-name-for-the-candidates-" * 2) / "c.jsonl"
    with ScriptedServer(Script().add("*", f"```python\n{SUM}\n```")) as srv:
        config = tmp_path / "m.toml"
        config.write_text(f'model = "scripted"\nbase_url = "{srv.base_url}"\n')
        env = {**os.environ, "COLUMNS": "100",
               "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}  # fmt: skip
        p = subprocess.run([sys.executable, "-m", "perfgym", "generate", str(suite), "--model",
                            "scripted", "--model-config", str(config), "-o", str(out),
                            "--no-store"], capture_output=True, text=True, env=env,
                           timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "candidates:" in p.stdout and max(len(ln) for ln in p.stdout.splitlines()) <= WIDTH


def test_validate_language_table_fits_with_every_language() -> None:
    from perfgym.cli.validate_summary import language_table
    from perfgym.judge.validation_summary import summarise

    rows = [TaskValidation(task_id=f"t{i}", language=lang, family="f", split="test",
                           solutions=[SolutionCheck(label="baseline", stage=Stage.OK)])
            for i, lang in enumerate(("cpp", "java", "c", "go", "python", "cuda") * 200)]  # fmt: skip
    assert _widest(language_table(summarise(rows, ran=rows, wall_s=1.0, cores=2))) <= WIDTH
