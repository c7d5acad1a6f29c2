"""Importing the pure layers stays light: no sandbox, service, FastAPI, Ray or matplotlib.

A trainer imports `perfgym.rewards` in every worker; a notebook imports `perfgym.metrics` to
score stored verdicts. Each check runs in a fresh interpreter, so nothing this test process
already imported can hide a cost. `bench/import_cost.py` prints the counts and times.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

FORBIDDEN = ("perfgym.sandbox", "perfgym.service", "fastapi", "ray", "matplotlib")


def _loaded_by(module: str) -> list[str]:
    code = f"import json, sys; import {module}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", ["perfgym.rewards", "perfgym.metrics"])
def test_the_pure_layers_load_no_sandbox_service_or_heavy_framework(module: str) -> None:
    loaded = _loaded_by(module)
    heavy = [m for m in loaded if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
    assert heavy == [], f"import {module} loaded {heavy}"


@pytest.mark.parametrize("package", ["perfgym.judge", "perfgym.timing", "perfgym.tasks"])
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
