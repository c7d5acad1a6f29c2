"""The probe registry (names, kinds, bad names) and the audit results file (resume, refusals)."""

from __future__ import annotations

import pytest

from perfgym.audit.registry import get_probe, list_probes, register_probe, select_probes
from perfgym.audit.results import Outcome, ProbeKind, ProbeResult, Severity, TaskAudit
from perfgym.audit.resume import AuditFile
from perfgym.errors import ConfigError


def test_a_kind_names_all_of_its_probes_and_an_unknown_name_is_refused():
    names = [p.name for p in select_probes(["measurability"])]
    assert names == list_probes(ProbeKind.MEASURABILITY) and "headroom" in names
    assert [p.name for p in select_probes(["mde,lookup-table", "mde"])] == ["lookup-table", "mde"]
    with pytest.raises(ConfigError, match="bogus"):
        select_probes(["lookup-table,bogus"])
    with pytest.raises(ConfigError):
        get_probe("bogus")


def test_a_probe_name_is_registered_once():
    with pytest.raises(ConfigError, match="already registered"):
        register_probe("headroom", ProbeKind.MEASURABILITY)(lambda: get_probe("headroom"))


def _audit(task_id: str) -> TaskAudit:
    r = ProbeResult(probe="mde", kind=ProbeKind.MEASURABILITY, outcome=Outcome.SOUND,
                    severity=Severity.NONE)  # fmt: skip
    return TaskAudit(task_id=task_id, language="python", kind="stdio", results=[r])


def test_a_line_cut_short_by_an_interrupt_is_audited_again(tmp_path):
    path, header = tmp_path / "a.jsonl", {"suite": "s", "probes": ["mde"], "machine": "m"}
    f = AuditFile(path, header, resume=False)
    f.add(_audit("t1"))
    f.add(_audit("t2"))
    f.close()
    text = path.read_text()
    path.write_text(text[: len(text) - 20])  # the last task's line cut mid-way
    again = AuditFile(path, header, resume=True)
    again.close()
    assert set(again.done) == {"t1"}


def test_results_of_another_machine_or_probe_set_are_not_reused(tmp_path):
    path, header = tmp_path / "a.jsonl", {"suite": "s", "probes": ["mde"], "machine": "m"}
    f = AuditFile(path, header, resume=False)
    f.add(_audit("t1"))
    f.close()
    with pytest.raises(ConfigError, match="machine"):
        AuditFile(path, {**header, "machine": "other"}, resume=True)
    fresh = AuditFile(path, {**header, "machine": "other"}, resume=False)
    fresh.close()
    assert fresh.done == {}
    path.write_text("not json\n")
    with pytest.raises(ConfigError, match="not an audit results file"):
        AuditFile(path, header, resume=True)
