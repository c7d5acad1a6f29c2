"""A compiled harness task's candidate that takes over a library call its harness makes
(`clock_gettime`, `steady_clock::now`, `printf`): the link binds the harness's calls to the
solution's code, so the solution says how long it took. Read from the builds' symbol tables;
flagged, and scored as a program that hid time (red team helper-54: paid 1.134 against its
honest twin's 1.018; helper-55: the same through `printf`, a timer typed as data and four
million symbols)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import perfgym.judge.elf_symbols as elf_symbols
import perfgym.judge.replaced_calls as replaced_calls
from perfgym.judge import Candidate, Judge, JudgeConfig, Stage, TimingStatus
from perfgym.judge.replaced_calls import (
    CALL_REPLACED,
    HARNESS_OBJECTS,
    OwnNames,
    flag_replaced_calls,
    imported,
    own_names,
    taken_over,
    weak_defined,
)
from perfgym.judge.verdict import Timing, Verdict
from perfgym.rewards import get_reward
from perfgym.run_status import CLOCK_CHEAT_FLAGS
from perfgym.tasks import load_suite

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"

_SWAR = """
static inline uint64_t popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
}
static uint64_t slow_part(const uint64_t *words, size_t m) {
    uint64_t total = 0;
    for (size_t i = 0; i < m; i++)
        for (int bit = 0; bit < 64; bit++) total += (words[i] >> bit) & 1u;
    return total;
}
"""

#: A third of the words counted bit by bit (the baseline's way), the rest with SWAR.
HONEST = '#include "interface.h"\n' + _SWAR + """
uint64_t popcount_sum(const uint64_t *words, size_t n) {
    size_t m = n / 3;
    uint64_t a = slow_part(words, m), b = 0;
    for (size_t i = m; i < n; i++) b += popcount64(words[i]);
    return a + b;
}
"""

#: The same work; the slow third is kept off the harness's clock, which is the solution's.
HIDING = """#define _POSIX_C_SOURCE 199309L
#include <time.h>
#include "interface.h"
static long long hidden_ns = 0;
static long long real_ns(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
__attribute__((visibility("hidden"))) int clock_gettime(clockid_t clk, struct timespec *tp) {
    (void)clk;
    long long t = real_ns() - hidden_ns;
    tp->tv_sec = t / 1000000000LL;
    tp->tv_nsec = t % 1000000000LL;
    return 0;
}
""" + _SWAR + """
uint64_t popcount_sum(const uint64_t *words, size_t n) {
    size_t m = n / 3;
    long long t0 = real_ns();
    uint64_t a = slow_part(words, m), b = 0;
    hidden_ns += real_ns() - t0;
    for (size_t i = m; i < n; i++) b += popcount64(words[i]);
    return a + b;
}
"""

#: helper-55's false positive of the first rule: honest SWAR with a static helper named `clock`.
STATIC_CLOCK = """#include "interface.h"
static __attribute__((noinline)) uint64_t clock(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
}
uint64_t popcount_sum(const uint64_t *words, size_t n) {
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++) t += clock(words[i]);
    return t;
}
"""

#: C++: the harness times with std::chrono::steady_clock; this one's clock stands still.
FROZEN_CHRONO = """#include "interface.h"
#include <algorithm>
#include <chrono>
#include <functional>
namespace std { namespace chrono { inline namespace _V2 {
steady_clock::time_point steady_clock::now() noexcept { return time_point(duration(0)); }
} } }
std::vector<uint32_t> top_k(const std::vector<uint32_t>& values, std::size_t k) {
    std::vector<uint32_t> v(values);
    std::sort(v.begin(), v.end(), std::greater<uint32_t>());
    v.resize(k < v.size() ? k : v.size());
    return v;
}
"""


#: C++: the unsized `operator delete`, which libstdc++'s sized one calls through its own PLT
#: (helper-59 hooked the harness's untimed reference there); this one only counts the calls.
UNSIZED_DELETE = """#include <cstdlib>
#include <new>
static unsigned long deletes_seen;
void operator delete(void *p) noexcept { ++deletes_seen; std::free(p); }
"""


#: A harness's shape: it times a call with clock_gettime and prints its line with printf.
HARNESS = """#include <stdio.h>
#include <time.h>
int work(int);
int main(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int r = work(7);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("{\\"elapsed_ns\\": %ld, \\"r\\": %d}\\n", (long)(b.tv_nsec - a.tv_nsec), r);
    return 0;
}
"""

HONEST_WORK = "int work(int x) { return x * 6; }\n"


#: The same in C++, printing with iostreams: `<<` on a long long is a call of libstdc++'s
#: `std::ostream::_M_insert<long long>`, imported (an `extern template` member).
CPP_HARNESS = """#include <chrono>
#include <iostream>
int work(int);
int main() {
    auto a = std::chrono::steady_clock::now();
    int r = work(7);
    auto b = std::chrono::steady_clock::now();
    std::cout << "{\\"elapsed_ns\\": " << (long long)(b - a).count() << ", \\"r\\": " << r
              << "}" << std::endl;
    return 0;
}
"""


#: A C++ harness that times with steady_clock and prints with printf (no streams of its own).
CPP_PRINTF_HARNESS = """#include <chrono>
#include <cstdio>
int work(int);
int main() {
    auto a = std::chrono::steady_clock::now();
    int r = work(7);
    auto b = std::chrono::steady_clock::now();
    std::printf("{\\"elapsed_ns\\": %lld, \\"r\\": %d}\\n", (long long)(b - a).count(), r);
    return 0;
}
"""


def _build(tmp_path: Path, name: str, solution: str, suffix: str = ".c",
           harness: str | None = None) -> Path:  # fmt: skip
    """The harness and `solution` linked into <name>/bench, as a compile-form recipe does."""
    out = tmp_path / name
    out.mkdir()
    cc, default = ("g++", CPP_HARNESS) if suffix == ".cpp" else ("gcc", HARNESS)
    harness = harness or default
    (out / f"harness{suffix}").write_text(harness)
    (out / f"solution{suffix}").write_text(solution)
    subprocess.run([cc, "-O2", str(out / f"harness{suffix}"), str(out / f"solution{suffix}"),
                    "-o", str(out / "bench")], check=True, capture_output=True)  # fmt: skip
    subprocess.run([str(out / "bench")], check=True, capture_output=True)
    return out


def _taken(tmp_path: Path, name: str, solution: str, suffix: str = ".c") -> frozenset[str]:
    """What the solution's build takes of the harness's library calls (an honest build's
    imports), or raises where its tables cannot be read."""
    own = imported(_build(tmp_path, f"own-{name}", HONEST_WORK if suffix == ".c" else
                          "int work(int x) { return x * 6; }\n", suffix))  # fmt: skip
    found, unreadable = taken_over(_build(tmp_path, name, solution, suffix), own)
    assert not unreadable, unreadable
    return found


# -- the reader: a call the harness no longer makes to its library, and the solution defines --
def test_the_harness_imports_its_timer_and_its_printer(tmp_path) -> None:
    assert {"clock_gettime", "printf"} <= imported(_build(tmp_path, "h", HONEST_WORK))


def test_an_honest_solution_takes_nothing(tmp_path) -> None:
    assert _taken(tmp_path, "honest", HONEST_WORK) == frozenset()


def test_a_hidden_global_clock_takes_the_harness_call(tmp_path) -> None:
    sol = ("#include <time.h>\n__attribute__((visibility(\"hidden\"))) int clock_gettime("
           "clockid_t c, struct timespec *t) { (void)c; t->tv_sec = 0; t->tv_nsec = 1; return 0; }\n"
           + HONEST_WORK)  # fmt: skip
    assert _taken(tmp_path, "hidden", sol) == {"clock_gettime"}


def test_a_clock_typed_as_data_takes_it_too(tmp_path) -> None:
    """helper-55: an assembly label typed `@object` is no function, and the link binds it."""
    sol = ("#include <time.h>\n__attribute__((used)) static int fake(clockid_t c, struct timespec *t)"
           " { (void)c; t->tv_sec = 0; t->tv_nsec = 1; return 0; }\n"
           "__asm__(\".text\\n.globl clock_gettime\\n.type clock_gettime, @object\\n"
           "clock_gettime:\\n jmp fake\\n.size clock_gettime, 5\\n\");\n" + HONEST_WORK)  # fmt: skip
    assert _taken(tmp_path, "object", sol) == {"clock_gettime"}


def test_a_printf_of_its_own_takes_the_harness_line(tmp_path) -> None:
    """helper-55: no timer at all; the harness's report line runs through the solution."""
    sol = ("#include <stdarg.h>\n#include <stdio.h>\nint printf(const char *f, ...) {\n"
           "va_list a; va_start(a, f); int n = vfprintf(stdout, f, a); va_end(a); return n; }\n"
           + HONEST_WORK)  # fmt: skip
    assert _taken(tmp_path, "printf", sol) == {"printf"}


