"""Records of the published suites (Mercury, EffiBench, EffiBench-X, EvalPerf), wherever they lie.

A suite's records come from a local file in the published schema (JSONL, a JSON list, or
parquet) or from the Hugging Face hub through `datasets.load_dataset` (imported only then).
Every problem is one line: a `TaskFormatError` naming the record (file and line, or hub name
and row) and the field, or a `ConfigError` saying why the hub could not be read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError, TaskFormatError


@dataclass(frozen=True)
class Record:
    """One published record and where it came from (for error messages)."""

    data: Mapping[str, Any]
    where: str  # e.g. "mercury.jsonl line 3" or "hub Elfsong/Mercury[eval] row 7"

    def fail(self, message: str) -> TaskFormatError:
        return TaskFormatError(f"{self.where}: {message}")

    def field(self, name: str, kind: type | tuple[type, ...], *, optional: bool = False) -> Any:
        """The value of `name`, checked to be of `kind`; missing or wrong type is an error."""
        if name not in self.data or self.data[name] is None:
            if optional:
                return None
            raise self.fail(f"missing field {name!r}")
        value = self.data[name]
        if isinstance(value, bool) and bool not in _kinds(kind):
            raise self.fail(f"field {name!r}: expected {_kind_name(kind)}, got bool")
        if not isinstance(value, kind):
            raise self.fail(
                f"field {name!r}: expected {_kind_name(kind)}, got {type(value).__name__}"
            )
        return value

    def text(self, name: str, *, optional: bool = False, nonempty: bool = True) -> str:
        value = self.field(name, str, optional=optional)
        if value is None:
            return ""
        if nonempty and not value.strip():
            raise self.fail(f"field {name!r} is empty")
        return str(value)

    def json_field(self, name: str) -> Any:
        """A field the publisher stores as a JSON string (or already decoded)."""
        value = self.field(name, (str, list, dict))
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise self.fail(f"field {name!r}: invalid JSON ({exc.msg} at {exc.pos})") from None
        return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _kinds(kind))


def read_file(path: Path) -> list[Record]:
    """Records of a local file: `.jsonl`, `.json` (a list of objects) or `.parquet`."""
    path = path.resolve()
    if path.suffix == ".jsonl":
        records = list(_jsonl(path))
    elif path.suffix == ".json":
        records = _json_list(path)
    elif path.suffix == ".parquet":
        records = _parquet(path)
    else:
        raise ConfigError(f"{path}: a published suite is read from .jsonl, .json or .parquet")
    if not records:
        raise ConfigError(f"no records in {path}")
    return records


def _object(value: Any, where: str) -> Record:
    if not isinstance(value, Mapping):
        raise TaskFormatError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return Record(value, where)


def _jsonl(path: Path) -> Iterator[Record]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"{path.name} line {number}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TaskFormatError(f"{where}: invalid JSON: {exc.msg}") from None
            yield _object(value, where)


def _json_list(path: Path) -> list[Record]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"{path.name}: invalid JSON: {exc.msg}") from None
    if not isinstance(value, list):
        raise TaskFormatError(f"{path.name}: expected a JSON list of records")
    return [_object(v, f"{path.name} record {i}") for i, v in enumerate(value)]


def _parquet(path: Path) -> list[Record]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(f"{path}: reading parquet needs pyarrow (pip install pyarrow)") from None
    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise TaskFormatError(f"{path.name}: not a readable parquet file: {_line(exc)}") from None
    return [_object(row, f"{path.name} row {i}") for i, row in enumerate(rows)]


def read_hub(name: str, splits: Sequence[str]) -> list[Record]:
    """Records of a hub dataset, from the first of `splits` it has (or its only split)."""
    try:
        import datasets
    except ImportError:
        raise ConfigError(
            f"loading {name} from the Hugging Face hub needs the `datasets` package "
            "(pip install datasets), or pass a local file in its schema"
        ) from None
    try:
        loaded = datasets.load_dataset(name)
    except Exception as exc:  # offline, unreachable, gated: one line, never a traceback
        raise ConfigError(
            f"cannot load {name} from the Hugging Face hub ({type(exc).__name__}: "
            f"{_line(exc)}); pass a local file in its schema instead"
        ) from None
    available = list(loaded.keys())
    chosen = next((s for s in splits if s in available), None)
    if chosen is None and len(available) == 1:
        chosen = available[0]
    if chosen is None:
        raise ConfigError(f"{name}: none of the splits {list(splits)} (found {available})")
    rows = loaded[chosen]
    return [_object(row, f"hub {name}[{chosen}] row {i}") for i, row in enumerate(rows)]


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def unique_ids(ids: Sequence[tuple[str, Record]]) -> None:
    """Refuse two records with one task id, naming both."""
    seen: dict[str, Record] = {}
    for task_id, record in ids:
        if task_id in seen:
            raise record.fail(f"duplicate task id {task_id!r} (first at {seen[task_id].where})")
        seen[task_id] = record
