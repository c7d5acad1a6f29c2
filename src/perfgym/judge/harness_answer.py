"""A harness's answer checked outside the program: the answer fields of its verdict line
(`actual_sum`, `expected_checksum`, `checksum`, ...; never `ok` or a time) compared with the
reference's own line, where the reference's and the baseline's lines agree on them
(docs/security.md, section 6b)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: Fields named as answers (`actual_sum`, `expected_checksum`, `checksum`, `row_hash`): the
#: only ones compared. Others (`compressed_size`, `threads`) may differ between correct programs.
_ANSWER = re.compile(r"^(actual|expected)_|checksum$|(^|_)hash$", re.IGNORECASE)
#: Fields that are times, not answers: never compared.
_TIMING = re.compile(r"(_ns|_us|_ms|_s|_sec|_secs|_seconds)$|time|elapsed|duration|nanos|millis",
                     re.IGNORECASE)  # fmt: skip
#: The most fields and characters of a line kept as its answer (a line is the program's text).
MAX_FIELDS, MAX_CHARS = 64, 4096


def answer_fields(line: dict[str, Any]) -> dict[str, Any]:
    """The answer a verdict line carries: its fields named as answers, but the times."""
    return {k: v for k, v in list(line.items())[:MAX_FIELDS]
            if _ANSWER.search(k) and not _TIMING.search(k) and len(repr(v)) <= MAX_CHARS}  # fmt: skip


@dataclass(frozen=True)
class HarnessAnswer:
    """What a candidate's line must carry: `fields` (the reference's values of the fields its
    and the baseline's lines agree on), or none with `why`."""

    fields: dict[str, Any] = field(default_factory=dict)
    why: str = ""

    def describe(self) -> str:
        """For the verdict: the fields checked outside, or why none was."""
        if self.fields:
            return "checked: " + ", ".join(sorted(self.fields))
        return f"not checked: {self.why}"


def agreed(reference: dict[str, Any] | None, baseline: dict[str, Any] | None) -> HarnessAnswer:
    """The answer to check candidates against, from the reference's and the baseline's own
    verdict lines (their `answer_fields`; None: that run gave no line or failed)."""
    if reference is None:
        return HarnessAnswer(why="the reference's run gave no verdict line")
    if baseline is None:
        return HarnessAnswer(why="the baseline's run gave no verdict line")
    same = {k: v for k, v in reference.items() if k in baseline and baseline[k] == v}
    if not same:
        return HarnessAnswer(why="the verdict line carries no answer the reference's and the "
                                 "baseline's runs agree on")  # fmt: skip
    return HarnessAnswer(same)


def mismatch(want: HarnessAnswer, got: dict[str, Any] | None) -> str:
    """Why the candidate's line does not carry the answer (`got`: its `answer_fields`), or ''."""
    if not want.fields:
        return ""
    got = got or {}
    for k, v in sorted(want.fields.items()):
        if k not in got:
            return f"the harness's line has no {k!r} (the reference's has {v!r})"
        if got[k] != v or type(got[k]) is not type(v):
            return f"the harness's line says {k} = {got[k]!r}, the reference's {v!r}"
    return ""
