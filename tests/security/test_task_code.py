"""No task code outside the sandbox (issue 13, hole 1): a task's checker, native generator and
ENAMEL generator (metadata) run sandboxed, whether the task came from a suite or was posted
inline to `perfgym serve` by any local process.

Each attack tries to write a marker on the host, read a root-only host file, or change the
judge's own process (its modules, its environment, the expected output it keeps for later
candidates), and checks that the verdict stays sane: a correct candidate OK, a wrong one WO."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import httpx
import pytest

from perfgym.judge.oracle import check
from perfgym.sandbox.base import SandboxConfig
from perfgym.sandbox.factory import make_sandbox
from perfgym.service.config import ServiceConfig
from perfgym.service.server.process import ServiceProcess
from perfgym.tasks import materialize, materialize_all
from perfgym.tasks.task import Language, Oracle, Solution, Task, TaskKind, TestCase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "service"))

from service_helpers import ADD, add_task, task_json  # noqa: E402
from small_tasks import SUM, sum_task  # noqa: E402


@pytest.fixture
def host_dirs(tmp_path):
    """Two host directories anyone may write (one under /tmp, one outside it) and a root-only
    secret file: what a task's code must not reach."""
    outside = Path(tempfile.mkdtemp(prefix="h1-host-", dir="/var/tmp"))
    for d in (tmp_path, outside):
        os.chmod(d, 0o777)
    secret = outside / "secret"
    secret.write_text("hunter2")
    os.chmod(secret, 0o600)
    yield tmp_path, outside, secret
    shutil.rmtree(outside, ignore_errors=True)


def _markers(dirs: tuple[Path, Path, Path], tag: str) -> list[str]:
    return [str(dirs[0] / f"marker-{tag}"), str(dirs[1] / f"marker-{tag}")]


def _touch_code(markers: list[str], secret: Path) -> str:
    """Python that tries to write every marker and read the secret; READ is True if it could."""
    return (
        "def _touch():\n"
        f"    for m in {markers!r}:\n"
        "        try:\n"
        "            with open(m, 'w') as f:\n"
        "                f.write('task code ran on the host')\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        f"        with open({str(secret)!r}) as f:\n"
        "            return f.read() == 'hunter2'\n"
        "    except OSError:\n"
        "        return False\n"
    )


def _assert_untouched(markers: list[str]) -> None:
    assert [m for m in markers if os.path.exists(m)] == [], "task code wrote on the host"


# -- through the service: inline tasks from any local process -----------------------------------
@pytest.fixture(scope="module")
def task_service(tmp_path_factory):
    state = tmp_path_factory.mktemp("task-code-service")
    cfg = ServiceConfig(port=0, state_dir=str(state / "state"), workers=1,
                        judge={"repeats": 1, "measure_baseline": False,
                               "measure_reference": False})  # fmt: skip
    with ServiceProcess(cfg, log=state / "service.log") as svc:
        yield svc


def _judge(service, task: Task, *sources: str) -> list[dict]:
    body = {"tasks": [task_json(task)],
            "items": [{"task_id": task.id, "source": s, "sample": n}
                      for n, s in enumerate(sources)]}  # fmt: skip
    r = httpx.post(f"{service.url}/v1/judge", json=body, timeout=300)
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert all(i["status"] == "ok" for i in items), items
    return [i["verdict"] for i in items]


def test_inline_checker_posted_to_the_service_runs_sandboxed(task_service, host_dirs):
    markers = _markers(host_dirs, "checker")
    checker = _touch_code(markers, host_dirs[2]) + (
        "def check(test_input, expected, output):\n"
        "    read = _touch()\n"
        "    return output == expected and not read\n"
    )
    task = add_task("add-checker").model_copy(
        update={"oracle": Oracle(kind="checker", checker=checker)}
    )
    ok, wrong = _judge(task_service, task, ADD, "def add(a, b):\n    return a - b\n")
    _assert_untouched(markers)
    assert ok["stage"] == "OK", ok["reason"]  # the checker could not read the secret either
    assert wrong["stage"] == "WO", wrong["reason"]


