"""perfgym's pytest plugin (loaded by the test supervisor with `-p`): every test's start, reports
and finish leave pytest as they happen, over a pipe the supervisor opened before pytest started.

Stdlib and pytest only. It is imported before any module of the repository (pytest loads `-p`
plugins first), keeps its own references to what it needs, closes the pipe to any process
pytest starts (close-on-exec), reports every plugin loaded from the repository (conftest.py files included, with their
digests), and reports a change to pytest's own runner functions (a package
that patches them forges outcomes in-process) as a `tamper` record. The repository's code is
watched as it runs (`code_integrity`, shipped under a random name the supervisor passes in
PERFGYM_INTEGRITY with its spec file): a module not compiled from its file, a test file not
the original's, a test function's code replaced or put in its place, each an `integrity`
record.
"""

import hashlib
import importlib
import json
import os
from types import ModuleType as _ModuleType

import _pytest._code
import _pytest.config
import _pytest.fixtures
import _pytest.main
import _pytest.outcomes
import _pytest.python
import _pytest.python_api
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.unittest
import perfgym_call_depth
import perfgym_class_watch
import perfgym_fd_layout
import pluggy
import pytest

_hookimpl = pluggy.HookimplMarker("pytest")
_write = os.write
_dumps = json.dumps
try:  # the record pipe, and a spare socket a workload's process has the like of (fd_layout)
    _FD, _ = perfgym_fd_layout.settle(
        *(int(fd) for fd in os.environ.pop("PERFGYM_OUTCOME_FD").split(","))
    )
except (KeyError, ValueError, OSError):
    _FD = -1
_hard_exit = os._exit
_identity = perfgym_fd_layout.identity


#: What the record pipe and stdout are: red team helper-117's C moved both onto pipes of its own
#: and rewrote the records and pytest's summary on their way through. Checked before every
#: record; a channel moved ends the process at once (no record, an exit status of its own).
_CHANNELS = ((_FD, _identity(_FD)), (1, _identity(1)))

_WATCHED = (
    (_pytest.runner, "call_and_report"),
    (_pytest.runner, "runtestprotocol"),
    (_pytest.runner, "pytest_runtest_protocol"),
    (_pytest.runner, "call_runtest_hook"),
    (_pytest.runner, "pytest_runtest_makereport"),
    (_pytest.runner, "CallInfo.from_call"),
    (_pytest.runner, "CallInfo.__init__"),
    (_pytest.runner, "CallInfo"),
    (_pytest.reports, "TestReport.from_item_and_call"),
    # the report itself: its class, how one is made and what it says (red team helper-111
    # wrapped TestReport.__init__ to make a failed outcome passed); a name a class does not
    # define reads None, so one added is a change too
    (_pytest.reports, "TestReport"),
    (_pytest.runner, "TestReport"),
    (_pytest.reports, "TestReport.__init__"),
    (_pytest.reports, "TestReport.__new__"),
    (_pytest.reports, "TestReport.__setattr__"),
    (_pytest.reports, "TestReport.__getattribute__"),
    (_pytest.reports, "TestReport.__getattr__"),
    (_pytest.reports, "TestReport.outcome"),
    (_pytest.reports, "BaseReport.__init__"),
    (_pytest.reports, "BaseReport.__setattr__"),
    (_pytest.reports, "BaseReport.__getattribute__"),
    (_pytest.reports, "BaseReport.__getattr__"),
    (_pytest.reports, "BaseReport.outcome"),
    (_pytest.reports, "BaseReport.passed"),
    (_pytest.reports, "BaseReport.failed"),
    (_pytest.python, "Function.runtest"),
    (_pytest.main, "pytest_runtestloop"),
    (_pytest.skipping, "pytest_runtest_makereport"),
    (pluggy, "HookCaller.__call__"),
    # what tests call to check: swapped, a test checks nothing (red team helper-112 set
    # `pytest.raises` to a context manager that swallowed every exception)
    *(
        (pytest, name)
        for name in (
            "raises",
            "warns",
            "approx",
            "fail",
            "skip",
            "xfail",
            "importorskip",
            "deprecated_call",
            "fixture",
            "param",
        )
    ),
    *((_pytest.python_api, name) for name in ("raises", "approx")),
    (_pytest.outcomes, "fail"),
    # the depth draws' wrappers: put back, an entry runs at pytest's own depth again
    (_pytest.python, "importtestmodule"),
    (_pytest.fixtures, "call_fixture_func"),
    (_pytest.config, "PytestPluginManager._importconftest"),
    (_pytest.unittest, "TestCaseFunction.runtest"),
)


