"""What the outcome plugin checks of classes in the tests' process (stdlib only; shipped beside
it as `perfgym_class_watch`): pytest's checking classes made immutable (`freeze`), and after each
test the classes of files the patch changed that compare as a library's class does
(`LooseComparisons`)."""

import os
import sys


def unwrapped(value):
    for name in ("fget", "__func__", "__wrapped__"):
        value = getattr(value, name, None) or value
    return value


def freeze(classes):
    """The test runner's report and call classes made immutable types, as a C extension's own
    are: `TestReport.__init__ = ...` (or any attribute set on them) raises TypeError. Polling
    misses a class patched during one test's call and put back before the next check (red team
    helper-111's CallInfo.__init__, which dropped a failed call's exception); no audit event is
    raised for setting a class's attribute. Done through the type's flags word, whose offset is
    found and proven on a class made here for it (the flag set there, read back, and an attribute
    set refused), then `PyType_Modified`; nothing is written when that proof fails."""
    import ctypes

    immutable = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
    probe = type("_PerfgymProbe", (), {})
    word_size = ctypes.sizeof(ctypes.c_ulong)
    offset = next((o for o in range(3 * word_size, 512, word_size)
                   if ctypes.c_ulong.from_address(id(probe) + o).value == probe.__flags__), None)  # fmt: skip
    if offset is None:
        return
    word = ctypes.c_ulong.from_address(id(probe) + offset)
    word.value |= immutable
    ctypes.pythonapi.PyType_Modified(ctypes.py_object(probe))
    try:
        probe.x = 1
        return  # not refused: the word was not the flags
    except TypeError:
        pass
    for cls in classes:
        word = ctypes.c_ulong.from_address(id(cls) + offset)
        if word.value == cls.__flags__:
            word.value |= immutable
            ctypes.pythonapi.PyType_Modified(ctypes.py_object(cls))


#: How a value answers a test's `==`, `<` or `assert value`.
COMPARING = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__")


def live_classes():
    """Every class alive now, through the subclass lists from `object` down."""
    seen, todo, out = set(), [object], []
    while todo:
        try:
            subs = type.__subclasses__(todo.pop())
        except TypeError:  # `type` itself takes an argument here
            continue
        for sub in subs:
            if id(sub) not in seen:
                seen.add(id(sub))
                todo.append(sub)
                out.append(sub)
    return out


class LooseComparisons:
    """Classes of files the patch changed whose comparison comes from a library's class (red
    team helper-114 and helper-115: a list subclass of `unittest.mock._ANY`, whose `==` is always
    true, and of `email.charset.Charset`, whose `==` compares `str()`s): what a test's `==`
    checks is then that library's idea, not the package's. A builtin's or the repository's own
    comparisons are the package's (the static checks read the patch's). `repo` is the copy's
    root with a trailing slash; `trusted(path)` says a file is a library's or the original's."""

    def __init__(self, repo, trusted):
        self.repo = repo
        self.trusted = trusted
        self.seen = set()
        #: id(class) -> (the class, the repository file one of its own functions was compiled
        #: from or None); the class is kept, so an id is never a later class's.
        self.written = {}

    def written_in(self, cls, real=os.path.realpath):
        entry = self.written.get(id(cls))
        if entry is None or entry[0] is not cls:
            home = None
            try:
                values = list(vars(cls).values())
            except TypeError:
                values = []
            for value in values:
                code = getattr(unwrapped(value), "__code__", None)
                filename = getattr(code, "co_filename", None)
                if (isinstance(filename, str) and os.path.isabs(filename)
                        and real(filename).startswith(self.repo)):  # fmt: skip
                    # generated code (a dataclass's `__eq__`) names no file: `<string>`
                    home = real(filename)
                    break
            entry = self.written[id(cls)] = (cls, home)
        return entry[1]

    def __call__(self):
        found = []
        modules = sys.modules
        resolved = {}

        def real(path):
            """`os.path.realpath`, once per path in this check (a few hundred modules' files
            among thousands of classes: resolving each class's took 0.45 s a test)."""
            got = resolved.get(path)
            if got is None:
                got = resolved[path] = os.path.realpath(path)
            return got

        for cls in live_classes():
            if id(cls) in self.seen:
                continue
            module = modules.get(getattr(cls, "__module__", None) or "")
            where = getattr(module, "__file__", None)
            if not isinstance(where, str) or not real(where).startswith(self.repo):
                # a class may claim any module (`__module__ = "email.charset"`); its own
                # functions were compiled where it was written
                where = self.written_in(cls, real)
                if where is None:
                    continue
            if self.trusted(where):
                continue
            for name in COMPARING:
                owner = next((k for k in cls.__mro__ if name in vars(k)), None)
                if owner is None or owner is object or owner.__module__ == "builtins":
                    continue
                origin = modules.get(owner.__module__)
                home = getattr(origin, "__file__", None)
                if isinstance(home, str) and real(home).startswith(self.repo):
                    continue
                self.seen.add(id(cls))
                found.append(
                    f"{cls.__qualname__}.{name} is {owner.__module__}.{owner.__qualname__}'s"
                )
                break
        return found
