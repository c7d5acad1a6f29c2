"""Exporting the store's verdicts to JSONL (lossless) and Parquet (flat columns for analysis)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from perfgym.errors import ConfigError
from perfgym.judge.verdict import Timing
from perfgym.store.jsontext import dump_json
from perfgym.store.result_store import ResultStore, StoredVerdict


def _estimate(t: Timing | None) -> float | None:
    return None if t is None else t.estimate_s


def flat_row(row: StoredVerdict) -> dict[str, Any]:
    """One verdict as flat columns, plus the full verdict as JSON (nothing is dropped)."""
    v = row.verdict
    return {
        "key": row.key,
        "machine": row.machine,
        "epoch": row.epoch,
        "run": row.run,
        "created": row.created,
        "task_id": v.task_id,
        "suite": v.suite,
        "model": v.model,
        "sample": v.sample,
        "language": v.language,
        "stage": v.stage.value,
        "detail": v.detail,
        "infra_error": v.infra_error,
        "tests_passed": sum(t.passed for t in v.tests),
        "tests_run": len(v.tests),
        "candidate_s": _estimate(v.candidate),
        "candidate_cv": None if v.candidate is None else v.candidate.cv,
        "candidate_timing_status": None if v.candidate is None else v.candidate.status.value,
        "baseline_s": _estimate(v.baseline),
        "reference_s": _estimate(v.reference),
        "peak_rss_mb": None if v.candidate is None else v.candidate.peak_rss_mb,
        "verdict_json": dump_json(v),
    }


def export_jsonl(store: ResultStore, path: Path, *, task_id: str | None = None) -> int:
    """One line per stored verdict: the key columns and the whole verdict. Returns the count."""
    n = 0
    tmp = path.with_suffix(path.suffix + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tmp.open("w") as f:
        for row in store.iter_verdicts(task_id=task_id):
            line = {"key": row.key, "machine": row.machine, "epoch": row.epoch, "run": row.run,
                    "created": row.created, "verdict": row.verdict.model_dump(mode="json")}  # fmt: skip
            f.write(json.dumps(line) + "\n")
            n += 1
    tmp.replace(path)
    return n


def export_parquet(store: ResultStore, path: Path, *, task_id: str | None = None) -> int:
    """A Parquet table of `flat_row` columns (needs pyarrow). Returns the row count."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ConfigError(
            "Parquet export needs pyarrow: pip install 'perfgym[service]' or pip install pyarrow"
        ) from exc
    rows = [flat_row(r) for r in store.iter_verdicts(task_id=task_id)]
    schema = pa.schema(
        [
            ("key", pa.string()), ("machine", pa.string()), ("epoch", pa.string()),
            ("run", pa.string()), ("created", pa.float64()), ("task_id", pa.string()),
            ("suite", pa.string()), ("model", pa.string()), ("sample", pa.int64()),
            ("language", pa.string()), ("stage", pa.string()), ("detail", pa.string()),
            ("infra_error", pa.bool_()), ("tests_passed", pa.int64()), ("tests_run", pa.int64()),
            ("candidate_s", pa.float64()), ("candidate_cv", pa.float64()),
            ("candidate_timing_status", pa.string()), ("baseline_s", pa.float64()),
            ("reference_s", pa.float64()), ("peak_rss_mb", pa.float64()),
            ("verdict_json", pa.string()),
        ]
    )  # fmt: skip
    table = pa.Table.from_pylist(rows, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    pq.write_table(table, str(tmp))
    tmp.replace(path)
    return len(rows)
