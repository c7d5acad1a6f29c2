"""`perfgym audit`: probes that find what a suite's tasks would wrongly reward (lookup tables,
trivial answers, the baseline again, a program that idles when timed) and what their timings
cannot resolve (headroom, detectable change, clock resolution, determinism, limit margin)."""

from perfgym.audit.registry import Probe, get_probe, list_probes, register_probe, select_probes
from perfgym.audit.results import (
    AuditSummary,
    Outcome,
    ProbeKind,
    ProbeResult,
    Severity,
    SuiteAudit,
    TaskAudit,
)

__all__ = [
    "AuditSummary",
    "Outcome",
    "Probe",
    "ProbeKind",
    "ProbeResult",
    "Severity",
    "SuiteAudit",
    "TaskAudit",
    "get_probe",
    "list_probes",
    "register_probe",
    "select_probes",
]
