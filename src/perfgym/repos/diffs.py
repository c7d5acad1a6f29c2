"""Reading a unified diff: which files a patch touches and the lines it adds (new-file numbers)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class FileChange:
    """One file of a patch: its path (new name, or old for a deletion) and added lines."""

    path: str
    old_path: str = ""
    added: dict[int, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    created: bool = False
    deleted: bool = False
    binary: bool = False

    @property
    def first_line(self) -> int:
        return min(self.added) if self.added else 1


def _strip(name: str) -> str:
    name = name.split("\t")[0].strip()
    if name.startswith('"') and name.endswith('"'):
        name = name[1:-1]
    return name[2:] if name[:2] in ("a/", "b/") else name


def parse_patch(patch: str) -> list[FileChange]:
    """The files of a git-style unified diff, in order."""
    files: list[FileChange] = []
    current: FileChange | None = None
    new_line = 0
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            parts = line.split(" ")
            current = FileChange(path=_strip(parts[-1]), old_path=_strip(parts[-2]))
            files.append(current)
            continue
        if current is None:
            if line.startswith("--- "):  # a plain diff without git's header
                current = FileChange(path="", old_path=_strip(line[4:]))
                files.append(current)
            else:
                continue
        if line.startswith("new file mode"):
            current.created = True
        elif line.startswith("deleted file mode"):
            current.deleted = True
        elif line.startswith(("Binary files", "GIT binary patch")):
            current.binary = True
        elif line.startswith("--- "):
            if line[4:].strip() == "/dev/null":  # a new file, also in a diff without git's modes
                current.created = True
            current.old_path = _strip(line[4:]) if line[4:] != "/dev/null" else current.old_path
        elif line.startswith("+++ "):
            name = line[4:]
            if name.strip() != "/dev/null":
                current.path = _strip(name)
        elif m := _HUNK.match(line):
            new_line = int(m.group(1))
            if line.startswith("@@ -0,0 "):  # a hunk from nothing: the file is new
                current.created = True
        elif line.startswith("+"):
            current.added[new_line] = line[1:]
            new_line += 1
        elif line.startswith("-"):
            current.removed.append(line[1:])
        elif line.startswith(" ") or line == "":
            new_line += 1
    for f in files:
        if not f.path:
            f.path = f.old_path
    return files
