"""perfgym: loads a PerfCodeBench Python solution for its harness and calls it on a thread of
its own, handing the harness back only plain builtin values (docs/security.md, section 6b).

The wrapper (perfgym_trailer.py) imports this module before the harness runs, keeps it out of
sys.modules, and points the harness at perfgym_solution.py, a shim that asks this module for
the solution's names. Why a thread: the harness computes its answer before it calls the
solution, in a local of its own frame; a solution running on the harness's thread reaches that
frame (sys._getframe(1), a traceback's tb_frame.f_back) and can return the answer without the
work. On a thread of its own, every frame the solution can walk ends at that thread's start.
An audit hook, armed before the solution is imported, ends the run (exit status 86: a crash,
never OK) on the other ways to reach the harness's thread: frames taken on it (sys._getframe,
tb_frame, gi_frame, cr_frame, ag_frame, sys.settrace/setprofile there, from a solution's
__del__ or gc callback running on it), every thread's frames (sys._current_frames), the
collector's object lists (gc.get_objects/get_referrers/get_referents) and ctypes beyond loading
a library (numpy loads one). Why plain values: an object of the solution's own type (a list
subclass whose __eq__ is always True) passes the harness's `actual == expected`; a subclass of
a builtin is rebuilt as that builtin through the builtin's own methods, any other type is
replaced by a string no harness expects (a wrong answer).

The solution shares the process: whatever of this module it can reach it can change. The
harness may keep the shim module in a global, so what the harness's thread runs here is
reachable: bound methods (read-only) of functions that read no global name, hold no closure
and take no keyword-only default (a function's `__kwdefaults__` and closure cells can be
changed in place); what they use is a positional default (a tuple, bound when this module was
imported, before the solution; setting their `__defaults__` or `__code__` is refused) or the bound
tuple. The hook's on/off switch is a closure cell nothing the solution can reach holds
(tracing, which would show the hook's frame, is refused). The solution's thread runs a loop
whose only globals are the builtins: its locals are its two slots and its locks."""

import _signal
import _thread
import builtins
import importlib.util
import os
import signal
import sys
import threading  # noqa: F401 - imported here, on the harness's thread (see below)
import traceback
import types

# `threading` records the thread that first imports it as the main thread, and the interpreter's
# exit waits for that thread: first imported by a solution (on its own thread: a
# ThreadPoolExecutor, multiprocessing), a finished run never exited (red team round 7).

#: Exit status of a run the guard ended (the solution reached for the harness's state).
REFUSED_EXIT = 86
_REFUSED = "<perfgym: a result of a type that is not a plain builtin value: refused>"
_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})
#: Audit events refused on any thread once armed.
_ANYWHERE = frozenset({
    "sys._current_frames", "sys._current_exceptions", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys.settrace", "sys.setprofile", "sys._settraceallthreads",
    "sys._setprofileallthreads", "sys.monitoring.register_callback",
})  # fmt: skip
#: Refused on the harness's thread once armed: each hands out one of its frames.
_ON_MAIN = frozenset({"sys._getframe", "sys._getframemodulename"})
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_FUNC_ATTRS = frozenset({"__defaults__", "__kwdefaults__", "__code__"})


def _refuse(why, _write=os.write, _exit=os._exit, _code=REFUSED_EXIT):
    _write(2, b"perfgym: the solution reached for its harness's state (" + why.encode() + b")\n")
    _exit(_code)


def _install(main, files):
    """Add the audit hook (off until armed); return (arm, disarm). `files`: the code files of
    the guard and the wrapper (`co_filename`): no function defined there can be changed."""
    armed = [False]

    def hook(event, args, _armed=armed, _main=main, _get_ident=_thread.get_ident,
             _len=len, _refuse=_refuse, _anywhere=_ANYWHERE, _on_main=_ON_MAIN,
             _frame_attrs=_FRAME_ATTRS, _func_attrs=_FUNC_ATTRS, _id=id, _type=type,
             _function=types.FunctionType, _code_of=types.FunctionType.__code__.__get__,
             _files=frozenset(files),
             _own=frozenset(map(id, (_refuse, _plain, _handlers, _call, _attr,
                                     _serve_signal)))):  # fmt: skip
        if not _armed[0]:
            return
        if event in _anywhere or (event[:7] == "ctypes." and event != "ctypes.dlopen"):
            _refuse(event)
        elif event == "object.__setattr__" and _len(args) > 1 and args[1] in _func_attrs:
            # numpy's import sets other functions' defaults; none of the guard's or the
            # wrapper's may change (the harness's thread runs them: `on_worker`, reachable
            # through a shim the harness put in sys.modules, ran a solution's code there)
            if _id(args[0]) in _own or (
                _type(args[0]) is _function and _code_of(args[0]).co_filename in _files
            ):
                _refuse(event + " " + args[1] + " of the guard's own function")
        elif _get_ident() == _main and (
            event in _on_main
            or (event == "object.__getattr__" and _len(args) > 1 and args[1] in _frame_attrs)
        ):
            _refuse(event + " on the harness's thread")

    sys.addaudithook(hook)

    def arm(_armed=armed):
        _armed[0] = True

    def disarm(_armed=armed):
        _armed[0] = False

    return arm, disarm