def test_a_clock_behind_a_flood_of_symbols_is_found(tmp_path) -> None:
    """helper-55: four million labels ran the first reader out of its budget. The names are
    now looked up in the string tables, not walked (200,000 here: the build stays quick)."""
    sol = ("#include <time.h>\n__asm__(\".text\\n.macro pgf\\npg\\\\@:\\n.endm\\n"
           ".rept 200000\\npgf\\n.endr\\n\");\n"
           "__attribute__((visibility(\"hidden\"))) int clock_gettime(clockid_t c, "
           "struct timespec *t) { (void)c; t->tv_sec = 0; t->tv_nsec = 1; return 0; }\n"
           + HONEST_WORK)  # fmt: skip
    assert _taken(tmp_path, "flood", sol) == {"clock_gettime"}


def test_static_helpers_of_those_names_take_nothing(tmp_path) -> None:
    """helper-55's false positive of the first rule: a static helper named `clock` (and one
    named `clock_gettime`) leaves the harness's calls to the library."""
    sol = ("static __attribute__((noinline)) int clock(int x) { return x * 2; }\n"
           "static __attribute__((noinline)) int clock_gettime(int x) { return x * 3; }\n"
           "int work(int x) { return clock(x) + clock_gettime(x) - x * 5 + x * 6 - x * 0; }\n")
    assert _taken(tmp_path, "static", sol) == frozenset()


