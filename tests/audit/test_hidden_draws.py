"""The `hidden-draws` probe: a generator that folds its seeds onto a few inputs is a finding
(red team helper-99: `Random(seed % 4)` passed every other probe, and a memoriser of its inputs
scored as the reference)."""

from __future__ import annotations

import pytest
from audit_tasks import GENERATOR, audit, sum_task

from perfgym.audit.hidden_draws import DRAWS
from perfgym.audit.results import Outcome, Severity

NARROW = GENERATOR.replace("random.Random(seed)", "random.Random(seed % 4)")


def test_a_generator_with_four_seeds_is_a_high_finding():
    assert NARROW != GENERATOR
    task = sum_task(hidden=True, size=2000, generator=NARROW)
    r = audit(task, ["hidden-draws"], repeats=1).result("hidden-draws")
    assert r is not None and r.outcome is Outcome.WEAK and r.severity is Severity.HIGH, r
    assert r.figures["fewest_distinct"] <= 4 < DRAWS
    assert r.figures["draws_equal_to_a_visible_input"] > 0  # the declared seeds 1 and 2 too
    assert "distinct input(s)" in r.detail


def test_a_generator_that_uses_its_seed_is_sound():
    r = audit(sum_task(hidden=True, size=2000), ["hidden-draws"], repeats=1).result("hidden-draws")
    assert r is not None and r.outcome is Outcome.SOUND and r.severity is Severity.NONE, r
    assert r.figures["fewest_distinct"] == DRAWS and r.figures["workloads"] == 2
    assert r.figures["draws_equal_to_a_visible_input"] == 0


def test_literal_workloads_have_no_hidden_draws_to_judge():
    r = audit(sum_task(hidden=False, size=2000), ["hidden-draws"], repeats=1).result("hidden-draws")
    assert r is not None and r.outcome is Outcome.NOT_APPLICABLE, r
    assert "no generator" in r.detail


#: Numbers from `seed % 4`, their spelling drawn from the seed itself: one or two spaces
#: (red team helper-101), 0-2 leading zeros (helper-102). Four real inputs either way.
DISGUISES = {
    "separators": "''.join(f'{x}' + ' ' * random.Random(seed * 7 + i).randint(1, 2)"
    " for i, x in enumerate(xs))",
    "leading-zeros": "' '.join(('-' if x < 0 else '') + '0' * random.Random(seed * 7 + i)"
    ".randint(0, 2) + str(abs(x)) for i, x in enumerate(xs))",
}


@pytest.mark.parametrize("disguise", list(DISGUISES))
def test_a_disguised_spelling_does_not_make_inputs_distinct(disguise):
    generator = NARROW.replace("' '.join(map(str, xs))", DISGUISES[disguise])
    assert generator != NARROW
    task = sum_task(hidden=True, size=2000, generator=generator)
    r = audit(task, ["hidden-draws"], repeats=1).result("hidden-draws")
    assert r is not None and r.outcome is Outcome.WEAK, r
    assert r.figures["fewest_distinct"] <= 4
