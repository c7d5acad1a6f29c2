"""The small typed exception tree every perfgym layer raises.

    PerfgymError
    ├── ConfigError          bad input from the user: invalid limits, malformed task, unknown name
    ├── SandboxUnavailable   the isolation mechanism itself cannot start (no bwrap, no namespaces)
    ├── ToolchainMissing     a compiler or runtime for a language is not installed
    └── TaskFormatError      a task or suite on disk does not follow its documented format

The other layers' errors derive from these (or from `PerfgymError` itself, keeping the builtin
base their callers catch, e.g. `ConformanceError(PerfgymError, AssertionError)`). The only
exceptions outside the tree are the ones of code that runs inside the sandbox with the stdlib
alone (`sandbox/_inside/valuecodec.UnsupportedValue`, `tasks/_pinned_generate._Failed`).

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