def test_a_name_only_one_own_solution_imports_is_that_solutions_not_the_harnesses(tmp_path):
    """A baseline that calls `qsort` imports it; the harness does not, so a candidate with a
    `qsort` of its own takes nothing from the harness. Its own `clock_gettime` does."""
    sorting = ("#include <stdlib.h>\nstatic int cmp(const void *a, const void *b) {"
               " return *(const int *)a - *(const int *)b; }\n"
               "int work(int x) { int v[3] = {x, 2, 1}; qsort(v, 3, sizeof v[0], cmp);"
               " return v[0] * 0 + x * 6; }\n")  # fmt: skip
    own = [OwnNames(imported(b), weak_defined(b)) for b in (
        _build(tmp_path, "baseline", sorting), _build(tmp_path, "reference", HONEST_WORK))]
    assert "qsort" in own[0].imports and "qsort" not in own[1].imports
    mine = _build(tmp_path, "candidate", "#include <stddef.h>\nvoid qsort(void *b, size_t n, "
                  "size_t s, int (*c)(const void *, const void *)) { (void)b; (void)n; (void)s;"
                  " (void)c; }\n" + HONEST_WORK)  # fmt: skip
    timed = Timing(estimate_s=0.01, samples_s=[0.01], clock="harness")

    def verdict() -> Verdict:
        return Verdict(task_id="t", stage=Stage.OK, candidate=timed.model_copy(deep=True))

    v = verdict()
    assert not flag_replaced_calls(v, str(mine), own) and not v.flags
    clock = _build(tmp_path, "clock", "#include <time.h>\nint clock_gettime(clockid_t c, "
                   "struct timespec *t) { (void)c; t->tv_sec = 0; t->tv_nsec = 1; return 0; }\n"
                   + HONEST_WORK)  # fmt: skip
    v = verdict()
    assert flag_replaced_calls(v, str(clock), own) and v.flags == [CALL_REPLACED]


# -- helper-56: the import kept beside the definition, C++ names, forged tables -----------------
def test_a_clock_that_keeps_the_import_with_symver_takes_the_call(tmp_path) -> None:
    """The solution's hidden `clock_gettime` takes the harness's call while the real one is
    imported under its version (`.symver`): the name is still imported, and still taken."""
    sol = ("#include <time.h>\nint real_cg(clockid_t, struct timespec *);\n"
           "__asm__(\".symver real_cg,clock_gettime@GLIBC_2.2.5\");\n"
           "__attribute__((visibility(\"hidden\"))) int clock_gettime(clockid_t c, "
           "struct timespec *t) { int r = real_cg(c, t); t->tv_nsec /= 2; return r; }\n"
           + HONEST_WORK)  # fmt: skip
    build = _build(tmp_path, "symver", sol)
    assert "clock_gettime" in imported(build)
    assert taken_over(build, frozenset({"clock_gettime", "printf"}))[0] == {"clock_gettime"}


def test_a_default_versioned_clock_of_its_own_takes_the_call(tmp_path) -> None:
    """helper-57: `.symver mine, clock_gettime@@V` binds the harness's unversioned call and is
    written `clock_gettime@@V` in the static symbol table."""
    sol = ("#include <time.h>\nint mine(clockid_t c, struct timespec *t) { (void)c; "
           "t->tv_sec = 0; t->tv_nsec = 1; return 0; }\n"
           "__asm__(\".symver mine, clock_gettime@@PG57\");\n" + HONEST_WORK)  # fmt: skip
    assert _taken(tmp_path, "at-at", sol) == {"clock_gettime"}


