"""Real compilers in the real sandbox: every language builds, runs and is measured."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError, ToolchainMissing
from perfgym.sandbox import Limits, Status
from perfgym.tasks.task import Language
from perfgym.toolchains import (
    BUILD_MOUNT,
    RECIPES,
    Build,
    BuildStatus,
    GpuUnavailable,
    Recipe,
    gpu_missing_reason,
    toolchain,
)

from .programs import ARRAY_MB, BROKEN, PROGRAMS, N, expected

CPU_LANGUAGES = [lang for lang in Language if lang is not Language.CUDA]
RUN_LIMITS = Limits(wall_s=20, memory_mb=512)


def _missing_recipe(recipe: Recipe, **changes: object) -> Recipe:
    return Recipe.model_validate({**recipe.model_dump(), **changes})


@pytest.mark.parametrize("language", CPU_LANGUAGES, ids=lambda lang: lang.value)
def test_program_builds_runs_and_is_measured(language, built, sandbox):
    build = built(language)
    assert build.status is BuildStatus.OK, build.log
    assert build.measurement is not None and build.measurement.wall_s > 0
    assert build.versions and all(build.versions.values())
    tc = toolchain(language)
    argv, binds = tc.run_command(build, limits=RUN_LIMITS)
    assert [b.sandbox_path for b in binds] == [BUILD_MOUNT]
    assert not binds[0].writable
    run = sandbox.run(argv, binds=binds, limits=RUN_LIMITS, stdin=f"{N}\n")
    assert run.status is Status.OK, (run.reason, run.stderr_text)
    assert run.stdout_text == expected()
    m = run.measurement
    assert m is not None
    assert m.wall_s > 0 and m.cpu_s > 0
    # The program holds an array of N 64-bit values: peak resident memory is at least that.
    assert m.peak_rss_mb >= ARRAY_MB * 0.9, m.peak_rss_mb
    assert m.memory_integral_mb_s > 0
    # The build's own measurement is a different run: build time is never run time.
    assert build.measurement is not m


@pytest.mark.parametrize("language", [Language.JAVA, Language.JAVASCRIPT], ids=str)
def test_managed_heap_is_sized_from_the_run_memory_limit(language, built, sandbox):
    build = built(language)
    tc = toolchain(language)
    for memory_mb in (256, 768):
        limits = Limits(wall_s=20, memory_mb=memory_mb)
        argv, binds = tc.run_command(build, limits=limits)
        run = sandbox.run(argv, binds=binds, limits=limits, stdin=f"{N}\n")
        assert run.status is Status.OK, run.stderr_text
        heap_mb = int(run.stderr_text.split("heap_mb=")[1].split()[0])
        # 75% of the limit, less what the runtime reserves (a survivor space, V8's young gen).
        assert 0.6 * memory_mb <= heap_mb <= 0.8 * memory_mb, (memory_mb, heap_mb)


def test_run_command_without_limits_has_no_heap_flag(built):
    argv, _ = toolchain(Language.JAVA).run_command(built(Language.JAVA))
    assert not any(a.startswith("-Xmx") for a in argv)
    assert argv[-3:] == ["-cp", BUILD_MOUNT, "Main"]


@pytest.mark.parametrize("language", list(Language), ids=lambda lang: lang.value)
def test_compile_error_carries_the_compiler_message(language, sandbox, cache):
    tc = toolchain(language)
    if (why := tc.missing()) is not None:
        pytest.skip(why)
    source, message = BROKEN[language]
    build = tc.build(sandbox, source, cache)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert build.execution_status is Status.RUNTIME_ERROR
    assert message in build.log, build.log
    assert build.artifact_dir is None
    with pytest.raises(ConfigError, match="COMPILE_ERROR"):
        tc.run_command(build)


def test_missing_compiler_is_toolchain_missing(sandbox, cache):
    table = {
        **RECIPES,
        Language.C: _missing_recipe(RECIPES[Language.C], compiler="perfgym-no-such-cc"),
    }
    tc = toolchain(Language.C, table)
    assert not tc.available()
    assert "perfgym-no-such-cc" in (tc.missing() or "")
    build = tc.build(sandbox, PROGRAMS[Language.C], cache)
    assert build.status is BuildStatus.TOOLCHAIN_MISSING
    assert "perfgym-no-such-cc" in build.reason
    assert build.measurement is None and build.key == ""
    with pytest.raises(ToolchainMissing, match="perfgym-no-such-cc"):
        tc.version()


def test_missing_runtime_is_toolchain_missing(built, sandbox, cache):
    broken = _missing_recipe(RECIPES[Language.JAVA], runtime="perfgym-no-such-java")
    tc = toolchain(Language.JAVA, {Language.JAVA: broken})
    build = tc.build(sandbox, PROGRAMS[Language.JAVA], cache)
    assert build.status is BuildStatus.TOOLCHAIN_MISSING
    assert "perfgym-no-such-java" in build.reason
    # A build made while the runtime existed cannot be run once it is gone.
    with pytest.raises(ToolchainMissing, match="perfgym-no-such-java"):
        tc.run_command(built(Language.JAVA))


def test_run_command_refuses_another_toolchains_build(built):
    with pytest.raises(ConfigError, match="cannot be run"):
        toolchain(Language.CPP).run_command(built(Language.C))


def test_symlinked_output_is_not_copied(sandbox, fresh_cache):
    # A build that leaves a symlink where the binary should be must not make the host copy
    # the link's target into the artifact.
    sneaky = _missing_recipe(
        RECIPES[Language.C],
        name="c-symlink",
        compiler="ln",
        build=("ln", "-s", "/etc/hostname", "main"),
    )
    tc = toolchain(Language.C, {Language.C: sneaky})
    build = tc.build(sandbox, "int main(void) { return 0; }\n", fresh_cache)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert "no file matching 'main'" in build.reason


def test_compiler_bomb_is_cut_by_build_limits_and_not_cached(sandbox, fresh_cache):
    tc = toolchain(Language.C)
    small = Limits(wall_s=10, memory_mb=256, max_processes=64)
    source = '#include "/dev/zero"\nint main(void) { return 0; }\n'
    build = tc.build(sandbox, source, fresh_cache, limits=small)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert build.execution_status in (Status.MEMORY_LIMIT, Status.TIMEOUT)
    assert "limit" in build.reason
    assert not build.cacheable
    assert fresh_cache.lookup(build.key) is None


def test_long_compiler_log_is_capped_and_keeps_the_first_error(sandbox, fresh_cache):
    from perfgym.toolchains import LOG_BYTES

    lines = "".join(f"int x{i} = ;\n" for i in range(2000))
    build = toolchain(Language.C).build(sandbox, lines, fresh_cache)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert build.log_truncated
    assert len(build.log.encode()) <= LOG_BYTES + 100
    assert "main.c:1:" in build.log.splitlines()[0] + build.log.splitlines()[1]


def test_cuda_builds_and_says_it_needs_a_gpu(sandbox, cache):
    tc = toolchain(Language.CUDA)
    if (why := tc.missing()) is not None:
        pytest.skip(f"nvcc absent: {why}")
    build = tc.build(sandbox, PROGRAMS[Language.CUDA], cache)
    assert build.status is BuildStatus.OK, build.log
    assert "nvcc" in build.versions
    if gpu_missing_reason() is None:
        pytest.skip("a GPU is present: running is covered by test_cuda_runs_on_a_gpu")
    with pytest.raises(GpuUnavailable, match="needs a GPU"):
        tc.run_command(build)
    assert isinstance(GpuUnavailable("x"), ToolchainMissing)


@pytest.mark.gpu
def test_cuda_runs_on_a_gpu(sandbox, cache):
    tc = toolchain(Language.CUDA)
    if (why := tc.missing() or gpu_missing_reason()) is not None:
        pytest.skip(why)
    build = tc.build(sandbox, PROGRAMS[Language.CUDA], cache)
    argv, binds = tc.run_command(build)
    run = sandbox.run(argv, binds=binds, limits=RUN_LIMITS)
    assert run.status is Status.OK, (run.reason, run.stderr_text)
    assert run.stdout_text == "42\n"


def test_build_model_rejects_unknown_fields():
    with pytest.raises(ValueError):
        Build.model_validate({"status": "OK", "language": "c", "recipe": "c-gcc", "surprise": 1})
