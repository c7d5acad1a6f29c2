"""The result store: verdicts in SQLite keyed by content, machine and calibration epoch;
replay without execution; export to JSONL and Parquet."""

from perfgym.store.export import export_jsonl, export_parquet
from perfgym.store.keys import config_digest, task_digest, verdict_key
from perfgym.store.replay import RecordingJudge, ReplayMissing, candidate_keys
from perfgym.store.result_store import ANY_MACHINE, ResultStore, StoreConfig, StoredVerdict

__all__ = [
    "ANY_MACHINE",
    "RecordingJudge",
    "ReplayMissing",
    "ResultStore",
    "StoreConfig",
    "StoredVerdict",
    "candidate_keys",
    "config_digest",
    "export_jsonl",
    "export_parquet",
    "task_digest",
    "verdict_key",
]
