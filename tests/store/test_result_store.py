"""The SQLite store: keys, round trips, machines and epochs, concurrent writer processes, schema
migrations and export."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3

import pytest
from small_tasks import sum_task
from store_helpers import make_verdict, write_verdicts

from perfgym.errors import ConfigError
from perfgym.judge.config import JudgeConfig
from perfgym.judge.verdict import Stage
from perfgym.store import (
    ANY_MACHINE,
    ResultStore,
    StoreConfig,
    config_digest,
    export_jsonl,
    export_parquet,
    schema,
    task_digest,
    verdict_key,
)
from perfgym.store.sqlite import connect


def test_keys_follow_content_not_location_or_speed_settings(tmp_path):
    task = sum_task()
    moved = task.model_copy(update={"root": tmp_path})
    assert task_digest(task) == task_digest(moved)
    assert task_digest(task) != task_digest(task.model_copy(update={"goal": "other"}))
    assert config_digest(JudgeConfig()) == config_digest(JudgeConfig(concurrency=7))
    assert config_digest(JudgeConfig(repeats=2)) != config_digest(JudgeConfig(repeats=7))
    cfg = JudgeConfig()
    as_source = verdict_key(task, cfg, completion=None, source="print(1)")
    as_text = verdict_key(task, cfg, completion="print(1)", source=None)
    assert as_source != as_text
    assert as_source == verdict_key(task_digest(task), config_digest(cfg), completion=None,
                                    source="print(1)")  # fmt: skip
    with pytest.raises(ValueError):
        verdict_key(task, cfg, completion="a", source="b")


def test_round_trip_newest_wins_and_machines_epochs_are_separate(tmp_path):
    path = tmp_path / "s.sqlite"
    with ResultStore(path) as store:
        store.put_verdicts([("k1", make_verdict("a", estimate=0.5)), ("k2", make_verdict("b"))])
        store.put_verdicts([("k1", make_verdict("a", estimate=0.25))], run="second")
        got = store.get_verdicts(["k1", "k2", "absent"])
        assert set(got) == {"k1", "k2"}
        assert got["k1"].candidate is not None and got["k1"].candidate.estimate_s == 0.25
        assert store.count_verdicts() == 2
        store.put_verdicts([("k3", make_verdict("c"))], machine="elsewhere/abc")
        assert store.get_verdicts(["k3"]) == {}
        assert set(store.get_verdicts(["k3"], machine=ANY_MACHINE)) == {"k3"}
        assert store.get_verdicts(["k1"], epoch="1") == {}
        runs = {r.key: r.run for r in store.iter_verdicts()}
        assert runs["k1"] == "second"
    with ResultStore(StoreConfig(path=str(path), epoch="1")) as later:
        assert later.get_verdicts(["k1"]) == {}  # a new calibration epoch starts empty
        later.put_verdicts([("k1", make_verdict("a", estimate=9.0))])
        assert later.get_verdicts(["k1"])["k1"].candidate.estimate_s == 9.0
    with ResultStore(path) as again:
        assert again.get_verdicts(["k1"])["k1"].candidate.estimate_s == 0.25


def test_concurrent_writer_processes_lose_nothing(tmp_path):
    path = str(tmp_path / "s.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=write_verdicts, args=(path, w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with ResultStore(path) as store:
        assert store.count_verdicts() == 4 * 60 + 10
        got = store.get_verdicts([f"w{w}-{i}" for w in range(4) for i in range(60)])
        assert len(got) == 240
        assert got["w3-59"].candidate.estimate_s == 60.0
        assert store.schema_version() == schema.VERSION


def store_tables(path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return {name for (name,) in rows}


def test_migrates_a_version_1_store_and_refuses_a_newer_one(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = connect(path)
    schema.migrate(conn, target=1)
    row = make_verdict("old")
    conn.execute(
        "INSERT INTO verdicts (key, machine, epoch, task_id, stage, infra_error, created, "
        "perfgym_version, verdict) VALUES ('k', 'm', '0', 'old', 'OK', 0, 1.0, '0.0', ?)",
        (row.model_dump_json(),),
    )
    assert schema.version_of(conn) == 1
    conn.close()
    with ResultStore(path) as store:
        assert store.schema_version() == schema.VERSION
        (stored,) = list(store.iter_verdicts())
        assert (stored.key, stored.machine, stored.run) == ("k", "m", "")
        assert stored.verdict == row
        # Migrated to the newest schema: verdicts only (step 4 drops the never-written
        # executions table of step 2).
        assert store_tables(path) == {"verdicts"}
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError, match="newer than"):
        ResultStore(path)


def test_export_jsonl_and_parquet(tmp_path):
    with ResultStore(tmp_path / "s.sqlite") as store:
        store.put_verdicts([("k1", make_verdict("a", model="m1", sample=2)),
                            ("k2", make_verdict("b", stage=Stage.WO, estimate=0.1))], run="r")  # fmt: skip
        assert export_jsonl(store, tmp_path / "out.jsonl") == 2
        lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
        assert [x["key"] for x in lines] == ["k1", "k2"]
        assert lines[0]["verdict"]["model"] == "m1" and lines[1]["run"] == "r"
        pq = pytest.importorskip("pyarrow.parquet", reason="Parquet export needs pyarrow")
        assert export_parquet(store, tmp_path / "out.parquet") == 2
        table = pq.read_table(tmp_path / "out.parquet").to_pylist()
        assert [r["stage"] for r in table] == ["OK", "WO"]
        assert table[0]["candidate_s"] == 0.5 and table[0]["baseline_s"] == 1.0
        assert table[0]["sample"] == 2 and table[1]["tests_passed"] == 0
        assert json.loads(table[1]["verdict_json"])["task_id"] == "b"
