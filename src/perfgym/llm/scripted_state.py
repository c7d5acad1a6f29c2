"""`ScriptState`: what the scripted server remembers — which answer each request got, and counts.

Answers are memoized by request content: the same body (less its streaming options) and the
same sample-index header get the same answers, always. A new request of a task takes answers
from that task's list at a position that depends on content, not on arrival order where it can:
a prompt's position is its ordinal among the task's distinct prompts, plus the sample index the
client sends in `X-Perfgym-Sample-Index` (perfgym's client does) times the choices asked for;
without that header, the prompt's n-th request takes the n-th answer after it. A position
another request of the task already holds goes to the next free one. With a state file the memo and counts
survive the server's process, so a rerun after `kill -9` gets identical answers.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The header perfgym's client sends so a scripted answer follows the sample, not arrival order.
SAMPLE_HEADER = "X-Perfgym-Sample-Index"

#: Request fields that do not change the answer: a streamed answer is the same answer.
_IRRELEVANT = ("stream", "stream_options")


def content_key(body: dict[str, Any], sample_hint: int | None) -> str:
    """The request's content address: its body (less streaming options) and sample hint."""
    relevant = {k: v for k, v in body.items() if k not in _IRRELEVANT}
    text = json.dumps([relevant, sample_hint], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def prompt_key(task: str, body: dict[str, Any]) -> str:
    """What makes two requests the same prompt of a task: model and messages."""
    text = json.dumps([task, body.get("model"), body.get("messages")], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class ServerStats:
    """Counts the server keeps (a snapshot: later requests do not change it)."""

    requests: int = 0
    requests_per_key: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    """Requests whose content had already been answered successfully."""
    faults: dict[str, int] = field(default_factory=dict)
    answers_served: int = 0
    answered_keys: list[str] = field(default_factory=list)

    @property
    def unanswered_keys(self) -> list[str]:
        """Contents requested but never answered successfully."""
        done = set(self.answered_keys)
        return sorted(k for k in self.requests_per_key if k not in done)


class ScriptState:
    """The memo and counts, under one lock; persisted to `path` after every change if given."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.memo: dict[str, list[list[Any]]] = {}  # content key -> [[task, position], ...]
        self.taken: dict[str, set[int]] = {}  # task -> positions the memo holds (derived)
        self.ordinals: dict[str, dict[str, int]] = {}  # task -> prompt key -> ordinal
        self.arrivals: Counter[str] = Counter()  # prompt key -> choices given without a hint
        self.requests: Counter[str] = Counter()
        self.answered: set[str] = set()
        self.duplicates = 0
        self.faults: Counter[str] = Counter()
        self.answers_served = 0
        if path is not None and path.is_file():
            self._load(json.loads(path.read_text(encoding="utf-8")))

    def attempt(self, key: str) -> int:
        """Count one request of `key`; its 0-based attempt number."""
        with self.lock:
            n = self.requests[key]
            self.requests[key] += 1
            if key in self.answered:
                self.duplicates += 1
            self._save()
            return n

    def fault(self, name: str) -> None:
        with self.lock:
            self.faults[name] += 1
            self._save()

    def positions(
        self, key: str, task: str, prompt: str, hint: int | None, n: int
    ) -> list[list[Any]]:
        """[[task, position]] of the n choices of `key`: memoized, else assigned now."""
        with self.lock:
            if key not in self.memo:
                table = self.ordinals.setdefault(task, {})
                ordinal = table.setdefault(prompt, len(table))
                if hint is not None:
                    base = ordinal + hint * n
                else:
                    base = ordinal + self.arrivals[prompt]
                    self.arrivals[prompt] += n
                # A position another request of the task already holds goes to the next free
                # one: `ordinal + hint * n` is not one-to-one (prompt 1's second sample and
                # prompt 2's first both make 2), and the optimiser asking its unchanged prompt
                # again for a new sample got the repair prompt's answer once more (a flaky
                # test_the_best_reaches_the_reference, stops 41 and 49).
                taken = self.taken.setdefault(task, set())
                chosen: list[list[Any]] = []
                for j in range(n):
                    pos = base + j
                    while pos in taken:
                        pos += 1
                    taken.add(pos)
                    chosen.append([task, pos])
                self.memo[key] = chosen
                self._save()
            return self.memo[key]

    def served(self, key: str, n: int) -> None:
        with self.lock:
            self.answered.add(key)
            self.answers_served += n
            self._save()

    def stats(self) -> ServerStats:
        with self.lock:
            return ServerStats(
                requests=sum(self.requests.values()),
                requests_per_key=dict(self.requests),
                duplicates=self.duplicates,
                faults=dict(self.faults),
                answers_served=self.answers_served,
                answered_keys=sorted(self.answered),
            )

    def _save(self) -> None:
        if self.path is None:
            return
        data = {
            "memo": self.memo,
            "ordinals": self.ordinals,
            "arrivals": dict(self.arrivals),
            "requests": dict(self.requests),
            "answered": sorted(self.answered),
            "duplicates": self.duplicates,
            "faults": dict(self.faults),
            "answers_served": self.answers_served,
        }
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, self.path)

    def _load(self, data: dict[str, Any]) -> None:
        self.memo = data.get("memo", {})
        self.taken = {}
        for held in self.memo.values():
            for task, pos in held:
                self.taken.setdefault(task, set()).add(pos)
        self.ordinals = data.get("ordinals", {})
        self.arrivals = Counter(data.get("arrivals", {}))
        self.requests = Counter(data.get("requests", {}))
        self.answered = set(data.get("answered", []))
        self.duplicates = int(data.get("duplicates", 0))
        self.faults = Counter(data.get("faults", {}))
        self.answers_served = int(data.get("answers_served", 0))