def test_inline_generator_posted_to_the_service_runs_sandboxed(task_service, host_dirs):
    markers = _markers(host_dirs, "generator")
    generator = _touch_code(markers, host_dirs[2]) + (
        "def generate(size, seed):\n"
        "    read = _touch()\n"
        "    n = size + (1000 if read else 0)\n"
        "    return f'{n}\\n' + ' '.join(str(seed + k) for k in range(n)) + '\\n'\n"
    )
    task = sum_task("sum-gen").model_copy(
        update={
            "generator": generator,
            "tests": [TestCase(id="t1", size=5, seed=3, expected=str(sum(range(3, 8))))],
            "workloads": [TestCase(id="w1", size=50, seed=1)],
        }  # fmt: skip
    )
    ok, wrong = _judge(task_service, task, SUM, "print(0)\n")
    _assert_untouched(markers)
    assert ok["stage"] == "OK", ok["reason"]  # 5 numbers: the secret was not readable
    assert wrong["stage"] == "WO", wrong["reason"]


def _enamel_task(task_id: str, generator: str, pinned: bool = False) -> Task:
    ref = "def double(x):\n    return 2 * x\n"
    return Task(
        id=task_id, family="enamel", language=Language.PYTHON, kind=TaskKind.FUNCTION,
        entry_point="double", goal="Double x.",
        baseline=Solution(label="baseline", source=ref),
        references=[Solution(label="reference", source=ref)],
        tests=[TestCase(id=f"t{k}", size=10, seed=100 + k, level=0, index=k) for k in range(2)],
        workloads=[TestCase(id="w0", size=10, seed=200, level=1, index=0)],
        oracle=Oracle(kind="exact"),
        metadata={"enamel": {"prompt": "def double(x):\n    pass\n", "input_generator": generator,
                             "levels": [2, 1], "hash_seed_sensitive": pinned}},
    )  # fmt: skip


@pytest.mark.parametrize("pinned", [False, True], ids=["worker", "pinned-hash-run"])
def test_inline_enamel_generator_posted_to_the_service_runs_sandboxed(
    task_service, host_dirs, pinned
):
    markers = _markers(host_dirs, f"enamel-{pinned}")
    generator = _touch_code(markers, host_dirs[2]) + (
        "def generate_input(size, lid, cid):\n"
        "    read = _touch()\n"
        "    return (random.randint(0, size) + (10**6 if read else 0),)\n"
    )
    task = _enamel_task(f"double-enamel-{pinned}", generator, pinned)
    ok, wrong = _judge(task_service, task, "def double(x):\n    return x + x\n",
                       "def double(x):\n    return x\n")  # fmt: skip
    _assert_untouched(markers)
    assert ok["stage"] == "OK", ok["reason"]
    assert wrong["stage"] == "WO", wrong["reason"]


# -- the checker: only an exact True passes, and it cannot reach the judge's process ------------
def _checker_case(checker: str) -> tuple[Oracle, TestCase]:
    return Oracle(kind="checker", checker=checker), TestCase(id="c", args=[[1, 2]])


@pytest.mark.parametrize(
    "returned",
    [
        "1",
        "'yes'",
        "[0]",
        "None",
        "Truthy()",  # an object of the checker's own: a truthy, equal-to-everything liar
        "output",  # the candidate's own output, truthy
    ],
)
def test_only_an_exact_true_from_the_checker_passes(returned):
    checker = (
        "class Truthy:\n"
        "    def __bool__(self): return True\n"
        "    def __eq__(self, other): return True\n"
        f"def check(test_input, expected, output):\n    return {returned}\n"
    )
    oracle, case = _checker_case(checker)
    passed, message = check(oracle, case, [3], [999])
    assert passed is False, message
    assert message


