"""py-spy in perfgym's sandbox on a copy: the hotspot two layers down is found, setup() and
interpreter start-up are left out, the prompt block is bounded, failures are caught."""

from __future__ import annotations

import json

import pytest

from perfgym.agent.errors import ProfileError
from perfgym.agent.hotspots import parse_folded, summary_text
from perfgym.agent.profile import ProfileConfig, profile_workload
from perfgym.agent.shell import command_limits
from perfgym.repos.copy import make_copy


@pytest.fixture(scope="module")
def copy(dedup_task):  # type: ignore[no-untyped-def]
    c = make_copy(dedup_task.repo, folder=dedup_task.folder)
    yield c
    c.remove()


def _visible(task):  # type: ignore[no-untyped-def]
    return (task.folder / task.visible_workloads[0].script).read_text()


def test_hotspot_two_layers_down_and_setup_filtered(sandbox, dedup_task, copy):  # type: ignore[no-untyped-def]
    cfg = ProfileConfig(rate=200, seconds=0.6, native=True)
    p = profile_workload(sandbox, copy.path, "visible", _visible(dedup_task), config=cfg,
                         limits=command_limits(60, 1024))  # fmt: skip
    top = p.report.hotspots[0]
    assert top.function == "dedup" and top.file == "dedup/_core.py" and top.user_code
    assert top.self_pct > 50 and top.total_pct >= top.self_pct
    assert [s.split(" (")[0] for s in top.call_path] == [
        "experiment",
        "count_unique",
        "unique",
        "dedup",
    ]
    assert p.loops >= 1 and p.report.kept_samples > 20
    names = {h.function for h in p.report.hotspots}
    assert "_heavy_setup_work" not in names and "setup" not in names and "<module>" not in names
    assert "_heavy_setup_work" not in p.folded and "_heavy_setup_work" not in p.speedscope
    doc = json.loads(p.speedscope)
    assert doc["profiles"][0]["type"] == "sampled"
    assert sum(doc["profiles"][0]["weights"]) == p.report.kept_samples
    assert "dedup/_core.py:" in p.summary and len(p.summary) < 3200


def test_prompt_block_is_bounded():  # type: ignore[no-untyped-def]
    from perfgym.agent.hotspots import hotspots

    lines = "".join(
        f"experiment (/tmp/w.py:3);f{i} (/work/repo/m{i}.py:{i + 1}) {i + 1}\n" for i in range(300)
    )
    report = hotspots(parse_folded(lines), "w.py", "/work/repo", top=300)
    text = summary_text(report, max_chars=800)
    assert len(text) <= 850 and text.endswith("(more hotspots cut)\n")
    assert report.hotspots[0].function == "f299"


def test_native_and_third_party_flags():  # type: ignore[no-untyped-def]
    from perfgym.agent.hotspots import hotspots

    folded = (
        "experiment (/tmp/w.py:3);sum (/root/.pyenv/versions/3.11.7/lib/python3.11/site-packages/numpy/core/fromnumeric.py:88);"
        "0x7f00 (libc.so.6) 30\n"
        "experiment (/tmp/w.py:3);g (/work/repo/pkg/m.py:5) 10\n"
    )
    spots = {h.function: h for h in hotspots(parse_folded(folded), "w.py", "/work/repo").hotspots}
    assert spots["0x7f00"].native and not spots["0x7f00"].user_code
    assert spots["sum"].third_party and not spots["sum"].native
    assert spots["g"].user_code and not spots["g"].third_party and spots["g"].file == "pkg/m.py"
    assert spots["0x7f00"].self_pct == 75.0


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (
            "def setup():\n    return 1\n\ndef experiment(s):\n    raise ValueError('boom')\n",
            "ValueError",
        ),
        ("import sys\nsys.exit(7)\n", "SystemExit 7"),
        ("def setup():\n    return 1\n", "AttributeError.*experiment"),
    ],
)
def test_failing_workload_is_a_profile_error(sandbox, copy, source, words):  # type: ignore[no-untyped-def]
    with pytest.raises(ProfileError, match=words):
        profile_workload(sandbox, copy.path, "bad", source, config=ProfileConfig(seconds=0.2),
                         limits=command_limits(30, 512))  # fmt: skip
