"""The build cache: content-hash keys, hits without a compiler run, concurrency, hiding."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence

import pytest

from perfgym.errors import ConfigError
from perfgym.sandbox import Bind, Execution, Limits, Sandbox, SandboxConfig, Status
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks.task import Language
from perfgym.toolchains import RECIPES, BuildCache, BuildStatus, Recipe, toolchain

from .programs import BROKEN, PROGRAMS


class CountingSandbox(Sandbox):
    """A real sandbox that counts the commands it runs (the seam for 'no compiler ran')."""

    name = "counting"

    def __init__(self, inner: WarmSandbox) -> None:
        self.inner = inner
        self.config = inner.config
        self.commands: list[list[str]] = []

    def run(
        self,
        command: Sequence[str],
        *,
        stdin: bytes | str = b"",
        files: Mapping[str, bytes | str] | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        binds: Sequence[Bind] = (),
        collect: Sequence[str] = (),
        cpu: int | None = None,
    ) -> Execution:
        self.commands.append(list(command))
        return self.inner.run(
            command, stdin=stdin, files=files, env=env, limits=limits,
            binds=binds, collect=collect, cpu=cpu,
        )  # fmt: skip


C_SOURCE = PROGRAMS[Language.C]


def test_key_depends_on_source_recipe_and_compiler_version():
    c = RECIPES[Language.C]
    key = BuildCache.key(c, "gcc 12.2.0", b"int main(){}")
    assert key == BuildCache.key(c, "gcc 12.2.0", b"int main(){}")
    assert len(key) == 64
    assert key != BuildCache.key(c, "gcc 12.2.0", b"int main(){ }")
    assert key != BuildCache.key(c, "gcc 13.1.0", b"int main(){}")
    o3 = Recipe.model_validate({**c.model_dump(), "build": ("gcc", "-O3", "-o", "main", "main.c")})
    assert key != BuildCache.key(o3, "gcc 12.2.0", b"int main(){}")


def test_run_flags_and_limits_are_not_part_of_the_key():
    java = RECIPES[Language.JAVA]
    other = Recipe.model_validate(
        {**java.model_dump(), "run": ("java", "-Xss1m", "-cp", "{artifact}", "Main")}
    )
    roomy = Recipe.model_validate({**java.model_dump(), "build_limits": Limits(wall_s=999)})
    assert BuildCache.key(java, "v", b"x") == BuildCache.key(other, "v", b"x")
    assert BuildCache.key(java, "v", b"x") == BuildCache.key(roomy, "v", b"x")


def test_second_build_is_a_hit_without_a_compiler_run(sandbox, fresh_cache):
    counting = CountingSandbox(sandbox)
    tc = toolchain(Language.C)
    first = tc.build(counting, C_SOURCE, fresh_cache)
    assert first.ok and not first.cached
    assert len(counting.commands) == 1
    second = tc.build(counting, C_SOURCE, fresh_cache)
    assert second.ok and second.cached
    assert len(counting.commands) == 1  # no compiler ran
    assert second.key == first.key
    assert second.artifact_dir == first.artifact_dir
    assert second.measurement == first.measurement  # the record of the build that filled it
    assert os.listdir(fresh_cache.root / ".staging") == []


def test_compile_errors_are_cached_with_their_log(sandbox, fresh_cache):
    counting = CountingSandbox(sandbox)
    tc = toolchain(Language.C)
    source, message = BROKEN[Language.C]
    first = tc.build(counting, source, fresh_cache)
    second = tc.build(counting, source, fresh_cache)
    assert first.status is second.status is BuildStatus.COMPILE_ERROR
    assert second.cached and len(counting.commands) == 1
    assert message in second.log and second.log == first.log
    assert second.artifact_dir is None
    assert not (fresh_cache.entry(first.key) / "artifact").exists()


def test_limit_failures_are_rebuilt_not_cached(sandbox, fresh_cache):
    counting = CountingSandbox(sandbox)
    tc = toolchain(Language.C)
    tiny = Limits(wall_s=10, memory_mb=128, max_processes=64)
    source = '#include "/dev/zero"\nint main(void) { return 0; }\n'
    for _ in range(2):
        build = tc.build(counting, source, fresh_cache, limits=tiny)
        assert build.status is BuildStatus.COMPILE_ERROR and not build.cached
    assert len(counting.commands) == 2


def test_concurrent_builders_publish_one_entry(sandbox, fresh_cache):
    tc = toolchain(Language.C)
    source = C_SOURCE + "/* concurrent */\n"
    results = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            results.append(tc.build(sandbox, source, fresh_cache))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [b.status for b in results] == [BuildStatus.OK] * 3
    assert len({b.key for b in results}) == 1
    assert len({b.artifact_dir for b in results}) == 1
    key = results[0].key
    assert os.listdir(fresh_cache.root / key[:2]) == [key]
    assert os.listdir(fresh_cache.root / ".staging") == []
    assert sorted(os.listdir(results[0].artifact_dir)) == ["main"]


def test_unreadable_entry_is_replaced(sandbox, fresh_cache):
    tc = toolchain(Language.C)
    source = C_SOURCE + "/* corrupt */\n"
    key = BuildCache.key(tc.recipe, tc.version().text, source.encode())
    entry = fresh_cache.entry(key)
    entry.mkdir(parents=True)
    (entry / "build.json").write_text("{ not json")
    assert fresh_cache.lookup(key) is None
    build = tc.build(sandbox, source, fresh_cache)
    assert build.ok and not build.cached
    assert fresh_cache.lookup(key) is not None


def test_artifact_is_sealed_against_the_run_user(built):
    build = built(Language.C)
    assert build.artifact_dir is not None
    st = os.stat(os.path.join(build.artifact_dir, "main"))
    assert st.st_uid == os.geteuid()
    assert st.st_mode & 0o222 == 0  # nobody (and nothing else) writes a finished artifact
    assert st.st_mode & 0o005 == 0o005  # but the run's user may read and execute it


def test_runs_cannot_see_the_cache(built, sandbox, cache, cache_root):
    build = built(Language.C)
    probe = (
        "import os, sys\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        print(os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(4))\n"
        "    except OSError as e:\n"
        "        print(type(e).__name__)\n"
    )
    target = os.path.join(build.artifact_dir or "", "main")
    assert os.path.exists(target) and os.listdir(cache.root)
    # /var/tmp is not in a run's view at all (an allow-list: perfgym.sandbox.view), and the
    # sandbox would also hide the session root were it there: the caches under it vanish.
    run = sandbox.run(["python3", "-c", probe, str(cache_root), str(cache.root), target])
    assert run.status is Status.OK, run.stderr_text
    assert run.stdout_text == "FileNotFoundError\nFileNotFoundError\nFileNotFoundError\n"


def test_cache_root_is_private_even_when_not_hidden(cache):
    # Defence in depth: the root is 0700, so a sandbox that forgot to hide it still keeps
    # runs (uid nobody) out. A root in /var/tmp is outside every run's view; one in a
    # directory the view shows (the exec stub's helpers) is kept out by its mode.
    from perfgym.sandbox.exec_stub import HELPERS

    assert (os.stat(cache.root).st_mode & 0o777) == 0o700
    shown = BuildCache.at(tempfile.mkdtemp(prefix="cache-test-", dir=HELPERS))
    try:
        with WarmSandbox() as plain:
            for root, error in ((cache.root, "FileNotFoundError"), (shown.root, "PermissionError")):
                run = plain.run(["python3", "-c", f"import os; os.listdir({str(root)!r})"])
                assert run.status is Status.RUNTIME_ERROR
                assert error in run.stderr_text
    finally:
        shutil.rmtree(shown.root, ignore_errors=True)


def test_build_refuses_a_sandbox_that_shows_the_cache(fresh_cache):
    unhidden = WarmSandbox(SandboxConfig())  # never started: the check comes first
    try:
        with pytest.raises(ConfigError, match="hide_paths"):
            toolchain(Language.C).build(unhidden, C_SOURCE, fresh_cache)
    finally:
        unhidden.close()


def test_hiding_helper(tmp_path):
    cache = BuildCache.at("/var/tmp/perfgym-toolchains-hiding-test")
    try:
        base = SandboxConfig(hide_paths=["/srv/secrets"])
        assert not cache.hidden_in(base)
        hidden = cache.hiding(base)
        assert hidden.hide_paths == ["/srv/secrets", str(cache.root)]
        assert cache.hidden_in(hidden)
        assert base.hide_paths == ["/srv/secrets"]  # the caller's config is not changed
        assert cache.hiding(hidden).hide_paths == hidden.hide_paths
        # Hiding a parent hides the cache.
        assert cache.hidden_in(SandboxConfig(hide_paths=["/var/tmp"]))
    finally:
        os.rmdir(cache.root / ".staging")
        os.rmdir(cache.root / ".compiler-cache")
        os.rmdir(cache.root)
    # Under the host's /tmp every run already sees a fresh tmpfs: nothing to add (and a hide
    # path there would not exist inside the run).
    under_tmp = BuildCache.at(tmp_path / "builds")
    assert under_tmp.hidden_in(SandboxConfig())
    assert under_tmp.hiding().hide_paths == []


def test_relative_root_is_rejected():
    with pytest.raises(ValueError, match="absolute"):
        BuildCache.at("relative/builds")


def test_go_builds_share_a_persistent_compiler_cache_only_when_asked(sandbox, cache_root):
    shared = BuildCache.at(cache_root / "compiler-caches", compiler_caches=True)
    build = toolchain(Language.GO).build(sandbox, PROGRAMS[Language.GO], shared)
    assert build.ok, build.log
    gocache = shared.root / ".compiler-cache" / RECIPES[Language.GO].name
    assert gocache.is_dir() and any(gocache.iterdir())


def test_by_default_each_go_build_has_a_compiler_cache_of_its_own(built, cache):
    # A shared cache is a channel between builds: what runs in one reads what the others
    # compiled (red team helper-99 linked the task's reference from it).
    assert not cache.config.compiler_caches
    assert built(Language.GO).ok
    assert list((cache.root / ".compiler-cache").iterdir()) == []
