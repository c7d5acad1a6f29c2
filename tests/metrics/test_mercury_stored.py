"""Mercury's Beyond against the per-sample runtimes Mercury's repository stores.

Needs the evaluations of github.com/Elfsong/Mercury (`data/<org>/<model>_eval*.json`), which
are not committed here: set PERFGYM_MERCURY_DATA to that `data/` folder (e.g. after
`git --git-dir=<mirror> archive HEAD | tar -x -C /tmp/mercury`, /tmp/mercury/data).

Each stored sample has its status and runtime, the task's passing pool runtimes and the
repository's own `beyond_p`. perfgym's `mercury_score` (bigcode-evaluation-harness's rule:
clip the runtime into the pool's range) must equal `beyond_p` wherever the two rules agree,
and differ only where the repository's code departs from it: a sample faster than every pool
runtime (the repository does not clip: beyond_p > 1), and, in the files written by its later
code (`beyond = min(max_runtime - runtime, 1)`), a sample more than 1 s faster than the
slowest pool runtime (capped at 1 s of difference).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from perfgym.judge.verdict import Stage, Timing, Verdict
from perfgym.metrics.beyond import mercury_beyond, mercury_score
from perfgym.tasks.task import StoredMeasurement

DATA = os.environ.get("PERFGYM_MERCURY_DATA", "")
FILES = sorted(Path(DATA).glob("*/*_eval*.json")) if DATA else []

pytestmark = pytest.mark.skipif(
    not FILES,
    reason="Mercury's stored evaluations are not here: set PERFGYM_MERCURY_DATA to the "
    "data/ folder of github.com/Elfsong/Mercury",
)


def _status(item: dict) -> tuple[bool, float]:
    st = item.get("result") or item["status"]  # older files say "status", newer "result"
    return st["result"] == "passed", float(st["runtime"])


def _repository_rule(passed: bool, runtime: float, pool: list[float], capped: bool) -> float:
    lo, hi = min(pool), max(pool)
    diff = hi - (runtime if passed else float("inf"))
    if capped:
        diff = min(diff, 1.0)
    return max(diff, 0.0) / (hi - lo)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_beyond_agrees_with_mercurys_stored_per_sample_scores(path: Path) -> None:
    data = json.loads(path.read_text())
    samples = [(slug, i, item) for slug, items in data.items() for i, item in enumerate(items)]
    # Which of the repository's two versions wrote this file: every sample must fit one rule.
    fits = {
        capped: all(
            _repository_rule(*_status(it), it["runtimes"], capped) == pytest.approx(it["beyond_p"])
            for _, _, it in samples
        )
        for capped in (True, False)
    }
    assert any(fits.values()), f"{path.name}: beyond_p follows neither of Mercury's rules"
    capped = fits[True]
    agree = differ = 0
    for slug, _, item in samples:
        passed, runtime = _status(item)
        pool = item["runtimes"]
        ours = mercury_score(runtime if passed else None, pool, slug)
        departs = passed and (runtime < min(pool) or (capped and max(pool) - runtime > 1.0))
        if departs:
            differ += 1
            assert ours == pytest.approx(min(1.0, (max(pool) - max(runtime, min(pool)))
                                             / (max(pool) - min(pool))))  # fmt: skip
        else:
            agree += 1
            assert ours == pytest.approx(item["beyond_p"], abs=1e-12), (slug, item["beyond_p"])
    assert agree > 0.8 * len(samples)  # the rules differ on a small minority only


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_beyond_at_1_from_verdicts_matches_the_per_sample_scores(path: Path) -> None:
    """The metric over verdicts built from the file = the mean of perfgym's per-sample rule
    over each task's first sample (Mercury's Beyond@1)."""
    data = json.loads(path.read_text())
    verdicts, pools, firsts = [], {}, []
    for slug, items in data.items():
        pools[slug] = [StoredMeasurement(median_s=r) for r in items[0]["runtimes"]]
        for i, item in enumerate(items):
            passed, runtime = _status(item)
            ok = passed and runtime > 0
            verdicts.append(Verdict(task_id=slug, sample=i, model=path.stem,
                                    stage=Stage.OK if ok else Stage.WO,
                                    candidate=Timing(estimate_s=runtime) if ok else None))  # fmt: skip
        passed, runtime = _status(items[0])
        ok = passed and runtime > 0
        firsts.append(mercury_score(runtime if ok else None, items[0]["runtimes"], slug))
    result = mercury_beyond(verdicts, pools)
    assert result.n == len(data)
    assert result.value == pytest.approx(sum(firsts) / len(firsts))
    assert result.ci_low <= result.value <= result.ci_high
