"""A run's view is an allow-list: nothing of the checkout, results, stores, service state, .git,
the package's data, suites' references or home directories can be read from inside a run, on
the warm and bwrap backends and in the warm Python worker (program and function mode)."""

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

import perfgym
from perfgym.judge import Stage
from perfgym.sandbox import BwrapSandbox
from perfgym.sandbox.pyworker import PythonWorker
from perfgym.sandbox.warm import WarmSandbox
from perfgym.tasks.suite import perfgym_core_candidates
from perfgym.tasks.task import Language
from perfgym.toolchains import toolchain
from perfgym.toolchains.build import BuildStatus
from perfgym.toolchains.cache import BuildCache

PACKAGE = Path(perfgym.__file__).resolve().parent
CHECKOUT = PACKAGE.parents[1]  # src layout: <checkout>/src/perfgym
SECRET = f"PERFGYM-SECRET-{uuid.uuid4().hex}"
# What a program prints for a path: the content, or NOPE with the error.
PROBE = (
    "import sys\n"
    "for p in sys.argv[1:]:\n"
    "    try:\n"
    "        print(p, open(p, 'rb').read()[:4096].decode('utf-8', 'replace'))\n"
    "    except OSError as e:\n"
    "        print(p, 'NOPE', e.__class__.__name__)\n"
)
PY = os.path.realpath(sys.executable)


@pytest.fixture(scope="module")
def worker():
    w = PythonWorker()
    yield w
    w.close()


@pytest.fixture(scope="module")
def backends(worker):
    warm, bwrap = WarmSandbox(), BwrapSandbox()

    def sandboxed(sb):
        def read(paths):
            ex = sb.run([PY, "-c", PROBE, *paths])
            assert ex.ok, (ex.status, ex.reason, ex.stderr_text)
            return ex.stdout_text

        return read

    def program(paths):
        r = worker.run_program(PROBE, argv=["/tmp/main.py", *paths])
        assert r.status.value == "OK", (r.status, r.reason, r.stderr)
        return r.stdout.decode()

    def function(paths):
        src = "def f(paths):\n    import io, contextlib\n    out = io.StringIO()\n"
        src += "    with contextlib.redirect_stdout(out):\n        import sys\n"
        src += "        sys.argv = ['x', *paths]\n        exec(" + repr(PROBE) + ")\n"
        src += "    return out.getvalue()\n"
        r = worker.call(src, "f", [list(paths)])
        assert r.status.value == "OK", (r.status, r.error)
        return r.value

    yield {"warm": sandboxed(warm), "bwrap": sandboxed(bwrap), "worker-program": program,
           "worker-call": function}  # fmt: skip
    warm.close()
    bwrap.close()


BACKENDS = ["warm", "bwrap", "worker-program", "worker-call"]


def _readable(out: str, path: str) -> bool:
    line = next(ln for ln in out.splitlines() if ln.startswith(path + " "))
    return " NOPE " not in line + " "


