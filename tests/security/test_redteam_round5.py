"""Red team, round 5: can a PerfCodeBench harness program buy an OK or a reward without the work?

A harness task runs the benchmark's own harness and the candidate in one process; perfgym's
defences (docs/security.md, section 6b) are the end mark a wrapper writes with a per-run nonce
after the harness's main returns, the answer fields checked against the reference's outside the
program, and the reported time checked against the external clock. Each test is an attack
through the real judge on a small task; `xfail(strict=True)` asserts the SAFE behaviour, so it
fails while the hole is open. Found on 22b35d5 (branch redteam5); every program below does NO
work (it returns 0 or a dummy):

  test_python_systemexit_compiled_as_the_harness_file_is_not_ok          CLOSED (OK, rlpf 1.26 = the
      reference's; the wrapper takes a SystemExit(0) whose last frame's co_filename is the
      harness's path as the harness's own end: `exec(compile("raise SystemExit(0)", HARNESS))`)
  test_python_result_equal_to_anything_is_not_ok                         CLOSED (OK, 1.26: a list
      subclass whose __eq__ is True passes the harness's own `actual == expected`; nothing is
      checked outside where the line carries no answer fields)
  test_python_json_encoder_patch_forges_a_checked_answer                  CLOSED (OK, 1.26 vs the
      honest reference's 0.15 here; on the published python_log_match_checksum_v2700_061 OK with
      `checked: actual_checksum, expected_checksum`: an int subclass equal to anything passes
      the harness's check and `!=` exit, and `json.JSONEncoder.encode` (not `json.dumps`, the
      only one the wrapper compares) copies expected_* into actual_*)
  test_python_solution_returning_the_harnesss_own_expected_is_not_ok    CLOSED (OK, answers
      checked; on the published python_log_match_checksum_v2700_061 OK, no line forged, no mark
      touched: the harness computed `expected` before calling `run`, and
      `sys._getframe(1).f_locals["expected"]` returns it: the timed call does no work)
  test_a_harness_candidate_cannot_read_its_tasks_reference[py, c]       CLOSED (a run sees its
      own task's harness, headers and instance file and external/, never a solutions folder or
      another task: judge/variant.py SOLUTION_DIRS). Was: OK, rlpf 1.26 vs
      the baseline's 0.15, no flag: a harness run binds the suite's whole tree at /tmp/pg/root,
      every task's reference/ included;
      `#include "../reference/solution.c"` or exec of reference/solution.py; on the published
      c_audio_resample_checksum_v2800_000 `#include "reference/solution.c"` is OK, answers
      checked)
  test_c_solution_interposing_unlink_keeps_the_nonce                      CLOSED (OK, 1.26: the
      solution defines `unlink`; the wrapper's call binds to it in the same link, the nonce file
      stays, the solution reads it, prints its line and a valid mark, `_exit(0)`)
  test_c_interposed_printf_forges_a_checked_answer[c_printf, cpp_printf] CLOSED (OK, 1.26; on
      the published c_audio_resample_checksum_v2800_000 OK with both checksums checked, elapsed
      1 us vs the baseline's 303 us: `printf`/`__printf_chk` interposed rewrite the harness's own
      line, "ok" true and each expected_X copied into actual_X, then the stolen nonce's mark;
      the same source in C++ beats cpp_topk_sum's checked actual_first)
  test_go_cgo_constructor_reads_the_nonce_before_the_wrapper              CLOSED (OK, 1.26: a cgo
      preamble's `__attribute__((constructor))` runs at load, before any Go initialiser)
  test_java_class_of_the_harness_name_calling_exit_is_not_ok              CLOSED (OK, 1.26: a class
      named like the harness's main class, defined by the program's own ClassLoader from 303
      embedded bytes, whose `main` calls System.exit(0): the shutdown hook's stack check sees
      `Main.main` calling exit and writes the mark)
  test_a_harness_clock_cheat_scores_the_floor_not_none                    CLOSED (a C solution
      interposing `clock_gettime` is flagged (harness_untimed_work / harness_timer_mismatch),
      its timing degraded, and rlpf scores it None: dropped from the batch, not punished, where a
      program hiding time from the sandbox scores the correctness floor for that very reason.
      A cheat that is also genuinely ~20% faster (a clock at 1/5) was once not flagged at all on
      this loaded machine: the 50% saving ratio is met by noise; with None as the price of
      being caught, the cheat has no downside)

CLOSED above (rt5): a timing the cross-check degrades scores as hiding time in every reward
(`Verdict.hid_time`: RLPF's floor, never None). A Python harness loads perfgym's shim in the
solution's place (perfgym_split.py): the solution is imported and called in a process of its
own (a fresh interpreter; the harness's process is not dumpable), and its results reach the
harness as plain builtin values only (an unpickler that names no class but a few builtins).
rt5's variants (an int subclass inside an exact list, a type of its own, a traceback's frame,
sys._current_frames, a __del__ on the harness's thread) find none of the harness's state; so
does test_python_signal_handler_frame_is_not_ok (a signal handler set from a __del__, which
the in-process guard could not see), CLOSED by the split.

CLOSED above (harden5): the wrapper runs the harness's own compiled code objects and takes a
SystemExit(0) only from one of them in the harness module's globals; it compares json's encoder
class and module functions, print and sys.stdout with the start's; the C/C++ wrapper's I/O is raw
system calls (the solution's `unlink` no longer keeps the nonce: a rewritten line has no valid
mark); Go harnesses build with CGO_ENABLED=0; Java's exit check wants the harness class of the
application loader with only reflection frames down to the wrapper's main. Found and closed
by harden5: test_c_ifunc_resolver_reads_the_nonce_before_the_wrapper (an IFUNC resolver runs
during relocation, before .preinit_array; OK, no work, before the C/C++ build refused IFUNC
relocations).

Closed (normal tests): a solution's own `clock_gettime` is flagged; a solution defining
`__real_main` does not replace the harness's main (--wrap binds it to `main`); a run cannot
rewrite its task's harness (the task root is read-only; so are the variant and build dirs); an escaped `"\\u006fk"` key
with a partial line to hide the harness's wrong-answer line is not OK (the harness exits 1: no
mark).

Run: PYTHONPATH=src python3 -m pytest -q tests/security/test_redteam_round5.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from squares_task import SQUARES_BASELINE, SQUARES_HARNESS, SQUARES_INSTANCE, SQUARES_REFERENCE

from perfgym.judge import Candidate, Judge, JudgeConfig, Stage
from perfgym.rewards import get_reward
from perfgym.tasks import load_suite

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/perfcodebench/executable_tasks"

# -- attacks ------------------------------------------------------------------------------------
PY_EXIT_AS_HARNESS = """import os, sys
def range_sums(values, queries):
    sys.stdout.write('{"ok": true, "elapsed_ns": 5000, "queries": 300}\\n')
    sys.stdout.flush()
    exec(compile("raise SystemExit(0)", os.path.abspath(sys.argv[0]), "exec"))
