"""Every input byte handled (issue 13, hole 7): sources and outputs that are not clean text are
judged, never a traceback that loses the batch, and verdicts holding them are still written.

The rules: a source that is not valid UTF-8 text (a lone surrogate, e.g. from a JSON
`"\\ud800"` escape) is NX with the offset; a NUL is valid text, so the source is built as given
(C compiles it, Python's compiler refuses it: NC); a program's output is compared losslessly
(undecodable bytes never equal other undecodable bytes or U+FFFD)."""

import json
import os
import subprocess
import sys

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage, Verdict
from perfgym.store import ResultStore
from perfgym.store.results_file import read_results, write_results
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

SUM = {
    Language.PYTHON: "import sys\nd = sys.stdin.read().split()\nprint(sum(map(int, d[1:])))\n",
    Language.C: '#include <stdio.h>\nint main(){long n,x,s=0;scanf("%ld",&n);'
    'while(n--){scanf("%ld",&x);s+=x;}printf("%ld\\n",s);return 0;}\n',
}
COMMENT = {Language.PYTHON: "# ", Language.C: "// "}


def sum_task(language, tid=None):
    good = SUM[language]
    return Task(id=tid or f"sum-{language.value}", family="parsing", language=language,
                kind=TaskKind.STDIO, goal="Print the sum of n integers.",
                baseline=Solution(label="baseline", source=good),
                references=[Solution(label="reference", source=good)],
                tests=[TestCase(id="t1", stdin="3\n1 2 3\n", expected="6")],
                workloads=[TestCase(id="w1", stdin="2\n10 20\n")],
                oracle=Oracle(kind="tokens"))  # fmt: skip


@pytest.fixture(scope="module")
def judge():
    with Judge(JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False)) as j:
        yield j


@pytest.mark.parametrize("language", [Language.PYTHON, Language.C])
def test_lone_surrogate_in_a_source_is_nx_and_the_batch_is_judged(judge, language):
    """The red team's case: one candidate with "\\ud800" crashed the whole batch."""
    task, good = sum_task(language), SUM[language]
    bad = COMMENT[language] + "\ud800\n" + good
    as_json = json.dumps({"summary": "s", "solution_source": bad})  # ASCII: the escape
    fence = {Language.PYTHON: "python", Language.C: "c"}[language]
    cands = [
        Candidate(task, source=bad, sample=0),
        Candidate(task, completion=f"```{fence}\n{bad}```\n", sample=1),
        Candidate(task, completion=as_json, sample=2),
        Candidate(task, source=good, sample=3),
    ]
    out = judge.judge_many(cands)
    for v in out[:3]:
        assert v.stage is Stage.NX and not v.infra_error, (v.stage, v.reason)
        assert "not valid UTF-8" in v.reason and "U+D800" in v.reason
        assert f"offset {len(COMMENT[language])}" in v.reason
        # What the verdict shows of the source can be written by any JSON writer.
        assert v.source is not None and "\\ud800" in v.source
        v.source.encode("utf-8")
        v.model_dump_json()
    assert out[3].stage is Stage.OK, out[3].reason


def test_lone_surrogate_in_a_function_task_is_nx(judge):
    from perfgym.tasks import load_suite

    task = load_suite("humaneval").get("HumanEval/0")
    assert task.reference is not None
    out = judge.judge_many([Candidate(task, source="# \udcff\n" + task.reference.source),
                            Candidate(task, source=task.reference.source, sample=1)])  # fmt: skip
    assert out[0].stage is Stage.NX and "U+DCFF" in out[0].reason
    assert out[1].stage is Stage.OK, out[1].reason


def test_nul_in_a_source_is_built_as_given(judge):
    """NUL is text: the compiler decides. gcc ignores it in a comment; Python refuses it."""
    c = judge.judge(sum_task(Language.C), source="// \x00\n" + SUM[Language.C])
    assert c.stage is Stage.OK, c.reason
    py = judge.judge(sum_task(Language.PYTHON), source="# \x00\n" + SUM[Language.PYTHON])
    assert py.stage is Stage.NC and not py.infra_error


