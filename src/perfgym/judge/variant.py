"""Preparing one variant (candidate, baseline, reference) of a task: extract and build it."""

from __future__ import annotations

import fcntl
import hashlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from perfgym.errors import ToolchainMissing
from perfgym.judge import sealed_exports, trailer
from perfgym.judge.extract import extract, not_text, shown
from perfgym.judge.replaced_calls import HARNESS_OBJECTS, OwnNames
from perfgym.judge.source_encoding import encoding_problem
from perfgym.judge.verdict import Stage
from perfgym.judge.whole_file import write_whole
from perfgym.sandbox.base import Bind, Sandbox
from perfgym.sandbox.execution import Measurement, Status
from perfgym.sandbox.pyworker import PythonWorkerPool
from perfgym.tasks.content_hash import content_hash
from perfgym.tasks.harness_files import tree_fingerprint, visible_entries
from perfgym.tasks.harness_plan import plan_harness
from perfgym.tasks.placeholders import expand_placeholders
from perfgym.tasks.task import Language, Task, TaskKind
from perfgym.toolchains import BUILD_LIMITS, BuildCache, BuildStatus, gpu_missing_reason, toolchain
from perfgym.toolchains.source_policy import refused

#: Where a harness task's pieces appear inside a run.
H_ROOT, H_VARIANT, H_BUILD = "/tmp/pg/root", "/tmp/pg/variant", "/tmp/pg/build"
_LOG_CAP = 16_000


@dataclass
class Variant:
    """A program ready to run, or the stage where it stopped (NX, NC) and why."""

    label: str
    source: str | None
    stage: Stage | None = None
    detail: str = ""
    reason: str = ""
    infra: bool = False
    extraction_rule: str = ""
    build_log: str = ""
    build_measurement: Measurement | None = None
    argv: list[str] = field(default_factory=list)
    binds: list[Bind] = field(default_factory=list)
    #: a harness task's end-mark wrapper (`perfgym.judge.trailer`): how its entry point is
    #: wrapped, or '' with `end_mark_why` it is not (then its verdict line is believed as read)
    end_mark: str = ""
    end_mark_why: str = ""
    #: a harness task's build folder (host path; '' where none) and, for the task's own
    #: solutions, what its ELF files import from shared libraries and define weak (None: not
    #: read yet; `replaced_calls.own_names`)
    build_dir: str = ""
    own_names: OwnNames | None = None
    #: a program's build artifact folder (host path; '' where none): `build_work` builds it
    #: once more and compares
    artifact_dir: str = ""

    @property
    def ready(self) -> bool:
        return self.stage is None and not self.infra


def prepare(
    task: Task,
    label: str,
    *,
    completion: str | None = None,
    source: str | None = None,
    sandbox: Sandbox,
    cache: BuildCache,
    workers: PythonWorkerPool | None = None,
) -> Variant:
    """Extract (when given raw model text) and build one variant of `task`: `extracted`, then
    `built`."""
    v = extracted(task, label, completion=completion, source=source)
    return v if v.stage is not None else built(task, v, sandbox=sandbox, cache=cache,
                                               workers=workers)  # fmt: skip


def extracted(
    task: Task, label: str, *, completion: str | None = None, source: str | None = None
) -> Variant:
    """The variant's source: `source` as given, or the code extracted from `completion`; NX
    (NO_CODE) when there is none or no file could hold it."""
    if source is None:
        ex = extract(completion or "", task.language)
        if not ex.ok:
            return Variant(label, None, Stage.NX, "NO_CODE", ex.reason, extraction_rule=ex.rule)
        source, rule = ex.source, ex.rule
    else:
        rule = "source"
    assert source is not None
    if (why := not_text(source)) is not None:  # no file, compiler or worker can take it
        return Variant(label, shown(source), Stage.NX, "NO_CODE", why, extraction_rule=rule)
    return Variant(label, source, extraction_rule=rule)


