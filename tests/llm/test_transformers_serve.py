"""perfgym's model client against a real third-party server: Hugging Face's `transformers serve`
over a tiny random Qwen2 model built here (nothing downloaded), as a child process on loopback.

The model writes garbage, so these tests check the pipeline, not the answers: requests made and
replayed, verdicts recorded with a stage and a reason, exit codes, one-line errors. The first
test measures which OpenAI request fields this server honours; docs/llm.md states the results.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import httpx
import pytest
from model_server import TransformersServe
from typer.testing import CliRunner

from perfgym.cli import app

# One server start (about 10 s) and three judged commands: minutes on a loaded 2-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TASK = "py-lis-dp"  # the cheapest Python baseline of perfgym-core to measure
MAX_TOKENS = 48


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """(server, model folder): one `transformers serve` for the module, ended at its end; the
    server's process builds the tiny model (torch loads there only)."""
    missing = [m for m in ("torch", "transformers", "fastapi", "uvicorn") if not find_spec(m)]
    if missing:
        pytest.skip(f"transformers serve needs {', '.join(missing)} (scripts/setup test)")
    root = tmp_path_factory.mktemp("tserve")
    model = root / "tiny-qwen2"
    with TransformersServe(model, root / "serve.log", build_tiny=True) as server:
        yield server, model


def config_file(tmp_path: Path, served, **extra: object) -> Path:  # type: ignore[no-untyped-def]
    server, model = served
    fields = {"model": str(model), "base_url": server.base_url, "max_tokens": MAX_TOKENS,
              "api_key_env": "PERFGYM_TEST_NO_KEY", "max_retries": 1, **extra}  # fmt: skip
    path = tmp_path / "model.toml"
    path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))
    return path


def invoke(*args: object):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [str(a) for a in args])


def chat(served, **body: object) -> dict:  # type: ignore[no-untyped-def,type-arg]
    server, model = served
    body = {"model": str(model), "messages": [{"role": "user", "content": "Sum a list."}],
            "max_tokens": 12, **body}  # fmt: skip
    r = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def text(answer: dict) -> str:  # type: ignore[type-arg]
    return answer["choices"][0]["message"]["content"]  # type: ignore[no-any-return]


def test_which_openai_fields_the_server_honours(served) -> None:  # type: ignore[no-untyped-def]
    """Measured, one request at a time (the seed is the server's global torch seed)."""
    # seed: the same seed answers the same; another seed answers otherwise.
    a, b, c = (text(chat(served, seed=s, temperature=1.0)) for s in (11, 11, 12))
    assert a == b and a != c
    # max_tokens: a cap, and a capped answer says finish_reason "length".
    capped = chat(served, seed=11, max_tokens=5)
    assert capped["usage"]["completion_tokens"] == 5
    assert capped["choices"][0]["finish_reason"] == "length"
    # n: ignored, one choice (perfgym always sends n=1, one request per sample).
    assert len(chat(served, seed=11, n=3)["choices"]) == 1
    # response_format json_schema: accepted (200) and ignored, the answer is not JSON.
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "strict": True,
              "schema": {"type": "object", "properties": {"code": {"type": "string"}}}}}  # fmt: skip
    shaped = text(chat(served, seed=11, response_format=schema))
    assert shaped == text(chat(served, seed=11))
    with pytest.raises(ValueError):
        json.loads(shaped)
    # stop: honoured, but the answer keeps the stop string, up to the end of the token that
    # completed it (OpenAI's servers drop it).
    stop = a[6:8]
    stopped = text(chat(served, seed=11, temperature=1.0, stop=[stop]))
    assert stop in stopped and a.startswith(stopped) and len(stopped) < len(a)
    # GET /v1/models fails (it scans the hub cache); perfgym's preflight lets a 5xx pass.
    server, _ = served
    assert httpx.get(f"{server.base_url}/models", timeout=30).status_code == 500


