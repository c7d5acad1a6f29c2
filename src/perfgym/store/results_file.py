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
from perfgym.store.jsontext import dump_json

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
    """Write the header then one verdict per line (atomically: a temp file renamed). Any
    string survives: a lone surrogate is written as its JSON escape (see `jsontext`)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tmp.open("w", encoding="utf-8") as f:
        f.write(json.dumps(header(**fields), default=str) + "\n")
        for v in verdicts:
            f.write(dump_json(v) + "\n")
    tmp.replace(path)


def read_results(path: Path) -> tuple[dict[str, Any], list[Verdict]]:
    """(header, verdicts) of a results file; a clear error names any unreadable line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read results {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
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
