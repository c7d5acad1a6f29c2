"""The optimisation curves show up in the HTML report, checked in headless Chromium with the
report tests' screenshot helpers: pixels of the curves' colours, and none once the image data
is broken."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from test_screenshot import CHROMIUM, near, screenshot  # noqa: E402

from perfgym.report.template import HEADER_RGB  # noqa: E402

#: pass@1, FBR, RBR and the median speedup: matplotlib's C0, C1, C2, C3.
CURVE_RGB = {"pass@1": (0x1F, 0x77, 0xB4), "FBR": (0xFF, 0x7F, 0x0E), "RBR": (0x2C, 0xA0, 0x2C),
             "speedup": (0xD6, 0x27, 0x28)}  # fmt: skip

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")


def test_curves_render_in_chromium(core_run, tmp_path):
    _, out, _ = core_run
    html = out / "report.html"
    text = html.read_text()
    assert "Optimisation: perfgym-core (greedy, time)" in text
    shot = screenshot(html, tmp_path, height=1400)
    assert near(shot, HEADER_RGB).sum() > 1000  # the iteration table's header row
    for name, rgb in CURVE_RGB.items():
        assert near(shot, rgb).sum() > 150, name
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,AAAA", text))
    spoilt = screenshot(broken, tmp_path, height=1400)
    assert near(spoilt, HEADER_RGB).sum() > 1000
    for name, rgb in CURVE_RGB.items():
        assert near(spoilt, rgb).sum() < 50, name


def test_perfgym_report_takes_the_summary(core_run, tmp_path):
    from optimize_helpers import run_cli

    _, out, _ = core_run
    done = run_cli("report", str(out / "optimize.json"), "-o", str(tmp_path / "r.html"), "-q")
    assert done.returncode == 0, done.stderr
    assert "Optimisation: perfgym-core" in (tmp_path / "r.html").read_text()
