"""mini-swe-agent, imported quietly: no banner, its config folder and .env kept out of $HOME."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def quiet_import() -> None:
    """Set mini-swe-agent's start-up switches before its first import (it prints a banner,
    creates a config folder and loads a .env from it at import time)."""
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    if "MSWEA_GLOBAL_CONFIG_DIR" not in os.environ:
        folder = Path(tempfile.gettempdir()) / "perfgym-mswea-config"
        folder.mkdir(parents=True, exist_ok=True)
        os.environ["MSWEA_GLOBAL_CONFIG_DIR"] = str(folder)