#: Every entry into the repository's code (a test module or conftest imported, a fixture of the
#: repository's, a test's function) at a depth drawn as a workload's runner draws it: red team
#: helper-115 kept a bug off where the stack was deeper than a workload's (`perfgym_call_depth`).
#: The draw the test wrappers must hold (compared by identity at each report).
_AT_DEPTH = perfgym_call_depth.call
perfgym_call_depth.install()
_REPO = os.getcwd().rstrip("/") + "/"


_padded = perfgym_call_depth.entered
_pytest.python.importtestmodule = _padded(_pytest.python.importtestmodule)
_pytest.fixtures.call_fixture_func = perfgym_call_depth.entered_for(
    _pytest.fixtures.call_fixture_func, _REPO
)
_pytest.config.PytestPluginManager._importconftest = _padded(
    _pytest.config.PytestPluginManager._importconftest
)
# a unittest case runs its setUp, method and tearDown itself, under this one call
_pytest.unittest.TestCaseFunction.runtest = _padded(_pytest.unittest.TestCaseFunction.runtest)


def _lookup(module, dotted):
    obj = module
    for part in dotted.split("."):
        # a class's own entry (a classmethod's getattr makes a new bound method each time)
        obj = vars(obj).get(part) if isinstance(obj, type) else getattr(obj, part, None)
    return obj


def _code(obj):
    """A function's code (through a classmethod, staticmethod or property's getter): swapped
    in place (`f.__code__ = ...`), the function object stays the same (helper-111)."""
    obj = getattr(obj, "fget", None) or obj
    return getattr(getattr(obj, "__func__", obj), "__code__", None)


def _watched():
    return tuple((obj, _code(obj)) for obj in (_lookup(m, name) for m, name in _WATCHED))


_ORIGINAL = _watched()


def _own_classes(module):
    return tuple(c for c in vars(module).values()
                 if isinstance(c, type) and c.__module__ == module.__name__)  # fmt: skip


def _modules(*names):
    out = []
    for name in names:
        try:
            out.append(importlib.import_module(name))
        except ImportError:  # `_pytest.raises` is pytest 8.4's
            pass
    return out


#: The classes behind what a test calls to check (`raises`, `approx`, `warns`): red team
#: helper-113's C extension set `RaisesExc.__exit__` to one that let a block that raised
#: nothing pass, the `pytest.raises` function itself unchanged.
_CHECKERS = (*(c for m in _modules("_pytest.raises", "_pytest.python_api", "_pytest.recwarn")
               for c in _own_classes(m)), _pytest._code.ExceptionInfo)  # fmt: skip
perfgym_class_watch.freeze((_pytest.reports.BaseReport, _pytest.reports.TestReport, _pytest.reports.CollectReport,
         _pytest.runner.CallInfo, *_CHECKERS))  # fmt: skip


def _runner_classes():
    """Every class of pytest's and pluggy's modules, with what its own namespace binds."""
    import sys

    out = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in ("_pytest", "pytest", "pluggy"):
            continue
        for cls in list(vars(module).values()):
            if isinstance(cls, type) and cls.__module__ == name and id(cls) not in out:
                out[id(cls)] = (cls, dict(vars(cls)))
    return out


def _repository_code(value):
    """Whether `value` (a function, method, property, a C function) is code of the repository's:
    compiled from a file in it or from no file at all, or a callable of no library's module.
    pytest and installed plugins set their own (legacy paths, hypothesis's fixture guard)."""
    import sys

    value = perfgym_class_watch.unwrapped(value)
    code = getattr(value, "__code__", None)
    if code is not None:
        real = os.path.realpath(code.co_filename)
        return real.startswith(_REPO) or not os.path.isfile(real)
    if not callable(value) or isinstance(value, type):
        return False
    module = sys.modules.get(getattr(value, "__module__", None) or "")
    where = getattr(module, "__file__", None)
    return module is None or not isinstance(where, str) or os.path.realpath(where).startswith(_REPO)


def _classes_changed():
    """pytest's and pluggy's classes that bind the repository's code where they did not when this
    plugin loaded (C code writes a class's namespace without an audit event)."""
    changed = []
    for cls, before in _CLASSES.values():
        now = vars(cls)
        if any(before.get(k, _CLASSES) is not v and _repository_code(v) for k, v in now.items()):
            changed.append(cls.__qualname__)
    return changed


_CLASSES = _runner_classes()


def _send(kind, **fields):
    if _FD < 0:
        raise SystemExit("perfgym outcome channel missing")
    for fd, was in _CHANNELS:
        if _identity(fd) != was:
            _hard_exit(86)
    data = (_dumps({"k": kind, **fields}, separators=(",", ":")) + "\n").encode()
    while data:
        data = data[_write(_FD, data) :]


_reported: list[list[int]] = []


def _check():
    now = _watched()
    changed = [_WATCHED[i][1] for i, (a, b) in enumerate(zip(_ORIGINAL, now, strict=True))
               if a[0] is not b[0] or a[1] is not b[1]]  # fmt: skip
    changed += _classes_changed()
    if changed and not _reported:
        _reported.append(changed)
        _send("tamper", what=changed)


