"""Repository probes on tiny repository tasks, evaluated through the agent's patch evaluation
(real copies, sandbox, tests, timer). On a task whose timed call dominates, work moved into
setup(), results cached across timed runs and forged test outcomes do not score. A task whose
setup() jitters by more than the call costs lets the same setup shift score (the clock's
tolerance for setup noise swallows it): the audit reports it. An expert patch that is no faster
is weak headroom."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from repo_cache import repo_cache_dir

from perfgym.audit.repo_audit import REPO_PROBES, audit_repo_task, select_repo_probes
from perfgym.audit.repo_patches import NotWritable, package_init
from perfgym.audit.results import Outcome
from perfgym.errors import ConfigError

SLOW = "def total(xs):\n    t = 0\n    for x in xs:\n        for _ in range(8):\n            t += x % 7\n    return t // 8\n"
FAST = "def total(xs):\n    return sum(x % 7 for x in xs)\n"
TEST = "from tinysum import total\n\n\ndef test_total():\n    assert total([1, 8, 15]) == 3\n"
WORKLOAD = ("import random\nimport time\n\nfrom tinysum import total\n\n\ndef setup():\n"
            "    time.sleep((1 + 3 * random.random()) * {jitter} / 4)\n    return list(range({n}))\n\n\n"
            "def experiment(xs):\n    return total(xs)\n")  # fmt: skip
TOML = """id = "{id}"
repo = "repo"
test_command = "python3 -m pytest -q -p no:cacheprovider tests"
expert_patch = "expert.diff"

[[workloads]]
name = "visible"
script = "workloads/visible.py"

[limits]
build_s = 60
test_s = 60
workload_s = 60
memory_mb = 512
"""


def _diff(repo: Path, rel: str, new: str) -> str:
    import difflib

    old = (repo / rel).read_text()
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"a/{rel}", tofile=f"b/{rel}"))  # fmt: skip


def make_task(root: Path, task_id: str, *, expert: str, jitter: float = 0.0, n: int = 60000
              ) -> Path:  # fmt: skip
    """A task folder: package `tinysum` (a slow loop over `n` numbers), one test, one workload
    whose setup sleeps between a quarter of `jitter` and `jitter` s (never 4x its median: the
    clock measures a round again whose setup stalled that far), an expert patch
    making the package's source `expert`."""
    d = root / task_id
    (d / "repo/tinysum").mkdir(parents=True)
    (d / "repo/tests").mkdir()
    (d / "workloads").mkdir()
    (d / "repo/tinysum/__init__.py").write_text(SLOW)
    (d / "repo/tests/test_tinysum.py").write_text(TEST)
    (d / "workloads/visible.py").write_text(WORKLOAD.format(n=n, jitter=jitter))
    (d / "task.toml").write_text(TOML.format(id=task_id))
    (d / "expert.diff").write_text(_diff(d / "repo", "tinysum/__init__.py", expert))
    subprocess.run(["git", "init", "-q"], cwd=d / "repo", check=True)
    return d


@pytest.fixture(scope="module")
def checked(tmp_path_factory):  # type: ignore[no-untyped-def]
    """The tiny task (a 0.1 s call, a steady setup) whose expert is a real speed-up; one whose
    setup jitters by 0.5 s; one whose expert only renames a variable (no faster)."""
    from perfgym.repos.checks import check_task
    from perfgym.repos.loading import load_repo_task

    root = tmp_path_factory.mktemp("repo-tasks")
    with repo_cache_dir("audit", "/var/tmp/perfgym-test-repos"):
        flat = SLOW.replace("t ", "u ").replace("t\n", "u\n").replace("t //", "u //")
        tasks = {"tiny": make_task(root, "tiny", expert=FAST, n=150000),
                 "tiny-jitter": make_task(root, "tiny-jitter", expert=FAST, jitter=0.5),
                 "tiny-flat": make_task(root, "tiny-flat", expert=flat, n=20000)}  # fmt: skip
        out = {k: check_task(load_repo_task(p)) for k, p in tasks.items()}
        yield out
        for c in out.values():
            c.remove()