def test_a_printf_that_keeps_the_import_with_symver_takes_the_line(tmp_path) -> None:
    sol = ("#include <stdarg.h>\n#include <stdio.h>\nint real_pf(const char *, ...);\n"
           "__asm__(\".symver real_pf,printf@GLIBC_2.2.5\");\n"
           "__attribute__((visibility(\"hidden\"))) int printf(const char *f, ...) {\n"
           "va_list a; va_start(a, f); int n = vfprintf(stdout, f, a); va_end(a); return n; }\n"
           + HONEST_WORK)  # fmt: skip
    assert _taken(tmp_path, "symver-printf", sol) == {"printf"}


def test_a_cpp_solution_taking_the_harness_stream_insert_is_seen(tmp_path) -> None:
    """helper-56: not a clock; the number the harness prints goes through the solution."""
    sol = ("#include <ostream>\n"
           "extern \"C\" void *real_l(void *o, long v) __asm__(\"_ZNSo9_M_insertIlEERSoT_\");\n"
           "extern \"C\" void *mine_ll(void *o, long long v) __asm__(\"_ZNSo9_M_insertIxEERSoT_\");\n"
           "extern \"C\" void *mine_ll(void *o, long long v) { return real_l(o, (long)(v / 2)); }\n"
           "int work(int x) { return x * 6; }\n")  # fmt: skip
    assert _taken(tmp_path, "cout", sol, ".cpp") == {"_ZNSo9_M_insertIxEERSoT_"}


def test_an_honest_cpp_solution_using_the_library_takes_nothing(tmp_path) -> None:
    """Strings, streams, vectors and sorting of its own: the same header code the harness
    imports is not defined by the solution."""
    sol = ("#include <algorithm>\n#include <sstream>\n#include <string>\n#include <vector>\n"
           "#include <chrono>\n#include <iostream>\n"
           "int work(int x) { std::vector<long long> v{3, 1, 2}; std::sort(v.begin(), v.end());\n"
           "  std::ostringstream s; s << (long long)x << v[0]; std::string t = s.str();\n"
           "  auto n = std::chrono::steady_clock::now().time_since_epoch().count();\n"
           "  if (n < 0) std::cerr << t; return x * 6 + (int)t.size() * 0; }\n")  # fmt: skip
    assert _taken(tmp_path, "cpp-honest", sol, ".cpp") == frozenset()


def test_an_allocator_of_its_own_takes_the_harness_calls(tmp_path) -> None:
    """The harness allocates after its input exists, outside its clock: a solution's malloc
    runs there (helper-56 found an honest one flagged: kept, and documented)."""
    harnessed = HARNESS.replace("int r = work(7);",
                                "int r = work(7); char *volatile p = malloc(16); free(p);")
    out = tmp_path / "alloc"
    out.mkdir()
    own = tmp_path / "own-alloc"
    own.mkdir()
    for d, sol in ((own, HONEST_WORK), (out, "#include <stddef.h>\nstatic char arena[1 << 16];"
                   "\nstatic size_t used;\nvoid *malloc(size_t n) { void *p = arena + used; "
                   "used += (n + 15) & ~(size_t)15; return p; }\nvoid free(void *p) { (void)p; }"
                   "\n" + HONEST_WORK)):  # fmt: skip
        (d / "harness.c").write_text("#include <stdlib.h>\n" + harnessed)
        (d / "solution.c").write_text(sol)
        subprocess.run(["gcc", "-O2", str(d / "harness.c"), str(d / "solution.c"), "-o",
                        str(d / "bench")], check=True, capture_output=True)  # fmt: skip
    assert {"malloc", "free"} <= taken_over(out, imported(own))[0]


def test_a_strong_definition_of_a_harness_instantiation_takes_its_calls(tmp_path) -> None:
    """A harness's inline functions and template instantiations are weak in its object; a
    strong definition of one in the solution is the one the link keeps, and the harness's
    calls (untimed ones too: they see its input and its expected answer) run it."""
    harness = CPP_HARNESS.replace("int work(int);", "int work(int);\n"
                                  "inline __attribute__((noinline)) long long shown(long long ns)"
                                  " { return ns; }").replace("(long long)(b - a).count()",
                                                             "shown((b - a).count())")  # fmt: skip
    built = []
    for name, sol in (("own", "int work(int x) { return x * 6; }\n"),
                      ("strong", "long long shown(long long ns) { return ns / 2; }\n"
                                 "int work(int x) { return x * 6; }\n"),
                      ("weak", "inline __attribute__((noinline)) long long shown(long long ns)"
                               " { return ns; }\nint work(int x) { return (int)shown(x * 6); }\n")):
        d = tmp_path / name
        d.mkdir()
        (d / "harness.cpp").write_text(harness)
        (d / "solution.cpp").write_text(sol)
        subprocess.run(["g++", "-O2", str(d / "harness.cpp"), str(d / "solution.cpp"), "-o",
                        str(d / "bench")], check=True, capture_output=True)  # fmt: skip
        built.append(d)
    own, strong, weak = built
    names = weak_defined(own)
    assert "_Z5shownx" in names
    assert taken_over(strong, imported(own), names) == (frozenset({"_Z5shownx"}), "")
    # the same inline function emitted weak by an honest solution is the harness's: not taken
    assert taken_over(weak, imported(own), names) == (frozenset(), "")


