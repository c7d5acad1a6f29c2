"""A compiled harness task's candidate that defines its harness's timer (`clock_gettime`,
`steady_clock::now`): the link binds the harness's calls to the solution's clock, so the
solution says how long it took. Read from the build's symbol tables; flagged, and scored as a
program that hid time (red team helper-54: paid 1.134 against its honest twin's 1.018)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage, TimingStatus
from perfgym.judge.clock_symbols import (
    CLOCK_REPLACED,
    TIMER_SYMBOLS,
    defined_code_symbols,
    timers_defined,
)
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


def _compile(tmp_path: Path, name: str, text: str, *flags: str) -> Path:
    src = tmp_path / name
    src.write_text(text)
    out = tmp_path / (name + ".o")
    subprocess.run(["gcc", "-O2", "-c", *flags, str(src), "-o", str(out)], check=True)
    return out


# -- the reader: what a link would bind, and nothing it would not -----------------------------
def test_a_hidden_global_timer_is_seen_in_the_object_and_in_the_linked_binary(tmp_path) -> None:
    obj = _compile(tmp_path, "s.c", HIDING, f"-I{FIXTURES / 'c_popcount_sum' / 'harness'}")
    assert "clock_gettime" in defined_code_symbols(obj)
    main = tmp_path / "m.c"
    main.write_text("#include <time.h>\n#include <stdio.h>\nint main(void) {\n"
                    "struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
                    "printf(\"%ld\\n\", (long)t.tv_sec); return 0; }\n")  # fmt: skip
    binary = tmp_path / "bench"
    subprocess.run(["gcc", "-O2", str(main), str(obj), "-o", str(binary)], check=True)
    # hidden: written to the executable as a local symbol, and it still took the call
    assert timers_defined(tmp_path) == ["clock_gettime"]


def test_an_assembly_label_is_a_definition_too(tmp_path) -> None:
    asm = tmp_path / "t.S"
    asm.write_text(".text\n.globl gettimeofday\ngettimeofday:\n  xor %eax, %eax\n  ret\n"
                   '.section .note.GNU-stack,"",@progbits\n')  # fmt: skip
    obj = tmp_path / "t.o"
    subprocess.run(["gcc", "-c", str(asm), "-o", str(obj)], check=True)
    assert "gettimeofday" in defined_code_symbols(obj)


def test_calls_to_the_timers_and_timers_of_data_are_not_definitions(tmp_path) -> None:
    obj = _compile(tmp_path, "u.c", "#include <time.h>\nlong clock_calls;\n"
                   "long f(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);\n"
                   "return t.tv_nsec + clock_calls; }\n")  # fmt: skip
    names = defined_code_symbols(obj)
    assert "f" in names and not names & TIMER_SYMBOLS


def test_a_cpp_steady_clock_now_is_seen_by_its_mangled_name(tmp_path) -> None:
    src = tmp_path / "c.cpp"
    src.write_text(FROZEN_CHRONO)
    obj = tmp_path / "c.o"
    harness = FIXTURES / "cpp_topk_sum" / "harness"
    subprocess.run(["g++", "-O2", "-std=c++17", f"-I{harness}", "-c", str(src), "-o", str(obj)],
                   check=True)  # fmt: skip
    assert timers_defined(tmp_path) == ["_ZNSt6chrono3_V212steady_clock3nowEv"]


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
def test_a_malformed_file_defines_nothing_and_raises_nothing(tmp_path, data: bytes) -> None:
    path = tmp_path / "bench"
    path.write_bytes(data)
    assert defined_code_symbols(path) == set()
    assert timers_defined(tmp_path) == []


def test_the_flag_is_a_clock_cheat_flag() -> None:
    assert CLOCK_REPLACED in CLOCK_CHEAT_FLAGS


# -- the judge: flagged, and no cheaper program scores higher ---------------------------------
@pytest.fixture(scope="module")
def judged():
    suite = load_suite(str(FIXTURES))
    pop, topk = suite.get("c_popcount_sum"), suite.get("cpp_topk_sum")
    cands = [Candidate(pop, source=HONEST, model="honest"),
             Candidate(pop, source=HIDING, model="hiding"),
             Candidate(pop, source=pop.references[0].source, model="reference"),
             Candidate(topk, source=FROZEN_CHRONO, model="frozen")]  # fmt: skip
    with Judge(JudgeConfig(repeats=3)) as judge:
        return dict(zip(["honest", "hiding", "reference", "frozen"], judge.judge_many(cands),
                        strict=True))  # fmt: skip


def test_a_c_solution_defining_the_harness_clock_is_flagged(judged) -> None:
    v = judged["hiding"]
    assert v.stage is Stage.OK and v.correct
    assert CLOCK_REPLACED in v.flags and v.candidate.status is TimingStatus.DEGRADED
    assert "clock_gettime" in v.candidate.status_reason
    assert v.hid_time


def test_a_cpp_solution_freezing_steady_clock_is_flagged(judged) -> None:
    v = judged["frozen"]
    assert v.stage is Stage.OK and v.correct and CLOCK_REPLACED in v.flags, v.flags


def test_honest_programs_of_the_same_task_are_not_flagged(judged) -> None:
    for name in ("honest", "reference"):
        assert CLOCK_REPLACED not in judged[name].flags, (name, judged[name].flags)


def test_the_clock_cheat_scores_no_higher_than_its_honest_twin(judged) -> None:
    for reward in (get_reward("rlpf"), get_reward("log")):
        honest, hiding = (reward.score([judged[k]])[0].value for k in ("honest", "hiding"))
        assert hiding <= honest, (reward, honest, hiding)
