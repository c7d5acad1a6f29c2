"""The report renders in headless Chromium: tables and embedded charts show up in a screenshot.

Pixels, not strings: the screenshot is decoded and searched for the table-header colour (only
CSS paints it) and for matplotlib's chart colours (only the embedded PNGs hold them), against
a blank page and against the same report with its image data broken.
"""

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

from perfgym.report import write_report
from perfgym.report.template import HEADER_RGB
from perfgym.simulate import ladder_from_results, sweep, write_simulations
from perfgym.tasks.native import load_task_dir

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
HERE = Path(__file__).resolve().parent
CORE = HERE.parents[1] / "suites" / "perfgym-core"
RECORDED = HERE.parent / "simulate" / "fixtures" / "perfgym-core-solutions.jsonl.gz"
# matplotlib's first default colours: bars, curves and stacked stages use them.
CHART_RGB = {"C0": (0x1F, 0x77, 0xB4), "C1": (0xFF, 0x7F, 0x0E), "OK green": (0x2C, 0xA0, 0x2C)}

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")


def screenshot(html: Path, tmp: Path, height: int = 3000) -> np.ndarray:
    png = tmp / (html.stem + ".png")
    profile = tmp / ("profile-" + html.stem)
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", f"--screenshot={png}",
         f"--window-size=1400,{height}", html.resolve().as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    pixels = image.imread(png)  # float RGBA in [0, 1]
    return np.rint(pixels[:, :, :3] * 255).astype(int)


def near(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 4) -> np.ndarray:
    return (np.abs(img - np.array(rgb)) <= tol).all(axis=2)


def bands(mask: np.ndarray, min_per_row: int = 100) -> int:
    """Separate horizontal bands of rows holding at least `min_per_row` matching pixels."""
    rows = mask.sum(axis=1) >= min_per_row
    return int(np.count_nonzero(rows[1:] & ~rows[:-1]) + rows[0])


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shot")
    results = tmp / "perfgym-core-solutions.jsonl"
    results.write_bytes(gzip.decompress(RECORDED.read_bytes()))
    tasks = []
    for d in ("c-hamming-pairs", "py-lis-dp", "cpp-topk-stream", "java-grid-bfs", "py-hash-join"):
        tasks.append(load_task_dir(CORE / d))
    ladder = ladder_from_results(tasks, results, suite="perfgym-core")
    sims = tmp / "sim.json"
    write_simulations(sims, sweep(ladder, ["rlpf", "runtime_only", "rlvr"]), suite="perfgym-core")
    html = write_report([results], tmp / "report.html", [sims])
    return tmp, html


def test_tables_and_charts_render(report):
    tmp, html = report
    blank = tmp / "blank.html"
    blank.write_text("<!doctype html><html><body style='background:#fff'></body></html>")
    empty = screenshot(blank, tmp)
    shot = screenshot(html, tmp)
    assert shot.shape == empty.shape == (3000, 1400, 3)

    white = (shot >= 250).all(axis=2)
    assert (~(empty >= 250).all(axis=2)).mean() < 0.001  # the blank page is blank
    assert (~white).mean() > 0.05  # the report is not

    header = near(shot, HEADER_RGB)
    assert not near(empty, HEADER_RGB).any()
    # Inputs, leaderboard and staircase tables (at least) fit in the first 3000 px, each
    # with a header row painted in the header colour.
    assert bands(header) >= 3, bands(header)

    for name, rgb in CHART_RGB.items():
        found = near(shot, rgb)
        assert found.sum() > 500, (name, int(found.sum()))
        assert not near(empty, rgb).any()
    # The leaderboard chart: C0 bars spanning a real area, not a stray pixel.
    ys, xs = np.nonzero(near(shot, CHART_RGB["C0"]))
    assert xs.max() - xs.min() > 200 and ys.max() - ys.min() > 100


def test_broken_images_are_caught(report):
    tmp, html = report
    broken = tmp / "broken.html"
    broken.write_text(re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,AAAA", html.read_text()))
    shot = screenshot(broken, tmp)
    assert bands(near(shot, HEADER_RGB)) >= 3  # the tables still render...
    for rgb in CHART_RGB.values():
        assert near(shot, rgb).sum() < 50  # ...but no chart pixel does
