"""Toolchains: how each language is built (in the sandbox, cached by content hash) and run.

tc = toolchain(Language.C)
cache = BuildCache()                                   # /var/tmp/perfgym/builds
with WarmSandbox(cache.hiding()) as sb:                # runs must not see the cache
    build = tc.build(sb, source, cache)                # Build: status, log, measurement
    argv, binds = tc.run_command(build, limits=limits)
    execution = sb.run(argv, binds=binds, limits=limits, stdin=...)
"""

from perfgym.toolchains.build import LOG_BYTES, Build, BuildStatus
from perfgym.toolchains.cache import DEFAULT_ROOT, BuildCache, BuildCacheConfig
from perfgym.toolchains.gpu import GpuUnavailable, gpu_missing_reason
from perfgym.toolchains.jvm import JVM_FLAGS
from perfgym.toolchains.recipe import BUILD_LIMITS, BUILD_MOUNT, Recipe
from perfgym.toolchains.table import RECIPES, describe, toolchain
from perfgym.toolchains.toolchain import Toolchain
from perfgym.toolchains.version import ToolVersion

__all__ = [
    "BUILD_LIMITS",
    "BUILD_MOUNT",
    "DEFAULT_ROOT",
    "JVM_FLAGS",
    "LOG_BYTES",
    "RECIPES",
    "Build",
    "BuildCache",
    "BuildCacheConfig",
    "BuildStatus",
    "GpuUnavailable",
    "Recipe",
    "ToolVersion",
    "Toolchain",
    "describe",
    "gpu_missing_reason",
    "toolchain",
]
