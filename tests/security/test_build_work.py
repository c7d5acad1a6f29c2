"""Work done in the build runs outside every clock: a correct candidate whose build takes far
more CPU than its task's own builds is flagged `build_work` and earns the least speed credit
(red team helper-84: the reference of cpp-lcs-length with two `constexpr` tables costing about
4 s of g++ CPU was accepted, unflagged, at RLPF's 1.26 in 2 of 2 batches). The builds are
real g++ builds, with the default allowance; an honest program including <bits/stdc++.h>
(about 1 s of g++ CPU against the reference's 0.3 s) is not flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.judge.candidate import Candidate
from perfgym.judge.config import JudgeConfig
from perfgym.judge.judge import Judge
from perfgym.rewards import get_reward
from perfgym.run_status import BUILD_WORK
from perfgym.tasks.native import load_task_dir
from perfgym.tasks.task import Language
from perfgym.toolchains import BuildCache, toolchain

TASK = Path(__file__).resolve().parents[2] / "suites" / "perfgym-core" / "cpp-lcs-length"

#: A table the compiler computes (about 3 M steps of constant evaluation), read once at run time.
TABLE = """
#include <array>
constexpr std::array<unsigned, 4096> compile_time_table(unsigned salt) {
    std::array<unsigned, 4096> t{};
    for (unsigned i = 0; i < 4096; i++) {
        unsigned long long x = i + salt;
        for (int r = 0; r < 380; r++) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t[i] = (unsigned)(x >> 40);
    }
    return t;
}
constexpr auto TABLE_A = compile_time_table(0);
constexpr auto TABLE_B = compile_time_table(1);
static volatile unsigned sink = TABLE_A[7] + TABLE_B[9];
"""
#: The usual contest containers and tools, used once at start-up (red team helper-125's honest
#: program: 2.5-3.9 s of g++ CPU, flagged 3 of 3 on CPU seconds against the header probe).
CONTAINERS = """
namespace containers_used {
static long long warm() {
  std::map<std::string, std::vector<std::pair<int, long long>>> m;
  std::unordered_map<long long, std::set<int>> u;
  std::priority_queue<std::tuple<long long, int, int>, std::vector<std::tuple<long long, int, int>>,
                      std::greater<>> pq;
  std::deque<std::array<int, 3>> dq;
  std::multiset<double> ms;
  std::stringstream ss;
  for (int i = 0; i < 5; i++) {
    m[std::to_string(i)].push_back({i, i}); u[i].insert(i); pq.push({i, i, i});
    dq.push_back({i, i, i}); ms.insert(i * 0.5); ss << i;
  }
  std::vector<std::pair<int, std::string>> v;
  for (auto& [k, vv] : m) v.push_back({(int)vv.size(), k});
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::function<long long(int)> f = [&](int x) -> long long { return x <= 1 ? 1 : f(x - 1) + f(x - 2); };
  std::mt19937_64 rng(1); std::uniform_int_distribution<int> d(0, 9);
  std::variant<int, std::string, double> var = 2.0;
  long long vis = std::visit([](auto&& x) -> long long {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>) return x.size();
    else return (long long)x; }, var);
  return (long long)m.size() + u.size() + pq.size() + dq.size() + ms.size() + ss.str().size()
         + f(10) + d(rng) + vis;
}
static volatile long long sink = warm();
}
"""
#: Twice TABLE's constant evaluation: a harness task's own builds take 1.0-1.5 s of g++ CPU here,
#: so TABLE's ~5 s build sat at the 4x bound's edge, and judged unflagged in 1 of 2 quiet runs.
DOUBLE_TABLE = (
    TABLE
    + """
