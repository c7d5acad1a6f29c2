"""Red team round 2 (optimize, hidden inputs, service rewards, the memory objective): attacks that got through.
real (ScriptedServer on loopback, the production client, `run_session`, the sandboxed judge) on
perfgym-core's py-lis-dp. A failing test is a hole.

The rule under attack: decisions are made on hidden workloads drawn with a secret seed, and
feedback/repair prompts "quote visible inputs only". But the numbers and the failure kind fed
back are *chosen by the program* as a function of the hidden input: a program computes the
answer of the hidden workload and encodes bits of it in what feedback reports (the stage and
kind of a hidden failure in the repair prompt; the peak-memory / time ratio of an accepted
program in the optimize prompt). The hidden workloads are fixed for the whole run (one secret
per run), so bits leaked in one round are good in every later round: an optimising model can
learn the hidden expected outputs and finish with a program that prints them (a lookup table
of the hidden workloads) -- exactly what hidden inputs were meant to stop.

Also here: training rewards through the service backend (decided on visible workloads unless
the service's own config turns hidden workloads on); the service's `reuse_stored` answering a
hidden-workload verdict from the store (one lucky draw rewarded forever); and the memory
objective, blind to RAM held in a memfd.
"""

from __future__ import annotations

import hashlib
import sys
from bisect import bisect_left
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "optimize"))

from optimize_helpers import client, core_task  # noqa: E402

from perfgym.errors import ConfigError  # noqa: E402
from perfgym.llm.core_script import fenced  # noqa: E402
from perfgym.llm.script import Script  # noqa: E402
from perfgym.llm.scripted import ScriptedServer, _messages_text  # noqa: E402
from perfgym.optimize.config import OptimizeConfig  # noqa: E402
from perfgym.optimize.session import judge_config, run_session  # noqa: E402
from perfgym.store.optimize_history import OptimizeHistory  # noqa: E402
from perfgym.tasks.generate import materialize  # noqa: E402

TASK = "py-lis-dp"
SECRET = 0x5EC2E7_1234  # the run's secret (the programs never see it)


class RecordingServer(ScriptedServer):
    """The scripted server, keeping the text of every request's messages (what the model saw)."""

    def __init__(self, script: Script) -> None:
        super().__init__(script)
        self.seen: list[str] = []

    def choices(self, key: str, body: dict[str, Any], hint: int | None) -> list[dict[str, Any]]:
        self.seen.append(_messages_text(body.get("messages")))
        return super().choices(key, body, hint)


def _lis(stdin: str) -> int:
    t = stdin.split()
    n, tails = int(t[0]), []
    for x in map(int, t[1 : n + 1]):
        k = bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
        else:
            tails[k] = x
    return len(tails)


def _visible_digests(task) -> set[str]:  # type: ignore[no-untyped-def]
    return {hashlib.sha256(materialize(task, w).stdin.encode()).hexdigest() for w in task.workloads}


#: The reference's algorithm; `LEAK` runs on an input of the workloads' size that is not one of
#: the declared (visible) workloads, i.e. only on the hidden workload, with L its answer.
PROGRAM = """import hashlib, sys
from bisect import bisect_left
raw = sys.stdin.buffer.read()
tokens = raw.split()
n = int(tokens[0])
tails = []
for x in map(int, tokens[1 : n + 1]):
    k = bisect_left(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
L = len(tails)
hidden = n == 2000 and hashlib.sha256(raw).hexdigest() not in VISIBLE
if hidden:
LEAK
print(L)
"""

#: Accepted program (it is the reference's algorithm: far faster than the baseline) that holds
#: 150 MB on the hidden workload when its answer is even, 300 MB when odd (nothing elsewhere).
MEMORY_LEAK = "    pad = b'x' * ((150 if L % 2 == 0 else 300) << 20)"
#: Failing program: on the hidden workload, exits 3 when its answer is even, prints a wrong
#: answer when odd; correct on every visible test.
STAGE_LEAK = "    sys.exit(3) if L % 2 == 0 else print(L + 1) or sys.exit(0)"


def _program(task, leak: str) -> str:  # type: ignore[no-untyped-def]
    src = PROGRAM.replace("VISIBLE", repr(_visible_digests(task))).replace("LEAK", leak)
    return fenced(src, task.language, "v")


