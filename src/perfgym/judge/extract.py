"""Extraction: from raw model text to one source file, saying which rule picked it (or why none)."""

from __future__ import annotations

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

_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S
)


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
    got = _from_json(text)
    if got is not None:
        return got
    blocks = [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(text)]
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
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or "solution_source" not in obj:
        return None
    src = obj["solution_source"]
    if not isinstance(src, str) or not src.strip():
        return Extraction(source=None, rule="json", reason="solution_source is empty or not text")
    return Extraction(source=src, rule="json.solution_source")
