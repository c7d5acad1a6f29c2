"""The one registry (`perfgym.registry`): kind + name + factory for rewards, metrics, sandboxes,
judge backends, optimize strategies and suites; `perfgym list KIND` prints each."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from perfgym.errors import ConfigError
from perfgym.registry import HOMES, Kind, entries, get, kind_of, names, register, unregister

#: What each kind holds at least (the built-ins; plugins may add more).
BUILT_IN = {
    Kind.REWARDS: {"rlpf", "rlvr", "percentile", "afterburner"},
    Kind.METRICS: {"crr", "fbr", "cgre", "p-tau", "beyond", "eff@k", "opt@k", "dps"},
    Kind.SANDBOXES: {"warm", "bwrap"},
    Kind.BACKENDS: {"local", "service", "ray"},
    Kind.STRATEGIES: {"greedy", "best-of-n", "evolve"},
    Kind.SUITES: {"perfgym-core", "enamel", "humaneval", "humanevalplus", "mercury", "evalperf"},
}


@pytest.fixture
def scratch() -> Iterator[str]:
    name = "test-only-scratch"
    yield name
    for kind in Kind:
        unregister(kind, name)


def _fresh(code: str) -> list[str]:
    """The perfgym modules a fresh interpreter has loaded after running `code`."""
    full = f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return [m for m in json.loads(out.stdout.splitlines()[-1]) if m.startswith("perfgym")]


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.value)
def test_every_kind_holds_its_built_ins_each_described_on_one_line(kind: Kind) -> None:
    assert set(names(kind)) >= BUILT_IN[kind]
    assert names(kind) == sorted(names(kind))
    for entry in entries(kind):
        assert entry.doc and "\n" not in entry.doc, entry
        assert entry.kind is kind and callable(entry.factory)


def test_register_get_and_refusals(scratch: str) -> None:
    @register(Kind.STRATEGIES, scratch)
    def factory() -> str:
        """A scratch entry.

        Only its first line is its description."""
        return "made"

    assert get(Kind.STRATEGIES, scratch)() == "made"
    assert entries(Kind.STRATEGIES)[names(Kind.STRATEGIES).index(scratch)].doc == "A scratch entry."
    # a second registration under a taken name, a built-in's included, is refused: a plugin
    # cannot silently shadow what a config names
    for taken in (scratch, "greedy"):
        with pytest.raises(ConfigError, match="already registered"):
            register(Kind.STRATEGIES, taken)(factory)
    assert get(Kind.STRATEGIES, "greedy") is not factory
    from perfgym.rewards import get_reward, register_reward

    with pytest.raises(ConfigError, match="a reward named 'rlpf' is already registered"):
        register_reward("rlpf")(lambda: get_reward("rlvr"))  # a reward that pays for anything
    assert get_reward("rlpf").params["alpha_f"] == 0.16  # still the paper's
    register(Kind.STRATEGIES, scratch, doc="replaced", replace=True)(factory)
    assert {e.name: e.doc for e in entries(Kind.STRATEGIES)}[scratch] == "replaced"
    # the same name in another kind is another thing
    register(Kind.SANDBOXES, scratch, doc="x")(factory)
    assert scratch in names(Kind.SANDBOXES)


@pytest.mark.parametrize("name", ["nope", "", " greedy", "GREEDY", "greedy\n", "../greedy"])
def test_an_unknown_name_is_one_line_listing_the_known_ones(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        get(Kind.STRATEGIES, name)
    message = str(info.value)
    assert message.startswith("no strategy named ") and "\n" not in message
    assert "registered: best-of-n, evolve, greedy" in message


def test_an_unknown_kind_is_one_line_naming_the_kinds() -> None:
    assert kind_of(" Rewards ") is Kind.REWARDS
    for bad in ("widgets", "", "reward"):
        with pytest.raises(ConfigError, match="the kinds are: rewards, metrics, sandboxes"):
            kind_of(bad)


def test_registering_loads_nothing_until_asked_and_a_local_backend_never_the_service() -> None:
    """`import perfgym.registry` imports no kind's home; looking up 'local' imports the local
    home only (the service's registers 'service' and 'ray', and loads when they are asked)."""
    light = {"perfgym", "perfgym._lazy", "perfgym.errors", "perfgym.registry"}
    assert set(_fresh("import perfgym.registry")) <= light
    loaded = _fresh(
        "from perfgym.registry import Kind, get; get(Kind.BACKENDS, 'local')\n"
        "from perfgym.judge.backend import get_backend"
    )
    assert HOMES[Kind.BACKENDS][0] in loaded
    assert [m for m in loaded if m.startswith(("perfgym.service", "perfgym.sandbox"))] == []
    assert "perfgym.service.backend" in _fresh(
        "from perfgym.registry import Kind, names; names(Kind.BACKENDS)"
    )


def test_get_backend_builds_from_the_registry_and_refuses_bad_options() -> None:
    from perfgym.judge.backend import BackendOptions, get_backend
    from perfgym.judge.config import JudgeConfig

    with pytest.raises(ConfigError, match="no judge backend named 'remote'; registered: local"):
        get_backend("remote", JudgeConfig())
    with pytest.raises(ConfigError, match="needs a URL"):
        get_backend("service", JudgeConfig())
    with pytest.raises(ValidationError):
        BackendOptions(url="http://x", retries=3)  # type: ignore[call-arg]


def test_batch_reward_names_an_unknown_backend_in_one_line() -> None:
    from perfgym.train.batch import BatchReward

    with pytest.raises(
        ConfigError, match="no judge backend named 'locall'; registered: local, ray"
    ):
        BatchReward("perfgym-core", "rlpf", backend="locall")


def test_a_strategy_is_a_registered_name_not_a_free_string() -> None:
    from perfgym.optimize.config import OptimizeConfig

    assert OptimizeConfig(strategy="best-of-n", n=3).per_round == 3
    assert OptimizeConfig(strategy="greedy", n=3).per_round == 1
    with pytest.raises(ValidationError, match="no strategy named 'random'; registered: best-of-n"):
        OptimizeConfig(strategy="random")


def test_the_judge_configs_sandbox_choices_are_the_registered_sandboxes() -> None:
    from perfgym.judge.config import JudgeConfig

    choices = get_args(JudgeConfig.model_fields["sandbox"].annotation)
    assert sorted(choices) == names(Kind.SANDBOXES)


def test_an_unknown_suite_name_lists_the_registered_ones() -> None:
    from perfgym.tasks.suite import BUILTINS, HUB_SUITES, load_suite

    assert sorted([*BUILTINS, *HUB_SUITES]) == names(Kind.SUITES)
    with pytest.raises(ConfigError, match="not a built-in \\(perfgym-core, enamel"):
        load_suite("perfgym-cor")


def test_perfgym_list_prints_each_kind_and_refuses_an_unknown_one() -> None:
    from perfgym.cli import app, list_cmd

    assert tuple(k.value for k in Kind) == list_cmd.KINDS_SHOWN
    runner = CliRunner()
    for kind in Kind:
        done = runner.invoke(app, ["list", kind.value], terminal_width=400)
        assert done.exit_code == 0, done.output
        lines = done.output.splitlines()
        assert [ln.split()[0] for ln in lines] == names(kind)
        assert all(len(ln.split(None, 1)) == 2 for ln in lines), lines
    done = runner.invoke(app, ["list"], terminal_width=400)
    assert done.exit_code == 0 and len(done.output.splitlines()) == len(Kind)
    done = runner.invoke(app, ["list", "widgets"], terminal_width=400)
    assert done.exit_code == 2
    lines = [ln for ln in done.output.splitlines() if ln.strip()]
    assert lines == [
        "error: no registry named 'widgets'; the kinds are: rewards, metrics, sandboxes, "
        "backends, strategies, suites"
    ]


def test_the_architecture_page_names_every_kind_and_home() -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text()
    section = text[text.index("## Registries") :]
    for kind, homes in HOMES.items():
        assert f"`{kind.value}`" in section, kind
        for home in homes:
            assert home.removeprefix("perfgym.").replace(".", "/") in section, home