def _bytes_task(language, ref):
    """A task whose expected output is its reference's: raw bytes that are not UTF-8."""
    return Task(id=f"bytes-{language.value}", family="io", language=language,
                kind=TaskKind.STDIO, goal="Print the bytes.",
                baseline=Solution(label="baseline", source=ref),
                references=[Solution(label="reference", source=ref)],
                tests=[TestCase(id="t1", stdin="")], oracle=Oracle(kind="exact"))  # fmt: skip


PRINT = {
    Language.C: lambda b: '#include <stdio.h>\nint main(){fputs("' + b + '\\n", stdout);}\n',
    Language.PYTHON: lambda b: f"import sys\nsys.stdout.buffer.write(b'{b}\\n')\n",
}


@pytest.mark.parametrize("language", [Language.C, Language.PYTHON])
def test_undecodable_output_is_compared_losslessly(judge, language):
    """Further attack: with U+FFFD replacement, any invalid byte matched any other, so a wrong
    program printing garbage passed a task whose reference prints raw bytes."""
    task = _bytes_task(language, PRINT[language]("\\xff\\xfe"))
    out = judge.judge_many([Candidate(task, source=PRINT[language]("\\xfe\\xff"), sample=0),
                            Candidate(task, source=PRINT[language]("\\xef\\xbf\\xbd\\xef\\xbf\\xbd"),
                                      sample=1),  # U+FFFD U+FFFD, valid UTF-8
                            Candidate(task, source=PRINT[language]("\\xff\\xfe"), sample=2)])  # fmt: skip
    assert [v.stage for v in out] == [Stage.WO, Stage.WO, Stage.OK], [v.reason for v in out]
    for v in out:  # the wrong-output messages quote the bytes, and still serialise
        v.model_dump_json()


def test_verdict_with_a_surrogate_is_written_and_read_back(tmp_path):
    """A model name (or any field) with a lone surrogate: the results file and the store keep
    it losslessly instead of raising."""
    v = Verdict(task_id="t", model="m\udcff", stage=Stage.NX, reason="r\ud800",
                source="x = '\ud83d'\n")  # fmt: skip
    path = tmp_path / "r.jsonl"
    write_results(path, [v], suite="s", note="\udcff")
    assert read_results(path)[1] == [v]
    path.read_text(encoding="utf-8")  # the file is valid UTF-8 (the escapes are ASCII)
    with ResultStore(tmp_path / "s.sqlite") as store:
        store.put_verdicts([("k", v)], run="\ud800")
        assert store.get_verdicts(["k"])["k"] == v
        assert [s.verdict for s in store.iter_verdicts()] == [v]


def perfgym(*args):
    # A strict UTF-8 terminal: printing a surrogate must not raise there either.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    return subprocess.run([sys.executable, "-m", "perfgym", *args], capture_output=True,
                          text=True, errors="replace", timeout=300, env=env)  # fmt: skip


def test_eval_with_a_surrogate_candidate_writes_every_verdict(tmp_path):
    """The CLI end to end: the bad line is NX, the good one OK, both in the results and the
    store; the model name with a surrogate is kept."""
    suite = tmp_path / "suite"
    suite.mkdir()
    task = sum_task(Language.PYTHON, "sum-a")
    (suite / "tasks.jsonl").write_text(task.model_dump_json() + "\n")
    good = SUM[Language.PYTHON]
    lines = [
        json.dumps({"task_id": "sum-a", "model": "m", "source": "# \ud800\n" + good}),
        json.dumps({"task_id": "sum-a", "model": "m\udcff", "source": good}),
    ]
    cands = tmp_path / "c.jsonl"
    cands.write_text("\n".join(lines) + "\n")
    out, db = tmp_path / "out.jsonl", tmp_path / "s.sqlite"
    p = perfgym("eval", str(suite), "--candidates", str(cands), "--repeats", "1", "--out",
                str(out), "--store", str(db), "--no-report")  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    _, verdicts = read_results(out)
    got = {v.model: v.stage for v in verdicts}
    assert got == {"m": Stage.NX, "m\udcff": Stage.OK}, got
    with ResultStore(db) as store:
        assert store.count_verdicts() == 2
