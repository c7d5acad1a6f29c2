"""Recipes for languages compiled ahead of time to a native binary: C, C++, Rust, Go, CUDA."""

from __future__ import annotations

from perfgym.tasks.task import Language
from perfgym.toolchains.recipe import ARTIFACT, Recipe

_BINARY = (f"{ARTIFACT}/main",)

C = Recipe(
    name="c-gcc",
    language=Language.C,
    source_name="main.c",
    compiler="gcc",
    build=("gcc", "-O2", "-std=c11", "-o", "main", "main.c", "-lm"),
    outputs=("main",),
    run=_BINARY,
)

CPP = Recipe(
    name="cpp-g++",
    language=Language.CPP,
    source_name="main.cpp",
    compiler="g++",
    build=("g++", "-O2", "-std=c++17", "-o", "main", "main.cpp"),
    outputs=("main",),
    run=_BINARY,
)

RUST = Recipe(
    name="rust-rustc",
    language=Language.RUST,
    source_name="main.rs",
    # Usually the rustup proxy: it needs RUSTUP_HOME/CARGO_HOME, which the sandbox's default
    # environment sets (and exposes read-only) when a rustup install exists.
    compiler="rustc",
    build=("rustc", "-O", "--edition", "2021", "-o", "main", "main.rs"),
    outputs=("main",),
    run=_BINARY,
)

GO = Recipe(
    name="go-build",
    language=Language.GO,
    source_name="main.go",
    compiler="go",
    version_args=("version",),
    build=("go", "build", "-o", "main", "main.go"),
    build_env={
        # The sandbox's host view is read-only: the go command needs a writable cache and GOPATH.
        # GOCACHE is a fresh directory in the build's own tmpfs, or a persistent one shared
        # by every build when the build cache enables compiler caches (off by default).
        "GOCACHE": "/tmp/gocache",
        "GOPATH": "/tmp/gopath",
        # Never try to download modules or a newer toolchain (Go >= 1.21): fail fast instead.
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        # No cgo: a candidate's source never reaches the C compiler or the external linker,
        # whose flags it could set (see `source_policy`); `import "C"` does not build.
        "CGO_ENABLED": "0",
    },
    outputs=("main",),
    run=_BINARY,
    compiler_cache="/tmp/gocache",
)

CUDA = Recipe(
    name="cuda-nvcc",
    language=Language.CUDA,
    source_name="main.cu",
    compiler="nvcc",
    version_regex=r"V(\d+(?:\.\d+)+)",
    build=("nvcc", "-O2", "-o", "main", "main.cu"),
    outputs=("main",),
    run=_BINARY,
    needs_gpu=True,
)
