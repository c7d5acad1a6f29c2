"""Lookup-table programs: a stdio program in a task's language that answers every visible input
from a table (keyed by the input's length and a hash of its bytes) and prints `fallback` otherwise — what
a model that saw the visible outputs, or ran the task's generator on its declared seeds, writes."""

from __future__ import annotations

import numpy as np

from perfgym.judge.judge import Judge
from perfgym.judge.plan import plan_task
from perfgym.tasks.task import Language, Task, TestCase

#: Characters of one string literal (Java caps a constant at 65535 bytes).
CHUNK = 16000


#: The hash: h = (h * 257 + byte) mod P, exact in every language's 64-bit (or double) arithmetic.
P = 1_000_000_007


#: Bytes hashed per numpy block: 255 * P * BLOCK stays inside int64.
BLOCK = 1 << 14
#: 257**k mod P for k = BLOCK-1 .. 0 (a block's weights, first byte heaviest), and 257**BLOCK.
_POW = [1]
for _ in range(BLOCK - 1):
    _POW.append(_POW[-1] * 257 % P)
_WEIGHTS = np.array(_POW[::-1], dtype=np.int64)
_SHIFT = _POW[-1] * 257 % P


def key_of(stdin: str) -> tuple[int, int]:
    """(length, h) with h = (h * 257 + byte) mod P over the bytes: Horner's rule taken a block
    at a time (h * 257**len(block) + the block's weighted sum), equal to the byte loop."""
    data = stdin.encode()
    h = 0
    for start in range(0, len(data), BLOCK):
        block = np.frombuffer(data, dtype=np.uint8, count=min(BLOCK, len(data) - start),
                              offset=start).astype(np.int64)  # fmt: skip
        part = int(block @ _WEIGHTS[BLOCK - len(block) :]) % P
        shift = _SHIFT if len(block) == BLOCK else pow(257, len(block), P)
        h = (h * shift + part) % P
    return len(data), h


def _key_of_bytewise(stdin: str) -> tuple[int, int]:
    """The definition `key_of` computes faster (and every table program computes)."""
    data = stdin.encode()
    h = 0
    for b in data:
        h = (h * 257 + b) % P
    return len(data), h


def visible_outputs(judge: Judge, task: Task, cases: list[TestCase] | None = None) -> dict:
    """(length, hash) of each visible input (tests and declared workloads, or `cases`) ->
    its expected output (given, else the reference's, run by the judge in its sandbox)."""
    config = judge.config.model_copy(update={"hidden_workloads": False})
    plan = plan_task(task, config, judge.sandbox, judge.workers)
    out: dict[tuple[int, int], str] = {}
    for case in cases if cases is not None else [*plan.tests, *plan.workloads]:
        known, value = judge._expected.of(plan, case)
        assert known and isinstance(value, str), (task.id, case.id, value)
        out[key_of(case.stdin)] = value
    return out


def _lit(text: str) -> str:
    """A double-quoted literal valid in C, C++, Go, Java, JavaScript and Rust."""
    bad = [c for c in text if not (32 <= ord(c) < 127 or c in "\n\t\r")]
    assert not bad, f"non-ASCII output: {bad[:3]!r}"
    return '"' + (text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                  .replace("\t", "\\t").replace("\r", "\\r")) + '"'  # fmt: skip


def _chunks(text: str) -> list[str]:
    return [_lit(text[i : i + CHUNK]) for i in range(0, len(text), CHUNK)] or ['""']


def table_program(task: Task, table: dict[tuple[int, int], str], fallback: str = "",
                  fallback_source: str | None = None) -> str:  # fmt: skip
    """The lookup program. `fallback_source` (Python tasks only): run that program's code on a
    miss instead of printing `fallback` (a table in front of the baseline)."""
    lang = task.language
    if lang is Language.PYTHON:
        rows = ",\n".join(f"    ({n}, {s}): {text!r}" for (n, s), text in table.items())
        body = f"import sys\n_T = {{\n{rows}\n}}\n_D = sys.stdin.buffer.read()\n"
        body += f"_H = 0\nfor _b in _D:\n    _H = (_H * 257 + _b) % {P}\n"
        body += "_A = _T.get((len(_D), _H))\nif _A is not None:\n"
        body += "    sys.stdout.write(_A)\n    sys.exit(0)\n"
        if fallback_source is None:
            return body + f"sys.stdout.write({fallback!r})\n"
        body += "import io\nsys.stdin = io.TextIOWrapper(io.BytesIO(_D))\n"
        return body + fallback_source
    assert fallback_source is None, "a fallback program is a Python task's"
    make = {Language.C: _c, Language.CPP: _cpp, Language.GO: _go, Language.JAVA: _java,
            Language.JAVASCRIPT: _js, Language.RUST: _rust}[lang]  # fmt: skip
    return make(list(table.items()), fallback)