_send("hello", pid=os.getpid())

# What only a test's process would carry, gone: pytest's own environment variables. A patch that
# reads them runs one way under its tests and another in a workload's run (red team helper-114
# kept positions unsorted unless a variable ending in `_CURRENT_TEST` was set: accepted).
os.environ.pop("PYTEST_VERSION", None)
_pytest.runner._update_current_test_var = lambda item, when: None
_PLUGIN_DIR = os.path.dirname(os.path.abspath(__file__))


def pytest_configure(config):
    """After pytest read them at its start: the autoload switch, and this plugin's folder on the
    path, which a workload's process has neither of."""
    os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if entries and entries[0] == _PLUGIN_DIR:
        rest = [e for e in entries[1:] if e]
        if rest:
            os.environ["PYTHONPATH"] = os.pathsep.join(rest)
        else:
            os.environ.pop("PYTHONPATH", None)
    # nothing of perfgym's left in /tmp (a workload's process leaves none there either): this
    # plugin, the code watch, the helpers both processes import, an empty configuration
    inipath = getattr(config, "inipath", None)
    shipped = [__file__, *_SHIPPED, perfgym_call_depth.__file__, perfgym_fd_layout.__file__,
               perfgym_class_watch.__file__]  # fmt: skip
    if inipath is not None and os.path.dirname(os.path.abspath(inipath)) == _PLUGIN_DIR:
        shipped.append(str(inipath))
    for path in shipped:
        try:
            os.unlink(path)
        except OSError:
            pass
    # nor in sys.modules: pytest holds this plugin, the plugin holds what it needs; a walk of the
    # modules found the plugin by its globals and rebound one (red team helper-116)
    import sys

    for name in [__name__, *_SHIPPED_MODULES, "perfgym_call_depth", "perfgym_fd_layout",
                 "perfgym_class_watch"]:  # fmt: skip
        sys.modules.pop(name, None)


_sha256 = hashlib.sha256
#: Files of perfgym's the plugin loaded (the code watch's module), removed at configure.
_SHIPPED: list = []
_SHIPPED_MODULES: list = []


def _integrity():
    """The code watch (`code_integrity.Integrity`), installed before any repository code runs;
    None, said as an integrity record, when the supervisor gave none."""
    name, _, path = os.environ.pop("PERFGYM_INTEGRITY", "").partition(":")
    try:
        module = importlib.import_module(name)
        _SHIPPED.append(module.__file__)
        _SHIPPED_MODULES.append(name)
        with open(path) as f:
            spec = json.load(f)
        os.unlink(path)
    except (ImportError, OSError, ValueError) as exc:
        _send("integrity", what=f"no code watch: {type(exc).__name__}")
        return None
    watch = module.Integrity(_REPO, spec.get("originals"), spec.get("protected", ()),
                             lambda message: _send("integrity", what=message))  # fmt: skip
    watch.install()
    return watch


_WATCH = _integrity()
#: Classes of files the patch changed that compare as a library's class does (`class_watch`).
_loose_comparisons = (None if _WATCH is None
                      else perfgym_class_watch.LooseComparisons(_REPO, _WATCH._trusted))  # fmt: skip
_items: dict = {}


def _plugin_files(plugin):
    """Where a plugin's code comes from: the files its hook functions were compiled from, and
    a module's own file. Only a module's `__file__` is read: an object or class can name any
    file there (red team helper-83 gave one the name of an unchanged repository file)."""
    files = set()
    if isinstance(plugin, _ModuleType) and isinstance(getattr(plugin, "__file__", None), str):
        files.add(plugin.__file__)
    try:
        names = [n for n in dir(plugin) if n.startswith("pytest_")]
    except Exception:
        return files
    for name in names:
        try:
            hook = getattr(plugin, name)
        except Exception:
            continue
        code = getattr(getattr(hook, "__func__", hook), "__code__", None)
        if code is not None:
            files.add(code.co_filename)
    return files


def pytest_plugin_registered(plugin, plugin_name, manager):
    """A plugin from the repository (a conftest.py, a module named by `pytest_plugins`, an
    object the repository's code registered, an entry point of a distribution in the copy): its
    path and digest, which the supervisor compares with the original's files. Hook code
    compiled from a string (no file) is reported as such and matches no original (red team
    helper-81's `.dist-info` entry point registered a class whose hook passed failed tests)."""
    for path in _plugin_files(plugin):
        real = os.path.realpath(path)
        if real.startswith(_REPO):
            try:
                with open(real, "rb") as f:
                    digest = _sha256(f.read()).hexdigest()
            except OSError:
                digest = ""
            _send("plugin", path=real[len(_REPO) :], sha=digest)
        elif not os.path.exists(real):
            _send("plugin", path=path, sha="")