constexpr auto TABLE_C = compile_time_table(2);
constexpr auto TABLE_D = compile_time_table(3);
static volatile unsigned sink_cd = TABLE_C[5] + TABLE_D[3];
"""
)


# Alone: the honest build (`bits/stdc++.h`, ~1.8 s of g++ CPU) beside the other worker's tests
# once took more than its task's own builds plus 2 s of CPU and was flagged (full63).
@pytest.mark.alone
@pytest.mark.skipif(toolchain(Language.CPP).missing() is not None, reason="no g++")
def test_a_build_that_computes_is_flagged_and_paid_least(tmp_path) -> None:  # type: ignore[no-untyped-def]
    task = load_task_dir(TASK)
    ref = task.references[0].source
    heavy = ref + TABLE
    honest = "#include <bits/stdc++.h>\n" + ref
    config = JudgeConfig.protocol("training", hidden_workloads=True,
                                  build_cache=str(tmp_path / "builds"))  # fmt: skip
    # Built apart: beside the heavy build (5-6.5 s of g++), the honest one once took about
    # twice its 1.3-1.8 s (full111, alone); the second look answers that (tested below).
    with Judge(config) as judge:
        (got_heavy,) = judge.judge_many([Candidate(task, source=heavy)])
        (got_honest,) = judge.judge_many([Candidate(task, source=honest)])
    assert got_heavy.correct and got_honest.correct, (got_heavy.reason, got_honest.reason)
    assert BUILD_WORK in got_heavy.flags and BUILD_WORK in got_heavy.hid_time
    # no decision of speed reads its timing (the optimiser's, the metrics')
    assert got_heavy.candidate is not None and not got_heavy.candidate.ok
    assert "outside every clock" in got_heavy.candidate.status_reason
    assert got_honest.candidate is not None
    assert "outside every clock" not in got_honest.candidate.status_reason, (
        got_honest.candidate.status_reason
    )
    assert BUILD_WORK not in got_honest.flags and not got_honest.hid_time
    rlpf = get_reward("rlpf")
    paid_heavy, paid_honest = rlpf([got_heavy, got_honest])
    # the floor of a correct program; the honest one's reward is None when load degraded its
    # timing (`timing_drift`, full75), else above the floor
    assert paid_heavy is not None and paid_heavy <= 0.15 + 1e-9, paid_heavy
    assert paid_honest is None or paid_heavy < paid_honest
    for _ in range(2):  # the optimiser's premise below, an honest first best, needs its timing
        if got_honest.candidate.usable_s is not None:  # (full82: drift degraded it, alone)
            break
        with Judge(config) as judge:
            (got_honest,) = judge.judge_many([Candidate(task, source=honest)])
    _a_best_that_hid_time_falls(task, honest, heavy, got_honest, got_heavy)
    # The header probe is drawn once per candidate build: judged again, with every new probe
    # slow enough to let it through, the same build meets the same bound (red team
    # helper-101: refused twice, then accepted at 0.59x when a loaded moment slowed one).
    import perfgym.judge.stages as stages_module

    memo = list((tmp_path / "builds" / ".build-work").glob("*.json"))
    assert memo, "the probe drawn for the heavy build is kept"
    slow_probe = pytest.MonkeyPatch()
    slow_probe.setattr(stages_module, "header_probe_cpu", lambda *_: 1000.0)
    # Flags only: nothing of the task's own need be timed again (the builds are all cached).
    flags_only = JudgeConfig(repeats=1, build_cache=str(tmp_path / "builds"),
                             measure_baseline=False, measure_reference=False)  # fmt: skip
    try:
        with Judge(flags_only) as judge:
            (again,) = judge.judge_many([Candidate(task, source=heavy)])
    finally:
        slow_probe.undo()
    assert again.correct and BUILD_WORK in again.flags, again.flags


def _a_best_that_hid_time_falls(task, honest, heavy, got_honest, got_heavy) -> None:  # type: ignore[no-untyped-def]
    """Red team helper-101: a best accepted unflagged and flagged when re-measured (or in its
    final measurement) stayed the best. It falls now as a wrong best does, and never returns."""
    from perfgym.optimize.config import OptimizeConfig
    from perfgym.optimize.search import Request, TaskState, apply, decide

    state = TaskState(task, OptimizeConfig())
    asked = [Request(slot=0, purpose="optimize", parent="best", source=None, feedback=None)]
    (first,) = decide(state, [got_honest], None, [""])
    assert first.accepted, first.why
    apply(state, 1, asked, [got_honest], [first], None)
    # as if the heavy program had been accepted unflagged in round 2
    state.earlier.append((state.best_source, state.best_role, state.best_verdict, 1))
    state.best_source, state.best_role, state.best_verdict = heavy, "candidate", got_heavy
    state.best_iteration = 2
    (round3,) = decide(state, [got_honest], got_heavy, [""])
    assert not round3.accepted and "the best hid time from the clock" in round3.why, round3.why
    apply(state, 3, asked, [got_honest], [round3], got_heavy)
    assert state.best_source == honest and state.best_iteration == 1
    # proposed again and, say, judged unflagged this time (a lucky probe): still refused
    lucky = got_heavy.model_copy(update={"flags": []})
    assert lucky.correct and not lucky.hid_time
    (round4,) = decide(state, [lucky], got_honest, [""])
    assert not round4.accepted and round4.why.startswith("refused earlier: it hid time"), round4.why


def test_the_header_probe_is_built_only_for_a_build_over_the_other_bounds() -> None:
    """An honest `bits/stdc++.h` build costs what the probe costs, whatever the machine's
    speed; a build over the task's own bounds is weighed against the probe built then."""
    from types import SimpleNamespace

    from perfgym.judge.build_work import PROBE_FACTOR, flag_build_work

    def variant(cpu: float):  # noqa: ANN202
        return SimpleNamespace(build_measurement=SimpleNamespace(cpu_s=cpu))

    calls: list[float] = []

    def probe(cpu: float):  # noqa: ANN202
        return lambda: calls.append(cpu) or cpu

    def flagged(mine: float, probed: float | None) -> bool:
        verdict = SimpleNamespace(flags=[], candidate=None)
        return flag_build_work(verdict, variant(mine), [variant(0.3)], 2.0,  # type: ignore[arg-type]
                               probe=probe(probed) if probed is not None else None)  # fmt: skip

    assert not flagged(1.0, 9.0) and calls == []  # under the bounds: no probe built
    assert flagged(3.2, None)  # over own + 2 s, nothing to weigh it against
    assert not flagged(3.2, 2.9)  # a slow machine: the probe took 2.9 s (full66's 1.8x)
    assert flagged(0.3 + PROBE_FACTOR * 1.5 + 2.0, 1.5)  # helper-84's constexpr tables, idle
    assert calls == [2.9, 1.5]


