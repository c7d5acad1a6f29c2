"""`Simulation`: one reward's replay on a quality ladder, and the JSON file that holds several."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym import __version__
from perfgym.errors import ConfigError
from perfgym.judge.verdict import Stage
from perfgym.machine import describe
from perfgym.simulate.diagnostics import Curve, Diagnostics

HEADER_KEY = "perfgym_simulation"


class SimPoint(BaseModel):
    """One simulated sample: a (task, solution) with its quality and what the reward gave it."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    label: str = Field(description="Solution label, or NX/NC/NR/WO for a synthetic failure.")
    synthetic: bool
    level: int = Field(description="Quality level within the task (0 = lowest).")
    levels: int = Field(description="Levels of the task's ladder.")
    quality: float = Field(description="level / (levels − 1).")
    stage: Stage
    value: float | None = Field(description="The reward; None = unscorable (left out).")
    signal: float | None = Field(description="What the curve plots, in [0, 1].")
    reason: str = ""


class StairStep(BaseModel):
    """Mean reward of one rung label (NX ... baseline, pool-k, reference) over the tasks."""

    model_config = ConfigDict(extra="forbid")

    label: str
    n: int = Field(description="Scored points with this label.")
    mean_quality: float
    mean_value: float | None
    mean_signal: float | None


class Simulation(BaseModel):
    """A reward environment replayed on a suite's quality ladder, with its diagnostics."""

    model_config = ConfigDict(extra="forbid")

    reward: str
    params: dict[str, Any] = Field(description="Full reward parameters (defaults filled in).")
    bounds: tuple[float, float] = Field(description="The reward's declared range (normaliser).")
    suite: str
    source: str = Field(description="Where the durations came from (a results file, 'measured').")
    config: dict[str, Any] = Field(description="SimulatorConfig used.")
    curve: Curve
    diagnostics: Diagnostics
    staircase: list[StairStep]
    points: list[SimPoint]
    varied: str = Field(default="", description="The swept parameters of this configuration.")
    notes: list[str] = Field(default_factory=list)

    @property
    def title(self) -> str:
        """The reward and its swept parameters, for tables and legends."""
        return self.reward + (f" ({self.varied})" if self.varied else "")


class SimulationFile(BaseModel):
    """What `perfgym simulate --out` writes and `perfgym report` reads."""

    model_config = ConfigDict(extra="forbid")

    header: dict[str, Any]
    rank_by: str = ""
    simulations: list[Simulation]


def write_simulations(
    path: Path, simulations: list[Simulation], *, rank_by: str = "", **fields: Any
) -> None:
    """Write simulations as one JSON document with the version, machine and command."""
    header = {"version": __version__, "machine": describe(), "python": platform.python_version(),
              "argv": sys.argv, **fields}  # fmt: skip
    doc = SimulationFile(header=header, rank_by=rank_by, simulations=simulations)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps({HEADER_KEY: doc.model_dump(mode="json")}, indent=1))
    tmp.replace(path)


def is_simulation_file(path: Path) -> bool:
    """True when `path` looks like a simulation file (a JSON object with the header key)."""
    try:
        with path.open() as f:
            head = f.read(64)
    except OSError:
        return False
    return head.lstrip().startswith("{") and HEADER_KEY in head


def read_simulations(path: Path) -> SimulationFile:
    """Read a simulation file; a clear `ConfigError` when it is not one."""
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read simulation {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not a simulation file (not JSON: {exc.msg})") from exc
    if not isinstance(doc, dict) or HEADER_KEY not in doc:
        raise ConfigError(f"{path}: not a simulation file (no {HEADER_KEY!r} key)")
    try:
        return SimulationFile.model_validate(doc[HEADER_KEY])
    except ValidationError as exc:
        raise ConfigError(f"{path}: malformed simulation ({str(exc).splitlines()[0]})") from exc