@pytest.fixture(scope="module")
def secret_tree():
    """A checkout-like tree with results, a store, service state and .git, outside /tmp (every
    run's /tmp is fresh anyway) where the judge's working directory could be."""
    root = Path("/var/tmp") / f"perfgym-view-test-{uuid.uuid4().hex[:8]}"
    files = {
        "results/run.jsonl": f'{{"reference": "{SECRET}"}}\n',
        ".git/HEAD": f"ref: {SECRET}\n",
        "perfgym-service/queue.json": SECRET,
        "suites/mine/task-1/reference.py": f"print('{SECRET}')\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    db = sqlite3.connect(root / "results" / "perfgym.sqlite")
    db.execute("create table v (source text)")
    db.execute("insert into v values (?)", (SECRET,))
    db.commit()
    db.close()
    for dirpath, _dirs, names in os.walk(root):
        os.chmod(dirpath, 0o755)
        for n in names:
            os.chmod(os.path.join(dirpath, n), 0o644)  # world-readable, as results files are
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_checkout_results_store_and_state_are_not_in_the_view(backend, backends, secret_tree):
    paths = [str(p) for p in sorted(secret_tree.rglob("*")) if p.is_file()]
    assert all(os.access(p, os.R_OK) for p in paths)
    out = backends[backend](paths)
    assert SECRET not in out
    assert not [p for p in paths if _readable(out, p)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_perfgyms_checkout_git_package_data_and_references_are_not_in_the_view(backend, backends):
    paths = [PACKAGE / "__init__.py", PACKAGE / "sandbox" / "view.py"]
    paths += sorted(p for p in (PACKAGE / "data").rglob("*") if p.is_file())[:3]
    for name in (".git/HEAD", ".git/config", "pyproject.toml", "README.md"):
        paths.append(CHECKOUT / name)
    for suite in perfgym_core_candidates():
        paths += sorted(suite.glob("*/reference.*"))[:2]
    paths = [str(p) for p in paths if p.is_file()]
    assert len(paths) >= 6, paths
    out = backends[backend](paths)
    assert not [p for p in paths if _readable(out, p)], out


@pytest.mark.parametrize("backend", BACKENDS)
def test_homes_and_other_host_trees_are_not_in_the_view(backend, backends):
    made = []
    for top in ("/root", "/home", "/srv", "/mnt", "/opt", "/work"):
        if os.path.isdir(top) and os.access(top, os.W_OK):
            p = os.path.join(top, f".perfgym-view-test-{uuid.uuid4().hex[:8]}")
            Path(p).write_text(SECRET)
            os.chmod(p, 0o644)
            made.append(p)
    try:
        assert made
        out = backends[backend](made)
        assert SECRET not in out
        assert not [p for p in made if _readable(out, p)]
    finally:
        for p in made:
            os.unlink(p)


@pytest.mark.parametrize("backend", ["warm", "bwrap"])
def test_what_the_root_of_a_run_holds(backend):
    """The root lists only the allow-list, and the trusted code's mount holds `_inside` alone:
    neither the host's root (the warm launcher's HOST_MOUNT) nor the package around it."""
    sb = WarmSandbox() if backend == "warm" else BwrapSandbox()
    with sb:
        ex = sb.run(["sh", "-c", "ls -A /; echo --; ls -A /run/perfgym/*; echo --; ls -A /var"])
    assert ex.ok, ex.stderr_text
    top, run, var = ex.stdout_text.split("--\n")
    assert set(top.split()) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc",
                                "root", "run", "sbin", "sys", "tmp", "usr", "var"}  # fmt: skip
    assert "work" not in top.split() and "home" not in top.split()
    assert "supervisor.py" in run.split() and "view.py" not in run.split()
    assert "judge" not in run.split() and "data" not in run.split()
    assert var.split() == ["tmp"]


@pytest.mark.parametrize("backend", ["warm", "bwrap"])
def test_other_routes_to_host_files(backend, secret_tree):
    """/proc/1/root and /proc/1/cwd, a symlink planted in the work dir, and the warm launcher's
    view of the host's root, which a spare covers before its program starts (not unmounting it
    in a user namespace of the program's own: inherited mounts are locked together)."""
    target = str(secret_tree / "results" / "run.jsonl")
    git = str(CHECKOUT / ".git" / "HEAD")
    script = (
        f"ln -s {target} /tmp/link; cat /tmp/link; cat /proc/1/root{target}; "
        f"cat /proc/1/cwd{target} /proc/1/root{git}; ls /proc/1/root/run/perfgym/host; "
        "unshare -Urm sh -c 'umount -l /run/perfgym/host; ls -A /run/perfgym/host' 2>/dev/null; "
        f"cat /proc/self/mountinfo | wc -l; echo done"
    )
    sb = WarmSandbox() if backend == "warm" else BwrapSandbox()
    with sb:
        ex = sb.run(["sh", "-c", script])
    assert ex.stdout_text.strip().endswith("done"), ex.stderr_text
    assert SECRET not in ex.stdout_text + ex.stderr_text
    assert "ref:" not in ex.stdout_text
    assert not {"usr", "etc", "work", "root"} & set(ex.stdout_text.split())  # the host's root


def test_host_environment_does_not_reach_a_run(monkeypatch):
    monkeypatch.setenv("PERFGYM_TEST_TOKEN", SECRET)
    with WarmSandbox() as sb:
        ex = sb.run(["sh", "-c", "env; cat /proc/1/environ | tr '\\0' '\\n'"])
    assert SECRET not in ex.stdout_text + ex.stderr_text


def test_toolchains_stay_in_the_view(backends):
    """The interpreter, numpy (site-packages), compilers and runtimes are all still there."""
    import numpy

    paths = [PY, numpy.__file__, "/usr/bin/gcc", "/etc/ld.so.cache"]
    for tool in ("java", "go", "node", "rustc"):
        found = shutil.which(tool)
        if found:
            paths.append(os.path.realpath(found))
    for backend in BACKENDS:
        out = backends[backend]([p for p in paths if os.path.exists(p)])
        assert [p for p in paths if os.path.exists(p) and not _readable(out, p)] == [], backend


def test_of_cargos_home_only_its_proxies_are_in_the_view(backends, monkeypatch, tmp_path):
    """Red team helper-100: the whole of CARGO_HOME was bound, and a user's registry token
    (`credentials.toml`) there was kept from runs only by its mode. Only bin/ is bound now."""
    from perfgym.sandbox.view import toolchain_roots

    cargo = os.path.realpath(os.path.expanduser(os.environ.get("CARGO_HOME", "~/.cargo")))
    if not os.path.isdir(os.path.join(cargo, "bin")):
        pytest.skip("no cargo home here")
    roots = toolchain_roots()
    assert os.path.join(cargo, "bin") in roots and cargo not in roots, roots
    token = os.path.join(cargo, "perfgym-view-test-credentials.toml")
    with open(token, "w") as f:
        f.write('[registry]\ntoken = "secret"\n')
    os.chmod(token, 0o644)
    try:
        out = backends["warm"]([token, os.path.join(cargo, "bin")])
        assert not _readable(out, token), out
    finally:
        os.unlink(token)


def test_etc_private_entries_are_empty(backends):
    paths = [p for p in ("/etc/shadow", "/etc/gshadow", "/etc/environment") if os.path.isfile(p)]
    if not paths:
        pytest.skip("no private /etc files here")
    out = backends["warm"](paths)
    for p in paths:
        line = next(ln for ln in out.splitlines() if ln.startswith(p + " "))
        assert line.strip() in (p, f"{p} NOPE PermissionError"), line


# -- build logs ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def build_env(tmp_path_factory):
    cache = BuildCache.at(tmp_path_factory.mktemp("view-cache"))
    sb = WarmSandbox(cache.hiding())
    yield sb, cache
    sb.close()


def test_compile_error_does_not_quote_a_readable_host_file(build_env):
    """`#include "/etc/passwd"` makes gcc quote its first line in the error: the log keeps the
    candidate's own diagnostics and drops those about the host file."""
    sb, cache = build_env
    tc = toolchain(Language.C)
    if tc.missing():
        pytest.skip(tc.missing())
    first = Path("/etc/passwd").read_text().splitlines()[0]
    src = '#include "/etc/passwd"\nint main(void) { return x; }\n'
    build = tc.build(sb, src, cache)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert first not in build.log and "root:x" not in build.log, build.log
    assert "/etc/passwd:" not in build.log
    assert "main.c:1" in build.log  # the candidate's own lines are still there
    assert "outside the build directory removed" in build.log


def test_compile_error_cannot_include_a_hidden_host_file(build_env, secret_tree):
    sb, cache = build_env
    tc = toolchain(Language.C)
    if tc.missing():
        pytest.skip(tc.missing())
    src = f'#include "{secret_tree}/results/run.jsonl"\nint main(void) {{ return 0; }}\n'
    build = tc.build(sb, src, cache)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert SECRET not in build.log


def test_rust_path_module_does_not_quote_a_host_file(build_env):
    sb, cache = build_env
    tc = toolchain(Language.RUST)
    if tc.missing():
        pytest.skip(tc.missing())
    first = Path("/etc/passwd").read_text().splitlines()[0]
    src = '#[path = "/etc/passwd"]\nmod p;\nfn main() {}\n'
    build = tc.build(sb, src, cache)
    assert build.status is BuildStatus.COMPILE_ERROR
    assert first not in build.log and "root:x" not in build.log, build.log


def test_redact_log_rules():
    from perfgym.toolchains.build import redact_log

    log = "\n".join(
        [
            "In file included from main.c:1:",
            "/etc/secret.h:1:1: error: unknown type name 'TOPSECRET'",
            "    1 | TOPSECRET = 1",
            "      | ^~~~~~~~~",
            "main.c:3:5: error: expected ';'",
            "    3 | int x",
            "error[E0425]: cannot find value `TOPSECRET` in this scope",
            " --> /work/x.rs:1:1",
            "1 | TOPSECRET",
            "error: expected item",
            " --> main.rs:2:1",
            '  File "/tmp/build/main.py", line 2',
            "Main.java:3: error: ';' expected",
            "./main.go:4:2: undefined: y",
        ]
    )
    out = redact_log(log)
    assert "TOPSECRET" not in out
    for own in ("main.c:3:5", "int x", "main.rs:2:1", "main.py", "Main.java:3", "./main.go:4"):
        assert own in out


# -- perfgym run ------------------------------------------------------------------------------
def test_perfgym_run_cannot_read_a_suite_reference(tmp_path):
    refs = [p for s in perfgym_core_candidates() for p in sorted(s.glob("*/reference.*"))]
    if not refs:
        pytest.skip("perfgym-core is not here")
    ref = refs[0]
    proc = subprocess.run(
        [sys.executable, "-m", "perfgym", "run", "--json", "--", "cat", str(ref)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert ref.read_text().strip().splitlines()[0] not in proc.stdout
    assert "No such file" in proc.stdout


def test_an_installed_package_is_hidden_inside_site_packages(tmp_path):
    """perfgym installed into site-packages (not editable): the site-packages directory is in
    the view (numpy imports), the perfgym package in it (with its data) is not."""
    import site

    site_packages = Path(site.getsitepackages()[0])
    if not os.access(site_packages, os.W_OK):
        pytest.skip("site-packages is not writable here")
    top = site_packages / f"perfgym-view-test-{uuid.uuid4().hex[:8]}"
    try:
        shutil.copytree(PACKAGE, top / "perfgym", ignore=shutil.ignore_patterns("__pycache__"))
        data = sorted(p for p in (top / "perfgym" / "data").rglob("*") if p.is_file())[0]
        script = (
            "import numpy, perfgym, sys\n"
            f"assert perfgym.__file__.startswith({str(top)!r}), perfgym.__file__\n"
            "from perfgym.sandbox import BwrapSandbox\n"
            "from perfgym.sandbox.warm import WarmSandbox\n"
            "from perfgym.sandbox.pyworker import PythonWorker\n"
            f"probe = {PROBE!r}\n"
            f"paths = [{str(data)!r}, perfgym.__file__, numpy.__file__]\n"
            "for sb in (WarmSandbox(), BwrapSandbox()):\n"
            "    with sb:\n"
            "        print(sb.run([sys.executable, '-c', probe, *paths]).stdout_text)\n"
            "w = PythonWorker()\n"
            "print(w.run_program(probe, argv=['/tmp/main.py', *paths]).stdout.decode())\n"
            "w.close()\n"
        )
        env = {**os.environ, "PYTHONPATH": str(top)}
        proc = subprocess.run([PY, "-c", script], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        numpy_file = os.path.realpath(_numpy_file())
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("/")]
        assert len(lines) == 9, proc.stdout
        for ln in lines:
            readable = " NOPE " not in ln + " "
            assert readable == ln.startswith(numpy_file), ln
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _numpy_file() -> str:
    import numpy

    return numpy.__file__


def test_private_paths_named_in_the_environment_are_covered(tmp_path):
    """A service names its state directory in $PERFGYM_PRIVATE_PATHS: its workers' runs do not
    see it even where it lies inside the view (here: the helpers directory, which is)."""
    from perfgym.sandbox.exec_stub import HELPERS

    HELPERS.mkdir(parents=True, exist_ok=True)
    state = Path(tempfile.mkdtemp(prefix="state-", dir=HELPERS))
    try:
        state.chmod(0o755)
        (state / "queue.json").write_text(SECRET)
        (state / "queue.json").chmod(0o644)
        script = (
            "import sys\nfrom perfgym.sandbox.warm import WarmSandbox\n"
            f"with WarmSandbox() as sb:\n"
            f"    print(sb.run([sys.executable, '-c', {PROBE!r}, {str(state / 'queue.json')!r}])"
            ".stdout_text)\n"
        )
        for private, leaks in (("", True), (str(state), False)):
            env = {**os.environ, "PERFGYM_PRIVATE_PATHS": private}
            proc = subprocess.run([PY, "-c", script], capture_output=True, text=True, env=env,
                                  cwd=tmp_path, timeout=120)  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-2000:]
            assert (SECRET in proc.stdout) is leaks, proc.stdout
    finally:
        shutil.rmtree(state, ignore_errors=True)


# -- end to end: a stolen reference ------------------------------------------------------------
STEAL = (
    "import subprocess, sys\n"
    "src = None\n"
    "try:\n"
    "    src = open({path!r}).read()\n"
    "except OSError:\n"
    "    out = subprocess.run(['git', '-c', 'safe.directory=*', '-C', {checkout!r}, 'show',\n"
    "                          'HEAD:suites/perfgym-core/py-bfs-grid/reference.py'],\n"
    "                         capture_output=True, text=True)\n"
    "    src = out.stdout or None\n"
    "if src is None:\n"
    "    sys.exit('nothing to steal')\n"
    "exec(compile(src, 'stolen', 'exec'))\n"
)


def test_a_stolen_reference_does_not_score(secret_tree):
    """The red team's attack: a candidate that reads the reference from an earlier results
    file (or from the checkout's git history) and runs it. It scored OK at full reward."""
    from perfgym.judge import Candidate, Judge, JudgeConfig
    from perfgym.tasks import load_suite

    task = load_suite("perfgym-core").get("py-bfs-grid")
    assert task.reference is not None
    stolen = secret_tree / "results" / "stolen.py"
    stolen.write_text(task.reference.source)
    stolen.chmod(0o644)
    src = STEAL.format(path=str(stolen), checkout=str(CHECKOUT))
    config = JudgeConfig(repeats=1, measure_baseline=False, measure_reference=False)
    with Judge(config) as judge:
        (v,) = judge.judge_many([Candidate(task, source=src, model="thief")])
    assert v.stage is Stage.NR, (v.stage, v.reason)


@pytest.mark.parametrize("backend", ["warm", "bwrap"])
def test_nothing_outside_the_work_dir_is_writable(backend):
    """No shared writable place (a /var/tmp, a cache) where one run could leave a file for a
    later one: everything a program can write outside /tmp is a device node, or /dev/shm, the
    run's own tmpfs (`test_dev_shm_is_the_runs_own`)."""
    from perfgym.sandbox import Limits

    find = (
        "find / \\( -path /proc -o -path /sys -o -path /tmp -o -path /dev \\) -prune -o "
        "-writable ! -type l -print 2>/dev/null; "
        "python3 -c \"import os, stat; print(*[p for p in (os.path.join('/dev', n) for n in "
        "os.listdir('/dev')) if os.access(p, os.W_OK) and not os.path.islink(p) and not "
        "stat.S_ISCHR(os.stat(p).st_mode) and p != '/dev/shm'])\"; echo done"
    )
    sb = WarmSandbox() if backend == "warm" else BwrapSandbox()
    with sb:
        ex = sb.run(["sh", "-c", find], limits=Limits(wall_s=60))
    assert ex.stdout_text.split() == ["done"], ex.stdout_text[-2000:] + ex.stderr_text


SHM_WRITER = """import multiprocessing, os, sys
with open('/dev/shm/left-' + sys.argv[1], 'w') as f:
    f.write('x')
with multiprocessing.get_context('fork').Pool(2) as pool:  # SemLocks: sem_open in /dev/shm
    print(sum(pool.map(abs, [-1, 2])), sorted(os.listdir('/dev/shm')))
try:
    with open('/dev/shm/big', 'wb') as f:
        f.write(b'x' * (2 << 20))
    print('no limit')
except OSError as e:
    print('full', e.errno)
"""


@pytest.mark.parametrize("backend", ["warm", "bwrap"])
def test_dev_shm_is_the_runs_own(backend):
    """/dev/shm is writable (multiprocessing's locks and pools need it: an honest program failed
    with PermissionError), bounded (a quarter of the run's disk limit, the rest is /tmp's), and
    private: what one run leaves there no later run sees, nor a run beside it."""
    import threading

    from perfgym.sandbox import Limits

    lim = Limits(wall_s=30, disk_bytes=1 << 20)
    sb = WarmSandbox() if backend == "warm" else BwrapSandbox()
    with sb:
        first = sb.run(["python3", "-c", SHM_WRITER, "a"], limits=lim)
        assert first.stdout_text.split("\n")[:2] == ["3 ['left-a']", "full 28"], (
            first.stdout_text + first.stderr_text
        )
        later = sb.run(["python3", "-c", "import os; print(os.listdir('/dev/shm'))"], limits=lim)
        assert later.stdout_text.strip() == "[]", later.stdout_text + later.stderr_text
        holder = "open('/dev/shm/held', 'w').write('x'); import time; time.sleep(3)"
        seen = {}

        def hold() -> None:
            seen["holder"] = sb.run(["python3", "-c", holder], limits=lim)

        t = threading.Thread(target=hold)
        t.start()
        looks = "import os, time; time.sleep(1); print(os.listdir('/dev/shm'))"
        beside = sb.run(["python3", "-c", looks], limits=lim)
        t.join()
    assert seen["holder"].status.value == "OK", seen["holder"].stderr_text
    assert beside.stdout_text.strip() == "[]", beside.stdout_text + beside.stderr_text