def test_a_build_over_the_bound_is_decided_by_one_look_at_the_compilers_phases() -> None:
    """A build over its task's fixed bound is built again with the compiler's phase report, and
    that look alone decides: flagged where constant evaluation, template instantiation or
    preprocessing passes its allowance, or where the build could not be checked; never the
    better of two draws (red team helper-124: a look drawn only to clear a flag cleared 6 of 13
    tables near the cut). Without a look, the first figure against a probe built later."""
    from types import SimpleNamespace

    from perfgym.judge.build_look import UNCHECKED
    from perfgym.judge.build_work import flag_build_work

    drawn: list[str] = []
    honest = {"constant expression evaluation": 0.06, "template instantiation": 0.9,
              "preprocessing": 0.2, "phase opt and generate": 3.0}  # fmt: skip

    def flagged(mine: float, probed: float | None, looked):  # noqa: ANN001, ANN202
        verdict = SimpleNamespace(
            flags=[], candidate=SimpleNamespace(status=None, status_reason="")
        )
        own = [SimpleNamespace(build_measurement=SimpleNamespace(cpu_s=0.3))]
        got = flag_build_work(verdict, SimpleNamespace(build_measurement=SimpleNamespace(cpu_s=mine)),  # type: ignore[arg-type]
                              own, 2.0, probe=lambda: drawn.append("probe") or probed,  # type: ignore[arg-type]
                              look=lambda: drawn.append("look") or looked)  # fmt: skip
        return got, verdict.candidate.status_reason

    table = {**honest, "constant expression evaluation": 2.45}
    assert flagged(2.2, 1.5, table) == (False, "") and drawn == []  # under the fixed bound
    # an honest heavy-template build, however long (full111: twice its CPU beside a heavy one;
    # helper-124's std::regex, helper-125's containers): its phases say it computed nothing
    assert flagged(30.0, 1.5, honest) == (False, "") and drawn == ["look"]
    got, why = flagged(3.0, 9.0, table)  # one draw: a probe built later is never asked
    assert got and "constant expression evaluation 2.45 s, over 0.5 s" in why, why
    assert drawn == ["look", "look"]
    assert flagged(3.0, 9.0, {**honest, "template instantiation": 4.1})[0]  # recursion
    assert flagged(3.0, 9.0, {**honest, "preprocessing": 1.1})[0]  # macro loops
    assert flagged(3.0, 9.0, {**honest, "template instantiation": "x"})[0]
    got, why = flagged(3.0, 9.0, UNCHECKED)  # other bytes, no build, no figures
    assert got and "could not be checked" in why, why
    for nothing in (None, "garbage", [1.0]):  # no look: the first figure against the probe
        drawn.clear()
        got, why = flagged(6.0, 1.5, nothing)
        assert got and "6.0 s of CPU against" in why and drawn == ["look", "probe"], (why, drawn)
        assert flagged(2.5, 1.5, nothing) == (False, "")  # the probe built later: 0.3 + 2.25


