"""Sources refused before any build: text a compiler would turn into code run at build time.

Go: the go command runs the C toolchain for cgo, and a `//go:cgo_ldflag` directive hands the
external linker its flags. Go 1.19.8 (CVE-2023-39323) accepts such a directive in any file that
claims to be cgo's output through a `//line _cgo_...` comment, so `-wrapper /bin/sh,-c,...`
ran a candidate's shell command during its link (red team helper-99: it read the shared
compiler cache, linked the task's reference from it, and shipped that as its own binary:
RLPF 1.26, the reference's reward, for the baseline's algorithm). Builds also run with
`CGO_ENABLED=0` (see `native.GO`), so no source reaches the C toolchain; this refusal names
the directive instead of leaving it to the go command, whatever its version.
"""

from __future__ import annotations

import re

from perfgym.tasks.task import Language

#: The go command's cgo directives (cgo_ldflag, cgo_import_dynamic, cgo_export_static, ...):
#: written by cgo, never by hand. Matched anywhere, comment or not: no honest program spells it.
_GO_CGO_DIRECTIVE = re.compile(rb"go:cgo_")


def refused(language: Language, source: bytes) -> str | None:
    """Why `source` in `language` is refused before its build, or None."""
    if language is Language.GO and (m := _GO_CGO_DIRECTIVE.search(source)):
        line = source.count(b"\n", 0, m.start()) + 1
        return (f"line {line}: a //go:cgo_ directive (cgo writes these; in a source they hand "
                "the C linker flags, which can run commands at build time): refused")  # fmt: skip
    return None
