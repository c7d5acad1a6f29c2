"""Identity by construction: a candidate takes another's verdict, or a role's timing, only when
nothing in it can tell them apart: the same extracted source, byte for byte (perfgym.judge.twins).

Issue 26: the twin rule compared compiled Python modules and screened a list of names through
which a program reads itself (`READS_ITSELF`); a program that reads its own file size through a
module the list did not name (`posixpath.getsize`) and differs from a correct program only in a
trailing comment took that program's verdict: a wrong copy was judged correct, and a slow copy
had its fast twin's timing. Each attack below is a pair (or a role copy) the old rules took for
one program, each doing something different once it knows which copy it is.

Run: PYTHONPATH=src python3 -m pytest -q tests/security/test_identity.py
"""

from __future__ import annotations

import pytest

from perfgym.judge import Candidate
from perfgym.judge.record import Entry
from perfgym.judge.same_source import normalised
from perfgym.judge.twins import ROLE_TIMING, SAME_PROGRAM, representatives, role_of, twin_key
from perfgym.judge.variant import Variant
from perfgym.metrics.perfcodebench import sample_outcome
from perfgym.tasks.suite import load_suite
from perfgym.tasks.task import Solution
from perfgym.train.batch import BatchReward, training_judge_config

#: A trailing comment: the same compiled module (every line where it was), a bigger file.
PAD = "# " + "x" * 400 + "\n"
WRONG = "    print('not the answer'); raise SystemExit\n"
#: Reads its own size through a module the old list did not name (`posixpath`); LIMIT lies
#: between the correct copy's size and its padded twin's.
SIZE = "import posixpath as _p\n_big = _p.getsize('/tmp/build/main.py') > LIMIT\n"