def built(
    task: Task,
    v: Variant,
    *,
    sandbox: Sandbox,
    cache: BuildCache,
    workers: PythonWorkerPool | None = None,
) -> Variant:
    """The extracted variant `v` built: ready to run, or stopped at NC (or NR: built, but it
    cannot run here). A function task's build is the parse of its source. Given warm Python
    `workers`, a Python program's syntax check runs there (see `perfgym.toolchains.warm_check`)
    rather than in a fresh sandbox: same outcome, a few ms instead of ~20."""
    assert v.source is not None and v.stage is None
    label, source, rule = v.label, v.source, v.extraction_rule
    if task.language is Language.PYTHON and (why := encoding_problem(source)):
        # Tests in a warm worker and timed runs in a fresh python3 would read different text.
        v.stage, v.detail, v.reason = Stage.NC, "COMPILE_ERROR", why
        return v
    if (why := refused(task.language, source.encode("utf-8", "surrogatepass"))) is not None:
        v.stage, v.detail, v.reason = Stage.NC, "COMPILE_ERROR", why  # a harness task's too
        return v
    if task.kind is TaskKind.FUNCTION:
        try:
            compile(source, "solution.py", "exec")  # parsing only; nothing runs here
        except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            # The last two: a source nested too deeply for the parser or the compiler, the
            # candidate's failure like any other (not an exception that loses the batch).
            v.stage, v.detail, v.reason = Stage.NC, "SYNTAX_ERROR", f"{type(exc).__name__}: {exc}"
        return v
    if task.kind is TaskKind.HARNESS:
        return _prepare_harness(task, label, source, rule, sandbox, cache)
    return _prepare_program(task, label, source, rule, sandbox, cache, workers)


def _prepare_program(
    task: Task,
    label: str,
    source: str,
    rule: str,
    sandbox: Sandbox,
    cache: BuildCache,
    workers: PythonWorkerPool | None,
) -> Variant:
    v = Variant(label, source, extraction_rule=rule)
    try:
        tc = toolchain(task.language)
    except Exception as exc:  # noqa: BLE001 - an unknown language is the task's problem
        v.stage, v.infra, v.detail, v.reason = Stage.NC, True, "TOOLCHAIN_MISSING", str(exc)
        return v
    build = tc.build(sandbox, source, cache, workers=workers)
    v.build_log = build.log[:_LOG_CAP]
    v.build_measurement = build.measurement
    v.artifact_dir = build.artifact_dir or ""
    if build.status is BuildStatus.COMPILE_ERROR:
        v.stage, v.detail, v.reason = Stage.NC, "COMPILE_ERROR", build.reason or "did not build"
        return v
    if build.status is not BuildStatus.OK:
        v.stage, v.infra, v.detail = Stage.NC, True, build.status.value
        v.reason = build.reason or build.status.value
        return v
    try:
        v.argv, v.binds = tc.run_command(build)
    except ToolchainMissing as exc:  # includes GpuUnavailable: built, but cannot run here
        v.stage, v.infra, v.reason = Stage.NR, True, str(exc)
        v.detail = "NEEDS_GPU" if task.language is Language.CUDA else "TOOLCHAIN_MISSING"
    return v


