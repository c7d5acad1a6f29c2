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
__del__ or gc callback running on it), a frame of its stack read on any thread (a traceback
such a __del__ kept and handed over), every thread's frames (sys._current_frames), the
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
whose only globals are the builtins: its locals are its job, answer and graves lists and its
locks, all reachable by the solution (its own frames). So the harness's thread only appends
to and pops from them, checks the answer's type before unpacking it, and never lets go of
anything of the solution's: its answers wait in the graves list until that thread's next job
(a __del__ runs there, not on the harness's thread); numpy values are turned into lists on
the solution's thread too. The import's `signal.signal` requests reach the harness's thread
as bytes through a pipe."""

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
#: Their ids: a set of a value's types is checked by id, never by hashing a type (a class of
#: the solution's own metaclass has a `__hash__` of its own, which would run on the harness's
#: thread).
_ATOM_IDS = frozenset(map(id, _ATOMS))
#: Audit events refused on any thread once armed.
_ANYWHERE = frozenset({
    "sys._current_frames", "sys._current_exceptions", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys.settrace", "sys.setprofile", "sys._settraceallthreads",
    "sys._setprofileallthreads", "sys.monitoring.register_callback",
    "sys.addaudithook",  # a hook of the solution's would run on the harness's thread
})  # fmt: skip
#: Refused on the harness's thread once armed: each hands out one of its frames.
_ON_MAIN = frozenset({"sys._getframe", "sys._getframemodulename"})
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_FUNC_ATTRS = frozenset({"__defaults__", "__kwdefaults__", "__code__"})


def _refuse(why, _write=os.write, _exit=os._exit, _code=REFUSED_EXIT):
    _write(2, b"perfgym: the solution reached for its harness's state (" + why.encode() + b")\n")
    _exit(_code)


def _install(main, files, bottom):
    """Add the audit hook (off until armed); return (arm, disarm). `files`: the code files of
    the guard and the wrapper (`co_filename`): no function defined there can be changed.
    `bottom`: the harness's thread's first frame: a frame above it is that thread's, whichever
    thread reads it (code of the solution's run there, a collector's __del__, could hand a
    traceback to its own thread, which read `tb_frame` unrefused)."""
    armed = [False]
    inside = set()  # threads reading a frame for the hook (the read is audited too)

    def hook(event, args, _armed=armed, _main=main, _get_ident=_thread.get_ident,
             _len=len, _refuse=_refuse, _anywhere=_ANYWHERE, _on_main=_ON_MAIN,
             _frame_attrs=_FRAME_ATTRS, _func_attrs=_FUNC_ATTRS, _id=id, _type=type,
             _function=types.FunctionType, _code_of=types.FunctionType.__code__.__get__,
             _files=frozenset(files), _bottom=bottom, _inside=inside, _getattr=getattr,
             _own=frozenset(map(id, (_refuse, _plain, _handlers, _call, _attr,
                                     _serve_signals, _made_plain)))):  # fmt: skip
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
        elif event == "object.__getattr__" and _len(args) > 1 and args[1] in _frame_attrs:
            ident = _get_ident()
            if ident in _inside:
                return
            _inside.add(ident)
            try:
                f = _getattr(args[0], args[1])
                while f is not None:
                    if f is _bottom:
                        _refuse(event + " " + args[1] + ": a frame of the harness's thread")
                    f = f.f_back
            finally:
                _inside.discard(ident)

    sys.addaudithook(hook)

    def arm(_armed=armed):
        _armed[0] = True

    def disarm(_armed=armed):
        _armed[0] = False

    return arm, disarm


# -- the solution's thread: a loop with no globals but the builtins ------------------------------
def _worker_loop(_go, _done, _job, _out, importlib, traceback, _graves, _numpy, _wake, _write):
    while True:
        _go.acquire()
        # What the harness's thread was handed is let go here, on this thread: a __del__ of the
        # solution's never runs on the harness's (it could hand a frame of it to this one).
        _graves.clear()
        what, a, b, c = _job.pop()
        try:
            if what == "load":
                spec = importlib.util.spec_from_file_location(a, b)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                _out.append((True, module))
            elif what == "attr":
                _out.append((True, getattr(a, b)))
            elif what == "numpy":
                _out.append((True, _numpy(a, _numpy)))
            else:
                _out.append((True, a(*b, **c)))
        except BaseException as exc:  # noqa: BLE001 - the solution's: reported, and raised
            traceback.print_exc()  # to the harness as a builtin exception of its type, if one
            try:
                message = str(exc)
            except BaseException:  # noqa: BLE001
                message = ""
            _out.append((False, (type(exc), message)))
        loaded = what == "load"
        what = a = b = c = spec = module = None
        _done.release()
        if loaded:
            _write(_wake, b"\0\0")  # the harness's thread waits on its signal pipe then


def _numpy_values(x, rec, _type=type, _str=str, _getattr=getattr, _list=list, _tuple=tuple,
                  _dict=dict, _set=set, _frozenset=frozenset):  # fmt: skip
    """On the solution's thread (a job of its own, asked for only when the harness's thread met
    one): numpy's values as their `tolist()` (published solutions return numpy.int64s and
    arrays), through exact lists, tuples, dicts and sets. Whatever `tolist()` is (numpy's, or a
    solution's class posing as numpy's), it runs here, never on the harness's thread, and what
    it returns is made plain there, with numpy's values refused this time."""
    t = _type(x)
    if t is _list or t is _tuple or t is _set or t is _frozenset:
        return t([rec(e, rec) for e in x])
    if t is _dict:
        return {rec(k, rec): rec(v, rec) for k, v in x.items()}
    if _str(_getattr(t, "__module__", "")).partition(".")[0] == "numpy":
        to_list = _getattr(x, "tolist", None)
        if to_list is not None:
            y = to_list()
            if _type(y) is not t:
                return rec(y, rec)
    return x