def test_the_fixture_harness_instantiations_are_read_as_weak() -> None:
    """cpp_topk_sum's harness builds its expected answer with a std::priority_queue: its
    vector's members are weak in every own build, and the reference defines none strong."""
    import tempfile

    task = FIXTURES / "cpp_topk_sum"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        subprocess.run(["g++", "-O2", "-std=c++17", f"-I{task}/harness",
                        str(task / "harness" / "benchmark_main.cpp"),
                        str(task / "reference" / "solution.cpp"), "-o", str(out / "bench")],
                       check=True, capture_output=True)  # fmt: skip
        weak = weak_defined(out)
        assert any("_M_realloc_insert" in n for n in weak), sorted(weak)
        assert taken_over(out, imported(out), weak) == (frozenset(), "")


#: cpp_topk_sum solved with the std headers' templates hidden (helper-57's false positive: its
#: hidden copy of the `std::sort` both own solutions instantiate read as a strong one).
HIDDEN_PRAGMA_TOPK = """#pragma GCC visibility push(hidden)
#include <algorithm>
#include <functional>
#include <vector>
#pragma GCC visibility pop
#include "interface.h"
std::vector<uint32_t> top_k(const std::vector<uint32_t>& values, std::size_t k) {
    std::vector<uint32_t> v(values);
    std::sort(v.begin(), v.end(), std::greater<uint32_t>());
    v.resize(k < v.size() ? k : v.size());
    return v;
}
"""

#: The constructor the harness builds its input with, replaced: it sees the input first.
STRONG_CTOR_TOPK = """#include <cstdlib>
#include <cstring>
#include "interface.h"
extern "C" void pg_ctor(uint32_t **self, std::size_t n, const void *) __asm__("_ZNSt6vectorIjSaIjEEC2EmRKS0_");
extern "C" void pg_ctor(uint32_t **self, std::size_t n, const void *) {
    self[0] = static_cast<uint32_t *>(std::calloc(n ? n : 1, sizeof(uint32_t)));
    self[1] = self[2] = self[0] + n;
}
""" + "\n".join(FIXTURES.joinpath("cpp_topk_sum", "reference", "solution.cpp").read_text()
                .splitlines()[1:]) + "\n"  # fmt: skip


def test_the_harness_compiled_alone_tells_its_instantiations_from_its_solutions(tmp_path):
    """With the harness's own objects beside an own build, only what the harness itself
    instantiates is protected: a hidden copy of the own solutions' `std::sort` is not flagged;
    a strong definition of the harness's vector constructor still is."""
    import types

    task = FIXTURES / "cpp_topk_sum"
    flags = ["-O2", "-std=c++17", f"-I{task / 'harness'}"]
    harness = str(task / "harness" / "benchmark_main.cpp")

    def build(name: str, solution: str, objects: bool) -> Path:
        out = tmp_path / name
        out.mkdir()
        (out / "solution.cpp").write_text(solution)
        subprocess.run(["g++", *flags, harness, str(out / "solution.cpp"), "-o",
                        str(out / "bench")], check=True, capture_output=True)  # fmt: skip
        if objects:
            (out / HARNESS_OBJECTS).mkdir()
            subprocess.run(["g++", *flags, "-c", harness, "-o",
                            str(out / HARNESS_OBJECTS / "0.o")], check=True, capture_output=True)
            (out / HARNESS_OBJECTS / ".done").write_text("ok\n")
        return out

    def own(objects: bool) -> list[OwnNames]:
        return [own_names(types.SimpleNamespace(own_names=None, build_dir=str(build(
            f"{role}-{objects}", (task / role / "solution.cpp").read_text(), objects))))
            for role in ("baseline", "reference")]  # fmt: skip

    def flagged(build_dir: Path, names: list[OwnNames]) -> bool:
        v = Verdict(task_id="t", stage=Stage.OK,
                    candidate=Timing(estimate_s=0.01, samples_s=[0.01], clock="harness"))
        return flag_replaced_calls(v, str(build_dir), names)

    alone, binaries_only = own(True), own(False)
    assert alone[0].harness_weak is not None and binaries_only[0].harness_weak is None
    assert not any("introsort" in n for n in alone[0].harness_weak)
    hidden = build("hidden", HIDDEN_PRAGMA_TOPK, False)
    strong = build("strong", STRONG_CTOR_TOPK, False)
    assert not flagged(hidden, alone)
    assert flagged(hidden, binaries_only)  # the false positive the objects remove
    assert flagged(strong, alone) and flagged(strong, binaries_only)


