"""`ModelConfig`: which endpoint and model to call, how to sample, retry and pay; from TOML/YAML.

The API key itself is never part of the config: `api_key_env` names the environment variable
that holds it, and only that name is ever written anywhere. A config file is TOML (`.toml`) or
YAML (`.yaml`/`.yml`) with the fields below at its top level; CLI flags override it.

    model = "Qwen/Qwen2.5-Coder-7B-Instruct"
    base_url = "http://127.0.0.1:8000/v1"
    api_key_env = "VLLM_API_KEY"
    temperature = 0.2
    max_tokens = 4096
    [prices."Qwen/Qwen2.5-Coder-7B-Instruct"]
    input_per_mtok = 0.0
    output_per_mtok = 0.0
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from perfgym.errors import ConfigError

#: What the client sends when the key's variable is unset (local servers need no key, but the
#: openai client refuses an empty one).
NO_KEY = "EMPTY"


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(default=0.0, ge=0)
    output_per_mtok: float = Field(default=0.0, ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok
        ) / 1e6


class ModelConfig(BaseModel):
    """One model endpoint and its sampling, retry, concurrency and price settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, description="The model name the server serves.")
    base_url: str = Field(default="https://api.openai.com/v1", description="Ends in /v1.")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Variable holding the key.")
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = Field(
        default=0, description="Sent as seed + sample index (None: no seed is sent)."
    )
    n: int = Field(default=1, ge=1, description="Default samples per prompt (`--samples`).")
    timeout_s: float = Field(default=600.0, gt=0, description="Per request.")
    concurrency: int = Field(default=8, ge=1, le=1024, description="Requests in flight at most.")
    max_retries: int = Field(default=6, ge=0, le=100)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=30.0, ge=0)
    retry_after_max_s: float = Field(
        default=120.0, ge=0, description="A longer Retry-After is waited as this long."
    )
    stream: bool = Field(default=False, description="Stream answers (SSE) and assemble them.")
    json_output: bool = Field(
        default=True, description="Ask for the caller's JSON schema where the server supports it."
    )
    allow_empty: bool = Field(
        default=False, description="Keep an empty answer (else it is an EmptyAnswer error)."
    )
    sample_header: bool = Field(
        default=True, description="Send X-Perfgym-Sample-Index (scripted servers follow it)."
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Extra request fields (e.g. vLLM's own options)."
    )
    prices: dict[str, Price] = Field(default_factory=dict, description="Model name -> price.")
    endpoint: str | None = Field(
        default=None,
        description="The server's identity in every call key (None: the base URL). perfgym's "
        "in-process scripted server names its script here, since its port changes every run.",
    )

    def api_key(self) -> str:
        """The key from the environment (never stored), or NO_KEY when the variable is unset."""
        return os.environ.get(self.api_key_env) or NO_KEY

    def key_is_set(self) -> bool:
        return bool(os.environ.get(self.api_key_env))

    def price(self) -> Price:
        return self.prices.get(self.model, Price())

    def endpoint_id(self) -> str:
        """Which server answers: part of every call key, so a different server (or a wrong
        URL) with the same model name is asked, never replayed from another's answers."""
        return self.endpoint or self.base_url.rstrip("/")

    def sampling(self) -> dict[str, Any]:
        """The parameters that change an answer (part of every call key)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "extra_body": self.extra_body,
        }


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The fields of a TOML or YAML model config file (ConfigError naming the file otherwise)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read model config {path}: {exc}") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError or yaml.YAMLError
        raise ConfigError(f"model config {path} is not valid "
                          f"{'YAML' if path.suffix in ('.yaml', '.yml') else 'TOML'}: "
                          f"{str(exc).splitlines()[0]}") from None  # fmt: skip
    if not isinstance(data, dict):
        raise ConfigError(f"model config {path}: expected a table of fields")
    return data


def build_config(file: str | Path | None = None, **overrides: Any) -> ModelConfig:
    """The config of `file` (if any) with every override that is not None on top."""
    fields: dict[str, Any] = read_config_file(file) if file is not None else {}
    fields.update({k: v for k, v in overrides.items() if v is not None})
    where = f"model config {file}" if file is not None else "model settings"
    try:
        return ModelConfig.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first["loc"]) or "config"
        raise ConfigError(f"{where}: {name}: {first['msg']}") from None
