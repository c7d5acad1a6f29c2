"""The small typed exception tree every perfgym layer raises.

    PerfgymError                      (module: where each class is defined)
    ├── ConfigError          bad input from the user: invalid limits, malformed task, unknown name
    │   ├── TaskCheckError            repos.checks: a repository task's checks do not hold
    │   └── RepoFetchError            repos.copy: a repository could not be fetched
    ├── SandboxUnavailable   the isolation mechanism itself cannot start (no bwrap, no namespaces)
    ├── ToolchainMissing     a compiler or runtime for a language is not installed
    │   └── GpuUnavailable            toolchains.gpu
    ├── TaskFormatError      a task or suite on disk does not follow its documented format
    │   └── UnsupportedTask           tasks.perfcodebench
    ├── ModelError                    llm.errors: a model endpoint failed
    │   ├── EndpointUnreachable, AuthError, UnknownModel, RequestRejected,
    │   └── RetriesExhausted, EmptyAnswer
    ├── FatalModelError               optimize.loop
    ├── AgentError                    agent.errors
    │   ├── ProfileError
    │   └── ValidationSetupError
    ├── PatchError                    repos.shell
    ├── UnreadableChange              repos.applied: a file a patch writes is no plain file
    ├── NotWritable                   audit.programs
    ├── _Unwritten                    audit.run: a result could not be written (the run's failure)
    ├── ReferenceFailed (+RuntimeError)       enamel.reference
    ├── RewardCheckError (+AssertionError)    rewards._check
    ├── ConformanceError (+AssertionError)    sandbox.conformance
    ├── ReplayMissing                 store.replay
    ├── ServiceError, ServiceUnavailable      service.client.wire
    ├── UnknownTask (+LookupError), Unsupported (+ValueError)   service.server.intake
    ├── Refused (+ValueError)         service.server.routes.run_code_exec
    ├── QueueFull, JobConflict        service.workers.job_queue
    ├── NodeLost                      service.ray_batch: a Ray node died holding a task
    ├── LineError (+ValueError)       evaluation.candidates_formats: a candidates line cannot be used
    ├── EvalFailed                    evaluation.config: an evaluation cannot start or keep results
    ├── Unreadable (+ValueError)      judge.elf_symbols: a build's symbol tables, read, flagged
    └── private signals: _Stopped (cli.eval_model), _Refused (llm.scripted), _Stop (enamel.sample)

A layer's error derives from one of these (or from `PerfgymError` itself, keeping the builtin
base its callers catch, shown as +Base). The only exceptions outside the tree are the ones of
code that runs inside the sandbox with the stdlib alone (`sandbox/_inside/valuecodec.
UnsupportedValue`, `tasks/_pinned_generate._Failed`). Interrupts are not errors:
`cli.interrupted.Terminated` (SIGTERM) and `evaluation.run.EvalInterrupted` are
KeyboardInterrupts, outside `except Exception`. `tests/test_guards.py` keeps it so: a new
exception class outside the tree, or missing from this drawing, fails it.

Program failures are never exceptions: they are statuses on an Execution or a Verdict.
"""


class PerfgymError(Exception):
    """Base of every error perfgym raises on purpose."""


class ConfigError(PerfgymError, ValueError):
    """A configuration value or argument is invalid; the message says which and why."""


class SandboxUnavailable(PerfgymError):
    """The sandbox cannot isolate on this machine (missing bubblewrap, namespaces refused)."""


class ToolchainMissing(PerfgymError):
    """A language's compiler or runtime is absent."""


class TaskFormatError(PerfgymError, ValueError):
    """A task or suite on disk is malformed."""


def one_line(exc: BaseException) -> str:
    """An exception's message on one line: pydantic's multi-line reports folded, its doc links
    dropped (plain text: a console prints it escaped)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = "; ".join(ln for ln in lines if not ln.startswith("For further information"))
    return text or type(exc).__name__
