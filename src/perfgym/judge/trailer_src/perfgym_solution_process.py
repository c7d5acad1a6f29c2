"""perfgym: the process a PerfCodeBench Python solution runs in, apart from its harness's
(perfgym_guard.py starts it; docs/security.md, section 6b).

argv: NAME SOLUTION_PATH -- HARNESS_ARGV... . fd 3 brings requests, fd 4 takes replies (8-byte
length, then a pickle). The solution is imported as module NAME on this process's main thread,
then each request reads a name or calls a callable; results are made plain builtin values here
(`plain`) and sent as a pickle. Nothing here is trusted by the harness: the solution can change
any of it, and the harness decodes what comes back accepting plain values only.
"""

import importlib.util
import os
import pickle
import sys
import traceback

_ATOMS = frozenset({int, float, complex, str, bytes, bool, type(None)})
_REFUSED = "<perfgym: a result of a type that is not a plain builtin value: refused>"
_HEADER = 8


def plain(x):
    """`x` as plain builtin values: exact builtins kept, builtin subclasses rebuilt through the
    builtin's own methods, numpy's values through their `tolist()` (published solutions return
    numpy.int64s and arrays), anything else refused (a wrong answer, never an error)."""
    t = type(x)
    if t in _ATOMS or t is bytearray:
        return x
    if t is list or t is tuple or t is set or t is frozenset:
        if set(map(type, x)) <= _ATOMS:
            return x
        return t([plain(e) for e in x])
    if t is dict:
        if set(map(type, x.keys())) <= _ATOMS and set(map(type, x.values())) <= _ATOMS:
            return x
        return {plain(k): plain(v) for k, v in x.items()}
    if issubclass(t, int):
        return int.__int__(x)
    if issubclass(t, float):
        return float.__float__(x)
    if issubclass(t, str):
        return str.__str__(x)
    if issubclass(t, bytes):
        return bytes.__getitem__(x, slice(None))
    if issubclass(t, bytearray):
        return bytearray.__getitem__(x, slice(None))
    if issubclass(t, complex):
        return complex(complex.real.__get__(x), complex.imag.__get__(x))
    if issubclass(t, list):
        return [plain(e) for e in list.__iter__(x)]
    if issubclass(t, tuple):
        return tuple([plain(e) for e in tuple.__iter__(x)])
    if issubclass(t, dict):
        return {plain(k): plain(v) for k, v in dict.items(x)}
    if issubclass(t, frozenset):
        return frozenset([plain(e) for e in frozenset.__iter__(x)])
    if issubclass(t, set):
        return set([plain(e) for e in set.__iter__(x)])
    if str(getattr(t, "__module__", "")).partition(".")[0] == "numpy":
        to_list = getattr(x, "tolist", None)
        if to_list is not None:
            y = to_list()
            if type(y) is not t:
                return plain(y)
    return _REFUSED


def _copier(x):
    """A function giving a fresh copy of `x` as it is now (the harness found a shallow copy of
    each argument a whole one: it cannot change, or holds only values that cannot)."""
    t = type(x)
    if t is list or t is set or t is dict or t is bytearray:
        return lambda: t(x)
    return lambda: x


def _keeper(args, kwargs):
    """A function giving fresh (args, kwargs) equal to these."""
    copies = [_copier(a) for a in args]
    kw = {k: _copier(v) for k, v in kwargs.items()}
    return lambda: (tuple(c() for c in copies), {k: c() for k, c in kw.items()})


def _read_exact(n):
    chunks, left = [], n
    while left:
        chunk = os.read(3, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _send(what, value=None, kept=False):
    try:
        data = pickle.dumps((what, value, kept), 5)
    except Exception:  # noqa: BLE001 - a value plain() kept that still cannot be pickled
        traceback.print_exc()
        data = pickle.dumps(("error", None, False), 5)
    data = len(data).to_bytes(_HEADER, "little") + data
    view = memoryview(data)
    while view:
        view = view[os.write(4, view) :]


def main():
    path = sys.argv[2]  # argv[1]: the module name, also in the load request
    sys.argv[:] = sys.argv[4:]  # the harness's own argv, as a program's would be
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv else ""
    os.set_inheritable(3, False)
    os.set_inheritable(4, False)
    module = None
    kept = None  # (the last call's argument bytes' fresh copier)
    while True:
        head = _read_exact(_HEADER)
        if head is None:
            return
        request = _read_exact(int.from_bytes(head, "little"))
        if request is None:
            return
        op, what, data, whole = pickle.loads(request)
        try:
            if op == "load":
                spec = importlib.util.spec_from_file_location(what, path)
                assert spec is not None and spec.loader is not None, path
                module = importlib.util.module_from_spec(spec)
                sys.modules[what] = module  # pickling its functions (a fork Pool) finds it
                spec.loader.exec_module(module)
                _send("loaded")
            elif op == "attr":
                try:
                    value = getattr(module, what)
                except AttributeError:
                    _send("missing")
                    continue
                _send("callable" if callable(value) else "value",
                      None if callable(value) else plain(value))  # fmt: skip
            else:
                if op == "again" and kept is not None:
                    args, kwargs = kept()
                else:
                    args, kwargs = pickle.loads(data)
                    kept = _keeper(args, kwargs) if whole is True else None
                    if kept is not None:
                        args, kwargs = kept()  # the kept ones stay as they came
                fn = getattr(module, what)
                result = plain(fn(*args, **kwargs))
                args = kwargs = None
                _send("value", result, kept is not None)
        except BaseException:  # noqa: BLE001 - the solution's: reported, the harness's error
            traceback.print_exc()
            sys.stderr.flush()
            _send("error")


if __name__ == "__main__":
    main()
