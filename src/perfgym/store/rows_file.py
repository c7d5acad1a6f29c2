"""`RowsFile`: a per-task results file that a rerun resumes: one header line (what was asked,
with which judge configuration, on which machine) and one row per finished task, written and
flushed as each task finishes. `perfgym audit` and `perfgym validate` both keep theirs in one."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from perfgym.errors import ConfigError

R = TypeVar("R")


@dataclass(frozen=True)
class RowFormat(Generic[R]):
    """How one kind of row is written, read back and judged reusable.

    `noun`: what the file holds, as errors say it ('audit'); `header_key`: the first line is
    `{header_key: header}`; `parse` raises ValueError (pydantic's ValidationError is one) on a
    line that is not a row; `task_id` and `task_key` name the task and its content as judged;
    `finished` is False for a row that must be judged again (an infrastructure failure);
    `restart`: the options a refusal suggests.
    """

    noun: str
    header_key: str
    parse: Callable[[str], R]
    dump: Callable[[R], str]
    task_id: Callable[[R], str]
    task_key: Callable[[R], str]
    finished: Callable[[R], bool]
    restart: str = "use --no-resume to start over, or another output file"

    def reusable(self, row: R, keys: Mapping[str, str] | None) -> bool:
        """A finished row judged on the same task content (`keys`: task id -> content key;
        None: not checked)."""
        if not self.finished(row):
            return False
        return keys is None or keys.get(self.task_id(row)) == self.task_key(row)


class RowsFile(Generic[R]):
    """Open `path` for a run described by `header`; with `resume`, `done` holds the rows a
    previous run of the same header finished on the same task content (`keys`), which are not
    judged again; the file is rewritten with them, and the others are dropped. A file made
    under another header (another judge configuration, machine or version) is refused with a
    ConfigError naming what differs."""

    def __init__(self, path: Path, header: dict[str, Any], fmt: RowFormat[R], *,
                 resume: bool, keys: Mapping[str, str] | None = None) -> None:  # fmt: skip
        self.path = path
        self.header = header
        self.fmt = fmt
        self.done: dict[str, R] = {}
        if resume and path.exists() and path.stat().st_size:
            self.done = {k: r for k, r in self._read().items() if fmt.reusable(r, keys)}
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self._file.write(json.dumps({fmt.header_key: header}, sort_keys=True) + "\n")
        for row in self.done.values():
            self._file.write(fmt.dump(row) + "\n")
        self._file.flush()

    def add(self, row: R) -> None:
        self._file.write(self.fmt.dump(row) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def _read(self) -> dict[str, R]:
        """The file's finished rows, read as bytes: a line that is not whole UTF-8 JSON of a
        row (an interrupt cut it, even inside a character) is skipped."""
        fmt, path = self.fmt, self.path
        lines = path.read_bytes().split(b"\n")
        try:
            first = json.loads(lines[0].decode("utf-8"))[fmt.header_key]
        except (ValueError, KeyError, TypeError, IndexError):
            raise ConfigError(f"{path} is not {_a(fmt.noun)} results file "
                              "(use another output file)") from None  # fmt: skip
        if first != self.header:
            diff = sorted(k for k in set(first) | set(self.header)
                          if first.get(k) != self.header.get(k))  # fmt: skip
            raise ConfigError(f"{path} holds another {fmt.noun} (differs in {', '.join(diff)}): "
                              f"{fmt.restart}")  # fmt: skip
        done: dict[str, R] = {}
        for line in lines[1:]:
            try:
                row = fmt.parse(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                continue  # a line cut short by the interrupt: that task is judged again
            done[fmt.task_id(row)] = row
        return done


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"
