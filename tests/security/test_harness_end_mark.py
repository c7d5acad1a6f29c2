"""A harness task's verdict line is believed only before the run's end mark (issue 28,
`perfgym.judge.trailer`): attacks per language through the real judge on the fixture suite.

The candidate runs inside the harness's process and can print `{"ok": true, ...}` itself. Each
attack here did that and then ended the run (exit, abort, System.exit, os.Exit), hid the
harness's own line (stdout to /dev/null, System.setOut), printed a forged end mark, stole the
nonce before main, or called the wrapper's mark itself: none is OK. The honest references are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.tasks import load_suite
from perfgym.tasks.timed import NOT_TIMED

#: ~20 builds in five languages and their runs, in one batch: ~30 s on 2 cores
# The honest references' harness timings are checked against the outside count: a full run with
# another xdist worker beside them once left one unconfirmed (timing not ok).
pytestmark = [pytest.mark.slow, pytest.mark.alone]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"
FAKE = '{"ok": true, "elapsed_ns": 5000}'
CFAKE = FAKE.replace('"', '\\"')

PY = {
    "exit": f"import os\ndef range_sums(values, queries):\n    print('{FAKE}', flush=True)\n"
    "    os._exit(0)\n",
    "abort": f"import os\ndef range_sums(values, queries):\n    print('{FAKE}', flush=True)\n"
    "    os.abort()\n",
    "sys.exit(0)": f"import sys\ndef range_sums(values, queries):\n    print('{FAKE}')\n"
    "    sys.exit(0)\n",
    "dev/null": f"import os\ndef range_sums(values, queries):\n    print('{FAKE}', flush=True)\n"
    "    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)\n    return []\n",
    "print patched": f"import builtins\ndef range_sums(values, queries):\n"
    f"    print('{FAKE}', flush=True)\n    builtins.print = lambda *a, **k: None\n"
    "    return []\n",
    "line then wrong": f"def range_sums(values, queries):\n    print('{FAKE}')\n    return []\n",
    "forged mark": f"import os\ndef range_sums(values, queries):\n    print('{FAKE}')\n"
    "    print('PERFGYM_HARNESS_END ' + '0' * 32 + ' ok', flush=True)\n    os._exit(0)\n",
    "nonce read at import": "import os, sys\n"
    "try:\n    _N = open('/tmp/.perfgym-nonce').read().strip()\nexcept OSError:\n    _N = ''\n"
    f"def range_sums(values, queries):\n    print('{FAKE}')\n"
    "    print('PERFGYM_HARNESS_END ' + _N + ' ok', flush=True)\n    os._exit(0)\n",
}

C_HEAD = "#include <stdio.h>\n#include <stdlib.h>\n#include <stdint.h>\n#include <stddef.h>\n"
C = {
    "exit": C_HEAD + "#include <unistd.h>\nuint64_t popcount_sum(const uint64_t *w, size_t n) {\n"
    f'    (void)w; (void)n; printf("{CFAKE}\\n"); fflush(stdout); _exit(0);\n}}\n',
    "abort": C_HEAD + "uint64_t popcount_sum(const uint64_t *w, size_t n) {\n"
    f'    (void)w; (void)n; printf("{CFAKE}\\n"); fflush(stdout); abort();\n}}\n',
    "dev/null": C_HEAD + "#include <fcntl.h>\n#include <unistd.h>\n"
    "uint64_t popcount_sum(const uint64_t *w, size_t n) {\n"
    f'    (void)w; (void)n; printf("{CFAKE}\\n"); fflush(stdout);\n'
    '    dup2(open("/dev/null", O_WRONLY), 1); return 0;\n}\n',
}
CPP = {
    # A constructor runs before main: the nonce is already read and its file gone.
    "nonce read by a constructor": "#include <cstdio>\n#include <cstdlib>\n#include <vector>\n"
    "#include <cstdint>\n#include <cstddef>\n#include <unistd.h>\nstatic char nonce[80];\n"
    'struct Steal { Steal() { FILE *f = std::fopen("/tmp/.perfgym-nonce", "r");\n'
    '  if (f) { if (!std::fscanf(f, "%70s", nonce)) nonce[0] = 0; std::fclose(f); } } } steal;\n'
    "std::vector<uint32_t> top_k(const std::vector<uint32_t>& v, std::size_t k) {\n"
    f'  (void)v; (void)k; std::printf("{CFAKE}\\nPERFGYM_HARNESS_END %s ok\\n", nonce);\n'
    "  std::fflush(stdout); _exit(0);\n}\n",
}
JAVA = {
    "System.exit": "public final class Solution {\n  public static int countDistinct(int[] v) {\n"
    f'    System.out.println("{CFAKE}"); System.out.flush(); System.exit(0); return 0;\n  }}\n}}\n',
    "halt": "public final class Solution {\n  public static int countDistinct(int[] v) {\n"
    f'    System.out.println("{CFAKE}"); System.out.flush(); Runtime.getRuntime().halt(0);\n'
    "    return 0;\n  }\n}\n",
    "System.setOut": "import java.io.*;\npublic final class Solution {\n"
    "  public static int countDistinct(int[] v) {\n"
    f'    System.out.println("{CFAKE}"); System.out.flush();\n'
    "    System.setOut(new PrintStream(OutputStream.nullOutputStream())); return 0;\n  }\n}\n",
}
GO = {
    # The wrapper's mark function is in package main too: only main.main may have it written.
    "calls the wrapper's mark": 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\n'
    "func GroupSum(keys []int32, values []int64, numKeys int) []int64 {\n"
    f'\tfmt.Println("{CFAKE}")\n\tperfgymEnd()\n\tos.Exit(0)\n\treturn nil\n}}\n',
    "nonce read by an initialiser": 'package main\n\nimport (\n\t"fmt"\n\t"os"\n'
    '\t"strings"\n)\n\nvar stolen = func() string {\n'
    '\tb, _ := os.ReadFile("/tmp/.perfgym-nonce")\n\treturn strings.TrimSpace(string(b))\n}()\n\n'
    "func GroupSum(keys []int32, values []int64, numKeys int) []int64 {\n"
    f'\tfmt.Println("{CFAKE}")\n\tfmt.Println("PERFGYM_HARNESS_END " + stolen + " ok")\n'
    "\tos.Exit(0)\n\treturn nil\n}\n",
}
ATTACKS = [
    *(("py_range_sums", k, s) for k, s in PY.items()),
    *(("c_popcount_sum", k, s) for k, s in C.items()),
    *(("cpp_topk_sum", k, s) for k, s in CPP.items()),
    *(("java_distinct_count", k, s) for k, s in JAVA.items()),
    *(("go_group_sum", k, s) for k, s in GO.items()),
]
#: each language's fixture task and the wrapper its verdicts name
LANGUAGES = {"py_range_sums": "python-runpy", "c_popcount_sum": "c-wrap-main",
             "cpp_topk_sum": "c-wrap-main", "java_distinct_count": "java-main",
             "go_group_sum": "go-main-renamed"}  # fmt: skip


TIMED = ["py_range_sums", "c_popcount_sum"]


def _untimed(task):
    return task.model_copy(update={"id": f"{task.id}-untimed",
                                   "metadata": {**task.metadata, NOT_TIMED: True}})  # fmt: skip


@pytest.fixture(scope="module")
def suite():
    return load_suite(FIXTURES)


@pytest.fixture(scope="module")
def judged(suite):
    """Every attack and every language's reference judged in one batch (builds in parallel)."""
    cands = [Candidate(_untimed(suite.get(t)), source=src, model=name)
             for t, name, src in ATTACKS]  # fmt: skip
    cands += [Candidate(_untimed(suite.get(t)), source=suite.get(t).references[0].source,
                        model="honest") for t in LANGUAGES]  # fmt: skip
    cands += [Candidate(suite.get(t), source=suite.get(t).references[0].source,
                        model="honest-timed") for t in TIMED]  # fmt: skip
    # Only the two timed tasks are measured. Their references are weighed against the baseline
    # round by round, the verdict on most rounds: one round left an honest reference's saving
    # unconfirmed by both witnesses once in CI (py_range_sums, whose one round must then have
    # spent ~40 ms more than the baseline's outside the clock on the wall and on the CPU alike);
    # with three rounds two such rounds are needed.
    with Judge(JudgeConfig(repeats=3)) as j:
        verdicts = j.judge_many(cands)
    return {(v.task_id.removesuffix("-untimed"), v.model): v for v in verdicts}


@pytest.mark.parametrize(("task_id", "attack"), [(t, k) for t, k, _ in ATTACKS])
def test_a_harness_line_the_program_forged_is_not_believed(judged, task_id, attack):
    v = judged[(task_id, attack)]
    assert v.stage in (Stage.WO, Stage.NR), f"{attack}: {v.stage} {v.reason}"
    assert not v.infra_error, v.reason


@pytest.mark.parametrize("task_id", LANGUAGES)
def test_the_honest_reference_is_ok_with_its_end_mark(judged, task_id):
    v = judged[(task_id, "honest")]
    assert v.stage is Stage.OK, v.reason
    assert v.harness_end_mark == LANGUAGES[task_id]


@pytest.mark.parametrize("task_id", TIMED)
def test_the_honest_reference_keeps_its_timing_and_draws_no_flag(judged, task_id):
    v = judged[(task_id, "honest-timed")]
    assert v.stage is Stage.OK, v.reason
    assert v.candidate is not None and v.candidate.ok, v.candidate.status_reason
    assert v.candidate.clock == "harness" and v.candidate.estimate_s is not None
    assert not [f for f in v.flags if f.startswith("harness")], v.flags
