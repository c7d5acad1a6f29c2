"""The model options every command that calls a model shares, and opening the model they name.

`--model NAME|scripted`, `--model-config FILE` (TOML/YAML), `--base-url`, `--api-key-env`,
`--temperature`, `--top-p`, `--max-tokens`, `--seed`, `--concurrency`, `--timeout`,
`--max-retries`, `--stream`, `--no-json`, `--allow-empty`: flags win over the file.
`--model scripted` without `--base-url` starts perfgym's scripted server in-process with the
suite's script (built from its tasks' graded solutions), so a command runs offline.

typer cannot spread a group of options into a command's signature, so each option has its
factory here (a command lists the ones it takes) and `ModelFlags` gathers their values.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from perfgym.llm.client import ModelClient
    from perfgym.llm.config import ModelConfig
    from perfgym.llm.script import Script
    from perfgym.llm.scripted import ScriptedServer
    from perfgym.tasks.task import Task

#: The model name that means perfgym's scripted server.
SCRIPTED = "scripted"


def model_option() -> Any:
    return typer.Option(None, "--model", help="Model name the server serves, or 'scripted'.")


def model_config_option() -> Any:
    return typer.Option(None, "--model-config", help="Model config file (TOML or YAML).")


def base_url_option() -> Any:
    return typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (ends in /v1).")


def api_key_env_option() -> Any:
    return typer.Option(
        None, "--api-key-env", help="Environment variable holding the API key (never stored)."
    )


def temperature_option() -> Any:
    return typer.Option(None, "--temperature", help="Sampling temperature.")


def top_p_option() -> Any:
    return typer.Option(None, "--top-p", help="Nucleus sampling top_p.")


def max_tokens_option() -> Any:
    return typer.Option(None, "--max-tokens", help="Most tokens per answer.")


def model_seed_option() -> Any:
    return typer.Option(None, "--model-seed", help="Sampling seed (sent as seed + sample index).")


def concurrency_option() -> Any:
    return typer.Option(None, "--concurrency", help="Model requests in flight at most.")


def timeout_option() -> Any:
    return typer.Option(None, "--timeout", help="Seconds per model request.")


def max_retries_option() -> Any:
    return typer.Option(None, "--max-retries", help="Retries of a failed model request.")


def stream_option() -> Any:
    return typer.Option(None, "--stream/--no-stream", help="Stream answers (SSE).")


def no_json_option() -> Any:
    return typer.Option(False, "--no-json", help="Never ask for JSON output (plain text).")


def allow_empty_option() -> Any:
    return typer.Option(False, "--allow-empty", help="Judge empty answers as NX (no error).")


@dataclass
class ModelFlags:
    """The model options' values, as one command received them."""

    model: str | None = None
    model_config: Path | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    concurrency: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    stream: bool | None = None
    no_json: bool = False
    allow_empty: bool = False

    @property
    def given(self) -> bool:
        return self.model is not None or self.model_config is not None

    def config(self) -> ModelConfig:
        """The ModelConfig: the file's fields, these flags on top (ConfigError if invalid).
        Every model command asks for it first, so a missing `llm` extra is said (one line, by
        `perfgym.cli.main`) before anything is written."""
        import importlib.util

        from perfgym.llm.config import build_config

        if importlib.util.find_spec("openai") is None:
            raise ModuleNotFoundError("No module named 'openai'", name="openai")

        return build_config(
            self.model_config,
            model=self.model, base_url=self.base_url, api_key_env=self.api_key_env,
            temperature=self.temperature, top_p=self.top_p, max_tokens=self.max_tokens,
            seed=self.seed, concurrency=self.concurrency, timeout_s=self.timeout,
            max_retries=self.max_retries, stream=self.stream,
            json_output=False if self.no_json else None,
            allow_empty=True if self.allow_empty else None,
        )  # fmt: skip


@contextlib.contextmanager
def open_model(
    flags: ModelFlags,
    tasks: list[Task],
    *,
    call_log: str | Path | None,
    scripted_state: Path | None = None,
) -> Iterator[tuple[ModelClient, ScriptedServer | None]]:
    """(client, scripted server or None): the client over the call log at `call_log` (None: no
    log). `--model scripted` without a base URL serves `tasks`' script on loopback meanwhile
    (its memo in `scripted_state`, if given). Raises ConfigError / ModelError for bad input."""
    from perfgym.llm.client import ModelClient
    from perfgym.store.calls import CallLog

    config = flags.config()
    server = None
    with contextlib.ExitStack() as stack:
        if config.model == SCRIPTED and flags.base_url is None and "base_url" not in _file(flags):
            from perfgym.llm.core_script import suite_script
            from perfgym.llm.scripted import ScriptedServer

            script = suite_script(tasks, SCRIPTED)
            server = stack.enter_context(ScriptedServer(script, state_path=scripted_state))
            config = config.model_copy(update={"base_url": server.base_url,
                                               "endpoint": script_endpoint(script)})  # fmt: skip
        log = stack.enter_context(CallLog(call_log)) if call_log is not None else None
        yield ModelClient(config, call_log=log), server


def script_endpoint(script: Script) -> str:
    """The call-key identity of perfgym's scripted server serving `script` (its port changes
    every run; its answers change only with the script)."""
    return "perfgym-scripted:" + hashlib.sha256(script.model_dump_json().encode()).hexdigest()[:16]


def _file(flags: ModelFlags) -> dict[str, Any]:
    from perfgym.llm.config import read_config_file

    return read_config_file(flags.model_config) if flags.model_config is not None else {}
