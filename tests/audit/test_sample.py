"""`--sample N --seed S`: a seeded sample stratified by language; `--language` filters; bad
values are one line."""

from __future__ import annotations

from collections import Counter

from audit_tasks import sum_task
from cli_helpers import one_line_error, perfgym

from perfgym.audit.sample import stratified_sample
from perfgym.tasks.task import Language


def _tasks():
    langs = [Language.PYTHON] * 12 + [Language.C] * 6 + [Language.GO] * 2
    return [sum_task(hidden=True, id=f"t{i:02d}", language=lang) for i, lang in enumerate(langs)]


def test_a_sample_keeps_each_languages_share_and_its_seed_fixes_it():
    tasks = _tasks()
    a = stratified_sample(tasks, 10, seed=1)
    assert Counter(t.language.value for t in a) == {"python": 6, "c": 3, "go": 1}
    assert [t.id for t in a] == [t.id for t in stratified_sample(tasks, 10, seed=1)]
    assert [t.id for t in a] == sorted(t.id for t in a)  # in the suite's order
    assert {t.id for t in stratified_sample(tasks, 10, seed=2)} != {t.id for t in a}
    assert stratified_sample(tasks, 50, seed=1) == tasks
    assert len(stratified_sample(tasks, 3, seed=0)) == 3  # largest remainders fill the rest


def test_every_language_present_is_drawn_at_least_once():
    """Go's share of 3 draws is 0.3: it still gets one, taken from the largest language."""
    tasks = _tasks()
    for n, seed in ((3, 0), (4, 5), (5, 9)):
        got = Counter(t.language.value for t in stratified_sample(tasks, n, seed=seed))
        assert set(got) == {"python", "c", "go"} and sum(got.values()) == n, (n, got)
    got = Counter(t.language.value for t in stratified_sample(tasks, 3, seed=0))
    assert got == {"python": 1, "c": 1, "go": 1}
    assert len(stratified_sample(tasks, 2, seed=0)) == 2  # fewer draws than languages


def test_bad_sample_and_language_are_one_line():
    one_line_error(perfgym("audit", "perfgym-core", "--sample", "0"), "--sample")
    one_line_error(perfgym("audit", "perfgym-core", "--language", "fortran"), "fortran")
    one_line_error(perfgym("audit", "perfgym-repos", "--sample", "2"), "--sample")