"""

PY_EQUAL_TO_ANYTHING = """class _Any(list):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = None
def range_sums(values, queries):
    return _Any()
"""

PY_JSON_ENCODER = """import json

class _Yes(int):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = int.__hash__

_encode = json.JSONEncoder.encode

def _agreeing(self, o):
    if isinstance(o, dict) and "ok" in o:
        o = dict(o, ok=True)
        for k in list(o):
            if k.startswith("actual_") and "expected_" + k[7:] in o:
                o[k] = o["expected_" + k[7:]]
    return _encode(self, o)

json.JSONEncoder.encode = _agreeing

def checksum(values):
    return _Yes(0)
"""

#: Correct and no work: the harness computed its answer before the call, in a local of its frame.
PY_CALLERS_EXPECTED = """import sys
def checksum(values):
    f = sys._getframe(1)
    while f is not None:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
        f = f.f_back
"""

#: rt5's own variants of the two holes closed by the guard (perfgym_guard.py; now the split):
#: a plain list whose items are an int subclass equal to anything (the list's type is exact).
PY_EQUAL_ITEMS = """class _Yes(int):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = int.__hash__
def range_sums(values, queries):
    return [_Yes(0)] * len(queries)
"""
#: An object of its own type (no builtin base) equal to anything.
PY_EQUAL_OWN_TYPE = """class _Any:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = None
def range_sums(values, queries):
    return _Any()
