"""The conventions users of lm-eval, inspect and evalplus expect: -h on every command,
--version, --limit/--split/-o, flags shown as flags, conflicting options refused in one line,
and a start-up that loads no scipy, numpy, Ray or FastAPI (issue 15, item 6)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cli_helpers import one_line_error, perfgym
from small_tasks import SUM
from typer.testing import CliRunner

from perfgym import __version__
from perfgym.cli import app, eval_cmd, simulate_cmd
from perfgym.cli.options import SPLITS, select_tasks
from perfgym.tasks.suite import load_suite

COMMANDS = ("audit", "eval", "list", "run", "report", "serve", "simulate", "validate")


@pytest.mark.parametrize("command", [(), *((c,) for c in COMMANDS)])
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_h_and_help_work_on_every_command(command, flag):
    result = CliRunner().invoke(app, [*command, flag])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_version():
    p = perfgym("--version")
    assert p.returncode == 0 and p.stdout.strip() == f"perfgym {__version__}"


@pytest.mark.parametrize("command", COMMANDS)
def test_boolean_flags_are_shown_as_flags(command):
    text = CliRunner().invoke(app, [command, "-h"], terminal_width=200).output
    assert "<bool>" not in text
    assert "/--no-" not in text or command == "serve"  # serve's --reuse-stored is tri-state


def test_eval_flags_read_as_their_names():
    text = CliRunner().invoke(app, ["eval", "-h"], terminal_width=200).output
    for name in ("--no-report", "--no-store", "--limit", "--split", "--seed", "--output",
                 "-o", "-v", "-q", "--allow-missing", "--skip-bad-lines", "--format"):  # fmt: skip
        assert name in text, name


def test_start_up_loads_no_heavy_dependency():
    code = "import json, sys; import perfgym.cli; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    heavy = [m for m in loaded if m.split(".")[0] in ("scipy", "numpy", "ray", "fastapi",
                                                       "uvicorn", "httpx", "matplotlib")]  # fmt: skip
    assert heavy == []


def test_the_help_texts_constants_equal_the_real_ones():
    from perfgym.enamel.protocol import REPEATS
    from perfgym.registry import Kind, names
    from perfgym.simulate import RANKINGS
    from perfgym.tasks.task import Split

    assert eval_cmd.ENAMEL_REPEATS_SHOWN == REPEATS
    assert sorted(eval_cmd.BACKENDS_SHOWN) == names(Kind.BACKENDS)
    assert tuple(RANKINGS) == simulate_cmd.RANKINGS_SHOWN
    assert tuple(s.value for s in Split) == SPLITS


def test_split_then_limit_selects_the_first_tasks_of_the_split():
    tasks = load_suite("perfgym-core").tasks
    val = [t for t in tasks if t.split.value == "val"]
    assert select_tasks(list(tasks), "val", 2, "perfgym-core") == val[:2]
    assert select_tasks(list(tasks), None, 3, "perfgym-core") == list(tasks[:3])
    assert select_tasks(list(tasks), None, None, "perfgym-core") == list(tasks)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--solutions", "baseline", "--candidates", "c.jsonl"], ["--solutions", "--candidates"]),
        (["-v", "-q"], ["-v cannot be combined with -q"]),
        (["--replay", "--no-store"], ["--replay", "--no-store"]),
        (["--replay-machine", "*"], ["--replay-machine has no effect without --replay"]),
        (["--url", "http://x"], ["--url has no effect without --backend service"]),
        (["--address", "auto"], ["--address has no effect without --backend ray"]),
        (["--allow-missing"], ["--allow-missing has no effect without --candidates"]),
        (["--skip-bad-lines"], ["--skip-bad-lines has no effect without --candidates"]),
        (["--format", "evalplus"], ["--format has no effect without --candidates"]),
        (["--limit", "0"], ["--limit must be at least 1, got 0"]),
        (["--split", "dev"], ["unknown --split 'dev'", "train, val, test"]),
    ],
)
def test_conflicting_or_orphan_options_are_one_line_errors(tmp_path, suite, args, needles):
    p = perfgym("eval", suite, *args, "--no-report", "-o", tmp_path / "o.jsonl")
    one_line_error(p, *needles)
    assert not (tmp_path / "o.jsonl").exists()


def test_unknown_format_is_refused(tmp_path, suite):
    cands = tmp_path / "c.jsonl"
    cands.write_text(json.dumps({"task_id": "sum-a", "source": SUM}) + "\n")
    p = perfgym("eval", suite, "--candidates", cands, "--format", "humaneval", "--no-store",
                "-o", tmp_path / "o.jsonl")  # fmt: skip
    one_line_error(p, "unknown --format 'humaneval'", "lm-eval")


def test_output_short_and_quiet(tmp_path, suite):
    out = tmp_path / "short.jsonl"
    p = perfgym("eval", suite, "--no-store", "--no-report", "--repeats", "1", "-q", "-o", out)
    assert p.returncode == 0, p.stderr[-3000:]
    assert out.is_file() and "┃" not in p.stdout and f"results: {out}" in p.stdout
