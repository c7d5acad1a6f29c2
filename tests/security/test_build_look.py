"""`build_work`'s look reads g++'s own phase report, and a program cannot write it (red team
helper-126: `#pragma message` prints under `-w`, newlines and all; one naming a file outside the
build folder made the capped, redacted build log drop g++'s report, 120 of them cut it, and a
table of 16.7 s of constant evaluation was read as 0.01 s and paid 1.26; red team helper-127:
the linker printed a forged report after g++'s, from a `.gnu.warning` section), nor hide its
work in the optimiser by forcing a loop's unrolling (helper-127: 4096 x 300 steps folded)."""

from __future__ import annotations

import tempfile

import pytest

from perfgym.judge.build_look import forced_unrolling, phase_look, report_phases
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks.task import Language
from perfgym.toolchains import BuildCache, toolchain

REPORT = b"""
Time variable                                   usr           sys          wall           GGC
 phase setup                        :   0.00 (  0%)   0.01 (  0%)   0.00 (  0%)  1446k (  0%)
 phase parsing                      :   6.99 ( 97%)   2.09 ( 96%)   9.10 ( 97%)   485M ( 96%)
 template instantiation             :   0.69 ( 10%)   0.37 ( 17%)   1.00 ( 11%)    56M ( 11%)
 constant expression evaluation     :   5.17 ( 72%)   0.14 (  6%)   5.34 ( 57%)   319M ( 64%)
 TOTAL                              :   7.19          2.18          9.38          503M
"""
#: A constexpr table of ~1.7 s of constant evaluation (4096 entries of 300 steps).
TABLE = """
#include <array>
constexpr std::array<unsigned, 4096> make_table() {
    std::array<unsigned, 4096> t{};
    for (unsigned i = 0; i < 4096; i++) {
        unsigned long long x = i;
        for (int r = 0; r < 300; r++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t[i] = (unsigned)(x >> 40);
    }
    return t;
}
static constexpr auto TABLE = make_table();
static volatile unsigned sink = TABLE[7];
"""
FORGED = b"""main.cpp:3:9: note: '#pragma message: x
Time variable                                   usr
 constant expression evaluation     :   0.01 (  0%)   0.00 (  0%)   0.01 (  0%)     1k (  0%)
 TOTAL                              :   0.01
'
"""


def test_only_one_report_ending_the_stream_is_read() -> None:
    got = report_phases(b"main.cpp:3:9: note: '#pragma message: hello'\n" + REPORT)
    assert got is not None and got["constant expression evaluation"] == 5.17
    assert got["template instantiation"] == 0.69 and got["phase parsing"] == 6.99
    assert report_phases(FORGED + REPORT) is None  # two headers: one is not g++'s
    assert report_phases(REPORT + FORGED) is None  # anything after the report: not a report
    assert report_phases(FORGED) is None  # a program's text, ending in its quote
    assert report_phases(b"") is None
    assert report_phases(REPORT.replace(b" TOTAL", b" TOTL")) is None
    # a line inside the block that is not the report's
    assert report_phases(REPORT.replace(b" phase setup", b"not a line\n phase setup")) is None


