"""`run_supervised`: a pytest command on a repository copy whose outcome is decided outside the
process the code under test runs in.

The sandboxed run starts perfgym's test supervisor (`_inside/test_supervisor.py`, isolated
Python) which runs pytest with perfgym's plugin (`_inside/outcome_plugin.py`, under a random
module name the repository cannot shadow), the cache provider off, the ORIGINAL repository's
pytest configuration (its file put back at the copy's root, then `-c` it; `--rootdir` and
`--confcutdir` the copy, so the original's conftest.py files still load: a patch's pyproject/pytest.ini/tox.ini/setup.cfg is
never read) and no PYTEST_* variable. Each test's records leave pytest as they happen over a pipe
the supervisor holds; it prints one verdict line carrying a nonce that only it and this process
know. A run without exactly one such line, or whose verdict lists any problem, has not passed.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from perfgym.repos.hacks_static import TEST_PATTERNS
from perfgym.repos.runner import ONE_THREAD_POOLS
from perfgym.repos.shell import REPO_DIR, CommandStatus, shared_sandbox, shell_limits
from perfgym.sandbox.base import Sandbox
from perfgym.sandbox.bind import Bind

_INSIDE = Path(__file__).resolve().parent / "_inside"
_SUPERVISOR = "perfgym_test_supervisor.py"
_SPEC = "perfgym_test_spec.json"
_MARK = "PERFGYM_TESTS "
_EMPTY_CONFIG = "perfgym-no-config.ini"
#: pytest's configuration files, in the order pytest looks for them, and the section each needs.
CONFIG_FILES = (("pytest.toml", ""), (".pytest.toml", ""), ("pytest.ini", ""), (".pytest.ini", ""), ("pyproject.toml", "[tool.pytest"),
                ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))  # fmt: skip
_SHELL_OPS = {"&&", "||", ";", "|", "&", ">", "<", ">>", "2>&1"}


#: Python files of an original digested for the plugin check, at most (beyond: not checked).
MAX_DIGESTED = 20000


@dataclass(frozen=True)
class PytestConfig:
    """The original repository's pytest configuration: its file name and text ('' for none),
    and the sha256 of its Python files by path (a plugin pytest loads from a patched copy, a
    conftest.py above all, must be one of them, unchanged; None: not checked)."""

    name: str = ""
    text: str = ""
    originals: dict[str, str] | None = None
    #: Whether the original's tests or configuration use pytest's logging plugin (`caplog`, a
    #: `log_*` option): where they do not, it is left out, with its handlers on the root logger
    #: and the /dev/null it opens (a workload's process has neither).
    logs: bool = True
    #: Whether they use its warnings plugin (`filterwarnings`, `-W`): where they do not, it is
    #: left out, and with it the recording of warnings around every test (helper-116 told the
    #: tests' process by `warnings._showwarnmsg_impl`).
    warns: bool = True

    def config_path(self) -> str:
        """The `-c` path: the original's file, which the supervisor puts back at the copy's root
        under its own name before pytest starts (so paths in it resolve as on the original), or
        an empty configuration in /tmp when the original has none."""
        return f"{REPO_DIR}/{self.name}" if self.name else f"/tmp/{_EMPTY_CONFIG}"


_DIGESTS: dict[str, dict[str, str] | None] = {}


def _digests(repo: Path) -> dict[str, str] | None:
    """sha256 of every Python file of an original copy by path (once per copy: originals
    are not edited)."""
    key = str(repo.resolve())
    if key not in _DIGESTS:
        _DIGESTS[key] = _digest_tree(repo)
    return _DIGESTS[key]


def _digest_tree(repo: Path) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for path in sorted(repo.rglob("*.py")):
        if ".git" in path.parts or path.is_symlink() or not path.is_file():
            continue
        if len(out) >= MAX_DIGESTED:
            return None
        out[str(path.relative_to(repo))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def original_config(repo: Path) -> PytestConfig:
    """The pytest configuration file at the root of the (original) copy `repo`, as pytest
    would pick it, the digests of its Python files and which optional plugins it uses."""
    originals = _digests(repo)
    for name, section in CONFIG_FILES:
        path = repo / name
        if path.is_file() and not path.is_symlink():
            text = path.read_text(errors="replace")
            if not section or section in text:
                logs, warns = _plugins_used(repo, text)
                return PytestConfig(name=name, text=text, originals=originals, logs=logs,
                                    warns=warns)  # fmt: skip
    logs, warns = _plugins_used(repo, "")
    return PytestConfig(originals=originals, logs=logs, warns=warns)


_LOGGING_WORDS = re.compile(rb"caplog|log_|--log|LogCaptureFixture|_pytest\.logging")
_WARNING_WORDS = re.compile(
    rb"filterwarnings|pythonwarnings|(^|\s|[\"'])-W|_pytest\.warnings", re.M
)


def _plugins_used(repo: Path, config_text: str) -> tuple[bool, bool]:
    """Whether pytest's logging and warnings plugins may be needed: the original's
    configuration or one of its Python files names what uses them (read generously: a false
    yes only keeps a plugin)."""
    logs = bool(_LOGGING_WORDS.search(config_text.encode()))
    warns = bool(_WARNING_WORDS.search(config_text.encode()))
    for path in repo.rglob("*.py"):
        if logs and warns:
            break
        if ".git" in path.parts or path.is_symlink() or not path.is_file():
            continue
        try:
            text = path.read_bytes()
        except OSError:
            return True, True
        logs = logs or bool(_LOGGING_WORDS.search(text))
        warns = warns or bool(_WARNING_WORDS.search(text))
    return logs, warns


def pytest_argv(command: str) -> tuple[list[str], dict[str, str]] | None:
    """The argv and leading VAR=value assignments of a plain pytest command (`pytest ...`,
    `python3 -m pytest ...`); None for anything else (shell operators, other runners)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    env: dict[str, str] = {}
    while words and "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    if not words or any(w in _SHELL_OPS for w in words):
        return None
    head = Path(words[0]).name
    if head in ("pytest", "py.test") or (
        head.startswith("python") and words[1:3] == ["-m", "pytest"]
    ):
        return words, env
    return None


