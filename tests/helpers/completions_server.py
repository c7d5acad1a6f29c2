"""`TokenCompletionsServer`: a loopback server answering vLLM's token form of `/v1/completions`
(a prompt of token ids in, `token_ids` and `logprobs.token_logprobs` out, as TRL's async
rollout worker asks for), replaying scripted texts, and stamping when each request came and
when its answer went.

The script maps (prompt row, n-th request for that row) to a text and, optionally, an event the
answer waits for (a hold); `release()` answers every held request at once (what is held past
the test gets the script's `fallback` text). The prompt row is read off the prompt itself: each
prompt carries `[row N]`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROW = re.compile(r"\[row (\d+)\]")


@dataclass
class Stamp:
    """One request: its prompt row, its rank among that row's requests, when it came in and
    when its answer went out (`time.time()`, as perfgym's reward records)."""

    row: int
    nth: int
    came: float
    went: float | None = None


@dataclass
class Scripted:
    """What one request is answered with, and what the answer waits for (None: nothing)."""

    text: str
    hold: threading.Event | None = None


@dataclass
class _State:
    counts: dict[int, int] = field(default_factory=dict)
    stamps: list[Stamp] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class TokenCompletionsServer:
    """`script(row, nth)` says what to answer; `tokenizer` turns prompts back into text and
    answers into token ids. Use as a context manager; `url` is what the worker is given."""

    def __init__(self, tokenizer: Any, script: Callable[[int, int], Scripted],
                 fallback: str = "No code.", hold_s: float = 600.0) -> None:  # fmt: skip
        self.tokenizer, self.script = tokenizer, script
        self.fallback, self.hold_s = fallback, hold_s
        self.state = _State()
        self._released = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stamps(self, row: int) -> list[Stamp]:
        with self.state.lock:
            return sorted((s for s in self.state.stamps if s.row == row), key=lambda s: s.nth)

    def release(self) -> None:
        """Answer every held request now (with the fallback text when its hold never fired)."""
        self._released.set()

    def __enter__(self) -> TokenCompletionsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = self.tokenizer.decode(body["prompt"])
        found = ROW.search(prompt)
        row = int(found.group(1)) if found else -1
        with self.state.lock:
            nth = self.state.counts.get(row, 0)
            self.state.counts[row] = nth + 1
            stamp = Stamp(row, nth, time.time())
            self.state.stamps.append(stamp)
        plan = self.script(row, nth)
        text = plan.text
        if plan.hold is not None:
            deadline = time.monotonic() + self.hold_s
            while not plan.hold.wait(0.05):
                if self._released.is_set() or time.monotonic() > deadline:
                    text = self.fallback
                    break
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        stamp.went = time.time()
        return {"id": f"cmpl-{row}-{nth}", "object": "text_completion", "model": body.get("model"),
                "choices": [{"index": 0, "text": text, "token_ids": ids, "finish_reason": "stop",
                             "logprobs": {"token_logprobs": [0.0] * len(ids)}}]}  # fmt: skip

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.rstrip("/") != "/v1/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                self._send(200, server._answer(json.loads(raw)))

            def _send(self, status: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