def _sized(template: str) -> str:
    """`template` with LIMIT replaced by a number between its own size and its size + PAD."""
    size = len(template.encode())
    return template.replace("LIMIT", str(size + len(PAD) // 2))


def _as_function(src: str, name: str) -> str:
    """A task solution (`def main(): ...` then `main()`) with `main` renamed, not called."""
    body = src.rstrip()
    assert body.endswith("\nmain()") and "def main(" in body
    return body[: -len("main()")].replace("def main(", f"def {name}(")


@pytest.fixture(scope="module")
def suite():
    return load_suite("perfgym-core")


@pytest.fixture(scope="module")
def task(suite):
    return suite.get("py-lis-dp")  # the reference is O(n log n), the baseline O(n^2)


@pytest.fixture(scope="module")
def programs(task, suite):
    """name → (task, the correct/fast program, its look-alike)."""
    ref, base = task.references[0].source, task.baseline.source
    wrong = _sized(SIZE + "if _big:\n" + WRONG + ref)
    slow = _sized(SIZE + _as_function(base, "_slow") + _as_function(ref, "_fast")
                  + "(_slow if _big else _fast)()\n")  # fmt: skip
    js = suite.get("js-topk-scores")
    js_good = (
        'if (require("fs").statSync(__filename).size > LIMIT) {\n'
        '  console.log("not the answer"); process.exit(0);\n}\n'
    ) + (js.pool or js.references)[0].source
    js_good = js_good.replace("LIMIT", str(len(js_good.encode()) + 150))
    return {
        "wrong": (task, wrong, wrong + PAD),
        "slow": (task, slow, slow + PAD),
        # trailing whitespace only: the old rule compared other languages' text rstripped
        "js_trailing_space": (js, js_good, js_good.rstrip("\n") + "\n" + " " * 300 + "\n"),
    }


#: A copy of the baseline whose first line is a coding cookie: the normaliser (and the old
#: role rule) reads the rest as comments, Python decodes `\n` in them as line breaks and runs
#: what they hide. Here: a wrong answer on large inputs only (the workloads, not the tests).
HIDDEN_WRONG = (
    "# coding: unicode_escape\n"
    "# \\nimport sys as _s, io as _i\\n_d = _s.stdin.read()\\n_s.stdin = _i.StringIO(_d)"
    "\\nif len(_d) > 5000: print(0); raise SystemExit\n"
)
HIDDEN_SLOW = (
    "# coding: unicode_escape\n"
    "# \\nimport time as _t\\n_t0 = _t.process_time()"
    "\\nwhile _t.process_time() - _t0 < 0.5: pass\n"
)


@pytest.fixture(scope="module")
def reward():
    with BatchReward("perfgym-core", "rlpf", judge_config=training_judge_config()) as br:
        yield br


def _fenced(lang: str, src: str) -> str:
    return f"```{lang}\n{src}```"


@pytest.fixture(scope="module")
def rewarded(reward, programs):
    """BatchReward: the wrong and slow pairs in one batch (each look-alike beside its correct
    program), then the look-alikes alone."""
    names = ["wrong", "slow"]
    beside = [(programs[n][0].id, _fenced("python", s)) for n in names for s in programs[n][1:]]
    scored = reward.score(beside)
    verdicts = list(reward.last_verdicts)
    alone_scored = reward.score([(programs[n][0].id, _fenced("python", programs[n][2]))
                                 for n in names])  # fmt: skip
    alone = list(reward.last_verdicts)
    out = {}
    for k, n in enumerate(names):
        out[n] = {"good": (scored[2 * k].value, verdicts[2 * k]),
                  "bad": (scored[2 * k + 1].value, verdicts[2 * k + 1]),
                  "alone": (alone_scored[k].value, alone[k])}  # fmt: skip
    return out


@pytest.fixture(scope="module")
def judged(reward, programs, task):
    """judge_many: every pair side by side, with the role copies, in one call; then every
    look-alike alone in another."""
    base = task.baseline.source
    sources = [(t, s) for t, *pair in programs.values() for s in pair]
    roles = {"hidden_wrong": HIDDEN_WRONG + base, "hidden_slow": HIDDEN_SLOW + base,
             "commented": "# my faster version\n" + base + "# done\n", "exact": base}  # fmt: skip
    sources += [(task, s) for s in roles.values()]
    cands = [Candidate(t, None, s, "m", k, "perfgym-core") for k, (t, s) in enumerate(sources)]
    vs = reward.judge.judge_many(cands)
    alone = reward.judge.judge_many(
        [
            Candidate(t, None, bad, "m", k, "perfgym-core")
            for k, (t, _, bad) in enumerate(programs.values())
        ]  # fmt: skip
    )
    out = {n: {"good": vs[2 * k], "bad": vs[2 * k + 1], "alone": alone[k]}
           for k, n in enumerate(programs)}  # fmt: skip
    out.update(dict(zip(roles, vs[2 * len(programs) :], strict=True)))
    return out


# -- the attacks' preconditions: the old rule's blind spots, and really different programs ----
def test_the_look_alikes_differ_only_where_the_old_rule_did_not_look(programs) -> None:
    for task, good, bad in programs.values():
        assert good != bad and normalised(good, task.language) == normalised(bad, task.language)
        assert twin_key(task, good) != twin_key(task, bad)


@pytest.mark.parametrize("name", ["wrong", "js_trailing_space"])
def test_the_wrong_look_alike_is_wrong_alone(judged, name) -> None:
    assert judged[name]["good"].correct
    assert not judged[name]["alone"].correct


# -- the attack: a size reader takes its twin's verdict ------------------------------
@pytest.mark.parametrize("name", ["wrong", "js_trailing_space"])
def test_judge_many_a_wrong_look_alike_is_not_judged_as_its_correct_twin(judged, name) -> None:
    bad = judged[name]["bad"]
    assert SAME_PROGRAM not in bad.flags
    assert not bad.correct, f"{name}: a program that prints a wrong answer was judged correct"


def test_batch_reward_a_wrong_look_alike_scores_as_it_does_alone(rewarded) -> None:
    r = rewarded["wrong"]
    (r_good, good), (r_bad, bad), (r_alone, alone) = r["good"], r["bad"], r["alone"]
    assert good.correct and not alone.correct
    assert SAME_PROGRAM not in bad.flags and not bad.correct
    assert r_bad == r_alone < r_good, (r_good, r_bad, r_alone)


def test_judge_many_a_slow_look_alike_does_not_take_its_fast_twins_timing(judged) -> None:
    good, bad = judged["slow"]["good"], judged["slow"]["bad"]
    assert good.correct and bad.correct and SAME_PROGRAM not in bad.flags
    # the slow copy runs the baseline's O(n^2) algorithm: its own time, not the fast one's
    assert bad.candidate.estimate_s > 3 * good.candidate.estimate_s


def test_batch_reward_a_slow_look_alike_is_not_rewarded_as_its_fast_twin(rewarded) -> None:
    r = rewarded["slow"]
    (r_good, good), (r_bad, bad) = r["good"], r["bad"]
    assert good.correct and bad.correct and SAME_PROGRAM not in bad.flags
    assert bad.candidate.estimate_s > 3 * good.candidate.estimate_s
    assert r_bad < r_good, (r_good, r_bad, r["alone"][0])
    # the slow copy runs the baseline's algorithm: beside its twin it is still about as fast as
    # the baseline. Not "not fbr": the paired test calls a same-speed program faster at its own
    # error rate, and once (a full run on two loaded workers) it did: 1.22x, fbr.
    slow, fast = sample_outcome(bad), sample_outcome(good)
    assert fast.fbr and slow.speedup is not None and slow.speedup < 2.0, (slow, fast)


# -- the role-timing path: a copy of the baseline that is another program --------------------
def test_a_hidden_program_behind_the_baselines_text_runs_its_own_workloads(judged, task) -> None:
    """Normalised, the cookie copy was the baseline (a tie); run, it answers the workloads
    wrong. Given the baseline's timed runs (and their checked outputs) it passed. Then it was
    judged on its own (no role's timing without its bytes, no tie); now a declaration under
    which Python reads other text than the source is refused before anything runs
    (`perfgym.judge.source_encoding`, after red team helper-92)."""
    v = judged["hidden_wrong"]
    assert "baseline" not in v.same_source
    assert v.candidate is None
    assert not v.correct, "the baseline's timed runs spoke for another program"
    assert v.stage.value == "NC" and "unicode_escape" in v.reason, (v.stage, v.reason)


def test_a_hidden_slow_copy_of_the_baseline_is_refused_and_earns_nothing(judged, reward) -> None:
    v = judged["hidden_slow"]
    assert not v.correct and "baseline" not in v.same_source and v.candidate is None
    assert v.stage.value == "NC" and "unicode_escape" in v.reason, (v.stage, v.reason)
    assert reward.reward.score([v])[0].value < reward.reward.score([judged["exact"]])[0].value


def test_a_commented_copy_of_the_baseline_is_measured_and_still_earns_no_credit(
    judged, reward
) -> None:
    """`same_source` ties stay a no-credit rule: the copy is measured (it is another file)
    but ties with the baseline, in the reward and in FBR, like the exact copy."""
    commented, exact = judged["commented"], judged["exact"]
    assert commented.correct and exact.correct
    assert ROLE_TIMING not in commented.candidate.flags
    assert ROLE_TIMING in exact.candidate.flags  # the same bytes: the baseline's timing
    assert commented.same_source and exact.same_source
    for v in (commented, exact):
        assert not sample_outcome(v).fbr
    r_commented, r_exact = (reward.reward.score([v])[0].value for v in (commented, exact))
    assert r_commented == r_exact


# -- the rule itself: bytes, per language, with the argv ------------------------------------
def _entry(task, src: str | None, argv: list[str] | None = None) -> Entry:
    return Entry(Candidate(task, None, src, "m", 0), Variant("x", src, argv=list(argv or [])))


@pytest.mark.parametrize(
    "variant",
    [
        lambda s: s.replace("\n", "\r\n"),  # CRLF
        lambda s: "\ufeff" + s,  # a BOM
        lambda s: s.replace("\n", "  \n", 1),  # trailing spaces on one line
        lambda s: s + "\n\n",  # blank lines at the end
        lambda s: s.replace("    ", "\t", 1) if "    " in s else s + " ",  # indentation
    ],
)
def test_layout_differences_a_size_reader_sees_are_other_programs(programs, variant) -> None:
    task, good, _ = programs["wrong"]
    other = variant(good)
    assert other != good
    judged, twin_of = representatives(task, [_entry(task, good), _entry(task, other)])
    assert judged == [0, 1] and twin_of == {}


@pytest.mark.parametrize("lang", ["c-hamming-pairs", "js-topk-scores", "cpp-word-freq"])
def test_other_languages_compare_every_byte(suite, lang) -> None:
    task = suite.get(lang)
    src = (task.pool or task.references)[0].source
    for other in (src + "   ", src + "\n\n", src.replace("\n", "\r\n")):
        assert twin_key(task, other) != twin_key(task, src)
    assert twin_key(task, src) == twin_key(task, str(src))  # the same text is a twin


def test_the_same_bytes_are_twins_across_samples_and_argv_keeps_them_apart(task) -> None:
    src = task.references[0].source
    judged, twin_of = representatives(
        task, [_entry(task, src), _entry(task, src), _entry(task, src, ["python3", "-X", "dev"])]
    )
    assert judged == [0, 2] and twin_of == {1: 0}


def test_a_role_timing_needs_the_roles_bytes_and_argv(task) -> None:
    base = task.baseline.source
    role = Variant("baseline", base, argv=["python3", "/tmp/build/main.py"])
    roles = {"baseline": role}
    assert role_of(_entry(task, base, role.argv), roles) == "baseline"
    assert role_of(_entry(task, base + "# mine\n", role.argv), roles) is None
    assert role_of(_entry(task, base.replace("\n", "\r\n"), role.argv), roles) is None
    assert role_of(_entry(task, base, ["python3", "-O", "/tmp/build/main.py"]), roles) is None


# -- one id, two tasks: the judge's per-task caches key on the task's content ----------------
SPIN = "import time as _t\n_t0 = _t.process_time()\nwhile _t.process_time() - _t0 < 0.5: pass\n"


@pytest.fixture(scope="module")
def same_id(task, reward):
    """The task, and a task of the same id whose baseline is slower (a service's inline task
    may reuse a suite task's id, or another client's inline task's): judged by one long-lived
    judge in separate calls, then in one call."""
    other = task.model_copy(
        update={"baseline": Solution(label="baseline", source=SPIN + task.baseline.source)}
    )
    ref, judge = task.references[0].source, reward.judge
    (a,) = judge.judge_many([Candidate(task, None, ref, "m", 0)])
    (b,) = judge.judge_many([Candidate(other, None, ref, "m", 1)])
    c, d = judge.judge_many(
        [Candidate(task, None, ref, "m", 2), Candidate(other, None, ref, "m", 3)]
    )
    return a, b, c, d


def test_a_task_sharing_an_id_is_measured_against_its_own_baseline(same_id) -> None:
    """The judge kept each task's built solutions, their outputs and timings by task id: the
    second task's candidates were measured against the first one's baseline."""
    a, b, c, d = same_id
    assert all(v.correct for v in same_id)
    # the other baseline spins 0.5 s of CPU per run: several times the task's own
    assert b.baseline.estimate_s > 2 * a.baseline.estimate_s, "across calls"
    assert d.baseline.estimate_s > 2 * c.baseline.estimate_s, "in one call"


def test_the_task_key_is_the_content_not_the_object(suite, task) -> None:
    from perfgym.judge.plan import task_key  # (new: imported here so the file runs on main)

    again = load_suite("perfgym-core").get(task.id)
    assert again is not task and task_key(again) == task_key(task)
    other = task.model_copy(update={"time_limit_s": (task.time_limit_s or 10) + 1})
    assert task_key(other) != task_key(task) and other.id == task.id