def _memory_ratio(prompt: str) -> float:
    line = next(x for x in prompt.splitlines() if x.startswith("Memory:"))
    return float(line.split()[1].rstrip("x"))


def test_hidden_answers_leak_through_optimize_and_repair_feedback(tmp_path):
    """Found: a program correct on every visible input leaked bits of the hidden workload's
    answer through the next prompt's memory ratio and the repair prompt's kind of failure, and
    the hidden workloads stayed the same all run. Now (the run's default judge) every round
    draws its own hidden inputs, so what a figure says of one round's is stale by the next,
    and a hidden failure's repair prompt names no kind."""
    task = core_task(TASK)
    ref = fenced(task.references[0].source, task.language, "v")
    script = Script().add(task.id, _program(task, MEMORY_LEAK), _program(task, STAGE_LEAK), ref)
    history = OptimizeHistory(tmp_path / "h.sqlite")
    with RecordingServer(script) as srv:
        result = run_session(OptimizeConfig(iterations=3), "perfgym-core", [task],
                             client(srv.base_url), judge=judge_config(3), history=history,
                             out=tmp_path / "out", resume=False, report=False)  # fmt: skip
    steps = {s.iteration: s for s in history.steps(result.run) if s.slot >= 0}
    # Round 1's program is correct everywhere (whether it is also significantly faster than
    # the baseline with 300 MB to allocate is up to the machine's load, and not the point).
    assert steps[1].stage == "OK", steps[1].why
    assert steps[1].verdict["decided_on"] == "hidden"
    assert not steps[2].accepted and steps[2].stage in ("WO", "NR")
    assert len(srv.seen) == 3
    repair_prompt = srv.seen[2]
    # Channel 2 is closed: the kind of the hidden failure is not in the repair prompt.
    for kind in ("did not run cleanly", "wrong output", "RUNTIME_ERROR", "(WO)", "(NR)"):
        assert kind not in repair_prompt, kind
    # Channel 1 (the memory ratio) still reflects round 1's hidden input, but every round is
    # decided on inputs of its own: rounds 1 and 2 share no hidden workload.
    ids = [{t["id"] for t in steps[i].verdict["tests"] if t["id"].startswith("hidden-")}
           for i in (1, 2)]  # fmt: skip
    assert ids[0] and ids[1] and ids[0].isdisjoint(ids[1]), ids


# -- end to end: learn the hidden workloads' answers over the run, then print them -------------
#: What a hidden failure's kind says, as the repair prompt words it -> a base-4 symbol.
SYMBOLS = {"wrong output": 0, "(RUNTIME_ERROR)": 1, "(MEMORY_LIMIT)": 2, "(OUTPUT_LIMIT)": 3}
#: Emitting each symbol on the hidden workload (indented under `if target:`).
EMIT = ["print(L + 1)", "sys.exit(3)", "pad = b'x' * (900 << 20)",
        "sys.stdout.write('9' * (12 << 20))"]  # fmt: skip
#: Where each size's answer lies (py-lis-dp's generator: ~n/4 + noise): L mod 128 decides it.
CENTRE = {2000: 566, 3000: 715}
DIGITS = 4  # base-4 digits of L mod 128 (the 4th holds one bit)

LEAKER = """# leak size={size} digit={digit}
import hashlib, sys
from bisect import bisect_left
raw = sys.stdin.buffer.read()
tokens = raw.split()
n = int(tokens[0])
tails = []
for x in map(int, tokens[1 : n + 1]):
    k = bisect_left(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
L = len(tails)
if n == {size} and hashlib.sha256(raw).hexdigest() not in {visible!r}:
    s = ((L % 128) >> (2 * {digit})) & 3
    if s == 0:
        {e0}
    elif s == 1:
        {e1}
    elif s == 2:
        {e2}
    else:
        {e3}
    sys.exit(0)
print(L)
"""

#: No algorithm at all: the visible tests' answers (they are in the task) and the hidden
#: workloads' answers learnt from the feedback, keyed by n.
LOOKUP = """import sys
raw = sys.stdin.buffer.read()
print({table!r}.get(raw, {by_n!r}.get(int(raw.split(None, 1)[0]), 0)))
"""