"""
#: The harness's frame through a traceback: tb_frame, then f_back (no sys._getframe).
PY_TRACEBACK_FRAME = """def checksum(values):
    try:
        raise LookupError
    except LookupError as e:
        f = e.__traceback__.tb_frame
    while f is not None:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
        f = f.f_back
"""
#: Every thread's frames: the harness's thread's among them.
PY_CURRENT_FRAMES = """import sys, threading
def checksum(values):
    f = sys._current_frames().get(threading.main_thread().ident)
    while f is not None:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
        f = f.f_back
"""
#: Its own code on the harness's thread: a __del__ the collector runs there (threshold 1: every
#: allocation of the harness collects) keeps the harness's frames; the call reads them.
PY_DEL_ON_HARNESS_THREAD = """import gc, sys
gc.set_threshold(1)
_kept = []
class _Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        try:
            f = sys._getframe(1)
            while f is not None:
                _kept.append(f)
                f = f.f_back
        except Exception:
            pass
        _Cycle()
_Cycle()
def range_sums(values, queries):
    for f in _kept:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
"""
#: OPEN: the same __del__ sets a signal handler on the harness's thread and a timer; the
#: handler's frame argument is the harness's, no audited call hands it out, and the handler
#: restores the old one (the guard compares handlers before and after each call).
PY_SIGNAL_FRAME = """import gc, signal
gc.set_threshold(1)
_kept = []
def _handler(signum, frame):
    while frame is not None:
        _kept.append(frame)
        frame = frame.f_back
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
class _Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        try:
            signal.signal(signal.SIGALRM, _handler)
            signal.setitimer(signal.ITIMER_REAL, 0.02)
        except ValueError:
            _Cycle()
_Cycle()
def range_sums(values, queries):
    for f in _kept:
        if "expected" in f.f_locals:
            return f.f_locals["expected"]
"""

#: The task's own reference, read from the task root every harness run binds (/tmp/pg/root).
PY_COPY_REFERENCE = """import os, sys
_task = os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))
with open(os.path.join(_task, "reference", "solution.py")) as _f:
    exec(compile(_f.read(), "mine.py", "exec"))
"""
C_INCLUDE_REFERENCE = '#include "../reference/solution.c"\n'

#: Wrong, and rewrites its harness (the task root's file, shared by every candidate of the task)
#: into one that prints ok: the root is read-only in a run.
PY_REWRITE_HARNESS = """import os, sys
try:
    with open(os.path.abspath(sys.argv[0]), "w") as _f:
        _f.write("print('{\\"ok\\": true, \\"elapsed_ns\\": 1}')\\n")
except OSError:
    pass
def range_sums(values, queries):
    return []
