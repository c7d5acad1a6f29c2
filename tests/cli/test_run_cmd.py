"""`perfgym run` end to end through the real CLI entry point."""

import json
import subprocess
import sys


def perfgym(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "perfgym", *args], capture_output=True,
                          text=True, input=stdin, timeout=60)  # fmt: skip


def test_run_json_reports_measurement():
    p = perfgym("run", "--json", "--", "python3", "-c", "print('hi')")
    assert p.returncode == 0, p.stderr
    ex = json.loads(p.stdout)
    assert ex["status"] == "OK"
    assert ex["measurement"]["wall_s"] > 0
    assert ex["measurement"]["mechanisms"]["memory"]


def test_run_table_and_failure_exit_code():
    p = perfgym("run", "--", "python3", "-c", "import sys; sys.exit(4)")
    assert p.returncode == 1
    assert "RUNTIME_ERROR" in p.stdout


def test_invalid_limits_are_a_clear_error():
    p = perfgym("run", "--wall", "-1", "--", "true")
    assert p.returncode == 2
    assert "invalid limits" in p.stderr and "wall_s" in p.stderr
    assert "Traceback" not in p.stderr


def test_bad_file_argument():
    p = perfgym("run", "--file", "nopath", "--", "true")
    assert p.returncode == 2 and "NAME=PATH" in p.stderr