Rows = list[tuple[tuple[int, int], str]]


def _c_like(rows: Rows, fallback: str, head: str) -> str:
    cases = "".join(
        f"  if (n == {n}LL && s == {s}LL) {{\n"
        + "".join(f"    fputs({c}, stdout);\n" for c in _chunks(text))
        + "    return 0;\n  }\n"
        for (n, s), text in rows
    )
    return (f"{head}\nint main(void) {{\n  long long n = 0, s = 0; int ch;\n"
            f"  while ((ch = getchar()) != EOF) {{ n++; s = (s * 257 + (unsigned char)ch) % {P}LL; }}\n"
            f"{cases}  fputs({_lit(fallback)}, stdout);\n  return 0;\n}}\n")  # fmt: skip


def _c(rows: Rows, fallback: str) -> str:
    return _c_like(rows, fallback, "#include <stdio.h>")


def _cpp(rows: Rows, fallback: str) -> str:
    return _c_like(rows, fallback, "#include <cstdio>")


def _go(rows: Rows, fallback: str) -> str:
    cases = "".join(
        f"\tif n == {n} && s == {s} {{\n"
        + "".join(f"\t\tw.WriteString({c})\n" for c in _chunks(text))
        + "\t\tw.Flush()\n\t\treturn\n\t}\n"
        for (n, s), text in rows
    )
    return ('package main\n\nimport (\n\t"bufio"\n\t"io"\n\t"os"\n)\n\nfunc main() {\n'
            "\tdata, _ := io.ReadAll(os.Stdin)\n\tn, s := int64(len(data)), int64(0)\n"
            f"\tfor _, b := range data {{\n\t\ts = (s*257 + int64(b)) % {P}\n\t}}\n"
            "\tw := bufio.NewWriter(os.Stdout)\n"
            f"{cases}\tw.WriteString({_lit(fallback)})\n\tw.Flush()\n}}\n")  # fmt: skip


def _java(rows: Rows, fallback: str) -> str:
    # one method per answer: a method's bytecode is capped at 64 KiB
    methods, cases = [], []
    for k, ((n, s), text) in enumerate(rows):
        appends = "".join(f"    o.print({c});\n" for c in _chunks(text))
        methods.append(f"  static void a{k}(java.io.PrintStream o) {{\n{appends}  }}\n")
        cases.append(f"    if (n == {n}L && s == {s}L) {{ a{k}(o); o.flush(); return; }}\n")
    return ("public class Main {\n" + "".join(methods)
            + "  public static void main(String[] args) throws Exception {\n"
            "    byte[] d = System.in.readAllBytes(); long n = d.length, s = 0;\n"
            f"    for (byte b : d) s = (s * 257 + (b & 0xff)) % {P}L;\n"
            "    java.io.PrintStream o = new java.io.PrintStream("
            "new java.io.BufferedOutputStream(System.out), false);\n"
            + "".join(cases) + f"    o.print({_lit(fallback)}); o.flush();\n  }}\n}}\n")  # fmt: skip


def _js(rows: Rows, fallback: str) -> str:
    cases = "".join(
        f"if (n === {n} && s === {s}) {{ process.stdout.write("
        + " + ".join(_chunks(text))
        + "); process.exit(0); }\n"
        for (n, s), text in rows
    )
    return ("const d = require('fs').readFileSync(0); const n = d.length; let s = 0;\n"
            f"for (const b of d) s = (s * 257 + b) % {P};\n"
            f"{cases}process.stdout.write({_lit(fallback)});\n")  # fmt: skip


def _rust(rows: Rows, fallback: str) -> str:
    cases = "".join(
        f"    if n == {n} && s == {s} {{\n"
        + "".join(f"        o.write_all({c}.as_bytes()).unwrap();\n" for c in _chunks(text))
        + "        return;\n    }\n"
        for (n, s), text in rows
    )
    return ("use std::io::{Read, Write};\n\nfn main() {\n    let mut d = Vec::new();\n"
            "    std::io::stdin().read_to_end(&mut d).unwrap();\n"
            "    let n = d.len() as i64;\n    let mut s: i64 = 0;\n"
            f"    for &b in d.iter() {{ s = (s * 257 + b as i64) % {P}; }}\n"
            "    let out = std::io::stdout();\n    let mut o = out.lock();\n"
            f"{cases}    o.write_all({_lit(fallback)}.as_bytes()).unwrap();\n}}\n")  # fmt: skip
