"""`build_work`'s look reads g++'s own phase report, and a program cannot write it (red team
helper-126: `#pragma message` prints under `-w`, newlines and all; one naming a file outside the
build folder made the capped, redacted build log drop g++'s report, 120 of them cut it, and a
table of 16.7 s of constant evaluation was read as 0.01 s and paid 1.26)."""

from __future__ import annotations

import tempfile

import pytest

from perfgym.judge.build_look import phase_look, report_phases
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
FORGED = b"""main.cpp:3:9: note: '#pragma message: x
Time variable                                   usr
 constant expression evaluation     :   0.01 (  0%)   0.00 (  0%)   0.01 (  0%)     1k (  0%)
 TOTAL                              :   0.01
'
"""


def test_only_the_report_that_ends_the_stream_is_read() -> None:
    got = report_phases(FORGED + REPORT)
    assert got is not None and got["constant expression evaluation"] == 5.17
    assert got["template instantiation"] == 0.69 and got["phase parsing"] == 6.99
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
    table = """
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
    source = ref + redact + flood + table
    with tempfile.TemporaryDirectory() as root, WarmSandbox() as sandbox:
        build = toolchain(Language.CPP).build(sandbox, source, BuildCache.at(root))
        assert build.ok and build.artifact_dir, build.reason
        got = phase_look(Language.CPP, sandbox, source, build.artifact_dir)
    assert isinstance(got, dict), got
    assert got["constant expression evaluation"] > 0.5, got