def _flagged_beside_own(tmp_path: Path, name: str, solution: str, suffix: str,
                        harness: str | None = None) -> str:  # fmt: skip
    """The reason the judge's rule gives a build of `solution` beside an honest own build of
    the same harness ('' where it is not flagged)."""
    import types

    honest = "int work(int x) { return x * 6; }\n"
    own = own_names(types.SimpleNamespace(own_names=None, build_dir=str(
        _build(tmp_path, f"own-{name}", honest, suffix, harness))))  # fmt: skip
    v = Verdict(task_id="t", stage=Stage.OK,
                candidate=Timing(estimate_s=0.01, samples_s=[0.01], clock="harness"))  # fmt: skip
    flag_replaced_calls(v, str(_build(tmp_path, name, solution, suffix, harness)), [own])
    return v.candidate.status_reason if CALL_REPLACED in v.flags else ""


def test_a_clock_the_cpp_library_calls_is_taken_from_behind_steady_clock(tmp_path) -> None:
    """helper-58: the harness imports `steady_clock::now`, never `clock_gettime`; libstdc++'s
    `now` calls `clock_gettime` through its own PLT, and the loader binds that to the
    executable's definition, which the link exports for it."""
    sol = ("#include <time.h>\nextern \"C\" int clock_gettime(clockid_t c, struct timespec *t)"
           " noexcept { (void)c; t->tv_sec = 0; t->tv_nsec = 1; return 0; }\n"
           "int work(int x) { return x * 6; }\n")  # fmt: skip
    assert "clock_gettime" in _flagged_beside_own(tmp_path, "lib-clock", sol, ".cpp")


def test_an_allocator_behind_operator_new_is_taken_too(tmp_path) -> None:
    """helper-58: the C++ harness imports `operator new`; libstdc++'s calls `malloc`, which
    ran the solution's work in the harness's untimed answer check."""
    sol = ("#include <cstddef>\nstatic char arena[1 << 24];\nstatic std::size_t used;\n"
           "extern \"C\" void *malloc(std::size_t n) noexcept { void *p = arena + used; "
           "used += (n + 15) & ~std::size_t(15); return p; }\n"
           "extern \"C\" void free(void *p) noexcept { (void)p; }\n"
           "int work(int x) { return x * 6; }\n")  # fmt: skip
    assert "malloc" in _flagged_beside_own(tmp_path, "lib-malloc", sol, ".cpp")


def test_an_unsized_operator_delete_takes_the_library_s_own_calls(tmp_path) -> None:
    """helper-59: the harness imports only the sized `operator delete`; libstdc++'s sized one
    jumps to its unsized one through its own PLT, which the loader binds to the executable's
    `_ZdlPv` (a hook there cached the answer during the harness's untimed reference: 60.0 ms
    against its twin's 67.4). libstdc++ defines `_ZdlPv` global: a real function, not an
    inline copy; strong or weak, the solution's definition takes the calls."""
    for binding in ("", "__attribute__((weak)) "):
        sol = ("#include <cstdlib>\n#include <new>\nstatic long seen;\n"
               f"{binding}void operator delete(void *p) noexcept {{ ++seen; std::free(p); }}\n"
               "int work(int x) { int *v = new int[4]; v[0] = x; int r = v[0] * 6; delete[] v;"
               " return r; }\n")  # fmt: skip
        why = _flagged_beside_own(tmp_path, f"unsized-delete{len(binding)}", sol, ".cpp")
        assert "_ZdlPv" in why, binding


def test_a_strong_copy_of_a_library_template_it_calls_itself_is_taken(tmp_path) -> None:
    """The harness prints an int with `<<`, importing `operator<<(int)`; libstdc++'s jumps to
    its own `_M_insert<long>` (an explicit instantiation, weak) through its PLT. A strong
    definition of that name in the solution takes the harness's line."""
    sol = ("#include <ostream>\n"
           "std::ostream &quiet(std::ostream *os, long v) __asm__(\"_ZNSo9_M_insertIlEERSoT_\");\n"
           "std::ostream &quiet(std::ostream *os, long v) { (void)v; return *os; }\n"
           "int work(int x) { return x * 6; }\n")  # fmt: skip
    assert "_ZNSo9_M_insertIlEERSoT_" in _flagged_beside_own(tmp_path, "insert", sol, ".cpp")


