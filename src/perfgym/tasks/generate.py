"""Concrete inputs for generated test cases: native `generate(size, seed)` and ENAMEL's generators.

A test case or workload may be given by a size and a seed instead of literal input. The judge
calls `materialize(task, case)` before running such a case; it returns a copy with `stdin`
(STDIO tasks) or `args` (FUNCTION tasks) filled in and leaves literal cases as they are.

A generator is task code, and a task may come from anyone (an inline task posted to
`perfgym serve`, a downloaded suite): it runs in the sandbox, never in this process. One call
of a warm Python worker (`_pinned_generate.py` as the program: a forked, unprivileged child)
generates every case of the task not generated yet; ENAMEL generators whose inputs follow the
string hash seed (and any call given a `sandbox`) get a fresh sandboxed interpreter with
PYTHONHASHSEED=0 instead. The values come back as tagged JSON of exact builtin types
(`valuecodec`), and each case's value is cached by (generator source, size, seed, level,
index), so materialising the same cases again runs nothing.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
import random
import threading
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

from perfgym.errors import SandboxUnavailable, TaskFormatError
from perfgym.sandbox._inside import valuecodec
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.execution import Status
from perfgym.sandbox.limits import Limits, MiB
from perfgym.sandbox.per_process import PerProcess
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks import _pinned_generate, enamel_random
from perfgym.tasks.task import Task, TaskKind, TestCase

#: Key of the ENAMEL block in `Task.metadata` (see `perfgym.tasks.enamel`).
ENAMEL_KEY = "enamel"

#: What one generation run may use (all the cases of one call together).
GENERATOR_LIMITS = Limits(wall_s=300.0, memory_mb=4096, max_processes=16, stdout_bytes=1 * MiB,
                          stderr_bytes=1 * MiB, file_size_bytes=1024 * MiB,
                          disk_bytes=2048 * MiB)  # fmt: skip
#: Characters of tagged JSON kept in the cache of generated values (least recently used go).
_CACHE_CHARS = 256 << 20


def needs_input(task: Task, case: TestCase) -> bool:
    """True when `case` is given by size and seed and has no literal input yet."""
    if case.size is None or case.seed is None:
        return False
    if task.kind is TaskKind.FUNCTION:
        return case.args is None
    return case.stdin == ""


def materialize(task: Task, case: TestCase, *, sandbox: Sandbox | None = None) -> TestCase:
    """`case` with its input generated (a copy), or `case` itself when it is literal."""
    if not needs_input(task, case):
        return case
    return materialize_all(task, [case], sandbox=sandbox)[0]


def materialize_all(
    task: Task, cases: Iterable[TestCase], *, sandbox: Sandbox | None = None
) -> list[TestCase]:
    """`materialize` over several cases, in order: one sandboxed run for every case not yet
    cached (`sandbox`: where to run it; default a warm sandbox of this process's own)."""
    cases = list(cases)
    todo = [case for case in cases if needs_input(task, case)]
    if not todo:
        return cases
    # The task's other generated cases come in the same run (cached for the next call: the
    # judge asks for the tests, then the workloads; ENAMEL's evaluation one level at a time).
    asked = {id(case) for case in todo}
    batch = todo + [c for c in [*task.tests, *task.workloads]
                    if id(c) not in asked and needs_input(task, c)]  # fmt: skip
    if ENAMEL_KEY in task.metadata:
        values = _enamel_values(task, batch, len(todo), sandbox)
        generated = {case.id: {"args": v} for case, v in zip(todo, values, strict=False)}
    else:
        if task.generator is None:
            raise TaskFormatError(
                f"task {task.id!r}: case {todo[0].id!r} is given by size/seed but the task has "
                "no generator"
            )
        values = _native_values(task, batch, len(todo), sandbox)
        generated = {case.id: _native_input(task, v) for case, v in zip(todo, values, strict=False)}
    return [
        case.model_copy(update=generated[case.id]) if case.id in generated else case
        for case in cases
    ]


def enamel_inputs(task: Task, level: int) -> list[TestCase]:
    """The generated test cases of one ENAMEL level (0 to 3), inputs filled in."""
    block = task.metadata.get(ENAMEL_KEY)
    if block is None:
        raise TaskFormatError(f"task {task.id!r} is not an ENAMEL task")
    n_levels = len(block["levels"])
    if not 0 <= level < n_levels:
        raise ValueError(f"ENAMEL level must be in 0..{n_levels - 1}, got {level}")
    cases = [case for case in [*task.tests, *task.workloads] if case.level == level]
    return materialize_all(task, cases)


def run_enamel_generator(
    prompt: str, generator: str, size: int, seed: int, level: int, index: int
) -> list[Any]:
    """Run ENAMEL's generator for one case exactly as ENAMEL's evaluator does, IN THIS PROCESS.

    Trusted code only (a check against ENAMEL's own evaluator, the tests): perfgym's judging
    never calls it; `materialize` runs the same function sandboxed. ENAMEL executes
    `<prompt>\\n<input_generator>\\nrandom.seed(S)` and then
    `generate_input(size=..., lid=level, cid=index)` in a namespace holding `random`, `string`,
    `time` and its helpers, with S = 998244353 ^ problem_index ^ (number of cases in earlier
    levels + index); the loader stores S as the case's seed. The global `random` state is saved
    and restored, so generating inputs does not disturb anyone else's random stream.
    """
    saved = random.getstate()
    try:
        return _pinned_generate.run_enamel(prompt, generator, (size, seed, level, index),
                                           enamel_random)  # fmt: skip
    finally:
        random.setstate(saved)


# -- the sandboxed runs -------------------------------------------------------------------------
def _native_input(task: Task, value: Any) -> dict[str, Any]:
    if task.kind is TaskKind.FUNCTION:
        if not isinstance(value, list | tuple):
            raise TaskFormatError(
                f"task {task.id!r}: generate() must return an argument list for a function "
                f"task, got {type(value).__name__}"
            )
        return {"args": list(value)}
    if not isinstance(value, str):
        raise TaskFormatError(
            f"task {task.id!r}: generate() must return stdin text, got {type(value).__name__}"
        )
    return {"stdin": value}


def _native_values(
    task: Task, todo: list[TestCase], wanted: int, sandbox: Sandbox | None
) -> list[Any]:
    """The values of the first `wanted` cases of `todo` (the rest only fill the cache)."""
    assert task.generator is not None
    source = task.generator
    specs = [(case.size, case.seed) for case in todo]
    req = {"kind": "native", "source": source, "filename": f"<generator of {task.id}>",
           "name": f"perfgym_gen_{task.id}"}  # fmt: skip
    parts = ["native", source, req["filename"], req["name"]]
    return _generate(task, req, specs, wanted, parts, sandbox)


def _enamel_values(
    task: Task, todo: list[TestCase], wanted: int, sandbox: Sandbox | None
) -> list[Any]:
    block = task.metadata[ENAMEL_KEY]
    specs = []
    for case in todo:
        if case.size is None or case.seed is None or case.level is None or case.index is None:
            raise TaskFormatError(
                f"task {task.id!r}: ENAMEL case {case.id!r} needs size, seed, level and index"
            )
        specs.append((case.size, case.seed, case.level, case.index))
    prompt, generator = block.get("prompt"), block.get("input_generator")
    if not isinstance(prompt, str) or not isinstance(generator, str):
        raise TaskFormatError(f"task {task.id!r}: its ENAMEL block needs a prompt and an "
                              "input_generator (text)")  # fmt: skip
    req = {"kind": "enamel", "prompt": prompt, "generator": generator}
    pinned = bool(block.get("hash_seed_sensitive"))
    values = _generate(task, req, specs, wanted, ["enamel", prompt, generator], sandbox, pinned)
    for case, value in zip(todo, values, strict=False):
        if not isinstance(value, list):  # the runner returns list(value): only a forgery isn't
            raise TaskFormatError(f"task {task.id!r}: ENAMEL case {case.id!r}: the generator "
                                  "gave no argument list")  # fmt: skip
    return values


class _Cache:
    """Generated values as tagged JSON text, least recently used dropped past `_CACHE_CHARS`.
    A hit decodes a fresh copy: a caller that mutates its arguments changes nothing here."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._items: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            text = self._items.get(key)
            if text is None:
                return _MISSING
            self._items.move_to_end(key)
        return valuecodec.decode(json.loads(text))

    def has(self, key: str) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: str, encoded: Any) -> None:
        text = json.dumps(encoded)
        if len(text) > self.limit:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._size -= len(old) if old is not None else 0
            self._items[key] = text
            self._size += len(text)
            while self._size > self.limit:
                _k, dropped = self._items.popitem(last=False)
                self._size -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._size = 0


_MISSING = object()
_cache = _Cache(_CACHE_CHARS)


def _key(parts: list[str], spec: tuple[Any, ...]) -> str:
    text = json.dumps([parts, list(spec)], ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _generate(
    task: Task,
    req: dict[str, Any],
    specs: list[tuple[Any, ...]],
    wanted: int,
    key_parts: list[str],
    sandbox: Sandbox | None,
    pinned: bool = False,
) -> list[Any]:
    """The generated values of the first `wanted` specs: from the cache, else from one
    sandboxed run, which also generates (and caches) the other specs not cached yet. A spec
    that fails only fails the call when it is wanted: then the whole run is repeated for the
    wanted ones alone, so the error names the case asked for."""
    keys = [_key([*key_parts, "pinned" if pinned else ""], spec) for spec in specs]
    values = [_cache.get(k) for k in keys[:wanted]]
    if all(v is not _MISSING for v in values):
        return values
    missing: list[int] = []
    seen: set[str] = set()
    for n, k in enumerate(keys):
        if k not in seen:
            seen.add(k)
            if (values[n] is _MISSING) if n < wanted else not _cache.has(k):
                missing.append(n)
    try:
        encoded = _run(task, {**req, "specs": [list(specs[n]) for n in missing]}, pinned, sandbox)
    except TaskFormatError:
        if all(n < wanted for n in missing):
            raise
        missing = [n for n in missing if n < wanted]
        encoded = _run(task, {**req, "specs": [list(specs[n]) for n in missing]}, pinned, sandbox)
    fresh = {keys[n]: enc for n, enc in zip(missing, encoded, strict=True)}
    decoded: dict[str, Any] = {}
    for k, enc in fresh.items():
        try:
            decoded[k] = valuecodec.decode(enc)
        except (valuecodec.UnsupportedValue, ValueError, TypeError, RecursionError) as exc:
            decoded[k] = TaskFormatError(f"task {task.id!r}: the generator's value: {exc}")
            continue
        _cache.put(k, enc)  # only values that decode are kept
    used: set[str] = set()
    for n in range(wanted):
        if values[n] is _MISSING:
            k = keys[n]
            if isinstance(decoded[k], TaskFormatError):
                raise decoded[k]
            # A second case with the same key gets its own copy.
            values[n] = valuecodec.decode(fresh[k]) if k in used else decoded[k]
            used.add(k)
    return values


def _run(task: Task, req: dict[str, Any], pinned: bool, sandbox: Sandbox | None) -> list[Any]:
    """One sandboxed generation: the tagged values, in the order of `req['specs']`. A warm
    Python worker's call (a forked child: milliseconds), or, when string hashing must be pinned
    or the caller gave a sandbox, a fresh sandboxed interpreter run with PYTHONHASHSEED=0."""
    who = f"task {task.id!r}: the generator"
    try:
        request = json.dumps(req)
    except (TypeError, ValueError) as exc:
        raise TaskFormatError(f"task {task.id!r}: generator request: {exc}") from None
    if pinned or sandbox is not None:
        result = _in_sandbox(who, request, sandbox or _own_sandbox.get())
    else:
        result = _in_worker(who, req)
    if not result.get("ok"):
        raise TaskFormatError(_failure(task, req, result))
    values = result.get("values")
    if not isinstance(values, list) or len(values) != len(req["specs"]):
        raise TaskFormatError(f"{who} returned a malformed result")
    return values


def _in_worker(who: str, req: dict[str, Any]) -> dict[str, Any]:
    r = _own_workers.get().call(_runner_files()["gen.py"], "worker_entry",
                            [req, _runner_files()["enamel_random.py"]],
                            GENERATOR_LIMITS)  # fmt: skip
    if r.status is Status.SANDBOX_ERROR:
        raise SandboxUnavailable(f"{who} could not be run: {r.error}")
    _refuse_status(who, r.status, r.error)
    try:
        result = json.loads(r.value) if type(r.value) is str else None
    except (ValueError, RecursionError):
        result = None
    if not isinstance(result, dict):
        raise TaskFormatError(f"{who} returned a malformed result")
    return result


def _in_sandbox(who: str, request: str, box: Sandbox) -> dict[str, Any]:
    files = {**_runner_files(), "request.json": request}
    ex = box.run(["python3", "-s", "/tmp/gen.py"], files=files, collect=["result.json"],
                 env={"PYTHONHASHSEED": "0"}, limits=GENERATOR_LIMITS)  # fmt: skip
    if ex.status is Status.SANDBOX_ERROR:
        raise SandboxUnavailable(f"{who} could not be run: {ex.reason}")
    tail = ex.stderr_text.strip()[-500:] if ex.stderr else ex.reason
    _refuse_status(who, ex.status, tail)
    raw = ex.files.get("result.json")
    result: Any = None
    if raw is not None:
        try:
            result = json.loads(raw)
        except (ValueError, RecursionError):
            result = None
    if not isinstance(result, dict):
        raise TaskFormatError(f"{who} failed ({ex.status.value}): {tail}")
    return result


def _refuse_status(who: str, status: Status, detail: str) -> None:
    if status is Status.TIMEOUT:
        raise TaskFormatError(f"{who} did not finish within {GENERATOR_LIMITS.wall_s:g} s")
    if status is Status.MEMORY_LIMIT:
        raise TaskFormatError(f"{who} exceeded {GENERATOR_LIMITS.memory_mb:g} MiB")
    if status is not Status.OK:
        raise TaskFormatError(f"{who} failed ({status.value}): {detail[-500:]}")


class GeneratorStage(StrEnum):
    """Where the in-sandbox generator runner stopped (`_pinned_generate` writes the value: it
    imports nothing of perfgym)."""

    LOAD = "load"
    ENTRY = "entry"
    CALL = "call"
    ENCODE = "encode"


def _failure(task: Task, req: dict[str, Any], result: dict[str, Any]) -> str:
    stage, error = str(result.get("stage", "")), str(result.get("error", ""))[:500]
    who = f"task {task.id!r}"
    if stage == GeneratorStage.LOAD:
        return f"{who}: generator does not load: {error}"
    if stage == GeneratorStage.ENTRY:
        return f"{who}: generator defines no generate(size, seed)"
    index = result.get("index")
    spec = req["specs"][index] if isinstance(index, int) and 0 <= index < len(req["specs"]) else "?"
    if stage == GeneratorStage.ENCODE:
        return f"{who}: the generator's value for {spec} cannot leave the sandbox: {error}"
    return f"{who}: the generator failed on {spec}: {error}"


@functools.cache
def _runner_files() -> dict[str, str]:
    """The in-sandbox runner and the two stdlib-only modules it imports, as files."""
    here = Path(_pinned_generate.__file__)
    return {
        "gen.py": here.read_text(),
        "enamel_random.py": Path(enamel_random.__file__).read_text(),
        "valuecodec.py": Path(valuecodec.__file__).read_text(),
    }


def _warm_sandbox() -> Sandbox:
    from perfgym.sandbox.factory import make_sandbox  # noqa: PLC0415 - only when first needed

    return make_sandbox("warm")


#: This process's generation sandbox and warm workers, started on first use.
_own_sandbox: PerProcess[Sandbox] = PerProcess(_warm_sandbox)
_own_workers: PerProcess[PythonWorkerPool] = PerProcess(
    lambda: PythonWorkerPool(size=min(2, len(os.sched_getaffinity(0))))
)
