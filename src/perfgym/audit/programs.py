"""Probe programs, written per language: print fixed bytes, a lookup table, the baseline with a
comment, the baseline that idles when it sees it is timed.

Every writer returns the source, or raises `NotWritable` saying why the probe cannot be
written for this task (reported "not applicable", never skipped)."""

from __future__ import annotations

import base64
import hashlib
import pickle
import zlib
from collections.abc import Sequence
from typing import Any

from perfgym.audit.literals import NotWritable, literal, rust_bytes
from perfgym.tasks.task import Language, Task, TaskKind

#: The most output bytes a compiled language's lookup table embeds in its source.
C_TABLE_BYTES = 8 << 20


def _stdio(task: Task) -> None:
    if task.kind is not TaskKind.STDIO:
        raise NotWritable(f"a {task.kind.value} task (this probe is written for stdio tasks)")


def printing(task: Task, data: bytes, *, then: str) -> str:
    """A stdio program that prints `data` and then exits 0 (`then='exit'`) or crashes
    (`then='crash'`), without reading its input."""
    _stdio(task)
    lang, lit = task.language, None
    crash = then == "crash"
    if lang is Language.PYTHON:
        end = "raise SystemExit(3)" if crash else "raise SystemExit(0)"
        return f"import sys\nsys.stdout.buffer.write({literal(data, lang)})\nsys.stdout.flush()\n{end}\n"
    if lang in (Language.C, Language.CPP):
        lit = literal(data, lang)
        end = "abort();" if crash else "return 0;"
        return ("#include <stdio.h>\n#include <stdlib.h>\n"
                f"static const char out[] = {lit};\n"
                "int main(void) { fwrite(out, 1, sizeof out - 1, stdout); fflush(stdout); "
                f"{end} }}\n")  # fmt: skip
    _utf8(data, lang)
    lit = literal(data, lang)
    code = 3 if crash else 0
    if lang is Language.JAVASCRIPT:
        return f"process.stdout.write({lit}, () => process.exit({code}));\n"
    if lang is Language.GO:
        return ('package main\n\nimport "os"\n\nfunc main() {\n'
                f"\tos.Stdout.WriteString({lit})\n\tos.Exit({code})\n}}\n")  # fmt: skip
    if lang is Language.JAVA:
        return ("public class Main {\n  public static void main(String[] a) throws Exception {\n"
                f"    System.out.write({lit}.getBytes(\"UTF-8\"));\n    System.out.flush();\n"
                f"    System.exit({code});\n  }}\n}}\n")  # fmt: skip
    if lang is Language.RUST:
        return ("use std::io::Write;\nfn main() {\n"
                f"    std::io::stdout().write_all({lit}).unwrap();\n"
                "    std::io::stdout().flush().unwrap();\n"
                f"    std::process::exit({code});\n}}\n")  # fmt: skip
    raise NotWritable(f"no probe writer for {lang.value}")


def _utf8(data: bytes, lang: Language) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotWritable(
            f"the output is not UTF-8 (a {lang.value} literal cannot hold it)"
        ) from None


def returning(task: Task, value: Any, *, raise_after: bool = False, exit_early: bool = False
              ) -> str:  # fmt: skip
    """A function task's entry point that returns `value` (or raises, or ends its process)."""
    if task.kind is not TaskKind.FUNCTION or task.language is not Language.PYTHON:
        raise NotWritable("a function task in Python is needed")
    blob = base64.b64encode(pickle.dumps(value)).decode()
    body = f"return __import__('pickle').loads(__import__('base64').b64decode({blob!r}))"
    if raise_after:
        body = "raise RuntimeError('audit probe')"
    if exit_early:
        body = "__import__('os')._exit(0)"
    return f"def {task.entry_point}(*args, **kwargs):\n    {body}\n"


