"""Writing and reading perfgym's training datasets: parquet files that Hugging Face `datasets`
(and verl, and pandas) load, each beside a JSON file recording how it was built."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from perfgym import __version__
from perfgym.errors import ConfigError
from perfgym.train.dataset import require_columns


def write_dataset(rows: Sequence[dict[str, Any]], out_dir: Path, name: str,
                  **config: Any) -> Path:  # fmt: skip
    """`out_dir/name.parquet` (via `datasets`, written to a temp name then renamed) and
    `out_dir/name.json` (the row count, the command, the versions and `config`)."""
    try:
        import datasets
    except ImportError:
        raise ConfigError("writing a dataset needs Hugging Face datasets: "
                          "pip install -e '.[train]'") from None  # fmt: skip
    if not rows:
        raise ConfigError(f"the {name} dataset would be empty: nothing to write")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.parquet"
    tmp = out_dir / f".{name}.parquet.tmp"
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(list(rows)).to_parquet(str(tmp))
    tmp.replace(path)
    meta = {"rows": len(rows), "columns": list(rows[0]), "perfgym": __version__,
            "datasets": datasets.__version__, "python": platform.python_version(),
            "argv": sys.argv, **config}  # fmt: skip
    (out_dir / f"{name}.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    return path


def load_dataset(path: Path, needed: Sequence[str] = ()) -> Any:
    """A parquet file as a `datasets.Dataset`; a ConfigError naming any `needed` column it lacks."""
    import datasets

    if not path.is_file():
        raise ConfigError(f"no dataset file {path}")
    ds = datasets.Dataset.from_parquet(str(path))
    require_columns(list(ds.column_names), needed, f"dataset {path}")
    return ds
