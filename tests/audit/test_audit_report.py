"""The report's audit section: `perfgym report` takes an audit results file, shows the summary,
the probes' shares and the per-task table (a probe that scores painted red, a weak measurement
yellow) in headless Chromium; a broken audit file is one line."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity, TaskAudit

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FAIL_RGB = (0xF6, 0xD0, 0xCC)  # td.fail
WEAK_RGB = (0xF4, 0xF0, 0xC8)  # td.slow


def _screenshot(html: Path, tmp: Path) -> np.ndarray:
    png = tmp / "shot.png"
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update",
                    f"--user-data-dir={tmp / 'profile'}", f"--screenshot={png}",
                    "--window-size=1200,900", html.resolve().as_uri()],
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    return np.rint(image.imread(png)[:, :, :3] * 255).astype(int)


def _near(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 2) -> np.ndarray:
    return (np.abs(img - np.array(rgb)) <= tol).all(axis=2)


def _r(probe: str, kind: ProbeKind, outcome: Outcome, sev: Severity, value=None) -> ProbeResult:
    return ProbeResult(probe=probe, kind=kind, outcome=outcome, severity=sev, value=value,
                       detail=f"{probe}: {outcome.value} <b>not markup</b>")  # fmt: skip


def _audit_file(path: Path) -> Path:
    g, m = ProbeKind.GAMEABILITY, ProbeKind.MEASURABILITY
    header = {"suite": "mini", "probes": ["lookup-table", "headroom"], "repeats": 5,
              "mde_repeats": 3, "hidden": True, "machine": "test", "time_limit_s": None}  # fmt: skip
    tasks = [
        TaskAudit(task_id="fixed-inputs", language="python", kind="stdio", results=[
            _r("lookup-table", g, Outcome.SCORES, Severity.HIGH),
            _r("headroom", m, Outcome.WEAK, Severity.MEDIUM, 1.05)]),
        TaskAudit(task_id="hidden-inputs", language="c", kind="stdio", results=[
            _r("lookup-table", g, Outcome.DOES_NOT_SCORE, Severity.NONE),
            _r("headroom", m, Outcome.SOUND, Severity.NONE, 4.2)]),
    ]  # fmt: skip
    path.write_text(json.dumps({"audit": header}) + "\n"
                    + "".join(t.model_dump_json() + "\n" for t in tasks))  # fmt: skip
    return path


def test_perfgym_report_renders_an_audit_section(tmp_path):
    from cli_helpers import perfgym

    html = tmp_path / "r.html"
    p = perfgym("report", _audit_file(tmp_path / "audit.jsonl"), "-o", html, "-q")
    assert p.returncode == 0 and "1 audit(s)" in p.stdout, p.stderr[-2000:]
    text = html.read_text()
    assert "Audit: mini" in text
    assert "50 % of tasks accept a memorised answer (1/2)" in text
    assert "<b>not markup</b>" not in text and "&lt;b&gt;" in text  # details are escaped
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (the HTML was checked)")
    shot = _screenshot(html, tmp_path)
    assert _near(shot, FAIL_RGB).sum() > 300  # the scoring probe's red cell (and its share)
    assert _near(shot, WEAK_RGB).sum() > 300  # the weak headroom's yellow cell


def test_a_broken_audit_file_is_one_line(tmp_path):
    from cli_helpers import one_line_error, perfgym

    bad = _audit_file(tmp_path / "audit.jsonl")
    bad.write_text(bad.read_text() + '{"task_id": 3}\n')
    one_line_error(perfgym("report", bad, "-o", tmp_path / "r.html", "-q"), "audit.jsonl:4")