def _forward_signal(signalnum, handler, _req=-1, _rep=-1, _write=os.write, _read=os.read,
                    _type=type, _int=int, _issubclass=issubclass, _bytes=bytes, _len=len,
                    _error=ValueError, _dfl=signal.SIG_DFL, _ign=signal.SIG_IGN):  # fmt: skip
    """`signal.signal` while the solution is imported (on its thread, where CPython refuses it):
    SIG_DFL or SIG_IGN for a signal, as two bytes through a pipe to the harness's thread, which
    sets it and answers through another. Nothing of the solution's reaches that thread: no
    object, only the bytes. A handler of the solution's own is refused (it would run on the
    harness's thread, handed its frame); after the import the answer pipe is closed and this
    fails as CPython's does off the main thread. Built with no globals but the builtins."""
    if not _issubclass(_type(signalnum), _int):
        raise TypeError("signal number must be an int")
    num = _int.__int__(signalnum)
    if handler is _dfl or (_type(handler) is _int and handler == 0):
        wanted = 0
    elif handler is _ign or (_type(handler) is _int and handler == 1):
        wanted = 1
    else:
        raise _error("perfgym: a solution may set only SIG_DFL or SIG_IGN while it is imported "
                     "(its own handler would run on the harness's thread)")  # fmt: skip
    if not 0 < num < 256:
        raise _error("signal number out of range")
    _write(_req, _bytes((num, wanted)))
    got = _read(_rep, 2)
    if _len(got) != 2:
        raise _error("signal only works in main thread of the main interpreter")
    if got[0]:
        raise _error("signal number out of range or not settable")
    return (_dfl, _ign, None)[got[1]]


def _serve_signals(req, rep, _read=os.read, _write=os.write, _close=os.close, _len=len,
                   _set=_signal.signal, _int=int, _type=type,
                   _bytes=bytes, _error=RuntimeError):  # fmt: skip
    """On the harness's thread while the solution is imported: set what `_forward_signal` asks
    (two bytes: the signal, 0 for SIG_DFL or 1 for SIG_IGN), until the import's end (two zero
    bytes); then close the answer pipe. Only bytes are read: no code of the solution's runs."""
    try:
        while True:
            got = _read(req, 2)
            if _len(got) != 2:
                raise _error("perfgym: the solution's signal pipe broke")
            num, wanted = got[0], got[1]
            if num == 0:
                return
            ok = wanted in (0, 1)
            previous = None
            if ok:
                try:
                    previous = _set(num, wanted)
                except BaseException:  # noqa: BLE001 - any refusal is the request's
                    ok = False
            old = previous if _type(previous) is _int and previous in (0, 1) else 2
            _write(rep, _bytes((0 if ok else 1, old)))
    finally:
        _close(rep)