class Attacker(ScriptedServer):
    """An optimising model that reads its prompts: it leaks 2 bits of a hidden workload's
    answer per failed proposal (read back from the repair prompt), then answers with a lookup
    table of the hidden answers."""

    def __init__(self, task) -> None:  # type: ignore[no-untyped-def]
        super().__init__(Script().add(task.id, "unused"))
        self.task = task
        self.visible = _visible_digests(task)
        self.todo = [(size, d) for size in CENTRE for d in range(DIGITS)]
        self.learnt: dict[tuple[int, int], int] = {}
        self.lookup_sent = ""

    def _answer(self, prompt: str) -> str:
        if "failed at stage" in prompt:  # a repair prompt: read the symbol, answer junk (NC)
            head = prompt.split("# leak size=", 1)[1].split("\n", 1)[0]
            size, digit = int(head.split()[0]), int(head.split("digit=")[1])
            sym = next((v for k, v in SYMBOLS.items() if k in prompt), 0)  # none said: guess
            self.learnt[(size, digit)] = sym
            return fenced("this is not python(", self.task.language, "v")
        if self.todo:
            size, digit = self.todo.pop(0)
            src = LEAKER.format(size=size, digit=digit, visible=self.visible,
                                **{f"e{i}": e for i, e in enumerate(EMIT)})  # fmt: skip
            return fenced(src, self.task.language, "v")
        by_n = {}
        for size, centre in CENTRE.items():
            low = sum(self.learnt[(size, d)] << (2 * d) for d in range(DIGITS))
            by_n[size] = min((centre - 64 + k for k in range(128)
                              if (centre - 64 + k) % 128 == low), key=lambda v: abs(v - centre))  # fmt: skip
        table = {t.stdin.encode(): int(t.expected.split()[0]) for t in self.task.tests}
        self.lookup_sent = LOOKUP.format(table=table, by_n=by_n)
        return fenced(self.lookup_sent, self.task.language, "v")

    def choices(self, key: str, body: dict[str, Any], hint: int | None) -> list[dict[str, Any]]:
        text = self._answer(_messages_text(body.get("messages")))
        return [{"content": text, "finish_reason": "stop", "tool_calls": [], "delay_s": 0.0}]


def test_optimize_accepts_a_lookup_table_of_the_hidden_answers_learnt_from_feedback(tmp_path):
    from perfgym.judge.judge import Judge
    from perfgym.judge.verdict import Verdict

    task = core_task(TASK)
    history = OptimizeHistory(tmp_path / "h.sqlite")
    judge = judge_config(3)  # the run's default: fresh hidden inputs every round
    iterations = 2 * len(CENTRE) * DIGITS + 1
    with Attacker(task) as srv:
        result = run_session(OptimizeConfig(iterations=iterations), "perfgym-core", [task],
                             client(srv.base_url), judge=judge, history=history,
                             out=tmp_path / "out", resume=False, report=False)  # fmt: skip
    steps = {s.iteration: s for s in history.steps(result.run) if s.slot >= 0}
    final = steps[iterations]
    assert srv.lookup_sent, "the attacker never got to send its table"
    learnt = srv.lookup_sent
    # The same program on a fresh draw of hidden workloads (another secret): wrong.
    other = judge.model_copy(update={"hidden_seed": SECRET})
    with Judge(other) as j:
        fresh = j.judge(task, source=result.states[task.id].best_source or "")
    v = Verdict.model_validate(final.verdict)
    c_s = v.candidate.usable_s if v.candidate else None
    r_s = v.reference.usable_s if v.reference else None
    speed = r_s / c_s if c_s and r_s else None
    # The run's best is still a program that works on any draw; the table was not taken.
    assert not final.accepted and fresh.stage.value == "OK", (
        f"round {iterations}: a lookup table of the run's hidden answers (learnt "
        f"from repair feedback, no algorithm) was ACCEPTED ({final.why}; ratio {final.ratio}; "
        f"{speed and round(speed, 2)}x the reference's speed), and is {fresh.stage.value} on a "
        f"fresh hidden draw. Program:\n{learnt}"
    )


