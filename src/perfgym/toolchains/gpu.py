"""Whether an NVIDIA GPU is present, and the device nodes a GPU run needs bound in."""

from __future__ import annotations

import glob
import os

from perfgym.errors import ToolchainMissing
from perfgym.sandbox.base import Bind

#: Control and unified-memory nodes a CUDA program opens besides its GPU's own /dev/nvidiaN.
_CONTROL_NODES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools")


class GpuUnavailable(ToolchainMissing):
    """A program needs an NVIDIA GPU to run and this host has none."""


def gpu_devices() -> list[str]:
    """The host's GPU device nodes (/dev/nvidia0, /dev/nvidia1, ...)."""
    return sorted(glob.glob("/dev/nvidia[0-9]*"))


def gpu_missing_reason() -> str | None:
    """Why CUDA programs cannot run here, or None when a GPU is present."""
    if not gpu_devices():
        return "no NVIDIA GPU on this host (no /dev/nvidia0, /dev/nvidia1, ... device)"
    if not os.path.exists("/dev/nvidiactl"):
        return "NVIDIA GPU device present but /dev/nvidiactl is missing (driver not loaded?)"
    return None


def gpu_binds() -> list[Bind]:
    """Binds that make the GPU usable inside a run (the sandbox's /dev holds only basic nodes).

    /dev/nvidia-uvm appears only once the driver created it (nvidia-modprobe, run as root,
    normally at the first CUDA call on the host); an unprivileged run cannot create it itself.
    """
    nodes = [*gpu_devices(), *(n for n in _CONTROL_NODES if os.path.exists(n))]
    return [Bind(host_path=n, sandbox_path=n, writable=True) for n in nodes]