def _start_worker():
    """A fresh solution thread; returns the harness's side of the hand-off, and the solution's
    `signal.signal` for its import with the harness's ends of its two pipes."""
    job, out, graves = [], [], []
    go, done = _thread.allocate_lock(), _thread.allocate_lock()
    go.acquire()
    done.acquire()
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    loop = types.FunctionType(_worker_loop.__code__, {"__builtins__": builtins})
    numpy = types.FunctionType(_numpy_values.__code__, {"__builtins__": builtins}, "numpy",
                               _numpy_values.__defaults__)  # fmt: skip
    _thread.start_new_thread(
        loop, (go, done, job, out, importlib, traceback, graves, numpy, req_w, os.write)
    )
    forward = types.FunctionType(
        _forward_signal.__code__,
        {"__builtins__": builtins},
        "signal",
        (req_w, rep_r, *_forward_signal.__defaults__[2:]),
    )

    def on_worker(what, a, b=None, c=None, pipes=None, _job=job, _out=out, _go=go, _done=done,
                  _graves=graves, _type=type, _tuple=tuple, _bool=bool, _len=len, _str=str,
                  _serve=_serve_signals, _raised=_RERAISED, _error=RuntimeError):  # fmt: skip
        """Hand the solution's thread a job and wait for it. Its answer is kept in `_graves`
        until that thread's next job: the harness's thread never drops the last reference to
        anything of the solution's. Lists are only appended to and popped: nothing of the
        solution's is ever overwritten (and so dropped) here. `pipes`: the import's signal
        requests are served first (`_serve_signals`)."""
        _job.append((what, a, b, c))
        _go.release()
        if pipes is not None:
            _serve(*pipes)
        _done.acquire()
        res = _out.pop()
        _graves.append(res)
        if _type(res) is not _tuple or _len(res) != 2 or _type(res[0]) is not _bool:
            raise _error("perfgym: the solution's thread answered out of turn")
        if not res[0]:
            # A builtin exception class, matched by identity, raised anew with the message the
            # solution's thread made (an exact str): a harness expecting a ValueError gets one.
            info = res[1]
            if _type(info) is _tuple and _len(info) == 2 and _type(info[1]) is _str:
                for kind in _raised:
                    if kind is info[0]:
                        raise kind(info[1])
            raise _error("perfgym: the solution raised an exception (its traceback is above)")
        return res[1]

    return on_worker, forward, (req_r, rep_w)


# -- the harness's thread: no global names below (defaults only) ------------------------------
#: The solution's exceptions of these exact builtin types reach the harness as a fresh one of
#: the type with the same message (any other: a RuntimeError); a harness may expect them.
_RERAISED = (ValueError, TypeError, KeyError, IndexError, LookupError, ZeroDivisionError,
             ArithmeticError, OverflowError, AssertionError, NotImplementedError,
             RecursionError, AttributeError, EOFError, MemoryError, OSError, ImportError,
             ModuleNotFoundError, StopIteration, RuntimeError, Exception)  # fmt: skip

#: The solution's callables the harness was handed, for the process's life (see `_attr`).
_KEPT = []


#: Raised by `_plain` at a numpy value (the value goes back to the solution's thread): a builtin
#: class nothing else there raises (the wrapper's files run without perfgym, so no class of
#: its own error tree can be used).
_TO_LIST = StopAsyncIteration


def _plain(x, rec, _type=type, _enum_type=type(signal.Signals), _ids=_ATOM_IDS, _id=id, _set=set, _map=map, _list=list,
           _tuple=tuple, _frozenset=frozenset, _dict=dict, _bytearray=bytearray,
           _issubclass=issubclass, _refused=_REFUSED, _int=int, _float=float, _str=str,
           _bytes=bytes, _complex=complex, _slice=slice, _getattr=getattr,
           _to_list=_TO_LIST, _numpy_ok=True):  # fmt: skip
    """`x` as plain builtin values: exact builtins kept, builtin subclasses rebuilt through the
    builtin's own methods (never the subclass's), anything else refused (`rec`: this function,
    or `_plain_after_numpy`). A value of numpy's raises `_TO_LIST`: see `_made_plain`. Nothing
    of a value's type is hashed, compared or looked up through its metaclass: a class whose
    metaclass is not `type` (or the standard library's enum metaclass, an IntEnum's) is
    refused first (helper-49: a metaclass `__hash__` ran here)."""
    t = _type(x)
    if _type(t) is not _type and _type(t) is not _enum_type:
        return _refused
    if _id(t) in _ids or t is _bytearray:
        return x
    if t is _list or t is _tuple or t is _set or t is _frozenset:
        if _set(_map(_id, _map(_type, x))) <= _ids:
            return x
        return t([rec(e, rec) for e in x])
    if t is _dict:
        if (
            _set(_map(_id, _map(_type, x.keys()))) <= _ids
            and _set(_map(_id, _map(_type, x.values()))) <= _ids
        ):
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
    module = _getattr(t, "__module__", "")  # the class's own entry: an object of any kind
    if _type(module) is _str and module.partition(".")[0] == "numpy" and _numpy_ok:
        # numpy's values (published solutions return them) are turned into lists on the
        # solution's thread (`_numpy_values`), never by a call on this one; then made plain
        # again, where they are refused (`_plain_after_numpy`)
        raise _to_list
    return _refused


