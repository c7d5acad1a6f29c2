"""`perfgym serve` from the command line: it serves, refuses an open bind without a token, and a
bad setting is one line on stderr."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
from cli_helpers import one_line_error, perfgym
from typer.testing import CliRunner

from perfgym.cli import app
from perfgym.service.server.process import free_port


def test_serve_refuses_open_bind_without_token():
    r = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "without a bearer token" in r.output


def test_serve_serves_with_config_file_and_overrides(tmp_path):
    port = free_port()
    cfg = tmp_path / "service.yaml"
    cfg.write_text(f"port: {port + 1}\nmax_queue: 7\njudge: {{repeats: 2}}\n")
    cmd = [sys.executable, "-c", "from perfgym.cli import app; app()", "serve", "--config",
           str(cfg), "--port", str(port), "--state-dir", str(tmp_path / "state"),
           "--workers", "1", "--token", "tok"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        headers = {"Authorization": "Bearer tok"}
        end, r = time.monotonic() + 60, None
        while time.monotonic() < end:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/v1/config", headers=headers)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert r is not None and r.status_code == 200
        cfg_seen = r.json()
        assert cfg_seen["max_queue"] == 7 and cfg_seen["judge"]["repeats"] == 2
        assert httpx.get(f"http://127.0.0.1:{port}/v1/config").status_code == 401
    finally:
        proc.terminate()
        proc.wait(30)
    assert b"perfgym serve on http://127.0.0.1" in proc.stderr.read()


def test_serve_bad_config_is_one_line():
    one_line_error(perfgym("serve", "--port", "-1", timeout=60), "port")
