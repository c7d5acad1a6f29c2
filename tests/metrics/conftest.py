"""Fixtures of the metric tests."""

from __future__ import annotations

import pytest
from metrics_builders import MakeVerdict, make_verdict


@pytest.fixture
def mk() -> MakeVerdict:
    return make_verdict
