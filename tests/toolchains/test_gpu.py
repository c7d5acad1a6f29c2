"""GPU detection follows the host's /dev, and GPU binds name only existing device nodes."""

from __future__ import annotations

import glob
import os

from perfgym.toolchains.gpu import gpu_binds, gpu_devices, gpu_missing_reason


def test_detection_matches_dev():
    present = bool(glob.glob("/dev/nvidia[0-9]*")) and os.path.exists("/dev/nvidiactl")
    assert (gpu_missing_reason() is None) == present
    if not present:
        assert "GPU" in (gpu_missing_reason() or "")


def test_binds_are_existing_device_nodes():
    binds = gpu_binds()
    assert [b.host_path for b in binds][: len(gpu_devices())] == gpu_devices()
    for b in binds:
        assert os.path.exists(b.host_path) and b.sandbox_path == b.host_path