_plain_after_numpy = types.FunctionType(
    _plain.__code__, globals(), "_plain_after_numpy", (*_plain.__defaults__[:-1], False)
)


def _made_plain(value, on_worker, plain, _to_list=_TO_LIST, _after=_plain_after_numpy):
    """`value` as plain builtins; with numpy's values in it, those are first turned into lists
    on the solution's thread (a job of its own), and anything numpy-like left is refused."""
    try:
        return plain(value, plain)
    except _to_list:
        return _after(on_worker("numpy", value), _after)


def _handlers(_tuple=tuple, _map=map, _get=signal.getsignal,
              _signals=tuple(sorted(signal.valid_signals()))):  # fmt: skip
    return _tuple(_map(_get, _signals))


def _call(state, *args, _made_plain=_made_plain, **kwargs):
    """The harness's call of one of the solution's callables (`state`: see `_attr`)."""
    fn, on_worker, was, plain, handlers, refuse = state
    if handlers() != was:
        refuse("a signal handler set on the harness's thread")
    value = _made_plain(on_worker("call", fn, args, kwargs), on_worker, plain)
    if handlers() != was:
        refuse("a signal handler set on the harness's thread")
    return value


def _attr(
    state,
    name,
    _callable=callable,
    _method=types.MethodType,
    _call=_call,
    _made_plain=_made_plain,
    _kept=_KEPT,
):
    """The shim's `__getattr__`: the solution's `name`, a callable bound to `_call`, or a value
    made plain. `state`: (solution module, its thread's hand-off, the signal handlers at load,
    `_plain`, `_handlers`, `_refuse`)."""
    module, on_worker, was, plain, handlers, refuse = state
    value = on_worker("attr", module, name)
    if _callable(value):
        # held for the process's life: the harness letting go of the bound method must not
        # drop the solution's callable (an object with a __del__) on its thread
        _kept.append(value)
        return _method(_call, (value, on_worker, was, plain, handlers, refuse))
    return _made_plain(value, on_worker, plain)


def _loader(arm):
    """The shim's `load(name, path)`: arms the hook, imports the solution on its own thread and
    returns the shim's `__getattr__`, the harness's view of the solution's names."""

    def load(name, path, _arm=arm, _handlers=_handlers, _start=_start_worker, _plain=_plain,
             _refuse=_refuse, _method=types.MethodType, _attr=_attr, _module=signal,
             _real=signal.signal):  # fmt: skip
        _arm()
        on_worker, forward, (req, rep) = _start()
        _module.signal = forward  # while it is imported: SIG_DFL/SIG_IGN reach the harness's thread
        try:
            # The import is the solution thread's first job; this thread serves its signal
            # requests meanwhile (bytes only), then takes the job's answer as for any other.
            module = on_worker("load", name, path, None, (req, rep))
        finally:
            _module.signal = _real
        was = _handlers()  # the dispositions it set: any change after this ends the run
        return _method(_attr, (module, on_worker, was, _plain, _handlers, _refuse))

    return load


def install():
    """Called by the wrapper on the harness's thread before the harness runs: the audit hook
    (off), and (the shim's `load`, `disarm`)."""
    files = {_refuse.__code__.co_filename, sys._getframe(1).f_code.co_filename}  # the wrapper's
    bottom = sys._getframe(1)
    while bottom.f_back is not None:
        bottom = bottom.f_back
    arm, disarm = _install(_thread.get_ident(), files, bottom)
    return _loader(arm), disarm
