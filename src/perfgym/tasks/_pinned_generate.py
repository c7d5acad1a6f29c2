"""The in-sandbox side of `perfgym.tasks.generate`: runs a task's input generator.

It runs in one of two ways, both sandboxed. As a warm Python worker's call (`worker_entry`,
the request as its argument, the result as its return value), or, where string hashing must be
pinned, copied into a sandboxed run as /tmp/gen.py beside `valuecodec.py` and
`enamel_random.py` and run as `python3 -s /tmp/gen.py` with PYTHONHASHSEED=0 (`main`), which
reads /tmp/request.json:

    {"kind": "native", "source", "name", "specs": [[size, seed], ...]}
    {"kind": "enamel", "prompt", "generator", "specs": [[size, seed, level, index], ...]}

and writes /tmp/result.json: {"ok": true, "values": [<tagged value>, ...]}, or {"ok": false,
"stage": "load" | "entry" | "call" | "encode", "index", "error"}. Each case gets a fresh
namespace (the module is executed again), as it did when generators ran in the host process.

Stdlib only, and nothing here is trusted by the host: the generator runs in this process and
may write anything to the result file; the host only decodes exact builtin types from it.
"""

from __future__ import annotations

import builtins
import json
import random
import string
import sys
import time
import types
from typing import Any


def enamel_namespace(helpers: types.ModuleType) -> dict[str, Any]:
    """The globals ENAMEL's evaluator gives a generator: `random`, `string`, `time` and its
    random-input helpers."""
    return {
        "__builtins__": builtins,
        "__name__": "__enamel_generator__",
        "random": random,
        "string": string,
        "time": time,
        "rand_parens": helpers.rand_parens,
        "miller_rabin": helpers.miller_rabin,
        "rand_probably_prime": helpers.rand_probably_prime,
        "rand_primality": helpers.rand_primality,
    }


def run_enamel(
    prompt: str,
    generator: str,
    spec: tuple[int, int, int, int],
    helpers: types.ModuleType,
    code: types.CodeType | None = None,
) -> list[Any]:
    """One ENAMEL case: `<prompt>\\n<input_generator>` executed, `random.seed(seed)`, then
    `generate_input(size=..., lid=level, cid=index)`; the result is the argument tuple."""
    size, seed, level, index = spec
    namespace = enamel_namespace(helpers)
    code = code or compile(prompt + "\n" + generator + "\n", "<ENAMEL generator>", "exec")
    exec(code, namespace)  # noqa: S102 - in the sandbox (or a trusted caller's own process)
    random.seed(seed)
    value = namespace["generate_input"](size=size, lid=level, cid=index)
    return list(value)


def run_native(code: types.CodeType, name: str, size: int, seed: int) -> tuple[str, Any]:
    """One native case: the generator module executed afresh, then `generate(size, seed)`.
    Returns (stage, value): stage '' on success, else where it failed and why."""
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": name}
    try:
        exec(code, namespace)  # noqa: S102 - in the sandbox
    except BaseException as exc:  # noqa: BLE001 - the generator's own failure
        return "load", repr(exc)
    generate = namespace.get("generate")
    if not callable(generate):
        return "entry", "no generate(size, seed)"
    return "", generate(size, seed)


def generate_all(req: dict[str, Any], helpers: types.ModuleType, codec: Any) -> dict[str, Any]:
    """Every case of `req`: {"ok": true, "values": [tagged value, ...]} or the failure."""
    values: list[Any] = []
    try:
        if req["kind"] == "native":
            try:
                code = compile(req["source"], req["filename"], "exec")
            except BaseException as exc:  # noqa: BLE001
                raise _Failed("load", 0, repr(exc)) from None
            for n, (size, seed) in enumerate(req["specs"]):
                try:
                    stage, value = run_native(code, req["name"], size, seed)
                except BaseException as exc:  # noqa: BLE001
                    raise _Failed("call", n, repr(exc)) from None
                if stage:
                    raise _Failed(stage, n, str(value))
                values.append(_encode(codec, value, n))
        else:
            text = req["prompt"] + "\n" + req["generator"] + "\n"
            try:
                code = compile(text, "<ENAMEL generator>", "exec")
            except BaseException as exc:  # noqa: BLE001
                raise _Failed("load", 0, repr(exc)) from None
            for n, spec in enumerate(req["specs"]):
                try:
                    value = run_enamel(req["prompt"], req["generator"], spec, helpers, code)
                except BaseException as exc:  # noqa: BLE001
                    raise _Failed("call", n, repr(exc)) from None
                values.append(_encode(codec, value, n))
    except _Failed as failed:
        return {"ok": False, "stage": failed.stage, "index": failed.index,
                "error": failed.error[:2000]}  # fmt: skip
    return {"ok": True, "values": values}


def worker_entry(req: dict[str, Any], helpers_source: str) -> str:
    """The entry point when this file runs as a warm worker's call (`PythonWorker.call`): the
    worker's own `valuecodec`, the helpers built from their source. Returns the result as JSON
    text (one string crosses the worker's channel as it is; a dict of tagged values would be
    tagged again)."""
    import valuecodec  # type: ignore[import-not-found]  # noqa: PLC0415 - the worker's own

    helpers = types.ModuleType("enamel_random")
    exec(compile(helpers_source, "enamel_random.py", "exec"), helpers.__dict__)  # noqa: S102
    sys.modules["enamel_random"] = helpers
    return json.dumps(generate_all(req, helpers, valuecodec))


def main() -> None:
    """The entry point as a sandboxed run's script: /tmp/request.json to /tmp/result.json."""
    sys.path.insert(0, "/tmp")
    import enamel_random  # type: ignore[import-not-found]  # noqa: PLC0415 - shipped beside us
    import valuecodec  # type: ignore[import-not-found]  # noqa: PLC0415

    with open("/tmp/request.json", encoding="utf-8") as f:
        req = json.load(f)
    result = generate_all(req, enamel_random, valuecodec)
    with open("/tmp/result.json", "w", encoding="utf-8") as out:
        json.dump(result, out)


class _Failed(Exception):
    def __init__(self, stage: str, index: int, error: str) -> None:
        super().__init__(error)
        self.stage, self.index, self.error = stage, index, error


def _encode(valuecodec: Any, value: Any, n: int) -> Any:
    try:
        return valuecodec.encode(value)
    except Exception as exc:  # noqa: BLE001 - e.g. a custom class: it cannot leave the sandbox
        raise _Failed("encode", n, str(exc)) from None


if __name__ == "__main__":
    main()