def test_an_inline_library_member_the_solution_also_emits_is_not_taken(tmp_path) -> None:
    """An honest solution printing with `std::endl` emits `std::ctype<char>::do_widen` (an
    inline member) weak, and the link exports it; libstdc++ holds its own weak copy and calls
    it through its PLT. The same code either way: not flagged (helper-59's `p20`)."""
    sol = ("#include <iostream>\nint work(int x) { if (x < 0) std::cerr << x << std::endl;"
           " return x * 6; }\n")  # fmt: skip
    build = _build(tmp_path, "widen-probe", sol, ".cpp", CPP_PRINTF_HARNESS)
    assert "_ZNKSt5ctypeIcE8do_widenEc" in replaced_calls.exported(build)  # the case it is
    assert _flagged_beside_own(tmp_path, "widen", sol, ".cpp", CPP_PRINTF_HARNESS) == ""


def test_a_printf_format_of_its_own_is_flagged(tmp_path) -> None:
    """helper-61: `register_printf_specifier('d')` made the harness's own `%ld` print a
    smaller elapsed_ns (C, 7 of 7 rounds over its twin); no symbol of the harness's is taken."""
    sol = ("#include <printf.h>\n#include <stdio.h>\n"
           "static int out(FILE *s, const struct printf_info *i, const void *const *a) {"
           " (void)i; (void)a; return fputs(\"1\", s); }\n"
           "static int info(const struct printf_info *i, size_t n, int *t, int *z) {"
           " (void)i; (void)z; if (n) t[0] = PA_INT; return 1; }\n"
           "__attribute__((constructor)) static void hook(void) {"
           " register_printf_specifier('d', out, info); }\n" + HONEST_WORK)  # fmt: skip
    assert "register_printf_specifier" in _flagged_beside_own(tmp_path, "printf-spec", sol, ".c")


def test_a_function_found_at_run_time_is_flagged(tmp_path) -> None:
    sol = ("#define _GNU_SOURCE\n#include <dlfcn.h>\n"
           "__attribute__((constructor)) static void look(void) {"
           " (void)dlsym(RTLD_DEFAULT, \"register_printf_specifier\"); }\n" + HONEST_WORK)  # fmt: skip
    assert "dlsym" in _flagged_beside_own(tmp_path, "dlsym", sol, ".c")


def test_the_loader_s_own_calls_are_followed_through_libc(tmp_path) -> None:
    """helper-61: ld.so, which libc needs (not the program), calls its `_dl_catch_exception`
    through its own PLT; a program's global definition took those calls."""
    assert "ld-linux-x86-64.so.2" in replaced_calls.loaded_with(["libc.so.6"])
    sol = ("int _dl_catch_exception(void *e, void (*op)(void *), void *a) {"
           " (void)e; op(a); return 0; }\n" + HONEST_WORK)  # fmt: skip
    assert "_dl_catch_exception" in _flagged_beside_own(tmp_path, "dl-catch", sol, ".c")


def test_a_helper_named_like_a_libc_function_no_library_calls_is_not_taken(tmp_path) -> None:
    """The link exports a global `qsort` of the solution's (it interposes libc's), but no
    library calls `qsort` itself: nothing of the harness's runs it."""
    sol = ("#include <stddef.h>\nvoid qsort(void *b, size_t n, size_t s, "
           "int (*c)(const void *, const void *)) { (void)b; (void)n; (void)s; (void)c; }\n"
           + HONEST_WORK)  # fmt: skip
    assert _flagged_beside_own(tmp_path, "qsort-named", sol, ".c") == ""


def test_a_second_dynamic_symbol_table_is_unreadable_and_flagged(tmp_path) -> None:
    """helper-56 forged a second SHT_DYNSYM section whose entries made every tail of an
    imported name read as an import; a build has one table of each kind."""
    sol = ("__asm__(\".section .forged_dynsym,\\\"a\\\",@11\\n.fill 64, 8, 0\\n.previous\");\n"
           + HONEST_WORK)  # fmt: skip
    build = _build(tmp_path, "forged", sol)
    found, unreadable = taken_over(build, frozenset({"clock_gettime"}))
    assert "two symbol tables" in unreadable, unreadable
    v = Verdict(task_id="t", stage=Stage.OK,
                candidate=Timing(estimate_s=0.01, samples_s=[0.01], clock="harness"))  # fmt: skip
    assert flag_replaced_calls(v, str(build), [OwnNames(frozenset({"clock_gettime"}), frozenset())])
    assert "not as a linker writes them" in v.candidate.status_reason


