"""py-spy's folded stacks → the stacks under the workload's `experiment`, hotspots, a prompt block."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from pydantic import BaseModel

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<loc>[^()]*)\)$")
_NATIVE_SUFFIX = re.compile(r"\.so(\.\d+)*$")
EXPERIMENT = "experiment"


@dataclass(frozen=True)
class Frame:
    """One frame of a py-spy stack: function, file (as py-spy printed it) and line (0: none)."""

    func: str
    file: str
    line: int

    @property
    def native(self) -> bool:
        return self.line == 0 and (
            self.func.startswith("0x") or bool(_NATIVE_SUFFIX.search(self.file)) or self.file == ""
        )

    @property
    def key(self) -> tuple[str, str]:
        return (self.func, self.file)


def parse_frame(text: str) -> Frame:
    m = _FRAME.match(text.strip())
    if not m:
        return Frame(text.strip(), "", 0)
    loc = m.group("loc")
    head, sep, tail = loc.rpartition(":")
    if sep and tail.isdigit():
        return Frame(m.group("func"), head, int(tail))
    return Frame(m.group("func"), loc, 0)


def parse_folded(text: str) -> list[tuple[list[Frame], int]]:
    """Lines `frame;frame;... count` → (frames root first, samples). Malformed lines are skipped."""
    stacks: list[tuple[list[Frame], int]] = []
    for line in text.splitlines():
        body, _, count = line.rstrip().rpartition(" ")
        if not body or not count.isdigit():
            continue
        frames = [parse_frame(f) for f in body.split(";")]
        frames = [f for f in frames if not f.func.startswith("process ")]
        stacks.append((frames, int(count)))
    return stacks


def under_experiment(
    stacks: list[tuple[list[Frame], int]], workload_file: str
) -> list[tuple[list[Frame], int]]:
    """Keep the stacks that pass through the workload's `experiment`, cut to start there:
    interpreter start-up, the driver's loop and `setup()` fall away (PerfAgent's parse_pyspy)."""
    kept = []
    for frames, n in stacks:
        for i, f in enumerate(frames):
            if f.func == EXPERIMENT and f.file.endswith(workload_file):
                kept.append((frames[i:], n))
                break
    return kept


class Hotspot(BaseModel):
    """One function's share of the samples under `experiment`."""

    function: str
    file: str
    line: int
    self_pct: float
    total_pct: float
    call_path: list[str]
    native: bool
    third_party: bool
    user_code: bool


class HotspotReport(BaseModel):
    """The hotspots of one profile, and how much of the profile they cover."""

    total_samples: int
    kept_samples: int
    hotspots: list[Hotspot]

    @property
    def coverage_pct(self) -> float:
        return 100.0 * self.kept_samples / self.total_samples if self.total_samples else 0.0


@dataclass
class _Tally:
    self_n: int = 0
    total_n: int = 0
    lines: Counter[int] = field(default_factory=Counter)
    paths: Counter[tuple[str, ...]] = field(default_factory=Counter)
    frame: Frame | None = None


def _label(f: Frame, repo_root: str) -> str:
    return f"{f.func} ({display_file(f.file, repo_root)}{':' + str(f.line) if f.line else ''})"


def display_file(path: str, repo_root: str) -> str:
    root = repo_root.rstrip("/") + "/"
    return path[len(root) :] if path.startswith(root) else path


def is_third_party(path: str) -> bool:
    return "site-packages/" in path or "dist-packages/" in path or "/lib/python3" in path