def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64 bits: the lookup table's key in C and C++ (no library needed)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def lookup_stdio(task: Task, table: Sequence[tuple[bytes, bytes]]) -> str:
    """A stdio program answering each input of `table` with its output, and printing nothing
    for any other input: what a model that saw the visible cases' outputs would write."""
    _stdio(task)
    lang = task.language
    if lang is Language.PYTHON:
        rows = {hashlib.sha256(i).hexdigest(): o for i, o in table}
        blob = base64.b64encode(zlib.compress(pickle.dumps(rows), 9)).decode()
        return ("import sys, hashlib, pickle, zlib, base64\n"
                f"T = pickle.loads(zlib.decompress(base64.b64decode({blob!r})))\n"
                "data = sys.stdin.buffer.read()\n"
                "sys.stdout.buffer.write(T.get(hashlib.sha256(data).hexdigest(), b''))\n")  # fmt: skip
    if sum(len(o) for _, o in table) > C_TABLE_BYTES:  # compilers choke on more
        raise NotWritable(f"the visible outputs exceed {C_TABLE_BYTES >> 20} MiB")
    if lang in (Language.C, Language.CPP):
        entries = ",\n".join(f"  {{0x{fnv1a64(i):016x}ULL, {literal(o, lang)}, {len(o)}}}"
                             for i, o in table)  # fmt: skip
        return ("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
                "struct row { unsigned long long key; const char *out; size_t n; };\n"
                f"static const struct row T[] = {{\n{entries}\n}};\n"
                "int main(void) {\n  size_t cap = 1 << 20, n = 0, r;\n"
                "  unsigned char *buf = (unsigned char *)malloc(cap);\n"
                "  while ((r = fread(buf + n, 1, cap - n, stdin)) > 0) {\n    n += r;\n"
                "    if (n == cap) { cap *= 2; buf = (unsigned char *)realloc(buf, cap); }\n  }\n"
                "  unsigned long long h = 0xcbf29ce484222325ULL;\n"
                "  for (size_t i = 0; i < n; i++) { h ^= buf[i]; h *= 0x100000001b3ULL; }\n"
                "  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)\n"
                "    if (T[i].key == h) { fwrite(T[i].out, 1, T[i].n, stdout); break; }\n"
                "  return 0;\n}\n")  # fmt: skip
    return _lookup_other(lang, table)


#: Java: the longest string literal written (a class file constant holds 65535 bytes).
JAVA_CHUNK = 32000


def _lookup_other(lang: Language, table: Sequence[tuple[bytes, bytes]]) -> str:
    """The lookup table in JavaScript, Go, Java (SHA-256 keys, base64 outputs) or Rust
    (FNV-1a keys, byte-string outputs)."""
    rows = [(hashlib.sha256(i).hexdigest(), base64.b64encode(o).decode()) for i, o in table]
    if lang is Language.JAVASCRIPT:
        body = ",\n".join(f"  {k!r}: {v!r}" for k, v in rows)
        return ("const fs = require('fs'), crypto = require('crypto');\n"
                f"const T = {{\n{body}\n}};\n"
                "const data = fs.readFileSync(0);\n"
                "const hit = T[crypto.createHash('sha256').update(data).digest('hex')];\n"
                "if (hit !== undefined) process.stdout.write(Buffer.from(hit, 'base64'));\n")  # fmt: skip
    if lang is Language.GO:
        body = "".join(f'\t"{k}": "{v}",\n' for k, v in rows)
        return ('package main\n\nimport (\n\t"crypto/sha256"\n\t"encoding/base64"\n'
                '\t"encoding/hex"\n\t"io"\n\t"os"\n)\n\n'
                f"var T = map[string]string{{\n{body}}}\n\n"
                "func main() {\n\tdata, _ := io.ReadAll(os.Stdin)\n"
                "\tsum := sha256.Sum256(data)\n"
                "\tif hit, ok := T[hex.EncodeToString(sum[:])]; ok {\n"
                "\t\tout, _ := base64.StdEncoding.DecodeString(hit)\n"
                "\t\tos.Stdout.Write(out)\n\t}\n}\n")  # fmt: skip
    if lang is Language.JAVA:

        def chunks(v: str) -> str:
            parts = [v[i : i + JAVA_CHUNK] for i in range(0, len(v), JAVA_CHUNK)] or [""]
            return "new String[]{" + ", ".join(f'"{p}"' for p in parts) + "}"

        body = "".join(f'    T.put("{k}", {chunks(v)});\n' for k, v in rows)
        return ("import java.io.*;\nimport java.security.MessageDigest;\nimport java.util.*;\n\n"
                "public class Main {\n"
                "  static final Map<String, String[]> T = new HashMap<>();\n"
                f"  static void fill() {{\n{body}  }}\n"
                "  public static void main(String[] a) throws Exception {\n    fill();\n"
                "    byte[] data = System.in.readAllBytes();\n"
                "    byte[] d = MessageDigest.getInstance(\"SHA-256\").digest(data);\n"
                "    StringBuilder h = new StringBuilder();\n"
                "    for (byte b : d) h.append(String.format(\"%02x\", b & 0xff));\n"
                "    String[] hit = T.get(h.toString());\n"
                "    if (hit != null) {\n"
                "      System.out.write(Base64.getDecoder().decode(String.join(\"\", hit)));\n"
                "      System.out.flush();\n    }\n  }\n}\n")  # fmt: skip
    if lang is Language.RUST:
        body = "".join(f"    (0x{fnv1a64(i):016x}, {rust_bytes(o)}),\n" for i, o in table)
        return ("use std::io::{Read, Write};\n\n"
                f"const T: &[(u64, &[u8])] = &[\n{body}];\n\n"
                "fn main() {\n    let mut data = Vec::new();\n"
                "    std::io::stdin().read_to_end(&mut data).unwrap();\n"
                "    let mut h: u64 = 0xcbf29ce484222325;\n"
                "    for b in &data {\n        h ^= *b as u64;\n"
                "        h = h.wrapping_mul(0x100000001b3);\n    }\n"
                "    for (k, out) in T {\n        if *k == h {\n"
                "            std::io::stdout().write_all(out).unwrap();\n            break;\n"
                "        }\n    }\n}\n")  # fmt: skip
    raise NotWritable(f"no lookup-table writer for {lang.value}")


