"""The end-mark wrapper flushes C's stdio before std::cout: a harness's printf'd line leaves the
process before any virtual call a solution can take over runs. Red team helper-61 rewrote the
vptr of std::cout's buffer at run time (no symbol of its own) so that the wrapper's
`std::cout.flush()` ran its sync(), which rewrote the line's elapsed_ns in stdout's buffer:
RLPF above its honest twin in 11 of 11 rounds. And std::cout's buffer swapped for libstdc++'s
own over fd 1 (`std::ios::sync_with_stdio(false)`, an honest fast-I/O prologue) is not a
replaced stdout; a class derived from it is."""

from __future__ import annotations

from pathlib import Path

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.tasks import load_suite

FIXTURES = Path(__file__).parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"

#: Takes std::cout's buffer's vtable before main; its sync() makes the pending line claim 1 ns.
VPTR_SYNC = r"""#include <cstdio>
#include <cstring>
#include <iostream>
struct Hook : std::streambuf {
    int sync() override {
        char *p = stdout->_IO_write_base, *end = stdout->_IO_write_ptr;
        const char key[] = "\"elapsed_ns\": ";
        for (; p && p + sizeof key < end; ++p) {
            if (std::memcmp(p, key, sizeof key - 1) != 0) continue;
            char *d = p + sizeof key - 1;
            if (d < end && *d >= '0' && *d <= '9') *d++ = '1';
            while (d < end && *d >= '0' && *d <= '9') *d++ = ' ';
            break;
        }
        return 0;
    }
};
__attribute__((constructor)) static void take_cout_buffer() {
    Hook hook;  // its vptr is Hook's vtable, which outlives it
    std::memcpy(static_cast<void *>(std::cout.rdbuf()), static_cast<void *>(&hook), sizeof(void *));
}
"""


def test_a_line_waiting_in_stdout_is_out_of_reach_when_cout_is_flushed(tmp_path) -> None:
    suite = load_suite(str(FIXTURES))
    topk = suite.get("cpp_topk_sum")
    ref = topk.references[0].source
    cfg = JudgeConfig(repeats=1, noise_rounds=0, build_cache=str(tmp_path / "builds"))
    with Judge(cfg) as judge:
        (v,) = judge.judge_many([Candidate(topk, source=VPTR_SYNC + ref, model="vptr")])
    assert v.stage is Stage.OK and v.correct, (v.stage, v.detail, v.reason)
    c = v.candidate
    assert c is not None and c.clock == "harness", (c.clock if c else None, v.flags)
    assert "harness_below_resolution" not in v.flags
    assert c.estimate_s is not None and c.estimate_s > 1e-5  # the harness's own claim stands


#: The competitive programmer's prologue, inside the solution's function (helper-61's h07: WO).
FAST_IO = """#include <iostream>
static bool fast_io() { std::ios::sync_with_stdio(false); std::cin.tie(nullptr); return true; }
"""

#: std::cout onto a buffer of the solution's class over fd 1: its virtual calls are its own.
DERIVED_BUFFER = """#include <cstdio>
#include <ext/stdio_filebuf.h>
#include <iostream>
struct Mine : __gnu_cxx::stdio_filebuf<char> {
    Mine() : __gnu_cxx::stdio_filebuf<char>(stdout, std::ios_base::out) {}
};
static Mine mine;
"""


def _judged(tmp_path, *sources: str):  # type: ignore[no-untyped-def]
    topk = load_suite(str(FIXTURES)).get("cpp_topk_sum")
    ref = topk.references[0].source
    cands = [Candidate(topk, source=s(ref) if callable(s) else s + ref, model=str(i))
             for i, s in enumerate(sources)]  # fmt: skip
    with Judge(
        JudgeConfig(repeats=1, noise_rounds=0, build_cache=str(tmp_path / "builds"))
    ) as judge:
        return judge.judge_many(cands)


def _calling(prologue: str, call: str):  # type: ignore[no-untyped-def]
    """The reference with `call` run at its top_k's first line."""

    def source(ref: str) -> str:
        body = ref.replace("std::size_t k) {", "std::size_t k) {\n    " + call, 1)
        assert body != ref
        return prologue + body

    return source


def test_fast_io_in_the_solution_is_not_a_replaced_stdout(tmp_path) -> None:
    (fast,) = _judged(tmp_path, _calling(FAST_IO, "(void)fast_io();"))
    assert fast.stage is Stage.OK and fast.correct, (fast.stage, fast.reason)


def test_a_buffer_of_the_solution_s_own_class_is_still_a_replaced_stdout(tmp_path) -> None:
    (mine,) = _judged(tmp_path, _calling(DERIVED_BUFFER, "std::cout.rdbuf(&mine);"))
    assert mine.stage is Stage.WO and "stdout" in (mine.reason or ""), (mine.stage, mine.reason)
