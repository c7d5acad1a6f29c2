"""Models as JSON text that every string survives: a lone surrogate included.

pydantic writes JSON as UTF-8 and refuses a lone surrogate (`"\\ud800"`, which a JSON line
or a decoded stream can hold); its reader refuses the `\\ud800` escape too. A verdict naming
such a model or source is still a verdict, so these fall back to the standard library, whose
JSON escapes the surrogate as `\\ud800` (ASCII, lossless: it reads back as the same string).
"""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

M = TypeVar("M", bound=BaseModel)


def dump_json(model: BaseModel) -> str:
    """`model.model_dump_json()`, or the same object escaped by `json.dumps` when a string in
    it is not valid Unicode text."""
    try:
        return model.model_dump_json()
    except PydanticSerializationError:
        return json.dumps(model.model_dump(mode="json"), separators=(",", ":"))


def load_json(cls: type[M], text: str | bytes) -> M:
    """`cls.model_validate_json(text)`, reading `\\ud800`-style escapes `dump_json` wrote."""
    try:
        return cls.model_validate_json(text)
    except ValidationError as exc:
        if not any(e["type"] == "json_invalid" for e in exc.errors()):
            raise
        return cls.model_validate(json.loads(text))
