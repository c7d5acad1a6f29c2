"""Extraction: from raw model text to one source file, saying which rule picked it (or why none)."""

from __future__ import annotations

import bisect
import json
import re

from pydantic import BaseModel, ConfigDict

from perfgym.tasks.task import Language

#: Fence tags that name each language.
ALIASES: dict[Language, tuple[str, ...]] = {
    Language.PYTHON: ("python", "py", "python3"),
    Language.C: ("c", "h"),
    Language.CPP: ("cpp", "c++", "cc", "cxx", "hpp"),
    Language.JAVA: ("java",),
    Language.GO: ("go", "golang"),
    Language.JAVASCRIPT: ("javascript", "js", "node", "nodejs"),
    Language.RUST: ("rust", "rs"),
    Language.CUDA: ("cuda", "cu", "cpp", "c++"),
}

#: Tokens that make an unfenced answer look like a whole source file in that language.
_WHOLE_FILE_HINTS: dict[Language, tuple[str, ...]] = {
    Language.PYTHON: ("def ", "import ", "print(", "class ", "sys.stdin"),
    Language.C: ("#include", "int main"),
    Language.CPP: ("#include", "int main", "std::"),
    Language.JAVA: ("class ", "public static void main"),
    Language.GO: ("package main", "func main"),
    Language.JAVASCRIPT: ("require(", "function ", "console.log", "process.stdin", "=>"),
    Language.RUST: ("fn main", "use std"),
    Language.CUDA: ("__global__", "#include"),
}

#: The most text extraction looks at: a longer answer is NX (no model writes a 1 MiB program,
#: and every rule below is linear, so this bounds the work per answer, not its order).
MAX_ANSWER_CHARS = 1 << 20

# A fence line: indentation, then a run of 3+ backticks or tildes (an opener when more text and
# a newline follow it; a closer when only blanks follow), then a tag. Matched on one line at a
# time, so no pattern ever scans across lines.
_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})")
_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*")
_TAG = re.compile(r"[ \t]*([\w+#.-]*)")


class Extraction(BaseModel):
    """The extracted program, or None with the reason (stage NX)."""

    model_config = ConfigDict(extra="forbid")

    source: str | None
    rule: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.source is not None


def extract(text: str, language: Language) -> Extraction:
    """Apply, in order: RLPF's JSON answer, a fenced block in the language, an untagged fenced
    block, the whole answer when it looks like a source file. Nothing matches -> NX."""
    if not text or not text.strip():
        return Extraction(source=None, rule="none", reason="empty answer")
    if len(text) > MAX_ANSWER_CHARS:
        return Extraction(
            source=None,
            rule="none",
            reason=f"answer of {len(text)} characters is over the extraction cap of "
            f"{MAX_ANSWER_CHARS} (1 MiB)",
        )
    got = _from_json(text)
    if got is not None:
        return got
    blocks = [(tag.lower(), body) for tag, body in fenced_blocks(text)]
    tags = ALIASES[language]
    tagged = [body for tag, body in blocks if tag in tags and body.strip()]
    if tagged:
        return Extraction(source=max(tagged, key=len), rule=f"fence:{language.value}:longest")
    untagged = [body for tag, body in blocks if not tag and body.strip()]
    if untagged:
        return Extraction(source=max(untagged, key=len), rule="fence:untagged:longest")
    if blocks:
        found = sorted({tag or "untagged" for tag, _ in blocks})
        return Extraction(
            source=None,
            rule="none",
            reason=f"no code block in {language.value} (found: {', '.join(found)})",
        )
    if any(hint in text for hint in _WHOLE_FILE_HINTS[language]):
        return Extraction(source=text.strip("\n") + "\n", rule="whole-file")
    return Extraction(source=None, rule="none", reason="no code found in the answer")


def not_text(source: str) -> str | None:
    """Why `source` cannot be a program file (it is not valid UTF-8 text: a lone surrogate,
    which a JSON escape such as `"\\ud800"` can put in a string), or None. Other characters,
    NUL included, are valid text: the source is built as given and its compiler judges it."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"source is not valid UTF-8 text (lone surrogate U+{ord(source[exc.start]):04X} "
            f"at offset {exc.start})"
        )
    return None


def shown(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\ud800`): what a verdict shows
    of a source `not_text` refused, so that every writer of verdicts can encode it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block, in order, in time linear in the text (n log n).

    The rule (kept from the earlier regex): a block opens on a line of indentation, a run of
    k >= 3 backticks (or tildes) and anything else, ended by a newline; it closes at the first
    later line made of exactly L of the same character (blanks around), for the largest L <= k
    for which such a line exists. Its tag is the word after the run when L == k, else none.
    Scanning resumes on the line after the closer; an opener never closed is ordinary text.
    """
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    # Closers by (character, length): the line numbers, ascending.
    closers: dict[tuple[str, int], list[int]] = {}
    for i, line in enumerate(lines):
        m = _CLOSE.fullmatch(line)
        if m is not None:
            run = m.group(1)
            closers.setdefault((run[0], len(run)), []).append(i)
    lengths: dict[str, list[int]] = {}  # fence character -> closer lengths, ascending
    for char, n in closers:
        lengths.setdefault(char, []).append(n)
    for ns in lengths.values():
        ns.sort()
    blocks: list[tuple[str, str]] = []
    i, last = 0, len(lines) - 1  # the last line has no newline: it cannot open a block
    while i < last:
        m = _OPEN.match(lines[i])
        if m is None:
            i += 1
            continue
        run = m.group(1)
        close = _first_closer(closers, lengths.get(run[0], []), run[0], len(run), i)
        if close is None:
            i += 1
            continue
        n, j = close
        t = _TAG.match(lines[i], m.end())
        tag = t.group(1) if t is not None and n == len(run) else ""
        blocks.append((tag, text[starts[i + 1] : starts[j]]))
        i = j + 1
    return blocks


def _first_closer(
    closers: dict[tuple[str, int], list[int]], lengths: list[int], char: str, k: int, i: int
) -> tuple[int, int] | None:
    """(L, line) of the closer of an opener of k `char`s on line i: the largest L <= k with a
    closing line after i, and the first such line. Every L tried is a length <= k that some
    closing line has, so an opener costs at most k - 2 lookups: the sum over all openers is at
    most the text's length."""
    for x in range(bisect.bisect_right(lengths, k) - 1, -1, -1):
        n = lengths[x]
        at = closers[(char, n)]
        pos = bisect.bisect_right(at, i)
        if pos < len(at):
            return n, at[pos]
    return None


def _from_json(text: str) -> Extraction | None:
    """RLPF's answer format: a JSON object with `summary` and `solution_source`."""
    candidate = text.strip()
    m = re.fullmatch(r"(`{3,})[ \t]*(?:json)?[ \t]*\n(.*)\n[ \t]*\1", candidate, re.S)
    if m:
        candidate = m.group(2).strip()
    if not candidate.startswith("{"):
        return None
    try:
        obj = json.loads(candidate)
    except (ValueError, RecursionError):  # not JSON, or nested past the recursion limit
        return None
    if not isinstance(obj, dict) or "solution_source" not in obj:
        return None
    src = obj["solution_source"]
    if not isinstance(src, str) or not src.strip():
        return Extraction(source=None, rule="json", reason="solution_source is empty or not text")
    return Extraction(source=src, rule="json.solution_source")
