"""Results files: JSONL of verdicts behind one header line recording config, versions, machine."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from perfgym import __version__
from perfgym.errors import ConfigError
from perfgym.judge.verdict import Verdict
from perfgym.machine import describe

HEADER_KEY = "perfgym_results"


def header(**fields: Any) -> dict[str, Any]:
    """What every results file records: perfgym version, machine, interpreter, command, config."""
    return {
        HEADER_KEY: {
            "version": __version__,
            "machine": describe(),
            "python": platform.python_version(),
            "argv": sys.argv,
            **fields,
        }
    }


def write_results(path: Path, verdicts: Iterable[Verdict], **fields: Any) -> None:
    """Write the header then one verdict per line (atomically: a temp file renamed)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tmp.open("w") as f:
        f.write(json.dumps(header(**fields)) + "\n")
        for v in verdicts:
            f.write(v.model_dump_json() + "\n")
    tmp.replace(path)


def read_results(path: Path) -> tuple[dict[str, Any], list[Verdict]]:
    """(header, verdicts) of a results file; a clear error names any unreadable line."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read results {path}: {exc.strerror}") from exc
    meta: dict[str, Any] = {}
    verdicts = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{n}: not JSON ({exc.msg})") from exc
        if isinstance(obj, dict) and HEADER_KEY in obj:
            meta = obj[HEADER_KEY]
            continue
        try:
            verdicts.append(Verdict.model_validate(obj))
        except ValueError as exc:
            raise ConfigError(f"{path}:{n}: not a verdict ({str(exc).splitlines()[0]})") from exc
    return meta, verdicts