def test_a_draw_that_gave_no_figure_is_not_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A probe or a look that failed (a sandbox fault) is drawn again at the next judgement
    (red team helper-124: a kept None left a build on its first figure for good); a figure is
    kept, and drawn once per build."""
    from types import SimpleNamespace

    from perfgym.judge.build_work import remembered

    build = SimpleNamespace(build_measurement=SimpleNamespace(model_dump_json=lambda: '{"cpu": 1}'))
    draws = iter([None, {"preprocessing": 0.1}, {"preprocessing": 9.0}])
    look = remembered(tmp_path, build, "phases", lambda: next(draws))  # type: ignore[arg-type]
    assert look() is None
    assert look() == {"preprocessing": 0.1}
    assert look() == {"preprocessing": 0.1}  # kept: the third draw is never made


@pytest.mark.skipif(toolchain(Language.CPP).missing() is not None, reason="no g++")
def test_a_build_figure_from_a_loaded_moment_is_weighed_on_its_phases(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The build figures of an honest `bits/stdc++.h` program and of one using the usual
    containers (red team helper-125: flagged 3 of 3 on CPU seconds), as a loaded moment can
    give them (their cached records edited to 30 s of CPU), are looked at once more, built
    again with the compiler's phase report: not flagged, and the look is kept, so the same
    build meets the same bound at every judgement. A build whose bytes depend on its moment
    (`__TIME__`) cannot be checked that way, and is flagged."""
    import json
    import time

    import perfgym.judge.stages as stages_module

    task = load_task_dir(TASK)
    honest = "#include <bits/stdc++.h>\n" + task.references[0].source
    stamped = honest + "\nconst char *volatile built_at = __TIME__;\n"
    containers = honest + CONTAINERS
    sources = (honest, stamped, containers)
    builds = tmp_path / "builds"
    config = JudgeConfig(repeats=1, build_cache=str(builds),
                         measure_baseline=False, measure_reference=False)  # fmt: skip
    with Judge(config) as judge:
        first = judge.judge_many([Candidate(task, source=s) for s in sources])
    assert all(v.correct for v in first), [v.reason for v in first]
    cpp, cache = toolchain(Language.CPP), BuildCache.at(str(builds))
    for source in sources:
        # the cached record of the judge's build of `source`
        key = cache.key(cpp.recipe, cpp.version().text, source.encode())
        record = next(cache.root.glob(f"*/{key}/build.json"))
        build = json.loads(record.read_text())
        build["measurement"].update(cpu_user_s=29.0, cpu_system_s=1.0, cpu_cgroup_s=30.0)
        record.chmod(0o644)
        record.write_text(json.dumps(build))
    time.sleep(1.1)  # __TIME__ has seconds: the stamped program's second build differs
    real, active, most = stages_module.phase_look, [0], [0]

    def counted(*args):  # type: ignore[no-untyped-def]
        active[0] += 1
        most[0] = max(most[0], active[0])
        try:
            return real(*args)
        finally:
            active[0] -= 1

    looks = pytest.MonkeyPatch()
    looks.setattr(stages_module, "phase_look", counted)
    try:
        with Judge(config) as judge:
            got = judge.judge_many([Candidate(task, source=s) for s in sources])
            parallel = judge.parallel
    finally:
        looks.undo()
    got_honest, got_stamped, got_containers = got
    # the looks side by side, not one after another (helper-124: 46 s of looks in a row)
    assert most[0] == min(3, parallel), (most[0], parallel)
    for v in (got_honest, got_containers):
        assert v.correct and BUILD_WORK not in v.flags, (v.flags, v.reason)
    assert got_stamped.correct and BUILD_WORK in got_stamped.flags, got_stamped.flags
    assert got_stamped.candidate is not None
    assert (
        "30.0 s of CPU (built again, it could not be checked" in got_stamped.candidate.status_reason
    )
    # judged again with every new look a table's: the kept one decides
    slow = pytest.MonkeyPatch()
    slow.setattr(stages_module, "phase_look",
                 lambda *_: {"constant expression evaluation": 99.0})  # fmt: skip
    try:
        with Judge(config) as judge:
            (again,) = judge.judge_many([Candidate(task, source=honest)])
    finally:
        slow.undo()
    assert again.correct and BUILD_WORK not in again.flags, again.flags


