"""Importing perfgym's public entry points stays light: no sandbox engine, no numpy where the
entry point does not compute with it, no service server, FastAPI, Ray or matplotlib, and a
ceiling on the perfgym modules each loads.

A trainer imports `perfgym.rewards` in every worker; a notebook imports `perfgym.metrics` to
score stored verdicts; a remote trainer imports `perfgym.service.client`. Each check runs in a
fresh interpreter, so nothing this test process already imported can hide a cost.
`bench/import_cost.py` prints the counts and times.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

FORBIDDEN = ("perfgym.sandbox", "perfgym.service", "fastapi", "ray", "matplotlib")
PURE = ("perfgym.rewards", "perfgym.metrics")
#: What a remote run asks and returns: the service client's wire format, not the engine.
SANDBOX_DATA = frozenset(
    {
        "perfgym.sandbox",
        "perfgym.sandbox.bind",
        "perfgym.sandbox.execution",
        "perfgym.sandbox.limits",
        "perfgym.sandbox.run_request",
    }
)
ALWAYS_FORBIDDEN = ("fastapi", "starlette", "uvicorn", "ray", "matplotlib", "torch", "verl")
#: entry point -> (perfgym modules ceiling, may load numpy, may load the sandbox's data types).
#: Ceilings sit about a third above what each loaded when they were set (2, 29, 38, 55, 46, 7).
ENTRY_POINTS: dict[str, tuple[int, bool, bool]] = {
    "perfgym": (5, False, False),
    "perfgym.rewards": (40, False, False),
    "perfgym.metrics": (52, True, False),  # bootstrap CIs are numpy arithmetic
    "perfgym.service.client": (75, False, True),
    "perfgym.train.trl": (62, False, False),
    "perfgym.train.verl": (12, False, False),
}


@pytest.fixture(scope="module")
def entry_loads() -> dict[str, list[str]]:
    """Every entry point imported in its own fresh interpreter, all started at once."""
    code = "import json, sys; import {}; print(json.dumps(sorted(sys.modules)))"
    procs = {
        m: subprocess.Popen(
            [sys.executable, "-c", code.format(m)], stdout=subprocess.PIPE, text=True
        )
        for m in ENTRY_POINTS
    }
    out = {}
    for module, proc in procs.items():
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"import {module} failed"
        out[module] = json.loads(stdout)
    return out


def _under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def too_heavy(loaded: list[str], numpy_ok: bool, sandbox_data_ok: bool) -> list[str]:
    """The modules in `loaded` an entry point with these allowances must not load."""
    bad = [m for m in loaded if _under(m, ALWAYS_FORBIDDEN)]
    bad += [m for m in loaded if _under(m, ("perfgym.service.server", "perfgym.service.workers"))]
    if not numpy_ok:
        bad += [m for m in loaded if _under(m, ("numpy", "scipy"))]
    allowed = SANDBOX_DATA if sandbox_data_ok else frozenset()
    bad += [m for m in loaded if _under(m, ("perfgym.sandbox",)) and m not in allowed]
    return sorted(set(bad))


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_every_entry_point_loads_no_engine_and_stays_under_its_ceiling(
    module: str, entry_loads: dict[str, list[str]]
) -> None:
    ceiling, numpy_ok, sandbox_data_ok = ENTRY_POINTS[module]
    loaded = entry_loads[module]
    assert too_heavy(loaded, numpy_ok, sandbox_data_ok) == [], f"import {module}"
    if module in PURE:  # rewards and metrics: pure functions of verdicts, no service at all
        heavy = [m for m in loaded if _under(m, FORBIDDEN)]
        assert heavy == [], f"import {module} loaded {heavy}"
    ours = [m for m in loaded if _under(m, ("perfgym",))]
    assert len(ours) <= ceiling, f"import {module} loaded {len(ours)} perfgym modules: {ours}"


def test_the_guard_sees_an_engine_numpy_or_a_server_slipped_in() -> None:
    """What a back-import would add is caught, and the data types alone are not."""
    slipped = ["perfgym.sandbox.pool", "numpy", "numpy.linalg", "perfgym.service.server.app"]
    light = ["perfgym", "perfgym.rewards", *sorted(SANDBOX_DATA)]
    assert too_heavy(light + slipped, numpy_ok=False, sandbox_data_ok=True) == sorted(slipped)
    assert too_heavy(light, numpy_ok=False, sandbox_data_ok=True) == []
    assert too_heavy(light, numpy_ok=True, sandbox_data_ok=False) == sorted(SANDBOX_DATA)
    assert too_heavy(["numpyish", "perfgym.sandboxes"], False, False) == []


@pytest.mark.parametrize(
    "package", ["perfgym.judge", "perfgym.sandbox", "perfgym.timing", "perfgym.tasks"]
)
def test_every_lazily_exported_name_is_the_object_its_module_defines(package: str) -> None:
    pkg = importlib.import_module(package)
    lazy = pkg._EXPORTS
    for name in pkg.__all__:
        assert name in dir(pkg)
        if name in lazy:
            assert getattr(pkg, name) is getattr(importlib.import_module(lazy[name]), name)
        else:
            assert getattr(pkg, name) is not None  # imported eagerly by the package
    assert set(lazy) <= set(pkg.__all__)
    with pytest.raises(AttributeError):
        _ = pkg.no_such_name  # type: ignore[attr-defined]


def test_names_shared_with_submodules_are_the_functions() -> None:
    from perfgym.judge import extract
    from perfgym.timing import compare

    assert callable(extract) and not hasattr(extract, "__path__")
    assert callable(compare) and compare.__name__ == "compare"
    assert extract.__name__ == "extract"