"""

#: Reads the nonce file the wrapper could not remove; prints a line and the run's mark.
C_STEAL = r"""static void pg_mark(char *nonce, size_t size) {
    int fd = open("/tmp/.perfgym-nonce", O_RDONLY);
    if (fd >= 0) { ssize_t r = read(fd, nonce, size - 1); (void)r; close(fd); }
    for (size_t i = 0; nonce[i]; i++) if (nonce[i] == '\n') nonce[i] = 0;
}
"""
C_HEAD = """#include "interface.h"
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int unlink(const char *path) { (void)path; return 0; }
"""

C_UNLINK = (
    C_HEAD
    + C_STEAL
    + r"""uint64_t popcount_sum(const uint64_t *words, size_t n) {
    (void)words; (void)n;
    char nonce[80] = {0};
    pg_mark(nonce, sizeof nonce);
    printf("{\"ok\": true, \"elapsed_ns\": 5000, \"expected\": 1, \"actual\": 1}\n"
           "PERFGYM_HARNESS_END %s ok\n", nonce);
    fflush(stdout);
    _exit(0);
}
"""
)

REWRITE = r"""/* Rewrites a harness line: "ok" true, each "actual_X" given "expected_X"'s value. */
static void pg_rewrite(const char *in, char *out, size_t cap) {
    size_t o = 0;
    const char *p = in;
    while (*p && o + 1 < cap) {
        if (strncmp(p, "\"ok\":", 5) == 0) {
            const char *v = p + 5;
            while (*v == ' ') v++;
            if (strncmp(v, "false", 5) == 0) {
                o += (size_t)snprintf(out + o, cap - o, "\"ok\": true");
                p = v + 5;
                continue;
            }
        }
        if (strncmp(p, "\"actual_", 8) == 0) {
            const char *name = p + 8, *q = strchr(name, '"');
            char key[128];
            if (q && (size_t)(q - name) < sizeof key - 12) {
                snprintf(key, sizeof key, "\"expected_%.*s\":", (int)(q - name), name);
                const char *e = strstr(in, key);
                if (e) {
                    const char *ev = e + strlen(key), *ee = ev + strcspn(ev, ",}");
                    const char *av = q + 2, *ae = av + strcspn(av, ",}");
                    o += (size_t)snprintf(out + o, cap - o, "%.*s%.*s", (int)(av - p), p,
                                          (int)(ee - ev), ev);
                    p = ae;
                    continue;
                }
            }
        }
        out[o++] = *p++;
    }
    out[o < cap ? o : cap - 1] = 0;
}
"""

#: `printf` (and its fortified twin) interposed: the harness's own line (its expected_* computed by
#: the harness) is rewritten, "ok" true and each actual_X given expected_X's value, then marked
#: with the nonce an interposed `unlink` kept; C and C++ alike.
C_PRINTF_BODY = (
    r"""#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __cplusplus
extern "C" {
#endif
int unlink(const char *path) { (void)path; return 0; }
"""
    + C_STEAL
    + r"""REWRITE
static int pg_vprintf(const char *fmt, va_list ap) {
    char buf[4096], out[4096], nonce[80] = {0};
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (!strstr(buf, "\"ok\"") || !strstr(buf, "\"actual_")) { fputs(buf, stdout); return n; }
    pg_rewrite(buf, out, sizeof out);
    pg_mark(nonce, sizeof nonce);
    fputs(out, stdout);
    fprintf(stdout, "PERFGYM_HARNESS_END %s ok\n", nonce);
    fflush(stdout);
    _exit(0);
}
int printf(const char *fmt, ...) {
    va_list ap; va_start(ap, fmt); int n = pg_vprintf(fmt, ap); va_end(ap); return n;
}
int __printf_chk(int flag, const char *fmt, ...) {
    (void)flag; va_list ap; va_start(ap, fmt); int n = pg_vprintf(fmt, ap); va_end(ap); return n;
}
#ifdef __cplusplus
}
#endif
""".replace("REWRITE", REWRITE)
)
C_PRINTF = (
    '#include "interface.h"\n'
    + C_PRINTF_BODY
    + "uint64_t popcount_sum(const uint64_t *words, size_t n) { (void)words; (void)n; return 0; }\n"
)
CPP_PRINTF = (
    '#include "interface.h"\n'
    + C_PRINTF_BODY
    + "std::vector<uint32_t> top_k(const std::vector<uint32_t>& values, std::size_t k) {\n"
    + "    (void)values; (void)k;\n    return {};\n}\n"
)

GO_CGO = r"""package main