def _check_item(nodeid):
    item = _items.get(nodeid)
    if _WATCH is not None and item is not None:
        _WATCH.check_item(item)
        _WATCH.check_names(item)


#: What each observed test's own function did: "ran" while it runs, "returned" once it returned
#: (`_observe`); a test reported passed whose function raised or never ran is a tampered run.
_ran: dict = {}
_observed: set = set()
_Function = _pytest.python.Function
_is_async = _pytest.python.is_async_function


def _observe(item):
    """The test's function called through a wrapper of ours, the innermost layer between pytest
    and the test's code: red team helper-113 appended a hook wrapper to pluggy's list for
    `pytest_runtest_call` (never registered, so no plugin check saw it) that swallowed the failed
    call's exception, so the call pytest reported on had not raised. Whatever sits between this
    wrapper and the report, the wrapper has seen what the function did. Plain test functions and
    methods only (a unittest case runs its method itself; an async test is left to its plugin)."""
    if type(item) is not _Function:
        return
    func = item.obj
    if _is_async(func) or not callable(func):
        return
    nodeid = item.nodeid
    at_depth = _AT_DEPTH  # in the closure, checked at each report (red team helper-116 set the
    # module's global to a wrapper that swallowed the failure)

    def observed(*args, **kwargs):
        _ran[nodeid] = "ran"
        result = at_depth(func, *args, **kwargs)
        _ran[nodeid] = "returned"
        return result

    observed.__wrapped__ = func
    observed.__name__ = getattr(func, "__name__", "test")
    observed.__qualname__ = getattr(func, "__qualname__", observed.__name__)
    item.obj = observed
    _observed.add(nodeid)
    _calls[nodeid] = (item, observed, func)


#: nodeid -> (item, the wrapper, the function it must call): a wrapper whose closure came to
#: call something else (red team helper-114 set its cell to a function that swallowed the
#: failure) is a tampered run.
_calls: dict = {}


def _still_calls(nodeid):
    item, observed, func = _calls[nodeid]
    cells = dict(zip(observed.__code__.co_freevars, observed.__closure__ or (), strict=False))
    cell, depth = cells.get("func"), cells.get("at_depth")
    return (item.obj is observed and cell is not None and cell.cell_contents is func
            and depth is not None and depth.cell_contents is _AT_DEPTH)  # fmt: skip


def pytest_collection_finish(session):
    _check()
    for item in session.items:
        _observe(item)
    if _WATCH is not None:
        _WATCH.snapshot(session.items)
    for item in session.items:
        _items[item.nodeid] = item
        _check_item(item.nodeid)
    _send("collected", ids=[item.nodeid for item in session.items])


def pytest_runtest_logstart(nodeid, location):
    _ran.pop(nodeid, None)
    _check()
    _check_item(nodeid)
    _send("start", id=nodeid)


#: Whether each test's call raised, read from the call itself before any other implementation
#: of `pytest_runtest_makereport` runs (the outermost wrapper): red team helper-112 set a failed
#: report's outcome to "passed" after it was made (a hook implementation appended to pluggy's own
#: list, and `TestReport` swapped in `_pytest.runner` for one call), and pytest's tally, exit
#: status and records then all agreed. A call that raised is never reported passed by pytest.
_raised: dict = {}


@_hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    if call.when == "call":
        _raised[item.nodeid] = call.excinfo is not None
    yield


def pytest_runtest_logreport(report):
    passed = report.outcome == "passed"  # not ours: pytest's own word for an outcome
    if report.when == "call" and passed and _raised.get(report.nodeid):
        _send("tamper", what=[f"{report.nodeid}: its call raised, its report says passed"])
    if report.when == "call" and passed and report.nodeid in _observed:
        ran = _ran.get(report.nodeid)
        if ran != "returned":
            what = "raised" if ran == "ran" else "never ran"
            _send("tamper", what=[f"{report.nodeid}: its function {what}, its report says passed"])
        elif not _still_calls(report.nodeid):
            _send("tamper", what=[f"{report.nodeid}: the plugin's wrapper was made to call "
                                  "something else"])  # fmt: skip
    _send("report", id=report.nodeid, when=report.when, outcome=report.outcome)


def pytest_runtest_logfinish(nodeid, location):
    _check()
    _check_item(nodeid)
    loose = _loose_comparisons() if _loose_comparisons is not None else []
    if loose:
        _send("tamper", what=[f"{nodeid}: a class the patch changed compares as a library's "
                              f"class does: {', '.join(loose[:3])}"])  # fmt: skip
    _send("finish", id=nodeid)


def pytest_sessionfinish(session, exitstatus):
    _check()
    _send("end", status=int(exitstatus))
