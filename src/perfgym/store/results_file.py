"""Results files: JSONL of verdicts behind one header line recording config, versions, machine;
a strict reader (`read_results`) and a lenient one for resuming a cut-short file (`scan_results`)."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
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


@dataclass
class ResultsScan:
    """What a results file holds, read leniently: its header, every line that is a JSON object
    (with its line number), and one note per line that is not (a torn last line, garbage)."""

    meta: dict[str, Any] = field(default_factory=dict)
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def scan_results(path: Path) -> ResultsScan:
    """Read a results file that may have been cut short (an interrupted or killed run): a last
    line without its newline that is not JSON is torn, any other bad line is noted; both are
    skipped, never fatal. A file that cannot be read or decoded is a ConfigError."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read results {path}: {exc.strerror}") from exc
    lines = data.split(b"\n")
    torn_at = len(lines) if lines and lines[-1] else 0  # 1-based number of an unterminated line
    scan = ResultsScan()
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            if n == torn_at:
                scan.problems.append(f"{path}:{n}: torn last line ({len(raw)} bytes)")
            else:
                why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
                scan.problems.append(f"{path}:{n}: not JSON ({why})")
            continue
        if not isinstance(obj, dict):
            scan.problems.append(f"{path}:{n}: not a JSON object")
        elif HEADER_KEY in obj and n == 1 and isinstance(obj[HEADER_KEY], dict):
            scan.meta = obj[HEADER_KEY]
        else:
            scan.records.append((n, obj))
    return scan


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of a results file from its first line alone; None when it has none."""
    try:
        with path.open("rb") as f:
            first = f.readline(1 << 20)
        obj = json.loads(first.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    meta = obj.get(HEADER_KEY) if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else None


def read_results(path: Path) -> tuple[dict[str, Any], list[Verdict]]:
    """(header, verdicts) of a results file; a clear error names any unreadable line. A torn
    last line (no newline: the run was killed while writing it) is left out, not an error."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read results {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    lines = text.splitlines()
    torn = bool(lines) and not text.endswith(("\n", "\r"))
    meta: dict[str, Any] = {}
    verdicts = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if torn and n == len(lines):
                break
            raise ConfigError(f"{path}:{n}: not JSON ({exc.msg})") from exc
        if isinstance(obj, dict) and HEADER_KEY in obj:
            meta = obj[HEADER_KEY]
            continue
        try:
            verdicts.append(Verdict.model_validate(obj))
        except ValueError as exc:
            raise ConfigError(f"{path}:{n}: not a verdict ({str(exc).splitlines()[0]})") from exc
    return meta, verdicts
