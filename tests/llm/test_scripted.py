"""The scripted server over real HTTP: the wire format, memo, positions, faults and counts."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from perfgym.errors import ConfigError
from perfgym.llm.script import Script, load_script
from perfgym.llm.script_faults import Faults
from perfgym.llm.scripted import SAMPLE_HEADER, ScriptedServer

RLPF_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "answer",
        "schema": {
            "type": "object",
            "properties": {"summary": {"type": "string"}, "solution_source": {"type": "string"}},
            "required": ["summary", "solution_source"],
        },
    },
}


def script() -> Script:
    return (
        Script()
        .add("task-a", "```python\nprint(1)\n```\n", "A2", "A3")
        .add("task-ab", "AB1", "AB2")
        .add("*", "anything")
    )


#: One client for every request (a new httpx client per request costs an SSL context each).
HTTP = httpx.Client(timeout=10)


def chat(
    srv: ScriptedServer, text: str, *, hint: int | None = None, **extra: object
) -> httpx.Response:
    headers = {SAMPLE_HEADER: str(hint)} if hint is not None else {}
    body = {"model": "scripted", "messages": [{"role": "user", "content": text}], **extra}
    return HTTP.post(srv.base_url + "/chat/completions", json=body, headers=headers)


def contents(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [c["message"]["content"] for c in resp.json()["choices"]]


def test_starts_fast_and_lists_models() -> None:
    t0 = time.perf_counter()
    with ScriptedServer(script()) as srv:
        started = time.perf_counter() - t0
        models = httpx.get(srv.base_url + "/models", timeout=5).json()
    assert started < 0.5
    assert [m["id"] for m in models["data"]] == ["scripted"]


def test_longest_key_wins_and_memo_and_positions() -> None:
    with ScriptedServer(script()) as srv:
        assert contents(chat(srv, "solve task-ab please")) == ["AB1"]  # not task-a
        assert contents(chat(srv, "solve task-a", n=2)) == ["```python\nprint(1)\n```\n", "A2"]
        # The same body again: the same answers (memoized), counted as a duplicate.
        assert contents(chat(srv, "solve task-a", n=2)) == ["```python\nprint(1)\n```\n", "A2"]
        # A new body of the same prompt without a hint: the answers after those given.
        assert contents(chat(srv, "solve task-a", seed=7)) == ["A3"]
        assert contents(chat(srv, "solve task-a", seed=8)) == ["A3"]  # exhausted: the last
        assert contents(chat(srv, "unmatched text")) == ["anything"]
        stats = srv.stats
    assert stats.duplicates == 1
    assert stats.answers_served == 8
    assert stats.unanswered_keys == []


def test_sample_hint_makes_positions_independent_of_arrival_order() -> None:
    with ScriptedServer(script()) as srv:
        late_first = [contents(chat(srv, "task-a", hint=i, seed=i))[0] for i in (2, 0, 1)]
        # A second prompt of the task would start one position later (1), but the first
        # prompt's samples hold 0-2: it takes the next free one, 3 (this three-answer script's
        # last, once exhausted), never the answer another request of the task got.
        second = contents(chat(srv, "task-a, revised", hint=0))
        third = contents(chat(srv, "task-a, again", hint=0))
    assert late_first == ["A3", "```python\nprint(1)\n```\n", "A2"]
    assert second == ["A3"] and third == ["A3"]


def test_streaming_gives_the_same_answer_and_usage() -> None:
    with ScriptedServer(script()) as srv:
        plain = chat(srv, "task-ab")
        body = {
            "model": "scripted",
            "messages": [{"role": "user", "content": "task-ab"}],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        with httpx.stream("POST", srv.base_url + "/chat/completions", json=body, timeout=5) as r:
            lines = [ln for ln in r.iter_lines() if ln.startswith("data: ")]
        stats = srv.stats
    assert lines[-1] == "data: [DONE]"
    events = [json.loads(ln[6:]) for ln in lines[:-1]]
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    assert text == contents(plain)[0]
    finishes = [e["choices"][0]["finish_reason"] for e in events if e["choices"]]
    assert finishes[-1] == "stop"
    assert events[-1]["usage"] == plain.json()["usage"]
    assert stats.duplicates == 1  # streaming does not change the content key


def test_json_schema_wraps_the_code_and_can_be_refused() -> None:
    with ScriptedServer(script()) as srv:
        got = json.loads(contents(chat(srv, "task-a", response_format=RLPF_SCHEMA))[0])
    assert got["solution_source"] == "print(1)\n"
    with ScriptedServer(script(), json_schema=False) as srv:
        assert chat(srv, "task-a", response_format=RLPF_SCHEMA).status_code == 400


def test_auth_unknown_model_and_bad_bodies() -> None:
    with ScriptedServer(script(), api_key="sekret") as srv:
        assert chat(srv, "task-a").status_code == 401
        ok = httpx.post(
            srv.base_url + "/chat/completions",
            json={"model": "scripted", "messages": [{"role": "user", "content": "task-a"}]},
            headers={"Authorization": "Bearer sekret"},
        )
        assert ok.status_code == 200
    with ScriptedServer(Script().add("x", "y")) as srv:
        r = httpx.post(srv.base_url + "/chat/completions", json={"model": "gpt-9", "messages": []})
        assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
        assert httpx.post(srv.base_url + "/chat/completions", content=b"{nope").status_code == 400
        assert chat(srv, "no key here").status_code == 400  # no catch-all in this script
        assert httpx.get(srv.base_url + "/nothing").status_code == 404


def test_transport_faults_are_deterministic_and_bounded() -> None:
    faults = Faults(seed=3, rate_429=0.25, rate_500=0.25, rate_drop=0.25, max_faults_per_key=2)
    outcomes = []
    for _ in range(2):
        with ScriptedServer(Script().add("*", "ok"), faults=faults) as srv:
            run = []
            for i in range(12):
                for _attempt in range(3):
                    try:
                        status = chat(srv, f"prompt {i}").status_code
                    except httpx.HTTPError as exc:
                        status = type(exc).__name__
                    run.append(status)
                    if status == 200:
                        break
            outcomes.append(run)
            stats = srv.stats
    assert outcomes[0] == outcomes[1]
    assert {429, 500, "RemoteProtocolError"} <= set(outcomes[0])
    assert outcomes[0].count(200) == 12  # the third attempt of a content is always served
    assert sum(stats.faults.values()) == len(outcomes[0]) - 12
    assert stats.duplicates == 0 and stats.unanswered_keys == []


def test_retry_after_is_sent() -> None:
    with ScriptedServer(
        Script().add("*", "ok"), faults=Faults(rate_429=1.0, retry_after_s=2)
    ) as srv:
        r = chat(srv, "x")
    assert r.status_code == 429 and r.headers["retry-after"] == "2"


def test_answer_faults() -> None:
    rates = {
        "malformed_json": 0.2,
        "no_code": 0.2,
        "wrong_language": 0.2,
        "truncated": 0.2,
        "empty": 0.2,
    }
    answer = "Faster:\n\n```cpp\nint main() { return 0; }\n```\n"
    with ScriptedServer(Script().add("*", answer), faults=Faults(seed=1, **rates)) as srv:
        resp = [chat(srv, f"p{i}").json()["choices"][0] for i in range(40)]
        stats = srv.stats
    assert set(stats.faults) == set(rates)
    texts = [c["message"]["content"] for c in resp]
    assert "" in texts
    assert any("```python\n" in t for t in texts)  # the wrong language
    assert any(c["finish_reason"] == "length" for c in resp)
    malformed = [t for t in texts if t.startswith('{"summary"')]
    assert malformed
    for t in malformed:
        with pytest.raises(json.JSONDecodeError):
            json.loads(t)


def test_timeout_fault_stalls_and_is_not_an_answer() -> None:
    faults = Faults(rate_timeout=1.0, timeout_delay_s=2.0, max_faults_per_key=1)
    with ScriptedServer(Script().add("*", "ok"), faults=faults) as srv:
        with pytest.raises(httpx.ReadTimeout):
            chat_timeout(srv, 0.3)
        assert srv.stats.unanswered_keys  # requested, never answered
        assert contents(chat(srv, "x")) == ["ok"]
        # The server counts an answer once it has sent it: the client can read it first.
        deadline = time.monotonic() + 5.0
        while srv.stats.unanswered_keys and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.stats.unanswered_keys == [] and srv.stats.duplicates == 0


def chat_timeout(srv: ScriptedServer, timeout: float) -> httpx.Response:
    body = {"model": "scripted", "messages": [{"role": "user", "content": "x"}]}
    return HTTP.post(srv.base_url + "/chat/completions", json=body, timeout=timeout)


def test_state_file_keeps_answers_across_servers(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with ScriptedServer(script(), state_path=state) as srv:
        first = contents(chat(srv, "task-a"))
    with ScriptedServer(script(), state_path=state) as srv:
        again = contents(chat(srv, "task-a"))
        nxt = contents(chat(srv, "task-a", seed=1))
        stats = srv.stats
    assert again == first and nxt == ["A2"]
    assert stats.duplicates == 1 and stats.answers_served == 3


def test_script_files(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("tasks:\n  t1: [one, {content: two, finish_reason: length}]\n")
    s = load_script(tmp_path / "s.yaml")
    assert s.answer("t1", 1).finish_reason == "length" and s.answer("t1", 9).content == "two"
    s.dump(tmp_path / "s.json")
    assert load_script(tmp_path / "s.json") == s
    (tmp_path / "bad.json").write_text('{"tasks": {"t": []}}')
    with pytest.raises(ConfigError, match="non-empty"):
        load_script(tmp_path / "bad.json")
    (tmp_path / "bad.yaml").write_text("tasks: [")
    with pytest.raises(ConfigError, match="not valid yaml"):
        load_script(tmp_path / "bad.yaml")


def test_standalone(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"tasks": {"*": ["hello"]}}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "perfgym.llm.scripted", "--script", str(tmp_path / "s.json"),
         "--port", str(port)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url == f"http://127.0.0.1:{port}/v1"
        r = httpx.post(url + "/chat/completions", json={"model": "scripted", "messages": []})
        assert r.json()["choices"][0]["message"]["content"] == "hello"
    finally:
        proc.kill()
        proc.wait()


def test_a_client_resetting_its_connection_prints_nothing(capfd) -> None:
    """A reset mid-request is the client's going away, not the server's error: no traceback on
    stderr (it would land in the one-line error of a CLI running the server in-process)."""
    import struct

    with ScriptedServer(Script().add("*", "ok")) as srv:
        host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
        sock = socket.create_connection((host, int(port)))
        sock.sendall(b"POST /v1/chat/compl")  # half a request line, then a reset (RST)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        time.sleep(0.3)
        assert contents(chat(srv, "still serving")) == ["ok"]
    assert "Traceback" not in capfd.readouterr().err


def test_two_requests_of_a_task_never_share_a_position() -> None:
    """`ordinal + hint * n` is not one-to-one: prompt 1's second sample and prompt 2's first
    both make 2. The optimiser asking an unchanged prompt again for a new sample then got the
    repair prompt's answer once more, and never reached the script's reference (a flaky
    tests/optimize/test_optimize_cli.py). The later request takes the next free position."""
    from perfgym.llm.scripted_state import ScriptState

    state = ScriptState()
    a = state.positions("k-a", "t", "prompt-a", 0, 1)  # ordinal 0, sample 0 -> 0
    b = state.positions("k-b", "t", "prompt-b", 0, 1)  # ordinal 1, sample 0 -> 1
    c = state.positions("k-c", "t", "prompt-c", 0, 1)  # ordinal 2, sample 0 -> 2
    b2 = state.positions("k-b2", "t", "prompt-b", 1, 1)  # ordinal 1, sample 1 -> 2: taken
    d = state.positions("k-d", "t", "prompt-d", 0, 1)  # ordinal 3 -> 3: taken by b2
    got = [p[0][1] for p in (a, b, c, b2, d)]
    assert got == [0, 1, 2, 3, 4]
    assert state.positions("k-b2", "t", "prompt-b", 1, 1) == b2  # memoized
    other = state.positions("k-x", "u", "prompt-x", 0, 1)  # another task: its own positions
    assert other == [["u", 0]]
