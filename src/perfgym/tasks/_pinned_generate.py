"""The in-sandbox side of `perfgym.tasks.generate`: runs a task's input generator.

This file is copied into a sandboxed run as /tmp/gen.py, beside `valuecodec.py` and
`enamel_random.py`, and run as `python3 -s /tmp/gen.py` with PYTHONHASHSEED=0. It reads
/tmp/request.json:

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


def main() -> None:
    sys.path.insert(0, "/tmp")
    import enamel_random  # type: ignore[import-not-found]  # noqa: PLC0415 - shipped beside us
    import valuecodec  # type: ignore[import-not-found]  # noqa: PLC0415

    with open("/tmp/request.json", encoding="utf-8") as f:
        req = json.load(f)
    values: list[Any] = []
    result: dict[str, Any] = {"ok": True}
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
                values.append(_encode(valuecodec, value, n))
        else:
            text = req["prompt"] + "\n" + req["generator"] + "\n"
            try:
                code = compile(text, "<ENAMEL generator>", "exec")
            except BaseException as exc:  # noqa: BLE001
                raise _Failed("load", 0, repr(exc)) from None
            for n, spec in enumerate(req["specs"]):
                try:
                    value = run_enamel(req["prompt"], req["generator"], spec, enamel_random, code)
                except BaseException as exc:  # noqa: BLE001
                    raise _Failed("call", n, repr(exc)) from None
                values.append(_encode(valuecodec, value, n))
        result["values"] = values
    except _Failed as failed:
        result = {"ok": False, "stage": failed.stage, "index": failed.index,
                  "error": failed.error[:2000]}  # fmt: skip
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