def _prepare_harness(
    task: Task, label: str, source: str, rule: str, sandbox: Sandbox, cache: BuildCache
) -> Variant:
    """PerfCodeBench: copy sources, run the task's build in the sandbox, plan its run."""
    assert task.harness is not None and task.root is not None
    v = Variant(label, source, extraction_rule=rule)
    root_host = task.root.parent.parent
    name = task.harness.solution_filename
    in_task = Path(H_ROOT) / task.root.relative_to(root_host)
    plan = plan_harness(
        task.model_copy(update={"root": in_task}),
        variant_dir=H_VARIANT,
        build_dir=H_BUILD,
        root=H_ROOT,
    )
    wrapped = trailer.wrap(
        task.language, plan, H_BUILD, task.root / "harness", solution=f"{H_VARIANT}/{name}"
    )
    # The build's key: the task's recipe and content (its folder's files: the harness), the
    # source, the wrapper's sources and its recipe, how its exports are sealed (a folder built
    # before sealing is not reused), the compiler and the external libraries it builds with.
    spec = task.harness.model_dump_json()
    libs = tree_fingerprint(str(_external(root_host, task.metadata.get("external"))))
    key = (f"{task.id}\0{spec}\0{content_hash(task)}\0{source}\0{trailer.version()}"
           f"\0{wrapped!r}\0sealed-{sealed_exports.VERSION}\0{_compiler(task)}"
           f"\0{libs}")  # fmt: skip
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    variant_host = cache.root / ".harness" / digest / "variant"
    build_host = cache.root / ".harness" / digest / "build"
    variant_host.mkdir(parents=True, exist_ok=True)
    build_host.mkdir(parents=True, exist_ok=True)
    build_host.chmod(0o777)  # written by the run's unprivileged uid
    write_whole(variant_host / name, source.encode())  # another judge may be running it
    trailer.install(build_host)
    v.end_mark, v.end_mark_why = wrapped.how, wrapped.why
    v.binds = [
        *_root_binds(root_host, task.root, task.metadata.get("external")),
        Bind(host_path=str(variant_host), sandbox_path=H_VARIANT),
        Bind(host_path=str(build_host), sandbox_path=H_BUILD),
    ]
    steps = [f"cp {shlex.quote(str(c.source))} {shlex.quote(str(c.target))}" for c in plan.copies]
    steps += wrapped.steps
    if wrapped.build_argv is not None:
        steps.append(shlex.join(wrapped.build_argv))
    # Beside the build directory, not in it (the build writes there): the build's measurement
    # with it, which a later judge restores (`build_work` weighs it; red team helper-100).
    marker = build_host.parent / "built.json"
    with open(build_host.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per variant directory
        failed = _build_harness(v, steps, marker, build_host, sandbox) if steps else False
    if failed:
        return v
    v.build_dir = str(build_host)
    if label in OWN_LABELS:
        _harness_objects(task, v, build_host, sandbox)
    if task.language is Language.CUDA and (why := gpu_missing_reason()) is not None:
        v.stage, v.infra, v.detail = Stage.NR, True, "NEEDS_GPU"
        v.reason = f"built, but running it needs a GPU: {why}"
        return v
    v.argv = ["sh", "-c", f'cd {H_ROOT} && exec "$@"', "sh", *wrapped.run_argv]
    return v


def _external(root_host: Path, external: str | None) -> Path:
    """Where a harness task's external/ libraries are (the task's own setting, else beside
    its benchmark's folders)."""
    return Path(external) if external else root_host / "external"


def _compiler(task: Task) -> str:
    """The version of the compiler of the task's language ('' where there is none here)."""
    try:
        return str(toolchain(task.language).version())
    except Exception:  # noqa: BLE001 - no compiler: the build itself says so
        return ""


def _root_binds(root_host: Path, task_root: Path, external: str | None) -> list[Bind]:
    """What a run of a harness task sees of the benchmark, read-only, at the paths its published
    recipe names: its own task's harness, headers and instance file at H_ROOT/<its path>, and
    PerfCodeBench's external/ libraries at H_ROOT/external. Not the solutions (`harness_files.SOLUTION_DIRS`)
    and not any other task (each of them holds its own reference)."""
    in_root = Path(H_ROOT) / task_root.relative_to(root_host)
    binds = [Bind(host_path=str(p), sandbox_path=str(in_root / p.name))
             for p in visible_entries(task_root)]  # fmt: skip
    libs = _external(root_host, external)
    if libs.is_dir():
        binds.append(Bind(host_path=str(libs), sandbox_path=f"{H_ROOT}/external"))
    return binds


#: The labels of a task's own solutions' variants (`references.ReferenceCache`).
OWN_LABELS = frozenset({"baseline", "reference"})
#: Compilers whose `-c` compiles a source alone to an object file.
_OBJECT_COMPILERS = re.compile(r"(gcc|g\+\+|cc|c\+\+|clang|clang\+\+|nvcc)(-[0-9.]+)?")


def _harness_objects(task: Task, v: Variant, build_host: Path, sandbox: Sandbox) -> None:
    """An own solution's build folder also gets the harness's sources compiled alone, each to
    an object (`replaced_calls.HARNESS_OBJECTS`): what the harness itself calls and instantiates,
    told apart from its solution's. A compile-form recipe of a compiler with `-c` only; once per
    folder; a failure leaves none (the rule then reads the own builds' binaries alone)."""
    assert task.harness is not None and task.root is not None
    spec = task.harness.build
    out = build_host / HARNESS_OBJECTS
    if (spec.compiler is None or spec.command is not None or spec.skip
            or not _OBJECT_COMPILERS.fullmatch(Path(spec.compiler).name)
            or (out / ".done").exists()):  # fmt: skip
        return
    in_task = Path(H_ROOT) / task.root.relative_to(task.root.parent.parent)

    def expand(argv: list[str]) -> list[str]:
        return expand_placeholders(argv, task_dir=in_task, variant_dir=H_VARIANT,
                                   build_dir=H_BUILD, root=H_ROOT)  # fmt: skip

    harness = expand([s for s in spec.sources if "{variant_dir}" not in s])
    if not harness:
        return
    objects = f"{H_BUILD}/{HARNESS_OBJECTS}"
    steps = [f"mkdir -p {objects}"] + [
        shlex.join([spec.compiler, *expand(spec.cxxflags), "-c", src, "-o", f"{objects}/{i}.o"])
        for i, src in enumerate(harness)
    ]  # fmt: skip
    writable = Bind(host_path=str(build_host), sandbox_path=H_BUILD, writable=True)
    ex = sandbox.run(["sh", "-c", f"cd {H_ROOT} && " + " && ".join(steps)],
                     binds=[*v.binds[:-1], writable], limits=BUILD_LIMITS,
                     env={"GOCACHE": "/tmp/gocache"})  # fmt: skip
    if ex.status is Status.OK:
        (out / ".done").write_text("ok\n")


def _build_harness(
    v: Variant, steps: list[str], marker: Path, build_host: Path, sandbox: Sandbox
) -> bool:
    """Run the harness build once per variant directory; True when it failed (v says why).
    A build done before (`marker`) gives `v` its measurement back: a skipped build without
    one was never flagged `build_work`, nor weighed its candidates' builds (red team
    helper-100: 35-48 s of constexpr work scored 1.26 from its second judgement on)."""
    if marker.exists():
        try:
            v.build_measurement = Measurement.model_validate_json(marker.read_text())
            return False
        except (OSError, ValueError):
            pass  # unreadable: built again, and the marker written anew
    script = f"cd {H_ROOT} && " + " && ".join(steps)
    writable = Bind(host_path=str(build_host), sandbox_path=H_BUILD, writable=True)
    env = {"GOCACHE": "/tmp/gocache"}
    ex = sandbox.run(
        ["sh", "-c", script], binds=[*v.binds[:-1], writable], limits=BUILD_LIMITS, env=env
    )
    v.build_log = (ex.stderr_text + ex.stdout_text)[:_LOG_CAP]
    v.build_measurement = ex.measurement
    if ex.status is Status.SANDBOX_ERROR:
        v.stage, v.infra, v.detail, v.reason = Stage.NC, True, "SANDBOX_ERROR", ex.reason
        return True
    if ex.status is not Status.OK:
        v.stage, v.detail = Stage.NC, "COMPILE_ERROR"
        v.reason = ex.reason or "the harness build failed"
        return True
    # before anything runs it: a library's calls of its own inline functions stay its own
    sealed_exports.seal(build_host)
    write_whole(marker, ex.measurement.model_dump_json().encode())
    return False
