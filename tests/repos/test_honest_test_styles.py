"""No false positive of the code watch on honest test suites: fixtures from a conftest, a test
helper's and the package's own decorators (`functools.wraps`), `mock.patch`, `monkeypatch` on
the test module, module data a test changes, classes, `unittest`, `caplog`, `capfd`, a test made by a factory in
the test file and a package that generates code under its own file's name all pass under the
supervisor, as they pass under plain pytest."""

from __future__ import annotations

import os
from pathlib import Path

from repo_cache import repo_cache_dir

from perfgym.repos.outcomes import original_config, run_supervised

PACKAGE = """import functools

_GEN = "def triple(x):\\n    return 3 * x\\n"
_ns = {}
exec(compile(_GEN, __file__, "exec"), _ns)
triple = _ns["triple"]


def double(x):
    return 2 * x


def retry(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)

    return wrapper
"""
HELPERS = """import functools


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*a, **k):
        return fn(*a, **k)

    return wrapper
"""
CONFTEST = """import pytest


@pytest.fixture
def two():
    return 2
"""
TESTS = """import unittest
from unittest import mock

import pytest

import pkg
from pkg import double, retry, triple
from tests.helpers import logged

COUNTER = 0


def test_plain(two):
    assert double(two) == 4


@pytest.mark.parametrize("x", [1, 2, 3])
def test_param(x):
    assert triple(x) == 3 * x


@logged
def test_wrapped_by_helper():
    assert double(1) == 2


@retry
def test_wrapped_by_package():
    assert double(3) == 6


@mock.patch("pkg.double", return_value=7)
def test_mock_patch(m):
    assert pkg.double(1) == 7


def test_monkeypatch_own_module(monkeypatch):
    import tests.test_styles as me

    monkeypatch.setattr(me, "double", lambda x: 0)
    assert me.double(5) == 0


def test_global_data():
    global COUNTER
    COUNTER += 1
    assert COUNTER >= 1


class TestClass:
    def test_method(self):
        assert double(2) == 4


class TestUnit(unittest.TestCase):
    def test_case(self):
        self.assertEqual(double(4), 8)


def test_output_captured_by_descriptor(capfd):
    import os

    os.write(1, b"to fd 1")
    assert capfd.readouterr().out == "to fd 1"


def test_logs_captured(caplog):
    import logging

    logging.getLogger("pkg").warning("slow path")
    assert "slow path" in caplog.text


def make_test(n):
    def test():
        assert double(n) == 2 * n

    return test


test_generated = make_test(5)
"""


def test_honest_test_styles_pass_under_the_supervisor() -> None:
    with repo_cache_dir("styles") as root:
        repo = Path(root) / "repo"
        files = {"pkg/__init__.py": PACKAGE, "tests/__init__.py": "", "tests/helpers.py": HELPERS,
                 "tests/conftest.py": CONFTEST, "tests/test_styles.py": TESTS}  # fmt: skip
        for rel, text in files.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
        for dirpath, _dirs, _files in os.walk(root):
            os.chmod(dirpath, 0o755)
        config = original_config(repo)
        assert config.logs  # a test uses `caplog`: pytest's logging plugin stays
        run = run_supervised(repo, "python3 -m pytest -q -p no:cacheprovider tests",
                             timeout_s=120, memory_mb=1024, config=config)  # fmt: skip
    assert run.passed and run.ran == 14, (run.problems, run.failed, run.output[-2000:])
