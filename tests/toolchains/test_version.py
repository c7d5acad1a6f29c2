"""Version detection: what runs will execute, probed once per process."""

from __future__ import annotations

import re

import pytest

from perfgym.errors import ToolchainMissing
from perfgym.sandbox.view import default_path
from perfgym.tasks.task import Language
from perfgym.toolchains import toolchain
from perfgym.toolchains.version import locate, probe


def test_gcc_version_is_detected_and_cached():
    tc = toolchain(Language.C)
    v = tc.version()
    assert v.name == "gcc" and v.path.startswith("/")
    assert re.fullmatch(r"\d+(\.\d+)+", v.short)
    assert v.short in v.text
    hits = probe.cache_info().hits
    assert tc.version() is v
    assert probe.cache_info().hits == hits + 1


def test_tools_are_looked_up_on_the_sandbox_path():
    # The host's PATH may differ (pyenv shims); what matters is what a run would execute.
    path = locate("python3")
    assert path is not None and path.rsplit("/", 1)[0] in default_path().split(":")


@pytest.mark.parametrize("language", list(Language), ids=lambda lang: lang.value)
def test_available_toolchains_report_versions(language):
    tc = toolchain(language)
    if (why := tc.missing()) is not None:
        assert tc.recipe.compiler in why or (tc.recipe.runtime or "") in why
        pytest.skip(why)
    versions = tc.versions()
    assert tc.recipe.compiler in versions
    if tc.recipe.runtime:
        assert tc.recipe.runtime in versions
    assert all(re.match(r"\d+\.\d+", v) for v in versions.values()), versions


def test_rustup_proxy_works_with_the_sandbox_environment():
    tc = toolchain(Language.RUST)
    if (why := tc.missing()) is not None:
        pytest.skip(why)
    # rustc is usually the rustup proxy: its version only prints when RUSTUP_HOME/CARGO_HOME
    # (set by the sandbox's default environment) point at an installed toolchain.
    assert tc.version().text.startswith("rustc ")


def test_missing_tool_raises_naming_it():
    with pytest.raises(ToolchainMissing, match="perfgym-absent-tool"):
        probe("perfgym-absent-tool", ("--version",), r"\d+")


def test_tool_that_fails_its_probe_is_missing():
    with pytest.raises(ToolchainMissing, match="not usable"):
        probe("false", ("--version",), r"\d+")


def test_version_output_without_a_version_is_missing():
    with pytest.raises(ToolchainMissing, match="no version"):
        probe("echo", ("no digits here",), r"\d+\.\d+")