# -- training rewards through the service backend ----------------------------------------------
#: No algorithm: the answers of the task's visible inputs (its tests and its declared
#: workloads), looked up by the input's digest.
VISIBLE_TABLE = """import hashlib, sys
raw = sys.stdin.buffer.read()
print({table!r}[hashlib.sha256(raw).hexdigest()])
"""


def _visible_table(task) -> str:  # type: ignore[no-untyped-def]
    cases = [*task.tests, *(materialize(task, w) for w in task.workloads)]
    table = {hashlib.sha256(c.stdin.encode()).hexdigest(): _lis(c.stdin) for c in cases}
    return fenced(VISIBLE_TABLE.format(table=table), task.language, "v")


def test_service_backend_rewards_are_decided_on_hidden_workloads(tmp_path):
    """`BatchReward(..., backend="service")` (docs/training.md's TRL example) against a service
    started as documented (`perfgym serve --repeats 1`): the rewards must be decided on hidden
    workloads like the local backend's, or a visible lookup table is rewarded."""
    from perfgym.service.client import ServiceClient
    from perfgym.service.config import ServiceConfig
    from perfgym.service.server.process import ServiceProcess
    from perfgym.tasks import load_suite
    from perfgym.train.batch import BatchReward

    core = load_suite("perfgym-core")
    task = next(t for t in core.tasks if t.id == TASK)
    table = _visible_table(task)
    with BatchReward(core, "rlpf") as local:
        here = local.score([(TASK, table)])[0]
    judge = {"repeats": 1}  # what `perfgym serve --repeats 1` configures
    cfg = ServiceConfig(port=0, state_dir=str(tmp_path / "svc"), judge=judge)
    # Found: scored 1.26 (10.5x) through a service judging on the declared workloads.
    with ServiceProcess(cfg, log=tmp_path / "service.log") as svc:
        with BatchReward(core, "rlpf", backend="service", url=svc.url) as remote, \
                pytest.raises(ConfigError, match="perfgym serve --hidden"):  # fmt: skip
            remote.score([(TASK, table)])
        with ServiceClient(svc.url) as client_:
            assert client_.metrics().completed == 0  # refused before anything was judged
        # A backend handed in ready is refused on its verdicts, whatever their stage.
        wrong = fenced("print(0)\n", task.language, "v")
        with BatchReward(core, "rlpf", judge=ServiceClient(svc.url)) as handed, \
                pytest.raises(ConfigError, match="perfgym serve --hidden"):  # fmt: skip
            handed.score([(TASK, wrong)])
    assert here.stage != "OK"  # the local backend: hidden workloads, the table fails
    hidden = {"repeats": 1, "hidden_workloads": True}  # `perfgym serve --hidden`
    cfg = ServiceConfig(port=0, state_dir=str(tmp_path / "svc2"), judge=hidden)
    with ServiceProcess(cfg, log=tmp_path / "service2.log") as svc, \
            BatchReward(core, "rlpf", backend="service", url=svc.url) as remote:  # fmt: skip
        ref = fenced(task.references[0].source, task.language, "v")
        there, ref_there = remote.score([(TASK, table), (TASK, ref)])
    assert there.stage != "OK" and ref_there.stage == "OK", (there, ref_there)
    assert (there.value or 0) < (ref_there.value or 0)


#: Correct, except that on a hidden workload it crashes unless the input's digest is odd: it
#: passes a draw of two hidden workloads one time in four.
COIN = """import hashlib, sys
from bisect import bisect_left
raw = sys.stdin.buffer.read()
tokens = raw.split()
n = int(tokens[0])
tails = []
for x in map(int, tokens[1 : n + 1]):
    k = bisect_left(tails, x)
    if k == len(tails):
        tails.append(x)
    else:
        tails[k] = x
if n >= 2000 and hashlib.sha256(raw).hexdigest() not in VISIBLE and hashlib.sha256(raw).digest()[0] % 2 == 0:
    sys.exit(1)
print(len(tails))
# NONCE
"""