def lookup_function(task: Task, table: Sequence[tuple[list[Any], Any]]) -> str:
    """A function task's entry point answering each visible argument list with its expected
    value (keyed by repr), and None for any other."""
    if task.kind is not TaskKind.FUNCTION or task.language is not Language.PYTHON:
        raise NotWritable("a function task in Python is needed")
    rows = {repr(list(args)): value for args, value in table}
    blob = base64.b64encode(zlib.compress(pickle.dumps(rows), 9)).decode()
    return ("import pickle, zlib, base64\n"
            f"_T = pickle.loads(zlib.decompress(base64.b64decode({blob!r})))\n"
            f"def {task.entry_point}(*args):\n    return _T.get(repr(list(args)))\n")  # fmt: skip


_COMMENT = {Language.PYTHON: "#"}


def with_comment(task: Task, source: str) -> str:
    """`source` with one comment line added at its end (the same program, other bytes)."""
    mark = _COMMENT.get(task.language, "//")
    sep = "" if source.endswith("\n") else "\n"
    return f"{source}{sep}{mark} a comment that changes nothing\n"


#: Python: what a program that wants to tell a timed run from a test run can look at.
DETECT_PY = """
def _audit_timed():
    import os
    try:
        if len(os.sched_getaffinity(0)) < (os.cpu_count() or 1):
            return True
    except (AttributeError, OSError):
        pass
    for key in os.environ:
        if any(w in key.upper() for w in ("PERF", "BENCH", "MEASURE", "TIMED", "TIMING")):
            return True
    try:
        with open("/proc/self/cgroup") as f:
            if any(w in f.read() for w in ("measure", "timed", "bench", "pin")):
                return True
    except OSError:
        pass
    return False
"""


def timing_aware(task: Task, baseline: str) -> str:
    """The baseline, except that when it sees signs of a timed run (its cores, environment,
    cgroup) it does no work at all: exits at once (stdio) or returns None (function)."""
    if task.language is not Language.PYTHON:
        raise NotWritable("the timing-detection probe is written for Python tasks only")
    if task.kind is TaskKind.STDIO:
        if "from __future__" in baseline:
            raise NotWritable("the baseline has a __future__ import")
        return f"{DETECT_PY}\nif _audit_timed():\n    raise SystemExit(0)\n{baseline}"
    if task.kind is TaskKind.FUNCTION:
        name = task.entry_point
        return (f"{baseline}\n{DETECT_PY}\n_audit_orig = {name}\n\n"
                f"def {name}(*args, **kwargs):\n    if _audit_timed():\n        return None\n"
                "    return _audit_orig(*args, **kwargs)\n")  # fmt: skip
    raise NotWritable(f"a {task.kind.value} task")


def lookup_or_baseline(task: Task, table: Sequence[tuple[Any, Any]], baseline: str) -> str:
    """The lookup table, falling back to the baseline on any input it does not hold: always
    correct, and fast exactly where the inputs were seen (Python stdio and function tasks)."""
    if task.language is not Language.PYTHON:
        raise NotWritable("the lookup-with-fallback probe is written for Python tasks only")
    if task.kind is TaskKind.FUNCTION:
        rows = {repr(list(args)): value for args, value in table}
        blob = base64.b64encode(zlib.compress(pickle.dumps(rows), 9)).decode()
        name = task.entry_point
        return (f"{baseline}\n\nimport pickle as _p, zlib as _z, base64 as _b\n"
                f"_T = _p.loads(_z.decompress(_b.b64decode({blob!r})))\n_audit_base = {name}\n\n\n"
                f"def {name}(*args):\n    key = repr(list(args))\n    if key in _T:\n"
                "        return _T[key]\n    return _audit_base(*args)\n")  # fmt: skip
    _stdio(task)
    rows = {hashlib.sha256(i).hexdigest(): o for i, o in table}
    blob = base64.b64encode(zlib.compress(pickle.dumps(rows), 9)).decode()
    return ("import sys, io, hashlib, pickle, zlib, base64\n"
            f"_T = pickle.loads(zlib.decompress(base64.b64decode({blob!r})))\n"
            "_data = sys.stdin.buffer.read()\n"
            "_hit = _T.get(hashlib.sha256(_data).hexdigest())\n"
            "if _hit is not None:\n    sys.stdout.buffer.write(_hit)\n    sys.stdout.flush()\n"
            "    raise SystemExit(0)\n"
            "sys.stdin = io.TextIOWrapper(io.BytesIO(_data), encoding='utf-8')\n"
            f"exec(compile({baseline!r}, 'baseline.py', 'exec'), {{'__name__': '__main__'}})\n")  # fmt: skip
