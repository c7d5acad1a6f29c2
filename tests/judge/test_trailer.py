"""The harness end mark's plans per recipe shape and its reading (`perfgym.judge.trailer`);
the attacks through the judge are in tests/security/test_harness_end_mark.py."""

from __future__ import annotations

from pathlib import Path

from perfgym.judge.runner import RunOutcome, read_harness
from perfgym.judge.trailer import read_end_mark, wrap
from perfgym.sandbox.execution import Status
from perfgym.tasks.harness_plan import FileCopy, HarnessPlan
from perfgym.tasks.task import Language

B = "/tmp/pg/build"


def _plan(build, run, copies=()):
    return HarnessPlan(cwd=Path("/r"), build_argv=build, run_argv=run,
                       copies=[FileCopy(source=Path(s), target=Path(t)) for s, t in copies])  # fmt: skip


def test_c_and_cpp_builds_link_the_wrapper_first_with_main_wrapped():
    for build in (["g++", "-O3", "h/benchmark_main.cpp", "v/solution.cpp", "-o", f"{B}/bench"],
                  ["gcc", "-O3", "-I", "t", "h/benchmark_main.c", "v/s.c", "-o", f"{B}/bench"]):  # fmt: skip
        w = wrap(Language.CPP, _plan(build, [f"{B}/bench"]), B, Path("/none"))
        assert w.how == "c-wrap-main" and w.build_argv is not None
        # The compile, then a check that the executable has no IFUNC relocation.
        assert w.build_argv[:2] == ["sh", "-c"] and "IRELATIVE" in w.build_argv[2]
        assert w.build_argv[3] == build[build.index("-o") + 1]
        compile_ = w.build_argv[4:]
        assert compile_[:3] == [build[0], "-Wl,--wrap=main", f"{B}/.perfgym/perfgym_trailer.c"]
        assert compile_[3:] == build[1:]


def test_python_java_and_go_runs_are_wrapped():
    run = ["env", "PERFCODEBENCH_SOLUTION=v/solution.py", "python3", "h/benchmark_main.py"]
    w = wrap(Language.PYTHON, _plan(None, run), B, Path("/none"))
    assert w.run_argv == [*run[:3], f"{B}/.perfgym/perfgym_trailer.py", run[3]]
    java = wrap(Language.JAVA, _plan(["javac", "-d", B, "h/BenchmarkMain.java"],
                                     ["java", "-cp", B, "BenchmarkMain", "x"]), B, Path("/none"))  # fmt: skip
    assert java.run_argv == ["java", "-cp", B, "PerfgymTrailer", "BenchmarkMain", "x"]
    assert java.build_argv is not None and java.build_argv[-1].endswith("PerfgymTrailer.java")


def test_go_renames_the_harness_main_and_builds_the_wrapper_first(tmp_path):
    (tmp_path / "benchmark_main.go").write_text("package main\n\nfunc main() {\n}\n")
    build = ["env", "GOCACHE=x", "go", "build", "-o", f"{B}/bench", f"{B}/benchmark_main.go",
             f"{B}/solution.go"]  # fmt: skip
    copies = [("/r/t/harness/benchmark_main.go", f"{B}/benchmark_main.go")]
    w = wrap(Language.GO, _plan(build, [f"{B}/bench"], copies), B, tmp_path)
    assert w.how == "go-main-renamed" and w.build_argv is not None
    assert w.build_argv[8] == f"{B}/0perfgym_trailer.go" and "perfgymHarnessMain" in w.steps[0]
    # cgo off, set last before `go` (a cgo constructor would run before any Go initialiser).
    assert w.build_argv[2:5] == ["env", "CGO_ENABLED=0", "go"]


def test_what_cannot_be_wrapped_says_why():
    cuda = wrap(Language.CUDA, _plan(["nvcc", "a.cu", "-o", "b"], ["b"]), B, Path("/none"))
    py = wrap(Language.PYTHON, _plan(None, ["python3", "-u", "h.py"]), B, Path("/none"))
    for w in (cuda, py):
        assert w.how == "" and w.why


def test_the_end_mark_needs_the_runs_nonce():
    out = '{"ok": true}\nPERFGYM_HARNESS_END abc ok\nlater\n'
    assert read_end_mark(out, "abc").found and read_end_mark(out, "abc").before == '{"ok": true}'
    other = read_end_mark(out, "abd")
    assert not other.found and other.forged


def test_a_reported_time_over_the_runs_wall_time_is_forged_with_or_without_a_mark():
    for secret, tail in ((None, ""), ("n1", "\nPERFGYM_HARNESS_END n1 ok\n")):
        out = RunOutcome(status=Status.OK, wall_s=0.1)
        read_harness('{"ok": true, "elapsed_ns": 10000000000}' + tail, out, secret)
        assert out.harness_ok is False and "exceeds the run's wall time" in out.message
        fine = RunOutcome(status=Status.OK, wall_s=0.1)
        read_harness('{"ok": true, "elapsed_ns": 90000000}' + tail, fine, secret)
        assert fine.harness_ok is True and fine.reported_s == 0.09


def test_a_partial_line_that_mangles_the_harness_line_is_a_second_result_line():
    # The program printed its line and a partial one the harness's line then completed.
    out = RunOutcome(status=Status.OK, wall_s=1.0)
    forged = '{"ok": true, "elapsed_ns": 5}\n{"x{"ok": false, "elapsed_ns": 9}\n'
    read_harness(forged + "PERFGYM_HARNESS_END n1 ok\n", out, "n1")
    assert out.harness_ok is False and "more than one result line" in out.message
