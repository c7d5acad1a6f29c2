"""The probe registry: kind + name + factory, as the rewards' (`register_probe`, `get_probe`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from perfgym.audit.results import ProbeKind, ProbeResult
from perfgym.errors import ConfigError

if TYPE_CHECKING:
    from perfgym.audit.context import AuditContext, ProbeRun

#: The programs a gameability probe asks judged for a task (raises `NotWritable` when none).
Programs = Callable[["AuditContext"], list[str]]
#: A probe's result from the task's context and its programs' runs (in `Programs`' order).
Assess = Callable[["AuditContext", Sequence["ProbeRun"]], ProbeResult]


@dataclass(frozen=True)
class Probe:
    """One probe: its programs (none for a measurability probe) and how it reads them."""

    name: str
    kind: ProbeKind
    doc: str
    assess: Assess
    programs: Programs = field(default=lambda _ctx: [])
    #: False for a gameability check that judges no program (`hidden_draws`).
    writes_programs: bool = True


Factory = Callable[[], Probe]
_REGISTRY: dict[str, Factory] = {}


def register_probe(name: str, kind: ProbeKind) -> Callable[[Factory], Factory]:
    """Register a probe factory under `name`; the factory's probe must carry that name and kind."""

    def decorate(factory: Factory) -> Factory:
        if name in _REGISTRY:
            raise ConfigError(f"a probe named {name!r} is already registered")

        def made() -> Probe:
            probe = factory()
            if probe.name != name or probe.kind is not kind:
                raise ConfigError(
                    f"probe factory {name!r} made {probe.name!r} ({probe.kind.value})"
                )
            return probe

        _REGISTRY[name] = made
        return made

    return decorate


def _load() -> None:
    # the built-in probes register themselves on import
    import importlib

    import perfgym.audit.gameability  # noqa: F401
    import perfgym.audit.measurability  # noqa: F401

    importlib.import_module("perfgym.audit.hidden_draws")  # after the programs' probes
    importlib.import_module("perfgym.audit.honest_copies")  # after measurability's, in tables


def _ordered() -> list[tuple[str, Factory]]:
    """The registry, gameability probes first, each kind in registration order (whichever
    probe module was imported first)."""
    _load()
    kinds = list(ProbeKind)
    rows = [(n, f, f().kind) for n, f in _REGISTRY.items()]
    return [(n, f) for n, f, _k in sorted(rows, key=lambda r: kinds.index(r[2]))]


def list_probes(kind: ProbeKind | None = None) -> list[str]:
    """Names of the registered probes (of `kind`), gameability first."""
    return [n for n, f in _ordered() if kind is None or f().kind is kind]


def get_probe(name: str) -> Probe:
    _load()
    try:
        return _REGISTRY[name]()
    except KeyError:
        known = ", ".join(_REGISTRY)
        raise ConfigError(f"no probe named {name!r}; registered: {known}") from None


def select_probes(names: Sequence[str] | None) -> list[Probe]:
    """The probes named (each once, in the registry's order), or every probe for None/[].
    A name may be a kind ('gameability', 'measurability'): every probe of it."""
    _load()
    if not names:
        return [f() for _n, f in _ordered()]
    wanted: set[str] = set()
    for raw in names:
        for name in (n.strip() for n in raw.split(",")):
            if not name:
                continue
            if name in (k.value for k in ProbeKind):
                wanted.update(list_probes(ProbeKind(name)))
            elif name in _REGISTRY:
                wanted.add(name)
            else:
                raise ConfigError(f"no probe named {name!r} (perfgym audit --list-probes "
                                  "lists them; a kind names all of its probes: gameability, "
                                  "measurability)")  # fmt: skip
    return [f() for n, f in _ordered() if n in wanted]
