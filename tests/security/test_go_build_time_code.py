"""No candidate code runs while a Go program builds (red team helper-99).

A `//line _cgo_...` comment let an ordinary file carry `//go:cgo_ldflag` directives on Go
1.19.8 (CVE-2023-39323), and `-wrapper /bin/sh,-c,...` then ran a shell command during the
link, inside the build sandbox, with the shared compiler cache bound writable: the candidate
linked the task's reference from it and shipped that (RLPF 1.26 for the baseline's algorithm).
Three layers now: the directive is refused before the build, Go builds run without cgo, and
each build has a compiler cache of its own unless the cache is explicitly shared.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from perfgym.judge import Judge, JudgeConfig
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks import load_suite
from perfgym.tasks.task import Language
from perfgym.toolchains import BuildCache, BuildStatus, source_policy, toolchain

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain")

#: helper-99's route, reduced: the wrapper leaves a mark in the compiler cache (bound writable
#: at /tmp/gocache when the cache is shared) and in the build's own directory, then links.
WRAPPER_SOURCE = """package main

/*
int perfgym_stub(void) { return 0; }
*/
import "C"

import "fmt"

//line _cgo_perfgym.go:1
//go:cgo_ldflag "-wrapper"
//go:cgo_ldflag "/bin/sh,-c,touch /tmp/gocache/RAN /tmp/build/RAN; exec $0 $@"

func main() { fmt.Println(int(C.perfgym_stub())) }
"""

#: cgo alone, no directive: a source that needs the C toolchain.
CGO_SOURCE = """package main

/*
int perfgym_one(void) { return 1; }
*/
import "C"

import "fmt"

func main() { fmt.Println(int(C.perfgym_one())) }
"""


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="perfgym-go-build-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def sandbox(root: Path) -> Iterator[WarmSandbox]:
    sb = WarmSandbox(BuildCache.at(root).hiding())
    yield sb
    sb.close()


def _marks(cache: BuildCache) -> list[Path]:
    return sorted(cache.root.rglob("RAN"))


def test_a_cgo_directive_is_refused_before_anything_builds(sandbox, root):
    shared = BuildCache.at(root / "refused", compiler_caches=True)
    build = toolchain(Language.GO).build(sandbox, WRAPPER_SOURCE, shared)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert "go:cgo_" in build.reason and "line 11" in build.reason
    assert _marks(shared) == []


def test_without_the_refusal_the_wrapper_still_never_runs(sandbox, root, monkeypatch):
    # The second layer alone: cgo is off in Go builds, so neither the C compiler nor the
    # external linker (whose flags the directive sets) is ever run for a candidate.
    module = sys.modules["perfgym.toolchains.toolchain"]  # the package re-exports a function
    monkeypatch.setattr(module, "refused", lambda *_: None)
    shared = BuildCache.at(root / "no-cgo", compiler_caches=True)
    build = toolchain(Language.GO).build(sandbox, WRAPPER_SOURCE, shared)
    assert build.status is BuildStatus.COMPILE_ERROR, build.log
    assert _marks(shared) == []
    plain = toolchain(Language.GO).build(sandbox, CGO_SOURCE, shared)
    assert plain.status is BuildStatus.COMPILE_ERROR  # import "C" does not build without cgo


def test_an_honest_go_program_mentioning_cgo_in_prose_builds(sandbox, root):
    source = 'package main\n\nimport "fmt"\n\n// no cgo here\nfunc main() { fmt.Println("go") }\n'
    assert source_policy.refused(Language.GO, source.encode()) is None
    build = toolchain(Language.GO).build(sandbox, source, BuildCache.at(root / "honest"))
    assert build.ok, build.log


def test_the_refusal_is_go_only_and_names_the_line():
    text = b'package main\n\n//go:cgo_import_dynamic x y "z"\nfunc main() {}\n'
    assert "line 3" in (source_policy.refused(Language.GO, text) or "")
    assert source_policy.refused(Language.C, b"/* go:cgo_ldflag */ int main(){}") is None


def test_the_judge_gives_the_wrapper_candidate_no_credit(sandbox, root):
    suite = load_suite("perfgym-core")
    task = next(t for t in suite.tasks if t.language is Language.GO)
    cache = BuildCache.at(root / "judge", compiler_caches=True)
    with Judge(JudgeConfig(repeats=1, reference_cache="off"), sandbox=sandbox, cache=cache) as j:
        verdict = j.judge(task, source=WRAPPER_SOURCE, model="helper-99")
    assert verdict.stage.value == "NC" and "go:cgo_" in verdict.reason, verdict.reason
    assert verdict.candidate is None
    assert _marks(cache) == []
