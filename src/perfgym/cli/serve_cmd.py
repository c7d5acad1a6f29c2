"""`perfgym serve`: the judge over HTTP for trainers and evaluations on other machines."""

from __future__ import annotations

from pathlib import Path

import typer

from perfgym.cli import app
from perfgym.cli.output import err_console, fail, one_line


def load_config(path: Path | None) -> dict:
    """A ServiceConfig file (YAML or JSON); its fields are the ServiceConfig fields."""
    import yaml

    if path is None:
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        fail(f"cannot read {path}: {exc}")
    if not isinstance(data, dict):
        fail(f"{path}: expected a mapping of ServiceConfig fields")
    return data


@app.command("serve")
def serve_(
    config: Path | None = typer.Option(None, "--config", help="ServiceConfig file (YAML/JSON)."),
    host: str | None = typer.Option(None, "--host", help="Bind address (default 127.0.0.1)."),
    port: int | None = typer.Option(None, "--port", help="TCP port (default 8765)."),
    token: str | None = typer.Option(
        None, "--token", envvar="PERFGYM_TOKEN", help="Bearer token (required off loopback)."
    ),
    state_dir: str | None = typer.Option(None, "--state-dir", help="Where the queue persists."),
    store: str | None = typer.Option(None, "--store", help="Result store for judged verdicts."),
    workers: int | None = typer.Option(
        None, "--workers", help="Worker processes (default: cores)."
    ),
    max_queue: int | None = typer.Option(None, "--max-queue", help="Unfinished items held."),
    repeats: int | None = typer.Option(None, "--repeats", help="Measured runs per workload."),
    epoch: str | None = typer.Option(None, "--epoch", help="Calibration epoch of the results."),
    suite: list[str] = typer.Option([], "--suite", help="Suites requests may name (repeatable)."),
    reuse_stored: bool | None = typer.Option(
        None, "--reuse-stored/--no-reuse-stored", help="Answer known candidates from the store."
    ),
    hidden: bool | None = typer.Option(
        None,
        "--hidden/--no-hidden",
        help="Decide on hidden workloads drawn fresh per batch (what training rewards need; "
        "BatchReward refuses a service without them). Default: the declared workloads.",
    ),
    log_level: str = typer.Option("warning", "--log-level", help="uvicorn log level."),
) -> None:
    """Serve judge batches, rewards and raw sandbox runs (see docs/service.md)."""
    from perfgym.errors import PerfgymError
    from perfgym.service.config import ServiceConfig
    from perfgym.service.server.process import serve

    data = load_config(config)
    overrides = {"host": host, "port": port, "token": token, "state_dir": state_dir,
                 "store": store, "workers": workers, "max_queue": max_queue, "epoch": epoch,
                 "reuse_stored": reuse_stored, "suites": suite or None}  # fmt: skip
    data.update({k: v for k, v in overrides.items() if v is not None})
    if repeats is not None:
        data["judge"] = {**data.get("judge", {}), "repeats": repeats}
    if hidden is not None:
        data["judge"] = {**data.get("judge", {}), "hidden_workloads": hidden}
    try:
        cfg = ServiceConfig.model_validate(data)
        cfg.check_bind()
    except PerfgymError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(f"invalid service configuration: {one_line(exc)}")
    auth = "bearer token required" if cfg.token else "no token (loopback only)"
    err_console.print(f"perfgym serve on http://{cfg.host}:{cfg.port} ({auth}); "
                      f"queue in {cfg.state_dir}, verdicts in {cfg.store_path()}")  # fmt: skip
    serve(cfg, log_level=log_level)
