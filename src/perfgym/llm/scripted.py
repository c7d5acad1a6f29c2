"""`ScriptedServer`: a real OpenAI-compatible HTTP server on loopback that replays a `Script`.

`POST /v1/chat/completions` (n > 1, `response_format` json_schema, streaming on and off, usage)
and `GET /v1/models`, on the standard library's threading HTTP server (it starts in
milliseconds). Faults (`script_faults.Faults`) are seeded and deterministic. In tests:

    with ScriptedServer(script, faults=Faults(rate_429=0.2)) as srv:
        client = ModelClient(ModelConfig(base_url=srv.base_url, model="scripted"))
        ...
        assert srv.stats.duplicates == 0

Standalone: `python -m perfgym.llm.scripted --script F --port P` (or `--core` for the
perfgym-core script built from the tasks' graded solutions).
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from perfgym.errors import PerfgymError
from perfgym.llm import scripted_wire as wire
from perfgym.llm.script import Script, load_script
from perfgym.llm.script_faults import Faults, spoil
from perfgym.llm.scripted_state import (
    SAMPLE_HEADER,
    ScriptState,
    ServerStats,
    content_key,
    prompt_key,
)

__all__ = ["SAMPLE_HEADER", "Faults", "ScriptedServer", "ServerStats"]


class ScriptedServer:
    """The server, its script, its faults and its counts; a context manager (start/stop)."""

    def __init__(
        self,
        script: Script,
        *,
        faults: Faults | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        models: list[str] | None = None,
        json_schema: bool = True,
        latency_s: float = 0.0,
        state_path: Path | None = None,
    ) -> None:
        self.script = script
        self.faults = faults or Faults()
        self.api_key = api_key
        self.models = models or [script.model]
        self.json_schema = json_schema
        self.latency_s = latency_s
        self.state = ScriptState(state_path)
        self.stopping = threading.Event()
        self.host = host
        self._httpd = _Httpd((host, port), _Handler)
        self._httpd.owner = self
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (ends in /v1)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def stats(self) -> ServerStats:
        return self.state.stats()

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
        self._httpd.server_close()

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def choices(self, key: str, body: dict[str, Any], hint: int | None) -> list[dict[str, Any]]:
        """The n choices for this request (memoized), spoiled by any answer fault."""
        text = _messages_text(body.get("messages"))
        task = self.script.task_of(text)
        if task is None:
            raise _Refused(400, "no scripted answer matches this request's messages")
        n = int(body.get("n", 1))
        schema = _json_schema(body)
        out = []
        for j, (task_key, position) in enumerate(
            self.state.positions(key, task, prompt_key(task, body), hint, n)
        ):
            answer = self.script.answer(task_key, position)
            content = answer.content or ""
            if schema is not None:
                content = wire.as_json_answer(content, schema)
            finish = answer.finish_reason
            fault = self.faults.answer(key, j)
            if fault is not None:
                self.state.fault(fault)
                content, finish = spoil(content, fault, json_answer=schema is not None)
            out.append(
                {
                    "content": content,
                    "finish_reason": finish,
                    "tool_calls": list(answer.tool_calls),
                    "delay_s": answer.delay_s,
                }
            )
        return out


class _Refused(PerfgymError):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error",
                 code: str | None = None) -> None:  # fmt: skip
        super().__init__(message)
        self.status, self.kind, self.code = status, kind, code


class _Httpd(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (reset, closed mid-request) is not an error of the server:
        nothing is printed (the stdlib prints a traceback to stderr, which lands in the
        one-line error of the CLI that started this server in its own process)."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Httpd

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        return

    def do_GET(self) -> None:
        srv = self.server.owner
        if self.path.rstrip("/") != "/v1/models":
            return self._send_json(404, wire.error(f"no route {self.path}", "not_found"))
        try:
            self._authorize(srv)
        except _Refused as exc:
            return self._refuse(exc)
        self._send_json(200, wire.models(srv.models))

    def do_POST(self) -> None:
        srv = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._send_json(404, wire.error(f"no route {self.path}", "not_found"))
        try:
            self._authorize(srv)
            body = _body(raw)
            hint = _hint(self.headers.get(SAMPLE_HEADER))
            key = content_key(body, hint)
            attempt = srv.state.attempt(key)
            _check_n(body)
            if body.get("model") not in srv.models:
                raise _Refused(
                    404,
                    f"The model `{body.get('model')}` does not exist",
                    "invalid_request_error",
                    "model_not_found",
                )
            if _json_schema(body) is not None and not srv.json_schema:
                raise _Refused(400, "response_format json_schema is not supported by this server")
            fault = srv.faults.transport(key, attempt)
            if fault is not None:
                srv.state.fault(fault)
                return self._transport_fault(srv, fault)
            choices = srv.choices(key, body, hint)
        except _Refused as exc:
            return self._refuse(exc)
        delay = max([srv.latency_s] + [c["delay_s"] for c in choices])
        if delay and srv.stopping.wait(delay):
            return self._drop()
        if self._answer(srv, body, choices):
            srv.state.served(key, len(choices))

    def _answer(
        self, srv: ScriptedServer, body: dict[str, Any], choices: list[dict[str, Any]]
    ) -> bool:
        model = str(body["model"])
        cid = "chatcmpl-" + uuid.uuid4().hex[:24]
        prompt_tokens = wire.tokens(json.dumps(body.get("messages")))
        try:
            if not body.get("stream"):
                self._send_json(200, wire.completion(cid, model, choices, prompt_tokens))
                return True
            options = body.get("stream_options") or {}
            parts = wire.chunks(
                cid, model, choices, prompt_tokens, bool(options.get("include_usage"))
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for part in parts:
                self.wfile.write(f"data: {json.dumps(part)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
            return True
        except OSError:  # the client went away before the answer was written
            self.close_connection = True
            return False

    def _transport_fault(self, srv: ScriptedServer, fault: str) -> None:
        if fault == "429":
            headers = {"Retry-After": f"{srv.faults.retry_after_s:g}"}
            body = wire.error("Rate limit reached (scripted)", "requests", "rate_limit_exceeded")
            return self._send_json(429, body, headers)
        if fault == "500":
            return self._send_json(500, wire.error("Internal error (scripted)", "server_error"))
        if fault == "timeout":
            srv.stopping.wait(srv.faults.timeout_delay_s)
        self._drop()

    def _drop(self) -> None:
        """Close the connection without a response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _authorize(self, srv: ScriptedServer) -> None:
        if srv.api_key is None:
            return
        if self.headers.get("Authorization") != f"Bearer {srv.api_key}":
            raise _Refused(401, "Incorrect API key provided", "invalid_request_error",
                           "invalid_api_key")  # fmt: skip

    def _refuse(self, exc: _Refused) -> None:
        self._send_json(exc.status, wire.error(str(exc), exc.kind, exc.code))

    def _send_json(
        self, status: int, obj: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(obj).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True


def _body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        raise _Refused(400, "request body is not JSON") from None
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise _Refused(400, "request body must be an object with a 'messages' list")
    return body


def _check_n(body: dict[str, Any]) -> None:
    n = body.get("n", 1)
    if n is None:
        n = body["n"] = 1
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128:
        raise _Refused(400, "n must be an integer from 1 to 128")


def _hint(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return max(0, int(value))
    except ValueError:
        raise _Refused(400, f"{SAMPLE_HEADER} must be an integer") from None


def _json_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return schema if isinstance(schema, dict) else {}
    return None


def _messages_text(messages: Any) -> str:
    parts: list[str] = []
    for m in messages or []:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m perfgym.llm.scripted", description=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--script", type=Path, help="a JSON or YAML script")
    source.add_argument("--core", action="store_true", help="the perfgym-core script")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--faults", default="{}", help="Faults as JSON, e.g. '{\"rate_429\": 0.1}'")
    parser.add_argument("--state", type=Path, help="persist the memo and counts to this file")
    parser.add_argument("--api-key", help="require this bearer token")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    args = parser.parse_args(argv)
    from perfgym.errors import PerfgymError

    try:
        if args.core:
            from perfgym.llm.core_script import core_script

            script = core_script()
        else:
            script = load_script(args.script)
        faults = Faults.model_validate_json(args.faults)
        server = ScriptedServer(script, faults=faults, host=args.host, port=args.port,
                                api_key=args.api_key, latency_s=args.latency,
                                state_path=args.state)  # fmt: skip
    except (PerfgymError, ValueError, OSError) as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    with server:
        print(server.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
