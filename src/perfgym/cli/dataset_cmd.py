"""`perfgym dataset grpo|sft|dpo SUITE --out-dir DIR`: training datasets (parquet, loadable with
Hugging Face `datasets`) from a suite, its graded pools and judged results files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from perfgym.cli import app
from perfgym.cli.options import legacy_out_option, out_dir_option, resolve_out_dir
from perfgym.cli.output import console, fail

dataset_app = typer.Typer(help="Build GRPO prompt, SFT and DPO datasets (see docs/training-verl.md).",
                          no_args_is_help=True)  # fmt: skip
app.add_typer(dataset_app, name="dataset")

_OUT = out_dir_option("required: where NAME.parquet and NAME.json are written")
_LEGACY_OUT = legacy_out_option()
_SPLIT = typer.Option("train", "--split", help="train, val or test; 'all' for every task.")


def _suite(spec: str) -> Any:
    from perfgym.errors import PerfgymError
    from perfgym.tasks.suite import load_suite

    try:
        return load_suite(spec)
    except PerfgymError as exc:
        fail(str(exc))


def _split(split: str) -> str | None:
    return None if split == "all" else split


def _out(out: Path | None, legacy: Path | None) -> Path:
    """The folder to write into: --out-dir (or its deprecated spelling -o/--out), required."""
    folder = resolve_out_dir(out, legacy, "dataset")
    if folder is None:
        fail("dataset: --out-dir is required (the folder for NAME.parquet and NAME.json)")
    return folder


def _write(rows: list[dict[str, Any]], out: Path, name: str, **config: Any) -> None:
    from perfgym.train.dataset_io import write_dataset

    path = write_dataset(rows, out, name, **config)
    console.print(f"wrote {len(rows)} rows to {path}", soft_wrap=True, highlight=False)


def _entries(suite: Any, results: list[Path], pool: bool, split: str | None) -> list[Any]:
    from perfgym.store.results_file import read_results
    from perfgym.train.dataset import check_family_disjoint
    from perfgym.train.dataset_pairs import entries_from_verdicts, graded_ladder

    check_family_disjoint(suite)
    chosen = suite.split(split) if split else suite
    ids = set(chosen.ids())
    entries = []
    if pool:
        for task in chosen.tasks:
            entries += graded_ladder(task)
    for path in results:
        _, verdicts = read_results(path)
        entries += [e for e in entries_from_verdicts(suite, verdicts, where=str(path))
                    if e.task_id in ids]  # fmt: skip
    return entries


@dataset_app.command("grpo")
def grpo(suite: str = typer.Argument(..., help="A built-in suite name or a path."),
         split: str = _SPLIT,
         prompt: str = typer.Option("rlpf", "--prompt", help="Prompt kind: rlpf."),
         data_source: str | None = typer.Option(None, "--data-source",
                                                help="What verl's adapter loads the suite from "
                                                "(default: the suite argument)."),
         out: Path | None = _OUT, legacy_out: Path | None = _LEGACY_OUT) -> None:  # fmt: skip
    """One row per task: a chat `prompt` and the columns the reward needs."""
    from perfgym.errors import PerfgymError
    from perfgym.train.dataset import grpo_rows

    folder = _out(out, legacy_out)
    s = _suite(suite)
    try:
        rows = grpo_rows(s, _split(split), prompt=prompt, data_source=data_source or suite)
        _write(rows, folder, split, kind="grpo", suite=s.name, split=split, prompt=prompt)
    except PerfgymError as exc:
        fail(str(exc))


@dataset_app.command("sft")
def sft(suite: str = typer.Argument(..., help="A built-in suite name or a path."),
        results: list[Path] = typer.Option([], "--results", help="Judged results JSONL (repeatable)."),
        no_pool: bool = typer.Option(False, "--no-pool", help="Leave out the suite's graded pools."),
        split: str = _SPLIT, out: Path | None = _OUT,
        legacy_out: Path | None = _LEGACY_OUT) -> None:  # fmt: skip
    """Afterburner SFT: a slower correct solution in the prompt, a faster one as the answer."""
    from perfgym.errors import PerfgymError
    from perfgym.train.dataset_pairs import sft_rows

    folder = _out(out, legacy_out)
    s = _suite(suite)
    try:
        rows = sft_rows(s, _entries(s, results, not no_pool, _split(split)))
        _write(rows, folder, f"sft-{split}", kind="sft", suite=s.name, split=split, pool=not no_pool,
               results=[str(p) for p in results])  # fmt: skip
    except PerfgymError as exc:
        fail(str(exc))


@dataset_app.command("dpo")
def dpo(suite: str = typer.Argument(..., help="A built-in suite name or a path."),
        results: list[Path] = typer.Option(..., "--results", help="Judged results JSONL (repeatable)."),
        split: str = _SPLIT, out: Path | None = _OUT,
        legacy_out: Path | None = _LEGACY_OUT) -> None:  # fmt: skip
    """DPO pairs: chosen significantly faster and correct, rejected slower or incorrect."""
    from perfgym.errors import PerfgymError
    from perfgym.train.dataset_pairs import dpo_rows

    folder = _out(out, legacy_out)
    s = _suite(suite)
    try:
        rows, left_out = dpo_rows(s, _entries(s, results, False, _split(split)))
        _write(rows, folder, f"dpo-{split}", kind="dpo", suite=s.name, split=split,
               left_out_not_significant=left_out, results=[str(p) for p in results])  # fmt: skip
    except PerfgymError as exc:
        fail(str(exc))
    console.print(f"left out {left_out} pairs whose difference was not significant",
                  highlight=False)  # fmt: skip