def test_generate_asks_once_per_sample_then_replays(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cfg, out, db = config_file(tmp_path, served), tmp_path / "c.jsonl", tmp_path / "s.sqlite"
    args = ["generate", "perfgym-core", "--model-config", cfg, "--task", TASK, "-k", "2",
            "-o", out, "--store", db, "--json", "-q"]  # fmt: skip
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert summary["requests"] == 2 and summary["replayed"] == 0, summary
    lines = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert sorted(ln["sample"] for ln in lines) == [0, 1]
    for ln in lines:
        gen = ln["generation"]
        assert ln["task_id"] == TASK and ln["model"].endswith("tiny-qwen2")
        assert 0 < gen["usage"]["completion_tokens"] <= MAX_TOKENS
        assert gen["usage"]["prompt_tokens"] > 100  # perfgym's prompt, through the chat template
        assert gen["truncated"] == (gen["finish_reason"] == "length")
        assert ("source" in ln) != ("completion" in ln)  # extracted, or kept raw for NX
    # seed + sample index: two samples, two different answers.
    assert len({ln.get("source") or ln.get("completion") for ln in lines}) == 2
    out.unlink()
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert summary["requests"] == 0 and summary["replayed"] == 2, summary
    assert [json.loads(ln) for ln in out.read_text().splitlines()] == lines


def test_eval_model_records_a_verdict_per_sample(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Streamed (SSE): the server ignores stream_options but still sends usage in the last chunk.
    cfg, out = config_file(tmp_path, served, stream=True), tmp_path / "r.jsonl"
    _, model = served
    res = invoke("eval", "perfgym-core", "--model", model, "--model-config", cfg, "--task", TASK,
                 "-k", "2",
                 "--repeats", "1", "-o", out, "--store", tmp_path / "s.sqlite", "--no-report",
                 "-q")  # fmt: skip
    assert res.exit_code == 0, res.output
    header, *verdicts = (json.loads(ln) for ln in out.read_text().splitlines())
    totals = header["perfgym_results"]["totals"]
    assert totals["requests"] == 2 and totals["completion_tokens"] > 0, totals
    assert sorted(v["sample"] for v in verdicts) == [0, 1]
    for v in verdicts:
        # Garbage never passes; each failure names its stage and why.
        assert v["task_id"] == TASK and v["stage"] in ("NX", "NC", "NR", "WO"), v
        assert v["reason"] and not v["infra_error"], v


def test_optimize_runs_a_round_and_keeps_the_baseline(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cfg, out = config_file(tmp_path, served), tmp_path / "opt"
    res = invoke("optimize", "perfgym-core", "--model-config", cfg, "--task", TASK,
                 "--iterations", "1", "--repeats", "1", "--store", tmp_path / "h.sqlite",
                 "-o", out, "--no-report", "-q")  # fmt: skip
    assert res.exit_code == 0, res.output
    run = json.loads((out / "optimize.json").read_text())
    assert run["timing"]["model_calls"] >= 1 and run["timing"]["tokens"] > 0
    assert [it["iteration"] for it in run["iterations"]] == [1]
    assert run["iterations"][0]["accepted"] == 0  # no garbage beat the baseline
    (task,) = run["tasks"]
    assert task["task_id"] == TASK and task["best"] == "baseline"


def test_a_model_the_server_refuses_is_one_line_and_exit_2(served, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server, _ = served
    res = invoke("generate", "perfgym-core", "--model", "no-such-model", "--base-url",
                 server.base_url, "--task", TASK, "-o", tmp_path / "c.jsonl", "--no-store",
                 "-q")  # fmt: skip
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code == 2, res.output
    assert len(lines) == 1 and lines[0].startswith("error:") and "HTTP 400" in lines[0], lines


def test_the_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    """A parent SIGKILLed (no teardown runs) still takes the server with it."""
    helpers = Path(__file__).resolve().parents[1] / "helpers"
    starter = (f"import sys; sys.path.insert(0, {str(helpers)!r}); import model_server, time; "
               "p = model_server.spawn_tied([sys.executable, '-c', 'import time; time.sleep(300)']); "
               "print(p.pid, flush=True); time.sleep(300)")  # fmt: skip
    parent = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        os.kill(child, 0)  # alive
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
