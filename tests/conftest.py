"""Every test directory can import the shared builders in tests/helpers/ (importlib mode).

The suite runs on two pytest-xdist workers (pyproject's addopts): a directory whose session
fixtures are costly goes to one worker whole, any other file goes to one worker, and a test
marked `alone` runs while no other worker runs a test (tests/helpers/machine_share.py).
"""

import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers"))

# pytest exports COLUMNS=80 to the processes tests start, and perfgym's console honours COLUMNS:
# give them the width a CI log gets (tests read ids out of printed tables).
os.environ["COLUMNS"] = "220"

# Compiled modules are kept, outside the source tree, for the workers and every process a test
# starts (machines here export PYTHONDONTWRITEBYTECODE=1: each worker rewrote all ~480 test
# modules' asserts and every perfgym subprocess compiled its imports from source, every time).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("PYTHONPYCACHEPREFIX", os.path.join(tempfile.gettempdir(), "perfgym-pycache"))
sys.dont_write_bytecode = False
sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]

# The reference's runs are kept on disk between judges by default (perfgym.judge.reference_disk):
# tests start from none, as a first run does (the tests of that cache set their own roots).
os.environ.setdefault("PERFGYM_REFERENCE_CACHE", "off")


from machine_share import machine_share  # noqa: E402  (found through the path set above)

TESTS = os.path.dirname(os.path.abspath(__file__))

#: Their session fixtures measure or run something costly (the repositories' measured expert
#: patches, a tiny model and a reward service, the agent's repository copies): each is set up by
#: one worker, once. Other directories' session fixtures are cheap beside what grouping them
#: costs in balance (a full run: files spread freely took 1,687 s, these six directories whole
#: and the `alone` tests 2,054 s).
WHOLE_DIRECTORIES = {"agent", "repos", "train"}


#: Tests on the session's two-node Ray cluster (tests/service/conftest.py) are one unit, run back
#: to back on one worker, which stops the cluster after the last of them: an idle cluster costs
#: ~0.12 of a core (measured), ~200 core-seconds over a run if it lived to the session's end,
#: twice if each worker started one.
RAY_GROUP = "ray-cluster"


#: Tests reading the session's one `perfgym optimize` run (tests/optimize/optimize_helpers.py's
#: `core_run`, ~36-48 s) are one unit too: spread over three files, each worker made its own
#: (full80: 36.0 s on one, 48.6 s on the other).
OPTIMIZE_RUN_GROUP = "optimize-run"


def xdist_group_of(item: pytest.Item) -> str:
    """The unit one xdist worker takes: the Ray cluster's tests, the tests of the one optimize
    run, a whole directory of WHOLE_DIRECTORIES, or one file."""
    fixtures = getattr(item, "fixturenames", ())
    if "ray_cluster" in fixtures:
        return RAY_GROUP
    if "core_run" in fixtures:
        return OPTIMIZE_RUN_GROUP
    rel = os.path.relpath(str(item.path), TESTS)
    top = rel.split(os.sep, 1)[0]
    return top if top in WHOLE_DIRECTORIES else rel


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which turns the mark into the nodeid's @group
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    groups = {id(item): xdist_group_of(item) for item in items}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))
    # xdist hands groups out in this order (a stable sort: collection order within each kind;
    # pyproject's `--no-loadscope-reorder` keeps xdist from sorting them by their test counts,
    # which ran the load test last, and the other worker idle 48 s at the end, in full81).
    # Groups holding an `alone` test go first, their `alone` tests ahead of the rest: an alone
    # test waits for the other worker's test in flight, and early on that is one of the alone
    # tests or a short one (full81 lost 52 s of one worker waiting for the agent's 67 s setup,
    # 27 s for a red team's). Then groups holding a `slow` test: one long group handed out last
    # leaves the other worker idle to the end (the 150 s load test did, once).
    alone = {groups[id(i)] for i in items if i.get_closest_marker("alone") is not None}
    slow = {groups[id(i)] for i in items if i.get_closest_marker("slow") is not None}
    items.sort(key=lambda i: (groups[id(i)] not in alone, groups[id(i)] not in slow,
                              i.get_closest_marker("alone") is None))  # fmt: skip


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    alone = item.get_closest_marker("alone") is not None
    next_alone = nextitem is not None and nextitem.get_closest_marker("alone") is not None
    with machine_share(alone, next_alone=next_alone):
        yield
