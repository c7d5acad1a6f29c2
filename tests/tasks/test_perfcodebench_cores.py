"""A task's cores: detected from the PerfCodeBench sources only where they spawn threads, the
explicit field winning, and malformed values refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from perfgym.errors import TaskFormatError
from perfgym.tasks import load_suite
from perfgym.tasks.perfcodebench import load_perfcodebench, load_task
from perfgym.tasks.perfcodebench_cores import DETECTED_CORES, detect_cores, source_signals
from perfgym.tasks.task import Language

FIXTURES = Path(__file__).parents[1] / "fixtures"
PCB = FIXTURES / "perfcodebench" / "executable_tasks"
THREADS = FIXTURES / "threads" / "executable_tasks"

SPAWNS = [
    (Language.CPP, "std::vector<std::thread> pool; pool.emplace_back(work);", "std::thread"),
    (Language.CPP, "std::jthread t(work);", "std::thread"),
    (Language.CPP, "auto f = std::async(std::launch::async, work);", "std::async"),
    (Language.C, "pthread_t t; pthread_create(&t, NULL, work, NULL);", "pthread_create"),
    (Language.C, "thrd_t t; thrd_create(&t, work, NULL);", "thrd_create"),
    (Language.JAVA, "Thread t = new Thread(() -> work());", "new Thread"),
    (Language.JAVA, "ExecutorService ex = Executors.newFixedThreadPool(4);", "ExecutorService"),
    (Language.JAVA, "long n = list.parallelStream().count();", "parallel stream"),
    (Language.JAVA, "IntStream.range(0, n).parallel().sum();", "parallel stream"),
    (Language.JAVA, "ForkJoinPool.commonPool().invoke(task);", "ForkJoinPool"),
    (Language.GO, "func f() {\n\tgo func() { ch <- 1 }()\n}", "go statement"),
    (Language.GO, "for i := 0; i < 4; i++ {\n\tgo worker(i, ch)\n}", "go statement"),
    (Language.PYTHON, "with multiprocessing.Pool(4) as p:\n    p.map(f, xs)", "multiprocessing"),
    (Language.PYTHON, "from multiprocessing import Pool\n", "multiprocessing"),
    (Language.PYTHON, "with ProcessPoolExecutor() as ex:\n    ex.map(f, xs)", "concurrent.futures"),
    (Language.PYTHON, "t = threading.Thread(target=f)", "threading.Thread"),
    (Language.RUST, "let h = std::thread::spawn(move || work());", "thread::spawn"),
    (Language.JAVASCRIPT, "const { Worker } = require('worker_threads');", "worker_threads"),
]

NO_SPAWN = [
    (Language.CPP, "#include <thread>\nunsigned n = std::thread::hardware_concurrency();"),
    (Language.CPP, "std::this_thread::sleep_for(std::chrono::milliseconds(1));"),
    (Language.CPP, "// std::thread t(work);  (kept serial)\n/* pthread_create(&t, 0, f, 0); */"),
    (Language.CPP, "#pragma omp simd\nfor (int i = 0; i < n; ++i) a[i] += b[i];"),
    (Language.GO, 'runtime.GOMAXPROCS(4)\n// go func() {}()\nx := "go run("'),
    (Language.JAVA, "int n = Runtime.getRuntime().availableProcessors(); Thread.sleep(1);"),
    (Language.PYTHON, "import multiprocessing\nn = multiprocessing.cpu_count()\n# Pool(4)"),
    (Language.PYTHON, "import threading\nlock = threading.Lock()"),
]


@pytest.mark.parametrize(("language", "source", "signal"), SPAWNS)
def test_sources_that_spawn_threads_are_detected(language, source, signal):
    assert signal in source_signals(source, language)


@pytest.mark.parametrize(("language", "source"), NO_SPAWN)
def test_sources_that_only_mention_threads_are_not(language, source):
    assert source_signals(source, language) == []


def test_an_openmp_pragma_counts_only_when_the_build_enables_openmp():
    src = [("baseline/solution.cpp", "#pragma omp parallel for\nfor (int i = 0; i < n; ++i) f(i);")]
    assert detect_cores(src, Language.CPP, ["-O2", "-pthread"]) == (1, "")
    cores, why = detect_cores(src, Language.CPP, ["-O2", "-fopenmp"])
    assert cores == DETECTED_CORES and "#pragma omp parallel" in why and "-fopenmp" in why
    # a build command given as one string is read word by word
    assert detect_cores(src, Language.CPP, ["g++ -O3 -fopenmp main.cpp"])[0] == DETECTED_CORES
    assert detect_cores(src, Language.CPP, ["-pthread"]) == (1, "")  # -pthread alone spawns nothing


def test_a_harness_file_is_read_in_its_own_language():
    harness = ("harness/main.cpp", "std::thread t(run); t.join();")
    assert detect_cores([("baseline/solution.c", "int f(void);"), harness], Language.C, [])[0] > 1


def test_published_fixtures_stay_on_one_core():
    suite = load_suite(str(PCB))
    assert {t.id: t.cores for t in suite.tasks} == dict.fromkeys([t.id for t in suite.tasks], 1)


def test_explicit_cores_win_over_detection(tmp_path):
    task_dir = tmp_path / "executable_tasks" / "cpp_detected_threads"
    shutil.copytree(THREADS / "cpp_detected_threads", task_dir)
    assert load_task(task_dir).cores == DETECTED_CORES
    _set(task_dir, cores=1)  # the task says its threads need no second core: it is believed
    task = load_task(task_dir)
    assert task.cores == 1 and "cores_from" not in task.metadata
    _set(task_dir, cores=3)
    task = load_task(task_dir)
    assert task.cores == 3 and task.metadata["cores_from"] == "instance.json cores = 3"


@pytest.mark.parametrize("value", [0, -2, 2.0, "2", True, [2], 5000])
def test_malformed_cores_in_instance_json_is_one_line(tmp_path, value):
    root = tmp_path / "executable_tasks"
    shutil.copytree(THREADS / "cpp_two_threads", root / "cpp_two_threads")
    _set(root / "cpp_two_threads", cores=value)
    with pytest.raises(TaskFormatError) as err:
        load_task(root / "cpp_two_threads")
    message = str(err.value)
    assert "\n" not in message and "cores" in message and "cpp_two_threads" in message
    # the suite loads around it: the task is skipped with that reason
    suite = load_perfcodebench(root)
    assert suite.tasks == [] and suite.metadata["skipped"][0]["reason"] == message


@pytest.mark.parametrize("value", [0, 1.5, "four", True])
def test_malformed_cores_in_a_native_task_is_one_line(tmp_path, value):
    d = tmp_path / "suite" / "t"
    d.mkdir(parents=True)
    spec = {"id": "t", "family": "f", "language": "python", "kind": "stdio",
            "baseline": "b.py", "tests": "tests.jsonl", "cores": value}  # fmt: skip
    (d / "task.yaml").write_text(yaml.safe_dump(spec))
    (d / "b.py").write_text("print(1)\n")
    (d / "tests.jsonl").write_text('{"id": "a", "stdin": "", "expected": "1"}\n')
    with pytest.raises(TaskFormatError) as err:
        load_suite(str(tmp_path / "suite"))
    assert "\n" not in str(err.value) and "field 'cores'" in str(err.value)
    spec["cores"] = 2
    (d / "task.yaml").write_text(yaml.safe_dump(spec))
    assert load_suite(str(tmp_path / "suite")).get("t").cores == 2


def _set(task_dir: Path, **fields: object) -> None:
    path = task_dir / "instance.json"
    data = json.loads(path.read_text())
    data.update(fields)
    path.write_text(json.dumps(data))
