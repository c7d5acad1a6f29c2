"""Every conformance check (real attacks, real measurements) against every local backend."""

import pytest

from perfgym.sandbox.conformance import CHECKS, check_sandbox


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_check(sandbox, check):
    check.fn(sandbox)


def test_check_sandbox_runs_named_checks(warm):
    assert check_sandbox(warm, only=["bad_inputs"]) == ["bad_inputs"]
