"""Where the benchmark data shipped inside the package lives (`perfgym/data/`)."""

from __future__ import annotations

from pathlib import Path

from perfgym.errors import ConfigError

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def data_file(*parts: str) -> Path:
    """Path of a shipped data file; a clear error when the installation lacks it."""
    path = DATA_DIR.joinpath(*parts)
    if not path.is_file():
        raise ConfigError(
            f"shipped data file missing: {path} (perfgym must be installed with its package "
            "data; see docs/loaders.md)"
        )
    return path