@pytest.mark.skipif(toolchain(Language.CPP).missing() is not None, reason="no g++")
def test_a_table_is_seen_through_a_forged_report_and_a_dropped_one() -> None:
    """A constexpr table (~1.7 s of constant evaluation) behind helper-126's two tricks at once:
    a forged report line before a line naming /usr/include/stdio.h (the build log drops what
    follows), and 120 forged reports of 400 bytes each (the build log is cut at 64 KiB). The
    look reads the compiler's real figure, over its 0.5 s allowance."""
    from pathlib import Path

    task_dir = Path(__file__).resolve().parents[2] / "suites" / "perfgym-core" / "cpp-lcs-length"
    from perfgym.tasks.native import load_task_dir

    ref = load_task_dir(task_dir).references[0].source
    fake = " constant expression evaluation     :   0.01 (  0%)   0.00 (  0%)   0.01 (  0%)"
    redact = f'#pragma message("x\\n{fake}\\n/usr/include/stdio.h:1: x")\n'
    flood = "".join(f'#pragma message("{i}\\n{fake}\\n' + "x" * 400 + '")\n' for i in range(120))
    source = ref + redact + flood + TABLE
    with tempfile.TemporaryDirectory() as root, WarmSandbox() as sandbox:
        build = toolchain(Language.CPP).build(sandbox, source, BuildCache.at(root))
        assert build.ok and build.artifact_dir, build.reason
        got = phase_look(Language.CPP, sandbox, source, build.artifact_dir)
    assert isinstance(got, dict), got
    assert got["constant expression evaluation"] > 0.5, got


def test_a_forced_unrolling_is_read_in_the_programs_own_preprocessed_lines() -> None:
    own = b'# 1 "main.cpp"\n'
    header = b'# 1 "/usr/include/c++/12/experimental/bits/simd_x86.h" 1 3\n#pragma GCC unroll 99\n'
    assert forced_unrolling(own + b"#pragma GCC unroll 65534\nfor(;;);\n", "main.cpp")
    assert forced_unrolling(own + b"  #  pragma GCC unroll N\n", "main.cpp")  # not spelt
    assert not forced_unrolling(own + b"#pragma GCC unroll 8\n", "main.cpp")
    assert not forced_unrolling(own + header + b'# 5 "main.cpp" 2\nint x;\n', "main.cpp")


@pytest.mark.skipif(toolchain(Language.CPP).missing() is not None, reason="no g++")
def test_the_linker_cannot_speak_after_the_report_nor_a_macro_hide_an_unrolling() -> None:
    """helper-127's `.gnu.warning` section (the linker prints it, newlines and all, after g++'s
    report) in front of a 300-step table: its real figure read, over the allowance. An honest
    program calling `tmpnam` (glibc's own link warning) is read, not left unchecked. A
    `#pragma GCC unroll 65534` spelt through `_Pragma` and two macros is seen."""
    from pathlib import Path

    from perfgym.judge.build_look import UNCHECKED
    from perfgym.tasks.native import load_task_dir

    task_dir = Path(__file__).resolve().parents[2] / "suites" / "perfgym-core" / "cpp-lcs-length"
    ref = load_task_dir(task_dir).references[0].source
    forged = (
        '__attribute__((section(".gnu.warning"), used)) static const char w[] = '
        '"x\\nTime variable usr\\n constant expression evaluation : 0.01 (0%)\\n TOTAL : 0.01";\n'
    )
    tmpnam = (
        "#include <bits/stdc++.h>\n" + ref + "static char b[L_tmpnam];\n"
        'static volatile char* dbg = getenv("PERFGYM_NEVER_SET") ? std::tmpnam(b) : nullptr;\n'
    )
    unroll = (
        "#define S(x) #x\n#define X(x) S(x)\n#define U _Pragma(X(GCC unroll 65534))\n"
        + ref
        + "int sum(const int* a) { int s = 0;\nU\nfor (int i = 0; i < 100; i++) s += a[i];"
        " return s; }\n"
    )
    looks = []
    with WarmSandbox() as sandbox:
        for source in (ref + forged + TABLE, tmpnam, unroll):
            with tempfile.TemporaryDirectory() as root:
                build = toolchain(Language.CPP).build(sandbox, source, BuildCache.at(root))
                assert build.ok and build.artifact_dir, build.reason
                looks.append(phase_look(Language.CPP, sandbox, source, build.artifact_dir))
    table, honest, unrolled = looks
    assert isinstance(table, dict) and table["constant expression evaluation"] > 0.5, table
    assert isinstance(honest, dict) and honest.get("constant expression evaluation", 0) < 0.5
    assert unrolled == UNCHECKED
