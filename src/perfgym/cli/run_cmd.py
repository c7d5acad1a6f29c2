"""`perfgym run [limits] -- CMD...`: one sandboxed, measured execution."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from perfgym.cli import app
from perfgym.cli.output import console, fail, print_json

if TYPE_CHECKING:  # the sandbox loads when the command runs: --help stays fast
    from rich.table import Table

    from perfgym.sandbox import Execution


def execution_table(ex: Execution) -> Table:
    from rich.table import Table

    t = Table(title=f"execution ({ex.backend})", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    t.add_row("status", ex.status.value + (f" — {ex.reason}" if ex.reason else ""))
    t.add_row("exit code / signal", f"{ex.exit_code} / {ex.signal}")
    m = ex.measurement
    if m is not None:
        t.add_row("wall time", f"{m.wall_s * 1000:.2f} ms")
        t.add_row("cpu time (user+sys)", f"{m.cpu_s * 1000:.2f} ms ({m.cpu_user_s * 1000:.2f} + "
                  f"{m.cpu_system_s * 1000:.2f})")  # fmt: skip
        t.add_row("peak memory (tree)", f"{m.peak_rss_mb:.2f} MiB")
        t.add_row("memory integral", f"{m.memory_integral_mb_s:.4f} MiB·s")
        t.add_row("instructions", str(m.instructions) if m.instructions is not None
                  else f"unavailable: {m.instructions_unavailable}")  # fmt: skip
        t.add_row(
            "samples",
            f"{m.samples} at {m.sample_rate_hz:g} Hz; max processes {m.max_processes_seen}",
        )
        t.add_row("host", m.host)
        for k, v in m.mechanisms.items():
            t.add_row(f"mechanism: {k}", v)
    out = ex.stdout_text
    t.add_row("stdout" + (" (truncated)" if ex.stdout_truncated else ""), out[-2000:])
    t.add_row("stderr" + (" (truncated)" if ex.stderr_truncated else ""), ex.stderr_text[-2000:])
    return t


@app.command("run")
def run(
    command: list[str] = typer.Argument(..., help="The command to run, after `--`."),
    wall: float = typer.Option(10.0, "--wall", help="Wall-time limit, seconds."),
    cpu: float | None = typer.Option(
        None, "--cpu", help="CPU-time limit, seconds (default: wall)."
    ),
    memory: float = typer.Option(1024.0, "--memory", help="Memory limit, MiB."),
    procs: int = typer.Option(64, "--procs", help="Most processes/threads at once."),
    stdout_bytes: int = typer.Option(8 << 20, "--stdout-bytes", help="Stdout cap, bytes."),
    disk: int = typer.Option(256 << 20, "--disk", help="Writable work-dir quota, bytes."),
    network: bool = typer.Option(False, "--network", help="Allow network access."),
    stdin_file: Path | None = typer.Option(None, "--stdin", help="File fed to stdin."),
    file: list[str] = typer.Option([], "--file", help="NAME=PATH copied into the work dir."),
    backend: str = typer.Option("warm", "--backend", help="Sandbox backend: warm | bwrap."),
    sample_rate: float = typer.Option(500.0, "--sample-rate", help="Memory sampling rate, Hz."),
    as_json: bool = typer.Option(False, "--json", help="Print the execution as JSON."),
) -> None:
    """Run CMD in the sandbox and print its execution and measurement."""
    from pydantic import ValidationError

    from perfgym.errors import PerfgymError
    from perfgym.sandbox import Limits, SandboxConfig, make_sandbox
    from perfgym.tasks.suite import perfgym_core_candidates
    from perfgym.toolchains.cache import DEFAULT_ROOT

    try:
        limits = Limits(wall_s=wall, cpu_s=cpu, memory_mb=memory, max_processes=procs,
                        stdout_bytes=stdout_bytes, disk_bytes=disk, network=network)  # fmt: skip
        # The judge's view: the allow-list, with the build cache and the built-in suites (their
        # reference solutions) covered wherever the view would show them.
        hide = [DEFAULT_ROOT, *(str(p) for p in perfgym_core_candidates())]
        config = SandboxConfig(sample_rate_hz=sample_rate, hide_paths=hide)
    except ValidationError as exc:
        fail("invalid limits: " + "; ".join(e["msg"] for e in exc.errors()))
    files: dict[str, bytes] = {}
    for spec in file:
        name, sep, path = spec.partition("=")
        if not sep or not name:
            fail(f"--file expects NAME=PATH, got {spec!r}")
        try:
            files[name] = Path(path).read_bytes()
        except OSError as exc:
            fail(f"cannot read {path}: {exc.strerror}")
    stdin = b""
    if stdin_file is not None:
        try:
            stdin = stdin_file.read_bytes()
        except OSError as exc:
            fail(f"cannot read {stdin_file}: {exc.strerror}")
    try:
        with make_sandbox(backend, config) as sb:
            ex = sb.run(command, stdin=stdin, files=files, limits=limits)
    except PerfgymError as exc:
        fail(str(exc))
    if as_json:
        print_json(ex.model_dump(mode="json"))
    else:
        console.print(execution_table(ex))
    raise typer.Exit(0 if ex.ok else 1)
