"""How many cores a PerfCodeBench task's runs need: read from its sources, where they spawn threads.

A task whose baseline, reference or harness starts threads (or processes) of work asks for
`DETECTED_CORES` cores; one that only mentions them does not. What counts, per language:

- C, C++, CUDA: a `std::thread`/`std::jthread` object, `std::async`, `pthread_create`,
  `thrd_create`; an OpenMP `#pragma omp parallel` only when the build has `-fopenmp` (without
  it the compiler ignores the pragma: nothing runs in parallel). `-pthread` alone spawns
  nothing (many builds carry it) and `std::thread::hardware_concurrency()` asks, not spawns.
- Java: `new Thread(`, a class extending `Thread`, `ExecutorService`/`Executors.new…`,
  `ForkJoinPool`, `CompletableFuture.*Async`, parallel streams.
- Go: a `go` statement (`go func(...)`, `go worker(...)`); `runtime.GOMAXPROCS` alone starts
  no goroutine.
- Python: `multiprocessing`'s `Pool`/`Process`, `concurrent.futures` executors,
  `threading.Thread`.
- JavaScript: `worker_threads`/`new Worker(`; Rust: `thread::spawn`, `thread::scope`, rayon.

Comments are skipped (a commented-out `std::thread` spawns nothing). The task's own `cores`
field (instance.json) wins over detection. Candidates never choose: a task's cores are fixed
by its own files, so every variant of it is measured on the same cores.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from perfgym.tasks.task import Language

#: Cores a task detected as multi-threaded asks for (capped at run time to the machine's).
DETECTED_CORES = 4

_C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HASH_COMMENTS = re.compile(r"#[^\n]*")

_NATIVE = [
    ("std::thread", re.compile(r"\bstd::j?thread\b(?!\s*::)")),
    ("std::async", re.compile(r"\bstd::async\s*\(")),
    ("pthread_create", re.compile(r"\bpthread_create\s*\(")),
    ("thrd_create", re.compile(r"\bthrd_create\s*\(")),
]
_OMP = re.compile(r"(?m)^\s*#\s*pragma\s+omp\s+(?:parallel|target\s+teams|teams)\b")
_OMP_FLAG = re.compile(r"^-f?openmp$|^-fopenmp=|^-qopenmp$")

_SIGNALS: dict[Language, list[tuple[str, re.Pattern[str]]]] = {
    Language.C: _NATIVE,
    Language.CPP: _NATIVE,
    Language.CUDA: _NATIVE,
    Language.JAVA: [
        ("new Thread", re.compile(r"\bnew\s+Thread\s*\(")),
        ("extends Thread", re.compile(r"\bextends\s+Thread\b")),
        ("ExecutorService", re.compile(r"\bExecutorService\b|\bExecutors\s*\.\s*new\w+\s*\(")),
        ("ForkJoinPool", re.compile(r"\bForkJoinPool\b|\bRecursive(?:Task|Action)\b")),
        ("CompletableFuture async", re.compile(r"\bCompletableFuture\s*\.\s*\w+Async\s*\(")),
        ("parallel stream", re.compile(r"\.\s*parallelStream\s*\(|\.\s*parallel\s*\(\s*\)")),
        ("Thread.ofPlatform", re.compile(r"\bThread\s*\.\s*of(?:Platform|Virtual)\s*\(")),
    ],
    Language.GO: [
        ("go statement", re.compile(r"(?m)^\s*go\s+(?:func\b|[\w.]+\s*(?:\[[^\]]*\])?\s*\()")),
    ],
    Language.PYTHON: [
        ("multiprocessing", re.compile(
            r"\bmultiprocessing\s*\.\s*(?:Pool|Process|get_context)\s*\("
            r"|\bfrom\s+multiprocessing(?:\.\w+)?\s+import\b[^\n]*\b(?:Pool|Process)\b"
        )),
        ("concurrent.futures", re.compile(r"\b(?:Process|Thread)PoolExecutor\s*\(")),
        ("threading.Thread", re.compile(
            r"\bthreading\s*\.\s*Thread\s*\(|\bfrom\s+threading\s+import\b[^\n]*\bThread\b"
        )),
    ],
    Language.JAVASCRIPT: [
        ("worker_threads", re.compile(r"\bworker_threads\b|\bnew\s+Worker\s*\(")),
    ],
    Language.RUST: [
        ("thread::spawn", re.compile(r"\bthread\s*::\s*(?:spawn|scope)\b")),
        ("rayon", re.compile(r"\brayon\b|\.\s*par_(?:iter|iter_mut|bridge|chunks)\s*\(")),
    ],
}  # fmt: skip


def _code(source: str, language: Language) -> str:
    """`source` without its comments (C-like or `#`, by language)."""
    if language is Language.PYTHON:
        return _HASH_COMMENTS.sub("", source)
    return _C_COMMENTS.sub("", source)


def source_signals(source: str, language: Language, *, openmp: bool = False) -> list[str]:
    """What in `source` starts threads, by name ('std::thread', 'go statement', ...).
    `openmp`: the build enables OpenMP, so an `omp parallel` pragma counts."""
    code = _code(source, language)
    found = [name for name, pattern in _SIGNALS.get(language, []) if pattern.search(code)]
    if openmp and language in (Language.C, Language.CPP, Language.CUDA) and _OMP.search(code):
        found.append("#pragma omp parallel")
    return found


def openmp_flags(flags: Iterable[str]) -> list[str]:
    """The build flags that enable OpenMP (split on spaces: a `command` may be one string)."""
    words = [w for f in flags for w in f.split()]
    return [w for w in dict.fromkeys(words) if _OMP_FLAG.match(w)]


def detect_cores(
    sources: Sequence[tuple[str, str]], language: Language, flags: Sequence[str]
) -> tuple[int, str]:
    """(cores, why) for a task whose `sources` are (name, text) pairs and whose build uses
    `flags`: `DETECTED_CORES` and the evidence where some source spawns threads, else (1, '')."""
    omp = openmp_flags(flags)
    evidence = []
    for name, text in sources:
        lang = _language_of(name, language)
        for signal in source_signals(text, lang, openmp=bool(omp)):
            evidence.append(f"{signal} in {name}")
    if not evidence:
        return 1, ""
    if omp and any("#pragma omp" in e for e in evidence):
        evidence.append(f"{' '.join(omp)} in the build flags")
    return DETECTED_CORES, "; ".join(evidence)


_EXTENSIONS = {
    ".c": Language.C, ".h": Language.C, ".cc": Language.CPP, ".cpp": Language.CPP,
    ".cxx": Language.CPP, ".hpp": Language.CPP, ".hh": Language.CPP, ".cu": Language.CUDA,
    ".cuh": Language.CUDA, ".java": Language.JAVA, ".go": Language.GO, ".py": Language.PYTHON,
    ".js": Language.JAVASCRIPT, ".mjs": Language.JAVASCRIPT, ".rs": Language.RUST,
}  # fmt: skip


def _language_of(name: str, default: Language) -> Language:
    """A harness file's own language (a C++ harness beside a C solution), else the task's."""
    dot = name.rfind(".")
    return _EXTENSIONS.get(name[dot:].lower(), default) if dot >= 0 else default