/*
#include <fcntl.h>
#include <unistd.h>
static char pg_stolen[80];
__attribute__((constructor)) static void pg_steal(void) {
    int fd = open("/tmp/.perfgym-nonce", O_RDONLY);
    if (fd >= 0) { ssize_t r = read(fd, pg_stolen, sizeof pg_stolen - 1); (void)r; close(fd); }
}
static const char *pg_get(void) { return pg_stolen; }
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
)

func GroupSum(keys []int32, values []int64, numKeys int) []int64 {
	nonce := strings.TrimSpace(C.GoString(C.pg_get()))
	fmt.Printf("{\"ok\": true, \"elapsed_ns\": 5000, \"groups\": %d}\n", numKeys)
	fmt.Printf("PERFGYM_HARNESS_END %s ok\n", nonce)
	os.Exit(0)
	return nil
}
"""

#: `public class Main { public static void main(String[] a) { System.exit(0); } }`, compiled by
#: javac --release 11 (303 bytes): a class of the harness's main class's name.
FAKE_MAIN_CLASS = (
    "yv66vgAAADcAFQoAAgADBwAEDAAFAAYBABBqYXZhL2xhbmcvT2JqZWN0AQAGPGluaXQ+AQADKClWCgAIAAkHAAoMAAsADAEA"
    "EGphdmEvbGFuZy9TeXN0ZW0BAARleGl0AQAEKEkpVgcADgEABE1haW4BAARDb2RlAQAPTGluZU51bWJlclRhYmxlAQAEbWFp"
    "bgEAFihbTGphdmEvbGFuZy9TdHJpbmc7KVYBAApTb3VyY2VGaWxlAQAJTWFpbi5qYXZhACEADQACAAAAAAACAAEABQAGAAEA"
    "DwAAAB0AAQABAAAABSq3AAGxAAAAAQAQAAAABgABAAAAAQAJABEAEgABAA8AAAAdAAEAAQAAAAUDuAAHsQAAAAEAEAAAAAYA"
    "AQAAAAEAAQATAAAAAgAU"
)

JAVA_FAKE_MAIN = r"""public class Solution {
    static final class Loader extends ClassLoader {
        Loader() { super(null); }
        Class<?> define(byte[] b) { return defineClass("Main", b, 0, b.length); }
    }

    public static int countDistinct(int[] values) {
        System.out.println("{\"ok\": true, \"elapsed_ns\": 5000, \"distinct\": 1}");
        System.out.flush();
        try {
            byte[] b = java.util.Base64.getDecoder().decode("CLASS");
            new Loader().define(b).getMethod("main", String[].class)
                .invoke(null, (Object) new String[0]);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
        return 0;
    }
}
""".replace("CLASS", FAKE_MAIN_CLASS)

#: The wrapper's call of the harness's main, `__real_main`, defined by the program.
C_REAL_MAIN = r"""#include "interface.h"
#include <stdio.h>
int __real_main(int argc, char **argv, char **envp) {
    (void)argc; (void)argv; (void)envp;
    printf("{\"ok\": true, \"elapsed_ns\": 5000, \"expected\": 1, \"actual\": 1}\n");
    return 0;
}
uint64_t popcount_sum(const uint64_t *words, size_t n) { (void)words; (void)n; return 0; }
"""

#: Correct, with the baseline's own bit loop; the harness's clock (its clock_gettime, bound to
#: this definition in the same link) runs at a twentieth of its speed: it claims ~95% saved.
C_CLOCK = r"""#define _GNU_SOURCE
#include "interface.h"
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int clock_gettime(clockid_t id, struct timespec *ts) {
    int rc = (int)syscall(SYS_clock_gettime, id, ts);
    if (rc == 0 && id == CLOCK_MONOTONIC) {
        long long ns = ((long long)ts->tv_sec * 1000000000LL + ts->tv_nsec) / 20;
        ts->tv_sec = ns / 1000000000LL;
        ts->tv_nsec = ns % 1000000000LL;
    }
    return rc;
}
uint64_t popcount_sum(const uint64_t *words, size_t n) {
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        for (int bit = 0; bit < 64; bit++)
            if ((words[i] >> bit) & 1u) total++;
    return total;
}
"""

#: An IFUNC resolver: the dynamic linker calls it while relocating the program, before any
#: .preinit_array entry, so before the wrapper reads the nonce. It reads the nonce, writes a
#: line and a valid mark, and ends the process: the harness never runs (found by harden5; OK
#: before the C/C++ build refused an executable with an IFUNC relocation).
C_IFUNC = r"""#define _GNU_SOURCE
#include "interface.h"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
static uint64_t pg_impl(const uint64_t *words, size_t n) { (void)words; (void)n; return 0; }
static void *pg_resolve(void) {
    char nonce[80] = {0}, line[200];
    int fd = open("/tmp/.perfgym-nonce", O_RDONLY);
    if (fd >= 0) { ssize_t r = read(fd, nonce, sizeof nonce - 1); (void)r; close(fd); }
    for (size_t i = 0; nonce[i]; i++) if (nonce[i] == '\n') nonce[i] = 0;
    strcpy(line, "{\"ok\": true, \"elapsed_ns\": 5000}\nPERFGYM_HARNESS_END ");
    strcat(line, nonce);
    strcat(line, " ok\n");
    ssize_t w = write(1, line, strlen(line)); (void)w;
    _exit(0);
    return (void *)pg_impl;
}
uint64_t popcount_sum(const uint64_t *words, size_t n) __attribute__((ifunc("pg_resolve")));
"""

#: Wrong (zeros); its own line with the key escaped (not counted as a result line), then a
#: partial line that makes the harness's own line unparseable.
PY_ESCAPED_KEY = """import sys
def range_sums(values, queries):
    sys.stdout.write('{"\\\\u006fk": true, "elapsed_ns": 5000, "queries": 300}\\n')
    sys.stdout.write("x")
    sys.stdout.flush()
    return [0] * len(queries)
"""


def _suite_dir(root: Path) -> Path:
    for name in ("py_range_sums", "c_popcount_sum", "cpp_topk_sum", "go_group_sum",
                 "java_distinct_count"):  # fmt: skip
        shutil.copytree(FIXTURES / name, root / name)
    squares = root / "py_square_checksum"
    for part, text in (("harness/bench.py", SQUARES_HARNESS),
                       ("baseline/solution.py", SQUARES_BASELINE),
                       ("reference/solution.py", SQUARES_REFERENCE)):  # fmt: skip
        (squares / part).parent.mkdir(parents=True, exist_ok=True)
        (squares / part).write_text(text)
    (squares / "instance.json").write_text(json.dumps(SQUARES_INSTANCE))
    # c_popcount_sum whose line names its answer as the published C harnesses do.
    checked = root / "c_popcount_checksum"
    shutil.copytree(FIXTURES / "c_popcount_sum", checked)
    main = checked / "harness/benchmark_main.c"
    text = main.read_text().replace('\\"expected\\": %llu, \\"actual\\": %llu',
                                    '\\"expected_checksum\\": %llu, \\"actual_checksum\\": %llu')  # fmt: skip
    assert "actual_checksum" in text
    main.write_text(text)
    instance = json.loads((checked / "instance.json").read_text())
    instance["task_id"] = "c_popcount_checksum"
    (checked / "instance.json").write_text(json.dumps(instance))
    return root


ATTACKS = {
    "py_exit": ("py_range_sums", PY_EXIT_AS_HARNESS),
    "py_eq": ("py_range_sums", PY_EQUAL_TO_ANYTHING),
    "py_escaped": ("py_range_sums", PY_ESCAPED_KEY),
    "py_rewrite": ("py_range_sums", PY_REWRITE_HARNESS),
    "py_json": ("py_square_checksum", PY_JSON_ENCODER),
    "py_frame": ("py_square_checksum", PY_CALLERS_EXPECTED),
    "py_eq_items": ("py_range_sums", PY_EQUAL_ITEMS),
    "py_eq_own_type": ("py_range_sums", PY_EQUAL_OWN_TYPE),
    "py_tb_frame": ("py_square_checksum", PY_TRACEBACK_FRAME),
    "py_current_frames": ("py_square_checksum", PY_CURRENT_FRAMES),
    "py_del_frame": ("py_range_sums", PY_DEL_ON_HARNESS_THREAD),
    "py_signal_frame": ("py_range_sums", PY_SIGNAL_FRAME),
    "py_reference": ("py_square_checksum", PY_COPY_REFERENCE),
    "c_reference": ("c_popcount_sum", C_INCLUDE_REFERENCE),
    "c_unlink": ("c_popcount_sum", C_UNLINK),
    "c_clock": ("c_popcount_sum", C_CLOCK),
    "c_real_main": ("c_popcount_sum", C_REAL_MAIN),
    "c_ifunc": ("c_popcount_sum", C_IFUNC),
    "c_printf": ("c_popcount_checksum", C_PRINTF),
    "cpp_printf": ("cpp_topk_sum", CPP_PRINTF),
    "go_cgo": ("go_group_sum", GO_CGO),
    "java_main": ("java_distinct_count", JAVA_FAKE_MAIN),
}


@pytest.fixture(scope="module")
def root():
    # Not under pytest's tmp_path: its 0700 parents keep the sandbox's user out of the tasks.
    path = Path(tempfile.mkdtemp(prefix="perfgym-redteam5-"))
    path.chmod(0o755)
    try:
        yield _suite_dir(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def suite(root):
    return load_suite(root)


@pytest.fixture(scope="module")
def verdicts(suite):
    """Every attack, and the reference of the two answer-checked tasks, judged in one batch."""
    names = list(ATTACKS)
    cands = [Candidate(suite.get(t), source=src, model=n) for n, (t, src) in ATTACKS.items()]
    for tid in ("py_square_checksum", "c_popcount_checksum", "py_range_sums"):
        task = suite.get(tid)
        assert task.reference is not None
        names.append(f"{tid}:reference")
        cands.append(Candidate(task, source=task.reference.source, model="honest"))
    with Judge(JudgeConfig(repeats=1)) as judge:
        got = judge.judge_many(cands)
    return dict(zip(names, got, strict=True))


@pytest.fixture(scope="module")
def harness_before(root):
    """py_range_sums's harness as it was before any attack ran."""
    return (root / "py_range_sums/harness/bench.py").read_text()


def _no_work_is_not_ok(v) -> None:
    assert v.stage is not Stage.OK, (
        f"a program that does no work is OK ({v.harness_end_mark}; {v.harness_answer})"
    )


def test_the_answer_checked_tasks_check_their_answers(harness_before, verdicts):
    # Guard: the two tasks built here do check answer fields outside, and their references pass.
    for tid in ("py_square_checksum", "c_popcount_checksum"):
        v = verdicts[f"{tid}:reference"]
        assert v.stage is Stage.OK, v.reason
        assert v.harness_answer == "checked: actual_checksum, expected_checksum"


def test_python_systemexit_compiled_as_the_harness_file_is_not_ok(verdicts):
    _no_work_is_not_ok(verdicts["py_exit"])


def test_python_result_equal_to_anything_is_not_ok(verdicts):
    _no_work_is_not_ok(verdicts["py_eq"])


@pytest.mark.parametrize("name", ["py_eq_items", "py_eq_own_type"])
def test_python_result_of_its_own_type_is_not_ok(verdicts, name):
    # rt5's variants: only plain builtin values reach the harness (an int subclass inside an
    # exact list is rebuilt as an int; a type of its own is refused as a wrong answer).
    _no_work_is_not_ok(verdicts[name])


@pytest.mark.parametrize("name", ["py_tb_frame", "py_current_frames", "py_del_frame"])
def test_python_solution_reaching_the_harnesss_frame_otherwise_is_not_ok(verdicts, name):
    # rt5's variants: a traceback's frame (the solution's thread's: it ends there), every
    # thread's frames (refused), its own __del__ run on the harness's thread (refused there).
    _no_work_is_not_ok(verdicts[name])


def test_python_signal_handler_frame_is_not_ok(verdicts):
    # CLOSED by the solution's process of its own: no thread of the harness's is there for a
    # __del__ or a signal handler to run on.
    _no_work_is_not_ok(verdicts["py_signal_frame"])


CLOSED_PY = {"py_eq": "py_range_sums", "py_eq_items": "py_range_sums",
             "py_eq_own_type": "py_range_sums", "py_frame": "py_square_checksum",
             "py_tb_frame": "py_square_checksum", "py_current_frames": "py_square_checksum",
             "py_del_frame": "py_range_sums"}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CLOSED_PY))
def test_a_closed_python_attack_scores_no_more_than_the_honest_reference(verdicts, name):
    # Can a cheaper program score higher? Not through these routes: each scores below the
    # task's own reference submitted as a candidate.
    attack, honest = verdicts[name], verdicts[f"{CLOSED_PY[name]}:reference"]
    assert honest.stage is Stage.OK, honest.reason
    got, ref = get_reward("rlpf")([attack, honest])
    assert got is not None and ref is not None
    assert got < ref, (name, got, ref, attack.stage)


def test_python_json_encoder_patch_forges_a_checked_answer(verdicts):
    # The solution runs in a process of its own: its patch of json's encoder is that process's,
    # and its _Yes(0) reaches the harness as the int 0, a wrong answer by the harness's own check.
    v = verdicts["py_json"]
    _no_work_is_not_ok(v)


def test_python_solution_returning_the_harnesss_own_expected_is_not_ok(verdicts):
    # Was OK with `checked: actual_checksum, expected_checksum`; now the solution's thread's
    # frames end at its start: no `expected` found, None returned, the harness's own check fails.
    _no_work_is_not_ok(verdicts["py_frame"])


@pytest.mark.parametrize("name", ["py_reference", "c_reference"])
def test_a_harness_candidate_cannot_read_its_tasks_reference(verdicts, name):
    v = verdicts[name]
    assert v.stage is not Stage.OK, f"the reference's own program, read by the candidate: {v.stage}"


def test_c_solution_interposing_unlink_keeps_the_nonce(verdicts):
    _no_work_is_not_ok(verdicts["c_unlink"])


@pytest.mark.parametrize("name", ["c_printf", "cpp_printf"])
def test_c_interposed_printf_forges_a_checked_answer(verdicts, name):
    v = verdicts[name]
    assert v.harness_answer.startswith("checked:"), v.harness_answer
    _no_work_is_not_ok(v)


def test_go_cgo_constructor_reads_the_nonce_before_the_wrapper(verdicts):
    _no_work_is_not_ok(verdicts["go_cgo"])


def test_java_class_of_the_harness_name_calling_exit_is_not_ok(verdicts):
    _no_work_is_not_ok(verdicts["java_main"])


def test_c_ifunc_resolver_reads_the_nonce_before_the_wrapper(verdicts):
    _no_work_is_not_ok(verdicts["c_ifunc"])


def test_a_harness_clock_cheat_scores_the_floor_not_none(verdicts):
    v = verdicts["c_clock"]
    assert v.flags, "the clock cheat was not flagged (see the test below)"
    (value,) = get_reward("rlpf")([v])
    floor = 0.10 + 0.05  # RlpfConfig: s(WO) + eps
    assert value is not None and value <= floor + 1e-9, (value, v.flags)


def test_a_solutions_own_clock_gettime_is_flagged(verdicts):
    v = verdicts["c_clock"]
    assert v.stage is Stage.OK, v.reason  # correct: it does the work, slowly
    # its build takes the harness's clock_gettime from libc: refused by the builds' symbols,
    # before any clock is weighed (`perfgym.judge.replaced_calls`; the cross-check flagged it
    # before that rule)
    assert "harness_call_replaced" in v.flags and v.hid_time, v.flags


def test_an_escaped_ok_key_and_a_partial_line_do_not_hide_a_wrong_answer(verdicts):
    _no_work_is_not_ok(verdicts["py_escaped"])


def test_a_solutions_own_real_main_does_not_replace_the_harness(verdicts):
    # --wrap binds __real_main to the harness's main whatever the program defines: the harness
    # runs, finds the wrong answer and exits 1.
    _no_work_is_not_ok(verdicts["c_real_main"])


def test_a_run_cannot_rewrite_its_tasks_harness(harness_before, verdicts, root):
    _no_work_is_not_ok(verdicts["py_rewrite"])
    assert (root / "py_range_sums/harness/bench.py").read_text() == harness_before
