"""`Bind`: a host directory or file made visible inside one run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Bind(BaseModel):
    """A host directory or file made visible inside the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host_path: str = Field(description="Absolute path on the host.")
    sandbox_path: str = Field(description="Absolute path inside the run, normally under /tmp.")
    writable: bool = Field(False, description="Writable bind (builds write their outputs here).")

    @field_validator("host_path", "sandbox_path")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/") or "\x00" in v:
            raise ValueError(f"bind paths must be absolute: {v!r}")
        return v