# -- the solution's thread: a loop with no globals but the builtins (its slots and locks) ------
def _worker_loop(_go, _done, _job, _out, importlib, traceback):
    while True:
        _go.acquire()
        what, a, b, c = _job[0]
        _job[0] = None
        try:
            if what == "load":
                spec = importlib.util.spec_from_file_location(a, b)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                _out[0] = (True, module)
            elif what == "attr":
                _out[0] = (True, getattr(a, b))
            else:
                _out[0] = (True, a(*b, **c))
        except BaseException:  # noqa: BLE001 - the solution's: reported, the harness's error
            traceback.print_exc()
            _out[0] = (False, None)
        what = a = b = c = spec = module = None
        _done.release()


def _forward_signal(signalnum, handler, _sig=None, _done=None, _reply=None, _error=ValueError,
                    _enum=(signal.SIG_DFL, signal.SIG_IGN)):  # fmt: skip
    """`signal.signal` while the solution is imported (on its thread, where CPython refuses it):
    the request goes to the harness's thread, which sets SIG_DFL or SIG_IGN only. Built with
    no globals but the builtins (`_start_worker`); what it holds is the request slot and locks.
    Outside the import it fails at once, as CPython's does off the main thread."""
    if not _sig[2]:
        raise _error("signal only works in main thread of the main interpreter")
    _sig[0] = (signalnum, handler)
    _done.release()
    _reply.acquire()
    ok, previous = _sig[1]
    _sig[1] = None
    if not ok:
        raise _error(previous)
    return _enum[previous] if previous in (0, 1) else previous


def _serve_signal(req, loading, _type=type, _tuple=tuple, _len=len, _int=int,
                  _issubclass=issubclass, _set=_signal.signal, _dfl=signal.SIG_DFL,
                  _ign=signal.SIG_IGN, _errors=(ValueError, OSError, TypeError)):  # fmt: skip
    """On the harness's thread: a forwarded `signal.signal(num, handler)`; (ok, previous handler
    as 0/1, or None) or (False, why). Only while the solution is imported, and only SIG_DFL or
    SIG_IGN: a handler of the solution's would run on the harness's thread, with its frame (the
    common honest case is `signal.signal(SIGPIPE, SIG_DFL)` at import). No code of the
    solution's runs here: its objects are only typed, compared by identity or read as ints."""
    if not loading:
        return (False, "signal only works in main thread of the main interpreter")
    if _type(req) is not _tuple or _len(req) != 2:
        return (False, "a malformed signal request")
    num, handler = req
    if not _issubclass(_type(num), _int):
        return (False, "signal number must be an int")
    if handler is _dfl or (_type(handler) is _int and handler == 0):
        wanted = 0
    elif handler is _ign or (_type(handler) is _int and handler == 1):
        wanted = 1
    else:
        return (False, "perfgym: a solution may set only SIG_DFL or SIG_IGN while it is "
                "imported (its own handler would run on the harness's thread)")  # fmt: skip
    try:
        previous = _set(_int.__int__(num), wanted)
    except _errors as exc:
        return (False, _type(exc).__name__)
    return (True, previous if _type(previous) is _int else None)


def _start_worker():
    """A fresh solution thread; returns the harness's side of the hand-off and the solution's
    `signal.signal` for its import (`_forward_signal`)."""
    job, out, sig = [None], [None], [None, None, False]  # sig: request, reply, importing
    go, done, reply = _thread.allocate_lock(), _thread.allocate_lock(), _thread.allocate_lock()
    go.acquire()
    done.acquire()
    reply.acquire()
    loop = types.FunctionType(_worker_loop.__code__, {"__builtins__": builtins})
    _thread.start_new_thread(loop, (go, done, job, out, importlib, traceback))
    forward = types.FunctionType(
        _forward_signal.__code__,
        {"__builtins__": builtins},
        "signal",
        (sig, done, reply, *_forward_signal.__defaults__[3:]),
    )

    def on_worker(what, a, b=None, c=None, _job=job, _out=out, _go=go, _done=done, _sig=sig,
                  _reply=reply, _serve=_serve_signal, _error=RuntimeError):  # fmt: skip
        _job[0] = (what, a, b, c)
        _sig[2] = what == "load"
        _go.release()
        while True:  # the solution's thread is done, or asks for a signal disposition
            _done.acquire()
            req = _sig[0]
            if req is None:
                break
            _sig[0] = None
            _sig[1] = _serve(req, what == "load")
            _reply.release()
        _sig[2] = False
        ok, value = _out[0]
        _out[0] = None
        if not ok:
            raise _error("perfgym: the solution raised an exception (its traceback is above)")
        return value

    return on_worker, forward


