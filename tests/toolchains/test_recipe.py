"""The recipe table: the exact commands suites are written against, and the lookup."""

from __future__ import annotations

import pytest

from perfgym.errors import ConfigError
from perfgym.tasks.task import Language
from perfgym.toolchains import BUILD_LIMITS, JVM_FLAGS, RECIPES, Recipe, describe, toolchain
from perfgym.toolchains.interpreted import _PY_SYNTAX_CHECK


def test_every_language_has_a_recipe():
    assert set(RECIPES) == set(Language)
    for lang, recipe in RECIPES.items():
        assert recipe.language is lang


@pytest.mark.parametrize(
    ("language", "build"),
    [
        (Language.PYTHON, "python3 -I -S -c " + _PY_SYNTAX_CHECK + " main.py"),
        (Language.C, "gcc -O2 -std=c11 -o main main.c -lm"),
        (Language.CPP, "g++ -O2 -std=c++17 -o main main.cpp"),
        (Language.JAVA, "javac Main.java"),
        (Language.GO, "go build -o main main.go"),
        (Language.JAVASCRIPT, "node --check main.js"),
        (Language.RUST, "rustc -O --edition 2021 -o main main.rs"),
        (Language.CUDA, "nvcc -O2 -o main main.cu"),
    ],
)
def test_exact_build_commands(language, build):
    recipe = RECIPES[language]
    assert " ".join(recipe.build or ()) == build
    assert recipe.source_name in build


def test_python_warm_check_is_the_sandboxed_check_program():
    python = RECIPES[Language.PYTHON]
    assert python.build is not None and python.build[4] == python.warm_check == _PY_SYNTAX_CHECK
    assert python.identity()["warm_check"] == _PY_SYNTAX_CHECK
    # Recipes without one keep the identity (and so the cache keys) they had before it existed.
    for lang, recipe in RECIPES.items():
        if lang is not Language.PYTHON:
            assert recipe.warm_check is None and "warm_check" not in recipe.identity()


def test_run_commands():
    argv = {lang: r.run_argv("/tmp/build") for lang, r in RECIPES.items()}
    assert argv[Language.PYTHON] == ["python3", "/tmp/build/main.py"]
    assert argv[Language.JAVASCRIPT] == ["node", "/tmp/build/main.js"]
    assert argv[Language.JAVA] == ["java", *JVM_FLAGS, "-cp", "/tmp/build", "Main"]
    assert "-Xss64m" in JVM_FLAGS
    for lang in (Language.C, Language.CPP, Language.GO, Language.RUST, Language.CUDA):
        assert argv[lang] == ["/tmp/build/main"]
    assert [lang for lang, r in RECIPES.items() if r.needs_gpu] == [Language.CUDA]


def test_memory_flag_follows_the_run_limit():
    java, node = RECIPES[Language.JAVA], RECIPES[Language.JAVASCRIPT]
    assert java.run_argv("/a", 1024)[:2] == ["java", "-Xmx768m"]
    assert node.run_argv("/a", 512)[:2] == ["node", "--max-old-space-size=384"]
    assert java.run_argv("/a", 8)[1] == "-Xmx16m"  # floor: the JVM cannot start on less
    assert RECIPES[Language.C].run_argv("/a", 512) == ["/a/main"]


def test_go_gets_a_writable_cache_inside_the_build():
    go = RECIPES[Language.GO]
    assert go.build_env["GOCACHE"] == go.compiler_cache
    assert all(go.build_env[v].startswith("/tmp/") for v in ("GOCACHE", "GOPATH"))


def test_builds_get_more_room_than_runs():
    from perfgym.sandbox import Limits

    run = Limits()
    assert BUILD_LIMITS.memory_mb > run.memory_mb
    assert BUILD_LIMITS.max_processes > run.max_processes
    assert BUILD_LIMITS.effective_cpu_s > BUILD_LIMITS.wall_s  # parallel compilers
    assert not BUILD_LIMITS.network


def test_recipe_validation():
    c = RECIPES[Language.C].model_dump()
    with pytest.raises(ValueError):
        Recipe.model_validate({**c, "surprise": True})
    with pytest.raises(ValueError, match="plain file name"):
        Recipe.model_validate({**c, "source_name": "../main.c"})
    with pytest.raises(ValueError, match="empty"):
        Recipe.model_validate({**c, "run": ()})


def test_toolchain_lookup():
    assert toolchain("c").recipe is RECIPES[Language.C]
    with pytest.raises(ConfigError, match="unknown language"):
        toolchain("cobol")
    with pytest.raises(ConfigError, match="no recipe for go"):
        toolchain(Language.GO, {Language.C: RECIPES[Language.C]})
    with pytest.raises(ConfigError, match="is for c"):
        toolchain(Language.GO, {Language.GO: RECIPES[Language.C]})


def test_describe_reports_every_toolchain():
    rows = describe()
    assert [r["language"] for r in rows] == [lang.value for lang in RECIPES]
    for row in rows:
        if row["missing"] is None:  # usable: both its compiler and runtime versions are known
            assert row["versions"], row
    c = next(r for r in rows if r["language"] == "c")
    assert c["missing"] is None and "gcc" in c["versions"]