def hotspots(
    all_stacks: list[tuple[list[Frame], int]],
    workload_file: str,
    repo_root: str,
    top: int = 10,
) -> HotspotReport:
    """Self and total shares per function (file) over the stacks under `experiment`."""
    total = sum(n for _, n in all_stacks)
    kept = under_experiment(all_stacks, workload_file)
    kept_n = sum(n for _, n in kept)
    tallies: dict[tuple[str, str], _Tally] = defaultdict(_Tally)
    for frames, n in kept:
        leaf = frames[-1]
        t = tallies[leaf.key]
        t.self_n += n
        t.lines[leaf.line] += n
        seen: set[tuple[str, str]] = set()
        for depth, f in enumerate(frames):
            if f.key in seen:
                continue
            seen.add(f.key)
            tf = tallies[f.key]
            tf.total_n += n
            tf.frame = tf.frame or f
            tf.paths[tuple(_label(g, repo_root) for g in frames[: depth + 1])] += n
    spots: list[tuple[int, int, Hotspot]] = []
    for key, t in tallies.items():
        f = t.frame or Frame(key[0], key[1], 0)
        line = t.lines.most_common(1)[0][0] if t.lines else f.line
        path = list(t.paths.most_common(1)[0][0]) if t.paths else []
        spots.append((t.self_n, t.total_n,
            Hotspot(
                function=f.func,
                file=display_file(f.file, repo_root),
                line=line,
                self_pct=round(100.0 * t.self_n / kept_n, 1) if kept_n else 0.0,
                total_pct=round(100.0 * t.total_n / kept_n, 1) if kept_n else 0.0,
                call_path=path[-6:],
                native=f.native,
                third_party=is_third_party(f.file),
                user_code=f.file.startswith(repo_root.rstrip("/") + "/") and not f.native,
            ),
        ))  # fmt: skip
    spots.sort(key=lambda s: (-s[0], -s[1], s[2].function))
    return HotspotReport(total_samples=total, kept_samples=kept_n,
                         hotspots=[h for _, _, h in spots[:top]])  # fmt: skip


def summary_text(report: HotspotReport, max_chars: int = 3000) -> str:
    """A size-bounded text block for the prompt: one line per hotspot, hottest (self) first."""
    head = (
        f"py-spy profile: {report.kept_samples} samples under experiment() "
        f"({report.coverage_pct:.0f}% of {report.total_samples}).\n"
        "self%  total%  function (file:line)  [flags]  call path\n"
    )
    lines = [head]
    used = len(head)
    for h in report.hotspots:
        flags = ",".join(
            name for name, on in (("native", h.native), ("third-party", h.third_party)) if on
        )
        where = f"{h.file}:{h.line}" if h.line else h.file
        path = " > ".join(p.split(" (")[0] for p in h.call_path)
        row = f"{h.self_pct:5.1f}  {h.total_pct:5.1f}  {h.function} ({where})"
        row += f"  [{flags}]" if flags else ""
        row += f"  {path}\n"
        if used + len(row) > max_chars:
            lines.append("... (more hotspots cut)\n")
            break
        lines.append(row)
        used += len(row)
    return "".join(lines)


def folded_text(stacks: list[tuple[list[Frame], int]]) -> str:
    return "".join(
        ";".join(f"{f.func} ({f.file}{':' + str(f.line) if f.line else ''})" for f in fr)
        + f" {n}\n"
        for fr, n in stacks
    )


def speedscope_json(stacks: list[tuple[list[Frame], int]], name: str) -> str:
    """The stacks as a speedscope 'sampled' profile (open it at speedscope.app)."""
    index: dict[Frame, int] = {}
    frames_out: list[dict[str, object]] = []
    samples: list[list[int]] = []
    weights: list[int] = []
    for fr, n in stacks:
        ids = []
        for f in fr:
            if f not in index:
                index[f] = len(frames_out)
                frames_out.append({"name": f.func, "file": f.file, "line": f.line})
            ids.append(index[f])
        samples.append(ids)
        weights.append(n)
    doc = {
        "$schema": "https://www.speedscope.app/file-format-schema.json",
        "shared": {"frames": frames_out},
        "profiles": [
            {
                "type": "sampled",
                "name": name,
                "unit": "none",
                "startValue": 0,
                "endValue": sum(weights),
                "samples": samples,
                "weights": weights,
            }
        ],
        "name": name,
        "exporter": "perfgym",
    }
    return json.dumps(doc)