def test_a_true_checker_passes_and_a_failing_one_is_a_wrong_answer():
    oracle, case = _checker_case("def check(i, e, o):\n    return o == e\n")
    assert check(oracle, case, [3], [3]) == (True, "")
    assert check(oracle, case, [3], [4])[0] is False
    for body in ("raise ValueError('odd output')", "import os; os._exit(3)", "return 1/0"):
        oracle, case = _checker_case(f"def check(i, e, o):\n    {body}\n")
        passed, message = check(oracle, case, [3], [3])
        assert passed is False and "checker" in message, message
    oracle, case = _checker_case("def check(i, e, o) return True\n")  # does not compile
    assert check(oracle, case, [3], [3])[0] is False


def test_a_checker_cannot_patch_the_judges_other_oracles():
    # In the judge's process this would make every later float-oracle check pass.
    patcher = (
        "def check(test_input, expected, output):\n"
        "    import sys\n"
        "    oracle = sys.modules.get('perfgym.judge.oracle')\n"
        "    if oracle is not None:\n"
        "        oracle._float_equal = lambda *a, **k: True\n"
        "    return output == expected\n"
    )
    oracle, case = _checker_case(patcher)
    assert check(oracle, case, 3, 3)[0] is True
    wrong = check(Oracle(kind="float"), TestCase(id="f"), 1.0, 2.0)
    assert wrong[0] is False, "a checker changed how the judge compares floats"


def test_a_checker_cannot_rewrite_the_expected_output_kept_for_later_candidates():
    # The judge keeps the reference's output per case (its memo) for every later candidate:
    # a checker handed the very object could make it equal to a wrong answer.
    poison = (
        "def check(test_input, expected, output):\n"
        "    if isinstance(expected, list):\n"
        "        expected[:] = output\n"
        "    if isinstance(test_input, list):\n"
        "        test_input.clear()\n"
        "    return False\n"
    )
    expected = [1, 2, 3]
    case = TestCase(id="c", args=[[5, 6]])
    check(Oracle(kind="checker", checker=poison), case, expected, [9, 9, 9])
    assert expected == [1, 2, 3]
    assert case.args == [[5, 6]]


def test_an_output_that_cannot_cross_into_the_checker_is_a_wrong_answer():
    deep: list = []
    for _ in range(400):
        deep = [deep]
    oracle, case = _checker_case("def check(i, e, o):\n    return True\n")
    passed, message = check(oracle, case, [1], deep)
    assert passed is False and "checker" in message


# -- generators: sandboxed, cached, same inputs ---------------------------------------------------
def _gen_task(generator: str, kind: TaskKind = TaskKind.STDIO) -> Task:
    return Task(
        id="gen-attack", family="gen", language=Language.PYTHON, kind=kind,
        entry_point="f" if kind is TaskKind.FUNCTION else None,
        baseline=Solution(label="baseline", source="def f(xs): return sum(xs)\n"),
        tests=[TestCase(id="lit", stdin="1\n", args=[[1]], expected="1\n")],
        workloads=[TestCase(id="w1", size=4, seed=1), TestCase(id="w2", size=6, seed=2)],
        generator=generator,
    )  # fmt: skip


def test_a_generator_cannot_touch_the_host_or_the_judges_process(host_dirs):
    markers = _markers(host_dirs, "native")
    generator = _touch_code(markers, host_dirs[2]) + (
        "import os, sys\n"
        "def generate(size, seed):\n"
        "    read = _touch()\n"
        "    os.environ['PERFGYM_H1_PWNED'] = '1'\n"
        "    m = sys.modules.get('perfgym.tasks.generate')\n"
        "    if m is not None:\n"
        "        m.needs_input = lambda *a: False\n"
        "    return 'read' if read else f'{size} {seed}'\n"
    )
    task = _gen_task(generator)
    cases = materialize_all(task, task.workloads)
    assert [c.stdin for c in cases] == ["4 1", "6 2"]
    _assert_untouched(markers)
    assert "PERFGYM_H1_PWNED" not in os.environ
    fresh = _gen_task(generator.replace("size} {seed}", "size}:{seed}"))
    assert materialize(fresh, fresh.workloads[0]).stdin == "4:1"  # still generated


