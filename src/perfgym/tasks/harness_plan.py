"""The concrete steps to build and run one variant of a harness task (PerfCodeBench semantics).

PerfCodeBench builds a variant (baseline, reference or candidate) like this, with every command
run from the benchmark root (the parent of `executable_tasks/`):
  1. copy each `copy_sources_to_build` file into the build directory (under its own name);
  2. compile form: `<compiler> <cxxflags...> <sources...> -o {build_dir}/bench`;
     command form: run `command`; skip form: nothing;
  3. run `run.argv`, or `{build_dir}/bench` when the task has no `run`.
`plan_harness` expands the placeholders and returns these steps; running them (in the sandbox)
is the judge's job.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from perfgym.errors import TaskFormatError
from perfgym.tasks.placeholders import expand_placeholders
from perfgym.tasks.task import Task

BINARY_NAME = "bench"


class FileCopy(BaseModel):
    """Copy `source` to `target` before building."""

    model_config = ConfigDict(extra="forbid")

    source: Path
    target: Path


class HarnessPlan(BaseModel):
    """Build and run steps for one variant, placeholders expanded."""

    model_config = ConfigDict(extra="forbid")

    cwd: Path = Field(description="Working directory of every step: the benchmark root.")
    copies: list[FileCopy] = Field(default_factory=list)
    build_argv: list[str] | None = Field(
        default=None, description="None: nothing to build (skip form)."
    )
    run_argv: list[str]


def plan_harness(
    task: Task, *, variant_dir: str | Path, build_dir: str | Path, root: str | Path | None = None
) -> HarnessPlan:
    """The build and run steps of `task` for the solution in `variant_dir`.

    `root` defaults to the grandparent of the task directory (the PerfCodeBench root).
    """
    if task.harness is None or task.root is None:
        raise TaskFormatError(f"task {task.id!r} has no harness loaded from a directory")
    spec = task.harness.build
    task_dir = task.root
    root_dir = Path(root) if root is not None else task_dir.parent.parent

    def expand(argv: list[str]) -> list[str]:
        return expand_placeholders(
            argv, task_dir=task_dir, variant_dir=variant_dir, build_dir=build_dir, root=root_dir
        )

    copies = []
    for text in expand(spec.copy_sources_to_build):
        source = root_dir / text  # absolute paths stay absolute
        copies.append(FileCopy(source=source, target=Path(build_dir) / source.name))
    build_argv: list[str] | None
    if spec.skip:
        build_argv = None
    elif spec.command is not None:
        build_argv = expand(spec.command)
    else:
        assert spec.compiler is not None
        binary = str(Path(build_dir) / BINARY_NAME)
        build_argv = [spec.compiler, *expand(spec.cxxflags), *expand(spec.sources), "-o", binary]
    if task.harness.run_argv is not None:
        run_argv = expand(task.harness.run_argv)
    else:
        run_argv = [str(Path(build_dir) / BINARY_NAME)]
    return HarnessPlan(cwd=root_dir, copies=copies, build_argv=build_argv, run_argv=run_argv)