@dataclass
class SupervisedRun:
    """The supervisor's verdict on one pytest run, with the run's output and collected files."""

    passed: bool
    ran: int = 0
    collected: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    exit_status: int | None = None
    output: str = ""
    wall_s: float = 0.0
    status: CommandStatus = CommandStatus.OK
    timed_out: bool = False
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        """One line: why the run did not pass (or what passed)."""
        if self.passed:
            return f"{self.ran} tests passed"
        bits = self.problems[:3] or [f"{len(self.failed)} failed: {', '.join(self.failed[:5])}"]
        return "; ".join(bits)[:500]


def _verdict(output: str, nonce: str) -> tuple[dict[str, object] | None, str]:
    mark = f"{_MARK}{nonce} "
    found: list[str] = []
    kept: list[str] = []
    for line in output.splitlines():
        (found if line.startswith(mark) else kept).append(line)
    if len(found) != 1:
        return None, "\n".join(kept)
    try:
        data = json.loads(found[0][len(mark) :])
    except ValueError:
        return None, "\n".join(kept)
    return (data if isinstance(data, dict) else None), "\n".join(kept)


def run_supervised(
    copy_dir: Path,
    command: str,
    *,
    timeout_s: float,
    memory_mb: int,
    config: PytestConfig,
    expected: Collection[str] | None = None,
    stable: Collection[str] | None = None,
    extra_args: tuple[str, ...] = (),
    files: Mapping[str, str | bytes] | None = None,
    collect: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    after: str = "",
    sandbox: Sandbox | None = None,
    protected: tuple[str, ...] = (),
) -> SupervisedRun:
    """Run the pytest `command` (see `pytest_argv`) on `copy_dir` under the supervisor.
    `expected`: node ids that must be collected and pass (None: whatever is collected, at
    least one); `stable`: node ids that must pass whenever collected (a selection's). `after` is a shell command run once pytest is done (its exit status is
    ignored). `env` must not carry PYTEST_* (the supervisor drops them anyway). `protected`:
    paths (globs) beyond the test patterns whose Python files must be the original's when they
    run. The copy is bound read-only."""
    parsed = pytest_argv(command)
    if parsed is None:
        raise ValueError(f"not a plain pytest command: {command!r}")
    argv, command_env = parsed
    nonce = secrets.token_hex(16)
    plugin = f"perfgym_outcomes_{secrets.token_hex(8)}"
    integrity = f"perfgym_integrity_{secrets.token_hex(8)}"
    # no faulthandler and no output capture: the tests' process would be told from a workload's
    # by them (red team helper-113: input validation that ran only when
    # `faulthandler.is_enabled()`; helper-115: only when `sys.stdout.fileno() != 1`)
    # nor pytest's hooks for unraised and thread exceptions, nor (where the tests do not use
    # them) its logging and warnings plugins: each changes what any code in the process can read
    # (the hooks, the root logger's handlers, an open /dev/null, warnings recorded)
    quiet = ("-p", "no:threadexception", "-p", "no:unraisableexception",
             *(() if config.logs else ("-p", "no:logging")),
             *(() if config.warns else ("-p", "no:warnings")))  # fmt: skip
    argv = [*argv, "-p", plugin, "-p", "no:cacheprovider", "-p", "no:faulthandler", "-s", *quiet,
            "-c", config.config_path(),
            "--rootdir", REPO_DIR, "--confcutdir", REPO_DIR, *extra_args]  # fmt: skip
    spec = {
        "nonce": nonce,
        "argv": argv,
        "plugin_dir": "/tmp",
        "env": command_env,
        "expected": sorted(expected) if expected is not None else None,
        "originals": config.originals,
        "config": {"name": config.name, "text": config.text} if config.name else None,
        "stable": sorted(stable) if stable is not None else None,
        "integrity_module": integrity,
        "protected": [*TEST_PATTERNS, *protected],
    }
    run_files: dict[str, str | bytes] = {
        **dict(files or {}),
        _SUPERVISOR: (_INSIDE / "test_supervisor.py").read_text(),
        f"{plugin}.py": (_INSIDE / "outcome_plugin.py").read_text(),
        f"{integrity}.py": (_INSIDE / "code_integrity.py").read_text(),
        "perfgym_call_depth.py": (_INSIDE / "call_depth.py").read_text(),
        "perfgym_fd_layout.py": (_INSIDE / "fd_layout.py").read_text(),
        "perfgym_class_watch.py": (_INSIDE / "class_watch.py").read_text(),
        # pytest's launcher, under the workload runner's name (`pytest_launcher`)
        "perfgym_workload_runner.py": (_INSIDE / "pytest_launcher.py").read_text(),
        _EMPTY_CONFIG: "[pytest]\n",
        _SPEC: json.dumps(spec),
    }
    start = f"python3 -I /tmp/{_SUPERVISOR} /tmp/{_SPEC}"
    tail = f"; rc=$?; {after}; exit $rc" if after else ""
    script = f"exec 2>&1\ncd {REPO_DIR} || exit 125\n{'' if after else 'exec '}{start}{tail}\n"
    # The tests see the copy as a workload run does: read-only (nothing a test run writes there,
    # a planted bytecode cache above all, reaches a later module), no bytecode written, the same
    # one-thread library pools. A patch then cannot tell the two apart by them (helper-72 gated
    # a broken path on `os.access(package, W_OK)`).
    clean_env = {**ONE_THREAD_POOLS, "PYTHONDONTWRITEBYTECODE": "1",
                 **{k: v for k, v in (env or {}).items() if not k.startswith("PYTEST_")}}  # fmt: skip
    ex = (sandbox or shared_sandbox()).run(
        ["bash", "-c", script],
        env=clean_env,
        files=run_files,
        limits=shell_limits(timeout_s, memory_mb),
        binds=[Bind(host_path=str(copy_dir.resolve()), sandbox_path=REPO_DIR, writable=False)],
        collect=collect,
    )
    text = ex.stdout_text
    verdict, output = _verdict(text, nonce)
    status = CommandStatus.of(ex.status)
    wall = ex.measurement.wall_s if ex.measurement else 0.0
    timed_out = status is CommandStatus.TIMEOUT
    if verdict is None:
        why = "timed out" if timed_out else f"{status.value}, exit {ex.exit_code}"
        return SupervisedRun(passed=False, output=output, wall_s=wall, status=status,
                             timed_out=timed_out, files=dict(ex.files),
                             problems=[f"no verdict from the test supervisor ({why})"])  # fmt: skip
    outcomes = verdict.get("outcomes")
    return SupervisedRun(
        passed=bool(verdict.get("passed")) and status is CommandStatus.OK,
        ran=int(verdict.get("ran", 0)),  # type: ignore[call-overload]
        collected=int(verdict.get("collected", 0)),  # type: ignore[call-overload]
        outcomes={str(k): str(v) for k, v in outcomes.items()}
        if isinstance(outcomes, dict)
        else {},
        failed=[str(x) for x in verdict.get("failed", [])],  # type: ignore[attr-defined]
        missing=[str(x) for x in verdict.get("missing", [])],  # type: ignore[attr-defined]
        problems=[str(x) for x in verdict.get("problems", [])],  # type: ignore[attr-defined]
        exit_status=verdict.get("exit_status"),  # type: ignore[arg-type]
        output=output,
        wall_s=wall,
        status=status,
        timed_out=timed_out,
        files=dict(ex.files),
    )
