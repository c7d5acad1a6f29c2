"""Evaluation metrics: pure functions of verdicts (and stored pools), each with a bootstrap CI.

One module per family; see docs/metrics.md for every formula, its source and denominators.

    perfcodebench  CRR, FBR, RBR, Slow, Gap, Slow/CRR, Gap/FBR, CGRE, CGRE≥0.8 (RLPF)
    transitions    fail→correct, notfast→FBR, notref→RBR, lost correct (RLPF Table 12)
    speedups       speedup distribution at RLPF Table 13's thresholds
    stages         failure-stage counts
    ptau           DMC-Optim p-τ pass@k; correctness pass@k
    beyond         Venus Beyond-T/M/I with B%/M%/W%; Mercury's Beyond
    effibench      EffiBench NET / NMU / NTMU against the canonical solution
    effibench_x    EffiBench-X time / memory / integral scores, min(1, canonical / model)
    evalperf       EvalPerf DPS / DPS_norm against the reference performance clusters
    enamel         ENAMEL eff@k / pass@k from level times
    gso            GSO Opt@K, PerfAgent Sp@K, hack-adjusted
    swefficiency   SWE-fficiency harmonic-mean speedup-ratio score
    paired         EffiBench-X paired ET/MI improvement and win rate (RLPF Eq. 8)
    estimators     Hodges–Lehmann, unbiased pass@k / eff@k, means of ratios
    by_model       evaluate(verdicts, metrics): registered metrics per model of a mixed set
    summary        per-model stage counts and PerfCodeBench headline (`perfgym eval`'s table)
"""

from perfgym.metrics._inputs import DEFAULT_HACK_FLAGS, ResultsPolicy, pools_from_tasks
from perfgym.metrics.beyond import (
    BeyondBreakdown,
    BeyondConfig,
    MercuryConfig,
    beyond_breakdown,
    mercury_beyond,
)
from perfgym.metrics.bootstrap import BootstrapConfig, bootstrap_ci
from perfgym.metrics.by_model import HEADLINE_METRICS, evaluate, group_by_model
from perfgym.metrics.effibench import EffiBenchConfig, effibench_ratio
from perfgym.metrics.effibench_x import EffiBenchXConfig, effibench_x_score
from perfgym.metrics.enamel import (
    EnamelConfig,
    EnamelProblem,
    EnamelSample,
    enamel_eff_at_k,
    enamel_level_limits,
    enamel_level_time,
    enamel_pass_at_k,
    level_efficiencies,
    sample_efficiency,
)
from perfgym.metrics.estimators import (
    eff_at_k,
    geometric_mean,
    harmonic_mean,
    hodges_lehmann,
    nearest_rank,
    pass_at_k,
)
from perfgym.metrics.evalperf import Cluster, EvalPerfConfig, clusters_from_tasks, dps
from perfgym.metrics.gso import GSOConfig, attempt_status, gso_at_k
from perfgym.metrics.paired import PairedComparison, PairedConfig, paired_comparison
from perfgym.metrics.perfcodebench import (
    PerfCodeBenchConfig,
    PerfCodeBenchTable,
    cgre,
    perfcodebench_table,
    sample_outcome,
)
from perfgym.metrics.ptau import PassAtKConfig, PTauConfig, correctness_pass_at_k, p_tau_pass_at_k
from perfgym.metrics.registry import get_metric, metric_names, register_metric
from perfgym.metrics.result import Metric, MetricResult
from perfgym.metrics.speedups import RLPF_THRESHOLDS, SpeedupDistribution, speedup_distribution
from perfgym.metrics.stages import FailureStages, failure_stages
from perfgym.metrics.swefficiency import SpeedupRatioConfig, speedup_ratio_score
from perfgym.metrics.transitions import Transitions, transitions

__all__ = [
    "DEFAULT_HACK_FLAGS",
    "HEADLINE_METRICS",
    "RLPF_THRESHOLDS",
    "BeyondBreakdown",
    "BeyondConfig",
    "BootstrapConfig",
    "Cluster",
    "EffiBenchConfig",
    "EffiBenchXConfig",
    "EnamelConfig",
    "EnamelProblem",
    "EnamelSample",
    "EvalPerfConfig",
    "FailureStages",
    "GSOConfig",
    "MercuryConfig",
    "Metric",
    "MetricResult",
    "PTauConfig",
    "PairedComparison",
    "PairedConfig",
    "PassAtKConfig",
    "PerfCodeBenchConfig",
    "PerfCodeBenchTable",
    "ResultsPolicy",
    "SpeedupDistribution",
    "SpeedupRatioConfig",
    "Transitions",
    "attempt_status",
    "beyond_breakdown",
    "bootstrap_ci",
    "cgre",
    "clusters_from_tasks",
    "correctness_pass_at_k",
    "dps",
    "eff_at_k",
    "effibench_ratio",
    "effibench_x_score",
    "enamel_eff_at_k",
    "enamel_level_limits",
    "enamel_level_time",
    "enamel_pass_at_k",
    "evaluate",
    "failure_stages",
    "geometric_mean",
    "get_metric",
    "group_by_model",
    "gso_at_k",
    "harmonic_mean",
    "hodges_lehmann",
    "level_efficiencies",
    "mercury_beyond",
    "metric_names",
    "nearest_rank",
    "p_tau_pass_at_k",
    "paired_comparison",
    "pass_at_k",
    "perfcodebench_table",
    "pools_from_tasks",
    "register_metric",
    "sample_efficiency",
    "sample_outcome",
    "speedup_distribution",
    "speedup_ratio_score",
    "transitions",
]
