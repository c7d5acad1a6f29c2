"""`Toolchain`: builds a source inside the sandbox with a recipe, and says how to run the result."""

from __future__ import annotations

import glob
import os
import shutil
import stat
from pathlib import Path

from perfgym.errors import ConfigError, ToolchainMissing
from perfgym.sandbox.base import Bind, Sandbox, SandboxConfig
from perfgym.sandbox.limits import Limits
from perfgym.tasks.task import Language
from perfgym.toolchains.build import Build, BuildStatus, finished
from perfgym.toolchains.cache import BuildCache, Staging
from perfgym.toolchains.gpu import GpuUnavailable, gpu_binds, gpu_missing_reason
from perfgym.toolchains.recipe import BUILD_MOUNT, Recipe
from perfgym.toolchains.source_policy import refused
from perfgym.toolchains.version import ToolVersion, probe
from perfgym.toolchains.warm_check import Workers
from perfgym.toolchains.warm_check import check as warm_check
from perfgym.toolchains.warm_check import unusable as warm_unusable

# Runs the recipe's exact build argv with the build directory as working directory (the
# sandbox starts every command in /tmp and has no cwd option).
_IN_BUILD_DIR = ("sh", "-c", 'cd "$0" && exec "$@"', BUILD_MOUNT)


class Toolchain:
    """One language's recipe made executable: `version`, `build`, `run_command`."""

    def __init__(self, recipe: Recipe) -> None:
        self.recipe = recipe

    @property
    def language(self) -> Language:
        return self.recipe.language

    def __repr__(self) -> str:
        return f"Toolchain({self.recipe.name})"

    # -- versions and availability --------------------------------------------------------------
    def version(self) -> ToolVersion:
        """The compiler's version (probed once per process); raises `ToolchainMissing`."""
        r = self.recipe
        return probe(r.compiler, r.version_args, r.version_regex)

    def runtime_version(self) -> ToolVersion | None:
        """The runtime's version (java, node); None for native binaries. Raises `ToolchainMissing`."""
        r = self.recipe
        if r.runtime is None:
            return None
        return probe(r.runtime, r.runtime_version_args, r.version_regex)

    def missing(self) -> str | None:
        """Why this toolchain cannot build and run here (naming the missing tool), or None."""
        try:
            self.version()
            self.runtime_version()
        except ToolchainMissing as exc:
            return str(exc)
        return None

    def available(self) -> bool:
        return self.missing() is None

    def versions(self) -> dict[str, str]:
        """Tool name -> short version, for every tool of this toolchain that is present."""
        out: dict[str, str] = {}
        for get in (self.version, self.runtime_version):
            try:
                v = get()
            except ToolchainMissing:
                continue
            if v is not None:
                out[v.name] = v.short
        return out

    def describe(self) -> dict[str, object]:
        """Recipe, availability and versions, as recorded in result files."""
        return {
            "language": self.language.value,
            "recipe": self.recipe.model_dump(mode="json"),
            "missing": self.missing(),
            "versions": self.versions(),
        }

    # -- building ----------------------------------------------------------------------------
    def build(
        self,
        sandbox: Sandbox,
        source: str | bytes,
        cache: BuildCache,
        *,
        limits: Limits | None = None,
        workers: Workers | None = None,
    ) -> Build:
        """Build `source` inside `sandbox` (or find it in `cache`) and return the outcome.

        The compiler runs as the sandbox's unprivileged user under `limits` (default: the
        recipe's build limits), writing into a staging directory bound writable into the run;
        the declared outputs are then copied into a root-owned artifact directory and
        published atomically in the cache. Given warm Python `workers` of the recipe's own
        interpreter, a recipe with a `warm_check` runs that check there instead (same
        outcome, a few ms instead of a sandbox start; see `warm_check`). Raises ConfigError
        when the sandbox would let runs see the cache (see `BuildCache.hiding`).
        """
        r = self.recipe
        config = getattr(sandbox, "config", None)
        if isinstance(config, SandboxConfig) and not cache.hidden_in(config):
            raise ConfigError(
                f"this sandbox's runs can see the build cache {cache.root}: create it with "
                "SandboxConfig(hide_paths=[...]) covering the cache root, e.g. "
                "WarmSandbox(cache.hiding(config))"
            )
        base = Build(status=BuildStatus.TOOLCHAIN_MISSING, language=r.language, recipe=r.name)
        try:
            data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
        except UnicodeEncodeError as exc:  # a lone surrogate: no source file can hold it
            bad = f"source is not valid UTF-8 text (lone surrogate at offset {exc.start})"
            return base.model_copy(update={"status": BuildStatus.COMPILE_ERROR, "reason": bad})
        if (why := refused(r.language, data)) is not None:
            return base.model_copy(update={"status": BuildStatus.COMPILE_ERROR, "reason": why})
        if (why := self.missing()) is not None:
            return base.model_copy(update={"reason": why})
        version = self.version()
        key = cache.key(r, version.text, data)
        base = base.model_copy(update={"key": key, "versions": self.versions()})
        hit = cache.lookup(key)
        if hit is not None:
            return hit
        with cache.stage(key) as staging:
            (staging.work / r.source_name).write_bytes(data)
            if r.build is None:
                build = base.model_copy(update={"status": BuildStatus.OK})
            else:
                build = self._check_or_compile(
                    sandbox, staging, cache, base, limits or r.build_limits, data, workers
                )
            if build.ok:
                build = self._collect(staging, build)
            if not build.cacheable:
                return build
            return cache.publish(staging, build)

    def _check_or_compile(
        self,
        sandbox: Sandbox,
        staging: Staging,
        cache: BuildCache,
        base: Build,
        limits: Limits,
        data: bytes,
        workers: Workers | None,
    ) -> Build:
        """The build step: the warm check when `workers` can run it, else the sandboxed build.
        When the recipe has a warm check and workers were given but not used, the build's
        measurement says why."""
        if workers is None or self.recipe.warm_check is None:
            return self._compile(sandbox, staging, cache, base, limits)
        why = warm_unusable(self.recipe, self.version(), workers, data)
        if why is None:
            build = warm_check(self.recipe, workers, data, base, limits)
            if build.status is not BuildStatus.SANDBOX_ERROR:
                return build
            why = f"the warm worker failed ({build.reason}); checked in a fresh sandbox"
        return _noted(self._compile(sandbox, staging, cache, base, limits), why)

    def _compile(
        self, sandbox: Sandbox, staging: Staging, cache: BuildCache, base: Build, limits: Limits
    ) -> Build:
        r = self.recipe
        assert r.build is not None
        binds = [Bind(host_path=str(staging.work), sandbox_path=BUILD_MOUNT, writable=True)]
        if r.compiler_cache is not None and cache.config.compiler_caches:
            shared = cache.compiler_cache_dir(r.name)
            binds.append(Bind(host_path=str(shared), sandbox_path=r.compiler_cache, writable=True))
        execution = sandbox.run(
            [*_IN_BUILD_DIR, *r.build], env=r.build_env, limits=limits, binds=binds
        )
        return finished(base, execution, execution.measurement)

    def _collect(self, staging: Staging, build: Build) -> Build:
        """Copy the declared outputs into the artifact directory (regular files only: a
        symlink planted in the build directory must not make the host copy another file)."""
        for pattern in self.recipe.outputs:
            found = False
            for path in sorted(glob.glob(str(staging.work / pattern))):
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode):
                    continue
                shutil.copyfile(path, staging.artifact / os.path.basename(path))
                os.chmod(staging.artifact / os.path.basename(path), st.st_mode & 0o755)
                found = True
            if not found:
                return build.model_copy(
                    update={
                        "status": BuildStatus.COMPILE_ERROR,
                        "reason": f"the build produced no file matching {pattern!r}",
                    }
                )
        return build

    # -- running -------------------------------------------------------------------------------
    def run_command(
        self, build: Build, *, limits: Limits | None = None
    ) -> tuple[list[str], list[Bind]]:
        """argv and binds that run `build`'s artifact in a sandbox (artifact bound read-only).

        Pass the run's `limits` to size managed heaps (JVM -Xmx, V8 old space) from its memory
        limit. Raises ConfigError for a build that is not OK or not this toolchain's,
        ToolchainMissing when the runtime is absent, and GpuUnavailable (a ToolchainMissing)
        when the program needs a GPU this host lacks: such a program is never run.
        """
        r = self.recipe
        if build.language is not r.language or build.recipe != r.name:
            raise ConfigError(f"build of {build.recipe} cannot be run by recipe {r.name}")
        if not build.ok or build.artifact_dir is None:
            raise ConfigError(
                f"build {build.key[:12] or '?'} is {build.status.value}: nothing to run"
            )
        if not Path(build.artifact_dir).is_dir():
            raise ConfigError(f"artifact directory {build.artifact_dir} no longer exists")
        self.runtime_version()  # raises ToolchainMissing naming the runtime
        binds = [Bind(host_path=build.artifact_dir, sandbox_path=BUILD_MOUNT, writable=False)]
        if r.needs_gpu:
            why = gpu_missing_reason()
            if why is not None:
                raise GpuUnavailable(
                    f"{r.language.value} program built, but running it needs a GPU: {why}"
                )
            binds += gpu_binds()
        memory = limits.memory_mb if limits is not None else None
        return r.run_argv(BUILD_MOUNT, memory), binds


def _noted(build: Build, why: str) -> Build:
    """`build` with `why` the warm worker did not check it added to its measurement."""
    m = build.measurement
    if m is None:
        return build
    mechanisms = {**m.mechanisms, "build": f"fresh sandbox (warm worker not used: {why})"}
    return build.model_copy(update={"measurement": m.model_copy(update={"mechanisms": mechanisms})})
