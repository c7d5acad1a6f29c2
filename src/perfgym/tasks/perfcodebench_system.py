"""PerfCodeBench's external libraries from the system's Debian packages, where they are packaged.

A published recipe compiles a library's sources from `{root}/external/<lib>/` and adds its
`-I` folder. When the located external folder (perfcodebench_external.py) has no `<lib>/`
but the system has the library's Debian -dev package installed (`scripts/setup pcb`), the
recipe is rewritten: the library's sources and `-I` flags under `external/<lib>` are dropped
and the installed shared library is linked instead (header-only libraries need nothing more).
A library present under the external folder always wins (the user's own, pinned copy).
The packaged version is recorded in the task's metadata (`system_libraries`); PerfCodeBench
pins no versions (its `external/` folder is not published), so the harness is the judge:
an old packaged API that breaks a task fails its build, reported per task, never forced.
simdutf, yyjson and is_utf8 are not packaged: those tasks need `--external DIR`.
`PERFGYM_PCB_SYSTEM_LIBS=0` turns the swap off (only the external folder counts).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from perfgym.errors import ConfigError
from perfgym.tasks.task import BuildSpec

_LIB_DIRS = (
    Path("/usr/lib/x86_64-linux-gnu"),
    Path("/usr/lib/aarch64-linux-gnu"),
    Path("/usr/lib"),
)
SYSTEM_ENV = "PERFGYM_PCB_SYSTEM_LIBS"
_EXTERNAL_REF = re.compile(r"\{root\}/external/([A-Za-z0-9_.-]+)")


class SystemLibrary(BaseModel):
    """One PerfCodeBench external library as a Debian package provides it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    folder: str  # the name under external/
    package: str  # the Debian -dev package
    header: str  # a header under /usr/include whose presence says it is installed
    link: str | None = None  # the shared library's base name (libX.so), None: header-only
    include_dirs: tuple[str, ...] = ()  # extra -I folders the quoted includes need


#: The libraries Debian packages (bookworm); simdutf, yyjson and is_utf8 are not among them.
SYSTEM_LIBRARIES: dict[str, SystemLibrary] = {
    lib.folder: lib
    for lib in (
        SystemLibrary(folder="xxhash", package="libxxhash-dev", header="xxhash.h", link="xxhash"),
        SystemLibrary(
            folder="nlohmann_json", package="nlohmann-json3-dev", header="nlohmann/json.hpp"
        ),  # fmt: skip
        SystemLibrary(
            folder="rapidjson_src", package="rapidjson-dev", header="rapidjson/document.h"
        ),  # fmt: skip
        SystemLibrary(folder="zstd", package="libzstd-dev", header="zstd.h", link="zstd"),
        SystemLibrary(folder="lz4", package="liblz4-dev", header="lz4hc.h", link="lz4"),
        SystemLibrary(
            folder="simdjson", package="libsimdjson-dev", header="simdjson.h", link="simdjson"
        ),  # fmt: skip
        SystemLibrary(folder="highway", package="libhwy-dev", header="hwy/highway.h", link="hwy"),
        SystemLibrary(
            folder="croaring_amalg",
            package="libroaring-dev",
            header="roaring/roaring.h",
            link="roaring",
            include_dirs=("/usr/include/roaring",),
        ),  # fmt: skip
        SystemLibrary(
            folder="fast_float", package="libfast-float-dev", header="fast_float/fast_float.h"
        ),  # fmt: skip
    )
}
#: Not packaged here: the user supplies them under `--external DIR` (docs/perfcodebench.md).
USER_SUPPLIED = ("simdutf", "yyjson", "is_utf8")
PACKAGES = tuple(lib.package for lib in SYSTEM_LIBRARIES.values())


def _shared_object(name: str) -> Path | None:
    for d in _LIB_DIRS:
        if (d / f"lib{name}.so").exists():
            return d / f"lib{name}.so"
    return None


@cache
def installed(folder: str) -> tuple[str, str | None] | None:
    """(package, version) when `folder`'s library is installed here, else None."""
    lib = SYSTEM_LIBRARIES.get(folder)
    if lib is None or not (Path("/usr/include") / lib.header).is_file():
        return None
    if lib.link is not None and _shared_object(lib.link) is None:
        return None
    return lib.package, _version(lib.package)


def _version(package: str) -> str | None:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                             capture_output=True, text=True, timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _without_includes(flags: list[str], mine: Callable[[str], bool]) -> list[str]:
    """`flags` less every `-IDIR` / `-I DIR` whose DIR is `mine`."""
    out: list[str] = []
    for f in flags:
        if out and out[-1] == "-I" and mine(f):
            out.pop()
        elif not (f.startswith("-I") and mine(f[2:])):
            out.append(f)
    return out


def enabled() -> bool:
    """False when `PERFGYM_PCB_SYSTEM_LIBS=0`: only the external folder provides libraries.

    Any value but 1/0, true/false, yes/no, on/off (or empty) is a ConfigError naming it.
    """
    value = os.environ.get(SYSTEM_ENV, "").strip().lower()
    if value in ("", "1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{SYSTEM_ENV}={os.environ[SYSTEM_ENV]!r}: use 1 (the default) or 0")


def referenced(build: BuildSpec) -> list[str]:
    """The external/ folders a compile-form recipe names (flags and sources), in order."""
    texts = [*build.cxxflags, *build.sources, *(build.command or []), *build.copy_sources_to_build]
    return list(dict.fromkeys(m for t in texts for m in _EXTERNAL_REF.findall(t)))


def use_system_libraries(
    build: BuildSpec, external: Path | None
) -> tuple[BuildSpec, dict[str, str]]:
    """The recipe with every external library the folder lacks and the system has swapped in.

    Returns the new recipe and {folder: "package version"} for the libraries swapped. Only the
    compile form is rewritten (no published recipe names external/ in another form).
    """
    if build.compiler is None or not enabled():
        return build, {}
    swapped: dict[str, str] = {}
    flags, sources = list(build.cxxflags), list(build.sources)
    for folder in referenced(build):
        if external is not None and (external / folder).is_dir():
            continue  # the user's own copy wins
        found = installed(folder)
        if found is None:
            continue
        lib = SYSTEM_LIBRARIES[folder]
        prefix = f"{{root}}/external/{folder}"

        def mine(text: str, prefix: str = prefix) -> bool:
            return text == prefix or text.startswith(prefix + "/")

        flags = _without_includes(flags, mine)
        flags += [f"-I{d}" for d in lib.include_dirs if f"-I{d}" not in flags]
        sources = [s for s in sources if not mine(s)]
        if lib.link is not None:
            so = _shared_object(lib.link)
            if so is not None and str(so) not in sources:
                sources.append(str(so))  # after the objects that need it: the linker's order
        package, version = found
        swapped[folder] = f"{package} {version or '(version unknown)'}"
    if not swapped:
        return build, {}
    return build.model_copy(update={"cxxflags": flags, "sources": sources}), swapped