def test_a_table_longer_than_any_honest_build_is_read_no_further(tmp_path, monkeypatch) -> None:
    """helper-56: a 480 MB table of 20 million entries took 5.8 s to walk. Past
    MAX_SYMBOLS a table is not read (the bound lowered here: the build stays quick)."""
    sol = ("__asm__(\".text\\n.macro pgf\\npg\\\\@:\\n.endm\\n.rept 5000\\npgf\\n.endr\\n\");\n"
           + HONEST_WORK)  # fmt: skip
    build = _build(tmp_path, "long", sol)
    monkeypatch.setattr(elf_symbols, "MAX_SYMBOLS", 1000)
    found, unreadable = taken_over(build, frozenset({"clock_gettime"}))
    assert found == frozenset() and "more than 1000" in unreadable, unreadable


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x7fELF",
        b"\x7fELF\x02\x01" + b"\xff" * 58,  # section headers far past the end
        b"\x7fELF\x02\x01" + bytes(34) + (64).to_bytes(8, "little") + bytes(10)
        + (64).to_bytes(2, "little") + (0xFFFF).to_bytes(2, "little") + bytes(2) + b"\xab" * 4000,
        b"\x7fELF\x01\x01" + bytes(200),  # 32-bit: not built here
    ],
    ids=["empty", "magic-only", "headers-past-the-end", "garbage-sections", "elf32"],
)
def test_a_malformed_file_imports_and_defines_nothing(tmp_path, data: bytes) -> None:
    (tmp_path / "bench").write_bytes(data)
    assert imported(tmp_path) == frozenset()
    assert taken_over(tmp_path, frozenset({"clock_gettime", "printf"})) == (frozenset(), "")


def test_the_flag_is_a_clock_cheat_flag() -> None:
    assert CALL_REPLACED in CLOCK_CHEAT_FLAGS


# -- the judge: flagged, and no cheaper program scores higher ---------------------------------
@pytest.fixture(scope="module")
def judged():
    suite = load_suite(str(FIXTURES))
    pop, topk = suite.get("c_popcount_sum"), suite.get("cpp_topk_sum")
    cands = [Candidate(pop, source=HONEST, model="honest"),
             Candidate(pop, source=HIDING, model="hiding"),
             Candidate(pop, source=pop.references[0].source, model="reference"),
             Candidate(pop, source=STATIC_CLOCK, model="static_clock"),
             Candidate(topk, source=FROZEN_CHRONO, model="frozen"),
             Candidate(topk, source=topk.references[0].source, model="cpp_reference"),
             Candidate(topk, source=UNSIZED_DELETE + topk.references[0].source,
                       model="unsized_delete")]  # fmt: skip
    with Judge(JudgeConfig(repeats=3)) as judge:
        return dict(zip(["honest", "hiding", "reference", "static_clock", "frozen",
                         "cpp_reference", "unsized_delete"],
                        judge.judge_many(cands), strict=True))  # fmt: skip


def test_a_c_solution_defining_the_harness_clock_is_flagged(judged) -> None:
    v = judged["hiding"]
    assert v.stage is Stage.OK and v.correct
    assert CALL_REPLACED in v.flags and v.candidate.status is TimingStatus.DEGRADED
    assert "clock_gettime" in v.candidate.status_reason
    assert v.hid_time


def test_a_cpp_solution_freezing_steady_clock_is_flagged(judged) -> None:
    v = judged["frozen"]
    assert v.stage is Stage.OK and v.correct and CALL_REPLACED in v.flags, v.flags


def test_an_unsized_operator_delete_beside_the_harness_is_flagged(judged) -> None:
    """helper-59's route through the real judge: libstdc++'s sized delete, which the harness
    calls from its untimed reference, runs the solution's unsized one."""
    v = judged["unsized_delete"]
    assert v.stage is Stage.OK and v.correct and CALL_REPLACED in v.flags, v.flags
    assert "_ZdlPv" in v.candidate.status_reason


def test_honest_programs_of_the_same_task_are_not_flagged(judged) -> None:
    for name in ("honest", "reference", "static_clock", "cpp_reference"):
        assert CALL_REPLACED not in judged[name].flags, (name, judged[name].flags)


def test_the_clock_cheat_scores_no_higher_than_its_honest_twin(judged) -> None:
    for reward in (get_reward("rlpf"), get_reward("log")):
        honest, hiding = (reward.score([judged[k]])[0].value for k in ("honest", "hiding"))
        assert hiding <= honest, (reward, honest, hiding)
