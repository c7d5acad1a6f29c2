"""The per-task cells' colours follow the significant decisions: a 1.00× cell (noise, or the
baseline's own source) is never coloured faster; the leaderboard puts the strict figures
beside the significant ones."""

from html.parser import HTMLParser

import pytest
from report_data import two_run_files, write

from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.metrics import sample_outcome
from perfgym.report import render_report
from perfgym.report.sections import cell_class


def timing(samples: list[float]) -> Timing:
    return Timing(estimate_s=sorted(samples)[len(samples) // 2], samples_s=samples)


BASE = [1.00, 1.04, 0.97, 1.02, 0.99]


def verdict(samples: list[float], **extra: object) -> Verdict:
    return Verdict(task_id="t", suite="demo", model="m", stage=Stage.OK,
                   candidate=timing(samples), baseline=timing(BASE),
                   reference=timing([x / 3 for x in BASE]), **extra)  # type: ignore[arg-type]  # fmt: skip


def colour(v: Verdict) -> str:
    return cell_class([(v, sample_outcome(v))])


@pytest.mark.parametrize(
    ("samples", "extra", "css"),
    [
        ([0.99, 1.03, 0.96, 1.01, 0.98], {}, "same"),  # 1.01x: the strict order says faster
        (BASE, {"same_source": ["baseline"]}, "same"),  # the baseline's own text
        ([0.50, 0.52, 0.49, 0.51, 0.50], {}, "fast"),
        ([x / 3 for x in BASE], {}, "ref"),
        ([2.0, 2.1, 1.9, 2.0, 2.05], {}, "slow"),
    ],
)
def test_cell_colour_is_the_significant_decision(samples, extra, css) -> None:
    v = verdict(samples, **extra)
    assert colour(v) == css
    noise = verdict([0.99, 1.03, 0.96, 1.01, 0.98])
    assert sample_outcome(noise, "strict").fbr  # what the old colour rule showed as faster


class Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[tuple[str, str]] = []
        self.headers: list[str] = []
        self._css: str | None = None
        self._th = False

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self._css = dict(attrs).get("class") if tag == "td" else None
        self._th = tag == "th"

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        if self._css is not None and "×" in data:
            self.cells.append((self._css, data.strip()))
        if self._th:
            self.headers.append(data.strip())
        self._css, self._th = None, False


def test_the_rendered_report_shows_no_100x_cell_as_faster(tmp_path) -> None:
    noise = [verdict([0.99, 1.03, 0.96, 1.01, 0.98]).model_copy(update={"task_id": f"n{k}"})
             for k in range(3)]  # fmt: skip
    path = write(tmp_path / "noise.jsonl", noise)
    parsed = Cells()
    parsed.feed(render_report([path]))
    ones = [css for css, text in parsed.cells if text.startswith("1.0")]
    assert ones and all(css == "same" for css in ones), parsed.cells
    for head in ("FBR", "FBR strict", "RBR", "RBR strict", "CGRE", "CGRE strict"):
        assert head in parsed.headers


def test_the_hand_made_runs_keep_their_colours(tmp_path) -> None:
    a, _b = two_run_files(tmp_path)
    parsed = Cells()
    parsed.feed(render_report([a]))
    assert ("same", "1.00×") in parsed.cells  # task-10, Tc = Tb