# -- the harness's thread: no global names below (defaults only) ------------------------------
def _plain(x, rec, _type=type, _atoms=_ATOMS, _set=set, _map=map, _list=list,
           _tuple=tuple, _frozenset=frozenset, _dict=dict, _bytearray=bytearray,
           _issubclass=issubclass, _refused=_REFUSED, _int=int, _float=float, _str=str,
           _bytes=bytes, _complex=complex, _slice=slice, _getattr=getattr):  # fmt: skip
    """`x` as plain builtin values: exact builtins kept, builtin subclasses rebuilt through the
    builtin's own methods (never the subclass's), numpy's values through their `tolist()` (a
    numpy.int64 or an array: published solutions return them), anything else refused (`rec`:
    this function)."""
    t = _type(x)
    if t in _atoms or t is _bytearray:
        return x
    if t is _list or t is _tuple or t is _set or t is _frozenset:
        if _set(_map(_type, x)) <= _atoms:
            return x
        return t([rec(e, rec) for e in x])
    if t is _dict:
        if _set(_map(_type, x.keys())) <= _atoms and _set(_map(_type, x.values())) <= _atoms:
            return x
        return {rec(k, rec): rec(v, rec) for k, v in x.items()}
    if _issubclass(t, _int):  # bool cannot be subclassed
        return _int.__int__(x)
    if _issubclass(t, _float):
        return _float.__float__(x)
    if _issubclass(t, _str):
        return _str.__str__(x)
    if _issubclass(t, _bytes):
        return _bytes.__getitem__(x, _slice(None))
    if _issubclass(t, _bytearray):
        return _bytearray.__getitem__(x, _slice(None))
    if _issubclass(t, _complex):
        return _complex(_complex.real.__get__(x), _complex.imag.__get__(x))
    if _issubclass(t, _list):
        return [rec(e, rec) for e in _list.__iter__(x)]
    if _issubclass(t, _tuple):
        return _tuple([rec(e, rec) for e in _tuple.__iter__(x)])
    if _issubclass(t, _dict):
        return {rec(k, rec): rec(v, rec) for k, v in _dict.items(x)}
    if _issubclass(t, _frozenset):
        return _frozenset([rec(e, rec) for e in _frozenset.__iter__(x)])
    if _issubclass(t, _set):
        return _set([rec(e, rec) for e in _set.__iter__(x)])
    if _str(_getattr(t, "__module__", "")).partition(".")[0] == "numpy":
        # What `tolist()` returns is made plain in turn: whatever it is (numpy's own method, or
        # a solution's class posing as numpy's), only builtin values reach the harness, and the
        # call runs inside the harness's clock on its thread, under the audit hook.
        to_list = _getattr(x, "tolist", None)
        if to_list is not None:
            y = to_list()
            if _type(y) is not t:
                return rec(y, rec)
    return _refused


def _handlers(_tuple=tuple, _map=map, _get=signal.getsignal,
              _signals=tuple(sorted(signal.valid_signals()))):  # fmt: skip
    return _tuple(_map(_get, _signals))


def _call(state, *args, **kwargs):
    """The harness's call of one of the solution's callables (`state`: see `_attr`)."""
    fn, on_worker, was, plain, handlers, refuse = state
    if handlers() != was:
        refuse("a signal handler set on the harness's thread")
    value = plain(on_worker("call", fn, args, kwargs), plain)
    if handlers() != was:
        refuse("a signal handler set on the harness's thread")
    return value


def _attr(state, name, _callable=callable, _method=types.MethodType, _call=_call):
    """The shim's `__getattr__`: the solution's `name`, a callable bound to `_call`, or a value
    made plain. `state`: (solution module, its thread's hand-off, the signal handlers at load,
    `_plain`, `_handlers`, `_refuse`)."""
    module, on_worker, was, plain, handlers, refuse = state
    value = on_worker("attr", module, name)
    if _callable(value):
        return _method(_call, (value, on_worker, was, plain, handlers, refuse))
    return plain(value, plain)


def _loader(arm):
    """The shim's `load(name, path)`: arms the hook, imports the solution on its own thread and
    returns the shim's `__getattr__`, the harness's view of the solution's names."""

    def load(name, path, _arm=arm, _handlers=_handlers, _start=_start_worker, _plain=_plain,
             _refuse=_refuse, _method=types.MethodType, _attr=_attr, _module=signal,
             _real=signal.signal):  # fmt: skip
        _arm()
        on_worker, forward = _start()
        _module.signal = forward  # while it is imported: SIG_DFL/SIG_IGN reach the harness's thread
        try:
            module = on_worker("load", name, path)
        finally:
            _module.signal = _real
        was = _handlers()  # the dispositions it set: any change after this ends the run
        return _method(_attr, (module, on_worker, was, _plain, _handlers, _refuse))

    return load


def install():
    """Called by the wrapper on the harness's thread before the harness runs: the audit hook
    (off), and (the shim's `load`, `disarm`)."""
    files = {_refuse.__code__.co_filename, sys._getframe(1).f_code.co_filename}  # the wrapper's
    arm, disarm = _install(_thread.get_ident(), files)
    return _loader(arm), disarm