class _CountingSandbox:
    """A real sandbox that counts its runs (to see what the cache saves)."""

    def __init__(self) -> None:
        self.box = make_sandbox("warm", SandboxConfig())
        self.runs = 0

    def run(self, *args, **kwargs):
        self.runs += 1
        return self.box.run(*args, **kwargs)

    def close(self) -> None:
        self.box.close()


def test_generated_inputs_are_cached_and_each_caller_gets_its_own_copy():
    generator = (
        "import random\n"
        "def generate(size, seed):\n"
        "    rng = random.Random(seed)\n"
        "    return ([rng.randint(0, 99) for _ in range(size)], {'k': (seed,)})\n"
    )
    task = _gen_task(generator + f"# {os.getpid()} {id(object())}\n", TaskKind.FUNCTION)
    box = _CountingSandbox()
    try:
        first = materialize_all(task, task.workloads, sandbox=box)  # type: ignore[arg-type]
        assert box.runs == 1  # both workloads in one run
        first[0].args[0].append("mutated")  # type: ignore[index]
        again = materialize_all(task, task.workloads, sandbox=box)  # type: ignore[arg-type]
        assert box.runs == 1
        assert "mutated" not in again[0].args[0]  # type: ignore[index]
        assert [len(c.args[0]) for c in again] == [4, 6]  # type: ignore[index]
        assert again[0].args[1] == {"k": (1,)} and isinstance(again[0].args[1]["k"], tuple)  # type: ignore[index]
    finally:
        box.close()


def test_warm_worker_generation_is_cached_too():
    from perfgym.tasks import generate

    generator = "def generate(size, seed):\n    return f'{size} {seed}'\n"
    task = _gen_task(generator + f"# {os.getpid()} {id(object())}\n")
    pool = generate._own_workers.get()
    calls = pool.stats()["calls"]
    assert [c.stdin for c in materialize_all(task, task.workloads)] == ["4 1", "6 2"]
    assert pool.stats()["calls"] == calls + 1
    assert materialize(task, task.workloads[1]).stdin == "6 2"
    assert pool.stats()["calls"] == calls + 1


def test_a_generator_forging_its_result_file_gets_a_task_error_not_a_crash():
    from perfgym.errors import TaskFormatError

    forger = (
        "import atexit, json\n"
        "def _forge():\n"
        "    with open('/tmp/result.json', 'w') as f:\n"
        "        json.dump({'ok': True, 'values': [{'pickle': 'gASVAAAA'}, 7]}, f)\n"
        "def generate(size, seed):\n"
        "    atexit.register(_forge)\n"
        "    return 'x'\n"
    )
    task = _gen_task(forger + f"# {id(object())}\n")
    box = make_sandbox("warm", SandboxConfig())  # the sandboxed-run path (a pinned hash seed)
    try:
        with pytest.raises(TaskFormatError, match="generator"):
            materialize_all(task, task.workloads, sandbox=box)
    finally:
        box.close()
    # The warm-worker path: the generator finds the runner's globals and makes it emit a
    # forged tag (anything but exact builtin types must be refused on the host).
    patcher = (
        "import gc\n"
        "def generate(size, seed):\n"
        "    for obj in gc.get_objects():\n"
        "        if isinstance(obj, dict) and 'generate_all' in obj and '_encode' in obj:\n"
        "            obj['_encode'] = lambda codec, value, n: {'pickle': 'gASVAAAA'}\n"
        "    return 'x'\n"
    )
    task = _gen_task(patcher + f"# {id(object())}\n")
    with pytest.raises(TaskFormatError, match="generator"):
        materialize_all(task, task.workloads)
    liar = (
        "class Text(str):\n"
        "    def __eq__(self, other): return True\n"
        "def generate(size, seed):\n"
        "    return Text('1 2')\n"
    )
    task = _gen_task(liar)
    with pytest.raises(TaskFormatError, match="cannot leave the sandbox"):
        materialize_all(task, task.workloads)
