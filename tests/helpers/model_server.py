"""`TransformersServe`: Hugging Face's `transformers serve` (an OpenAI-compatible server) as a
real child process on a free loopback port, serving one local model folder, offline.

The child dies with the test: the context manager's exit ends its process group, and the kernel
kills it (PR_SET_PDEATHSIG) if the process that started it dies first, however it died.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

PR_SET_PDEATHSIG = 1

#: `transformers serve` without the CLI's update check (which would look for the network).
SERVE = "import sys; from transformers.cli.transformers import app; app(sys.argv[1:])"
#: The same, after building tiny_lm's servable model into the folder it serves: torch and
#: transformers load once, in the child (seconds of CPU), not also in the test process.
BUILD_THEN_SERVE = (
    "import sys; from pathlib import Path; sys.path.insert(0, sys.argv.pop(1)); "
    "from tiny_lm import save_servable; save_servable(Path(sys.argv[2])); "
    + SERVE.split("; ", 1)[1]
)
HELPERS = str(Path(__file__).resolve().parent)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_tied(argv: list[str], *, env: dict[str, str] | None = None,
               log: Path | None = None) -> subprocess.Popen[bytes]:  # fmt: skip
    """`argv` in its own process group, SIGKILLed by the kernel when this process dies (the
    signal follows the forking thread: call it from the main thread, as fixtures run)."""
    parent = os.getpid()

    def tie() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the tie was made
            os._exit(1)

    out = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=tie)  # fmt: skip
    finally:
        if log is not None:
            out.close()  # type: ignore[union-attr]


def end(proc: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """SIGTERM the process group, then SIGKILL it if still alive after `grace_s`."""
    if proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


class TransformersServe:
    """`transformers serve MODEL_DIR` on 127.0.0.1 (CPU, offline), for `with` blocks; with
    `build_tiny`, the child first builds tiny_lm's servable model into MODEL_DIR."""

    def __init__(self, model_dir: Path, log: Path, *, build_tiny: bool = False,
                 start_timeout_s: float = 300.0) -> None:  # fmt: skip
        self.model_dir = model_dir
        self.build_tiny = build_tiny
        self.log = log
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> TransformersServe:
        home = self.log.parent / "hf-home"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "HF_HOME": str(home), "HF_HUB_DISABLE_TELEMETRY": "1",
               "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
        code = [BUILD_THEN_SERVE, HELPERS] if self.build_tiny else [SERVE]
        argv = [sys.executable, "-c", *code, "serve", str(self.model_dir), "--host", "127.0.0.1",
                "--port", str(self.port), "--device", "cpu", "--log-level", "warning"]  # fmt: skip
        self.proc = spawn_tied(argv, env=env, log=self.log)
        try:
            self._wait_healthy()
        except BaseException:
            end(self.proc)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            end(self.proc)

    def _wait_healthy(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self.proc.returncode}):\n"
                                   + self.log.read_text(errors="replace")[-3000:])  # fmt: skip
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"transformers serve was not healthy in {self.start_timeout_s:g} s:\n"
                           + self.log.read_text(errors="replace")[-3000:])  # fmt: skip
