"""ENAMEL run-to-run stability: eff@1 / pass@1 of each results file and how much the per-problem
limit T moved between them, over the problems every file holds.

    python bench/enamel_stability.py results/a.jsonl results/b.jsonl [more.jsonl ...]

Each file is what `perfgym eval enamel --solutions NAME -o FILE` writes (one trace per problem).
Printed: per file eff@1 and pass@1 with their bootstrap CIs on the common problems; per pair the
median, 75th percentile and largest factor max(T_a, T_b) / min(T_a, T_b), and the largest
difference of eff@1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from targets import Target, at_most, report

from perfgym.metrics.enamel import EnamelConfig, enamel_eff_at_k, enamel_pass_at_k
from perfgym.metrics.enamel_levels import EnamelProblem, EnamelSample


def traces(path: Path) -> dict[str, dict]:
    """Task id -> its trace (the header and excluded problems left out)."""
    out = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if "task_id" in row and not row.get("stopped", "").startswith("excluded"):
            out[row["task_id"]] = row
    return out


def problem(tr: dict) -> EnamelProblem:
    sample = EnamelSample(correct=tr["correct"], level_times_s=tr["level_times_s"])
    n = len(tr["level_times_s"])
    return EnamelProblem(task_id=tr["task_id"], reference_times_s=tr["reference_times_s"],
                         level_limits_s=[tr["limit_s"]] * n, samples=[sample])  # fmt: skip


def main() -> int:
    if len(sys.argv) < 3:
        sys.exit("usage: enamel_stability.py RESULTS.jsonl RESULTS.jsonl [...]")
    paths = [Path(p) for p in sys.argv[1:]]
    runs = {p.name: traces(p) for p in paths}
    common = sorted(set.intersection(*(set(r) for r in runs.values())))
    print(f"{len(common)} problems in every file")
    effs = {}
    for name, tr in runs.items():
        probs = [problem(tr[t]) for t in common]
        eff = enamel_eff_at_k(probs, EnamelConfig(k=1))
        pas = enamel_pass_at_k(probs, EnamelConfig(k=1))
        effs[name] = eff.value
        print(f"{name}: eff@1 {eff.value:.3f} [{eff.ci_low:.3f}, {eff.ci_high:.3f}]  "
              f"pass@1 {pas.value:.3f}")  # fmt: skip
    names = list(runs)
    targets: list[Target] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ta = np.array([runs[a][t]["limit_s"] for t in common])
            tb = np.array([runs[b][t]["limit_s"] for t in common])
            f = np.maximum(ta, tb) / np.minimum(ta, tb)
            print(f"{a} vs {b}: T factor median {np.median(f):.3f}, p75 "
                  f"{np.percentile(f, 75):.3f}, max {f.max():.2f}; "
                  f"eff@1 difference {abs(effs[a] - effs[b]):.3f}")  # fmt: skip
            # issue 28 item 7: T stable run to run, eff@1 within +-0.01 across runs
            targets.append(at_most(f"{a} vs {b}: T factor median", float(np.median(f)), 1.2))
            targets.append(at_most(f"{a} vs {b}: eff@1 difference", abs(effs[a] - effs[b]), 0.01))
    return report(targets)


if __name__ == "__main__":
    sys.exit(main())