@pytest.mark.skipif(toolchain(Language.CPP).missing() is not None, reason="no g++")
def test_optimize_never_takes_a_program_that_computes_in_its_build(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Red team helper-98: `perfgym optimize` read only the timing, and the same tables moved
    into the build's constexpr were accepted at 0.67-0.68x of the honest best (3 of 3 runs;
    renaming the run-time tables instead tied at 0.98)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "optimize"))
    from optimize_helpers import client

    from perfgym.llm.core_script import fenced
    from perfgym.llm.script import Script
    from perfgym.llm.scripted import ScriptedServer
    from perfgym.optimize.config import OptimizeConfig
    from perfgym.optimize.session import judge_config, run_session
    from perfgym.store.optimize_history import OptimizeHistory

    task = load_task_dir(TASK)
    ref = task.references[0].source
    # The same tables computed when the program starts: the honest best the build version
    # would beat by the work it moved into the compiler.
    at_run_time = (TABLE.replace("constexpr std::array", "std::array")
                   .replace("constexpr auto TABLE_A = compile_time_table(0)",
                            "static volatile unsigned salt = 0;\nauto TABLE_A = compile_time_table(salt)")
                   .replace("constexpr auto TABLE_B = compile_time_table(1)",
                            "auto TABLE_B = compile_time_table(salt + 1)"))  # fmt: skip
    assert "constexpr" not in at_run_time
    script = Script().add(task.id, fenced(ref + at_run_time, task.language, "Faster:"),
                          fenced(ref + TABLE, task.language, "Faster still:"))  # fmt: skip
    history = OptimizeHistory(tmp_path / "h.sqlite")
    config = OptimizeConfig(iterations=2, confirm=0, final_check=0)
    with ScriptedServer(script) as srv:
        result = run_session(config, "perfgym-core", [task], client(srv.base_url),
                             judge=judge_config(3), history=history, out=tmp_path / "out",
                             resume=False, report=False)  # fmt: skip
    steps = {s.iteration: s for s in history.steps(result.run) if s.slot == 0}
    assert steps[1].accepted, steps[1].why
    assert steps[2].accepted is False, steps[2].why
    assert steps[2].why == f"time hidden from the clock ({BUILD_WORK})", steps[2].why
    assert result.states[task.id].accepted_at == [1]
    # refused once, refused for good, under any text that normalises alike (helper-102: the
    # same program proposed again redrew the bound until it passed)
    from perfgym.optimize.search import decide, key_of

    state = result.states[task.id]
    assert state.wrong[key_of(ref + TABLE, task)].startswith("hid time from the clock")
    again = history.steps(result.run)
    flagged = next(s.verdict for s in again if s.iteration == 2 and s.slot == 0)
    from perfgym.judge.verdict import Verdict

    lucky = Verdict.model_validate(flagged).model_copy(
        update={"flags": [], "source": "// a comment\n" + ref + TABLE}
    )
    (d,) = decide(state, [lucky], None, [""])
    assert not d.accepted and d.why.startswith("refused earlier: it hid time"), d.why


PCB = Path(__file__).resolve().parents[1] / "fixtures" / "perfcodebench" / "executable_tasks"


@pytest.mark.skipif(toolchain(Language.CPP).missing() is not None, reason="no g++")
def test_a_harness_build_judged_again_keeps_its_build_work_flag(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Red team helper-100: a harness task's folder is built once, and a judge that found it
    built took no measurement of its build, nor of the task's own builds, so `build_work`
    flagged a candidate only in the process that first built it (35-48 s of constexpr work:
    0.15 the first time, 1.26 from the second judgement on, new processes and new sources
    alike). The measurement is kept beside the build and given back."""
    import shutil

    from perfgym.tasks import load_suite

    suite_dir = tmp_path / "pcb" / "executable_tasks"
    shutil.copytree(PCB / "cpp_topk_sum", suite_dir / "cpp_topk_sum")
    task = load_suite(str(suite_dir)).get("cpp_topk_sum")
    heavy = task.reference.source + DOUBLE_TABLE
    config = JudgeConfig(repeats=1, reference_cache="off", build_cache=str(tmp_path / "builds"),
                         measure_baseline=False, measure_reference=False)  # fmt: skip
    got = []
    for _ in range(2):  # two judges on one build cache: the second builds nothing
        with Judge(config) as judge:
            got.append(judge.judge_many([Candidate(task, source=heavy)])[0])
    first, again = got
    assert first.correct and again.correct, (first.reason, again.reason)
    assert BUILD_WORK in first.flags and BUILD_WORK in again.flags, (first.flags, again.flags)
    assert first.candidate is not None and not first.candidate.ok
    assert again.candidate is not None and not again.candidate.ok
    assert list((tmp_path / "builds" / ".harness").glob("*/built.json"))