def test_service_store_reuses_a_lucky_hidden_draw(tmp_path):
    """A service judging on hidden workloads drawn fresh per batch, with `reuse_stored`
    (`perfgym serve --reuse-stored`): a program that passes one hidden draw in four. Vary a
    comment until one copy is lucky once; that exact text must then face fresh draws (it should
    pass about one batch in four), not be answered from the store."""
    from perfgym.service.config import ServiceConfig
    from perfgym.service.server.process import ServiceProcess
    from perfgym.tasks import load_suite
    from perfgym.train.batch import BatchReward

    core = load_suite("perfgym-core")
    task = next(t for t in core.tasks if t.id == TASK)
    coin = COIN.replace("VISIBLE", repr(_visible_digests(task)))
    # Only the stage is read: nothing is measured beside the candidate (no A/A band, no
    # baseline, no reference), and reuse is keyed by this configuration as by any other.
    judge = {"repeats": 1, "clock": "cpu", "hidden_workloads": True, "noise_rounds": 0,
             "measure_baseline": False, "measure_reference": False}  # fmt: skip
    cfg = ServiceConfig(port=0, state_dir=str(tmp_path / "svc"), judge=judge, reuse_stored=True)
    with ServiceProcess(cfg, log=tmp_path / "service.log") as svc, \
            BatchReward(core, "rlpf", backend="service", url=svc.url) as remote:  # fmt: skip
        tries, lucky = [], None
        for i in range(20):
            text = fenced(coin.replace("NONCE", str(i)), task.language, "v")
            s = remote.score([(TASK, text)])[0]
            tries.append(s.stage)
            if s.stage == "OK":
                lucky = text
                break
        assert lucky is not None, tries
        again = [remote.score([(TASK, lucky)])[0] for _ in range(6)]
    stages = [s.stage for s in again]
    assert stages.count("OK") < 6, (
        f"after {len(tries)} tries one copy passed a hidden draw; the same text then scored "
        f"{[round(s.value or 0, 3) for s in again]} (stages {stages}) in 6 later batches: "
        f"answered from the store, never drawn again (a fresh draw passes 1 in 4: "
        f"P(6 of 6) = 0.02%)"
    )


# -- the memory objective: RAM held in a memfd is not measured ------------------------------
#: The reference's program holding a 60 MiB working buffer: anonymous memory, or the same bytes
#: in a memfd (RAM as well: shmem, charged to the run's cgroup) written and read with os.write /
#: os.pread, never mapped, so no process's RSS shows it.
ANON_BUFFER = "buf = b'x' * (60 << 20)\n"
MEMFD_BUFFER = (
    "import os\n"
    "buf = os.memfd_create('buf')\n"
    "for _ in range(60):\n"
    "    os.write(buf, b'x' * (1 << 20))\n"
    "assert os.pread(buf, 1, (60 << 20) - 1) == b'x'\n"
)


def test_memory_objective_accepts_ram_moved_into_a_memfd(tmp_path):
    task = core_task(TASK)
    ref = task.references[0].source
    anon = fenced(ANON_BUFFER + ref, task.language, "v")
    memfd = fenced(MEMFD_BUFFER + ref, task.language, "v")
    history = OptimizeHistory(tmp_path / "h.sqlite")
    judge = judge_config(3).model_copy(update={"hidden_seed": SECRET})
    config = OptimizeConfig(iterations=1, start="generate", objective="memory")
    with ScriptedServer(Script().add(task.id, anon, memfd)) as srv:
        result = run_session(config, "perfgym-core", [task], client(srv.base_url), judge=judge,
                             history=history, out=tmp_path / "out", resume=False, report=False)  # fmt: skip
    steps = {s.iteration: s for s in history.steps(result.run) if s.slot >= 0}
    assert steps[0].accepted  # the first correct program
    assert steps[1].stage == "OK", (steps[1].stage, steps[1].why)
    peaks = [steps[i].verdict["candidate"]["peak_rss_mb"] for i in (0, 1)]
    assert not steps[1].accepted, (
        f"objective=memory: the same program with its 60 MiB buffer moved into a memfd (still "
        f"RAM) was accepted ({steps[1].why}, ratio {steps[1].ratio:.3f}); measured peaks "
        f"{peaks[0]:.1f} -> {peaks[1]:.1f} MiB"
    )
