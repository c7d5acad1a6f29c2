"""Offline reward simulator (DMC-Optim §E): replay rewards on a suite's quality ladder, no model.

    ladder       tasks' own solutions ordered by known quality, synthetic NX/NC/NR/WO below
    sources      the ladder's durations: a results file, or a fresh run of the Judge
    simulator    score a reward on the ladder; sweep a parameter grid and rank configurations
    diagnostics  activation curve, AUC, steepness, variance, diagonal deviation, Spearman
    result       `Simulation` and the JSON simulation file
    plot         activation curves and staircases (matplotlib, Agg)

See docs/simulator.md.
"""

from perfgym.simulate.config import FAILURE_RUNGS, SimulatorConfig
from perfgym.simulate.diagnostics import Curve, Diagnostics, diagnose
from perfgym.simulate.ladder import Ladder, Rung, build_ladder
from perfgym.simulate.result import (
    SimPoint,
    Simulation,
    SimulationFile,
    StairStep,
    is_simulation_file,
    read_simulations,
    write_simulations,
)
from perfgym.simulate.simulator import (
    RANKINGS,
    grid,
    parse_params,
    parse_sweep,
    rank,
    simulate,
    sweep,
)
from perfgym.simulate.sources import ladder_from_results, measure_solutions, solution_candidates

__all__ = [
    "FAILURE_RUNGS",
    "RANKINGS",
    "Curve",
    "Diagnostics",
    "Ladder",
    "Rung",
    "SimPoint",
    "Simulation",
    "SimulationFile",
    "SimulatorConfig",
    "StairStep",
    "build_ladder",
    "diagnose",
    "grid",
    "is_simulation_file",
    "ladder_from_results",
    "measure_solutions",
    "parse_params",
    "parse_sweep",
    "rank",
    "read_simulations",
    "simulate",
    "solution_candidates",
    "sweep",
    "write_simulations",
]