@pytest.fixture(scope="module")
def tiny_audit(checked):  # type: ignore[no-untyped-def]
    return audit_repo_task(checked["tiny"], REPO_PROBES, suite="t", rounds=5)


@pytest.mark.slow
def test_setup_shift_caching_and_forged_tests_do_not_score(tiny_audit) -> None:
    by = {r.probe: r for r in tiny_audit.results}
    shift, cache, config = by["repo-setup-shift"], by["repo-caching"], by["repo-test-config"]
    assert shift.outcome is Outcome.DOES_NOT_SCORE, shift
    assert cache.outcome is Outcome.DOES_NOT_SCORE, cache
    assert config.outcome is Outcome.DOES_NOT_SCORE, config
    # each was evaluated to the end and caught, not stopped by an accident of the patch
    assert shift.figures["evaluations"][0]["stage"] == "done", shift.figures
    assert cache.figures["evaluations"][0]["stage"] == "done", cache.figures
    assert all(ev["stage"] == "tests" and not ev["tests_passed"]
               for ev in config.figures["evaluations"])  # fmt: skip
    assert shift.rewards["adjusted_speedup"] <= 1.0 and cache.rewards["adjusted_speedup"] <= 1.0


# Wall-clock significance over 3 rounds: one original round slowed by the other worker's test
# made the flat task's no-op patch a significant 1.56x in a full run.
@pytest.mark.alone
@pytest.mark.slow
def test_headroom_sound_for_a_real_expert_and_weak_for_a_flat_one(tiny_audit, checked) -> None:
    head = tiny_audit.result("repo-headroom")
    assert head.outcome is Outcome.SOUND and head.value > 1.2, head
    flat = audit_repo_task(checked["tiny-flat"], select_repo_probes(["repo-headroom"]), rounds=3)
    (r,) = flat.results
    assert r.outcome is Outcome.WEAK and r.severity.value in ("high", "medium"), r


@pytest.mark.alone
@pytest.mark.slow
def test_setup_shift_scores_where_setup_noise_hides_it(checked) -> None:
    """The task built to fail: its setup sleeps 0.125-0.5 s, so the original's import + setup
    spread (x2, the clock's tolerance) and an unsignificant setup growth hide the call's work
    moved into setup(); the probe is credited the speed-up and the audit says so. The jitter is
    random: in one full run the setup drew no cover and the clock caught the shift (setup_shift
    flagged, DOES_NOT_SCORE), so a second audit is asked before the hole is called closed."""
    probes = select_repo_probes(["repo-setup-shift"])
    (r,) = audit_repo_task(checked["tiny-jitter"], probes, rounds=5).results
    if r.outcome is not Outcome.SCORES:
        (r,) = audit_repo_task(checked["tiny-jitter"], probes, rounds=5).results
    assert r.outcome is Outcome.SCORES and r.severity.value == "high", r
    assert r.rewards["adjusted_speedup"] > 1.0


def test_a_repository_without_a_package_is_not_applicable(tmp_path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/__init__.py").write_text("")
    with pytest.raises(NotWritable, match="no top-level Python package"):
        package_init(tmp_path)


def test_an_unknown_repository_probe_is_refused() -> None:
    with pytest.raises(ConfigError, match="repo-bogus"):
        select_repo_probes(["repo-bogus"])
    assert [p.name for p in select_repo_probes(["measurability"])] == ["repo-headroom",
                                                                     "repo-setup-cover"]


@pytest.mark.slow
def test_the_cli_audits_a_repository_task_folder(checked, tmp_path) -> None:
    from cli_helpers import one_line_error, perfgym

    folder = checked["tiny"].task.folder
    p = perfgym("audit", folder, "--probes", "repo-test-config", "--json", "-o",
                tmp_path / "r.jsonl", "--store", tmp_path / "s.sqlite")  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    doc = json.loads(p.stdout)
    assert doc["tasks"][0]["results"][0]["outcome"] == "does not score"
    assert doc["summary"]["lines"] == [
        "0 % of tasks believe forged test outcomes or a patch's test configuration (0/1)"
    ]
    one_line_error(perfgym("audit", folder, "--probes", "lookup-table"), "repo")
