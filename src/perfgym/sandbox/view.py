"""What a run sees of the host: an allow-list of read-only toolchain files, nothing else.

Every bubblewrap perfgym starts (a cold run, the warm launcher, a warm Python worker) starts
from an empty root and binds back only what programs need, read-only:

* the system's toolchain directories: `/usr`, `/etc` (less its private entries,
  `ETC_PRIVATE`), `/sys`, and `/bin`, `/sbin`, `/lib*` (symlinks where the host has them);
* the interpreter's prefix (`sys.prefix`, `sys.base_prefix`, also under `/root` or `/home`),
  its site-packages, rustup/cargo homes, and the prefix of every compiler or runtime found on
  PATH outside those (`TOOLS`: a JDK, Go or Node under `/opt`, say);
* the exec stub's helper directory (`/var/tmp/perfgym/helpers`);
* a fresh `/dev`, a `/proc` of the run's own PID namespace and a fresh tmpfs work dir `/tmp`;
* the counters of the whole host in /proc and /sys frozen (`host_counters`);
* the sandbox's trusted code (`_inside`) alone at `INSIDE_MOUNT`.

Nothing else exists in a run: not the checkout (wherever it lies), `.git`, `results/`, stores,
service state, build caches, `/root`, `/home`, `/work`, `/srv`, `/mnt`, `/opt` or `/var`.
Where something private lies inside a bound directory it is covered by an empty tmpfs: the
perfgym package itself (also installed in site-packages: it carries the shipped ENAMEL and
HumanEval data), the checkout and the host's working directory when they lie under a bound
directory, and `SandboxConfig.hide_paths` (suites, caches) that the view would show.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from perfgym.sandbox import host_counters
from perfgym.sandbox.base import WORK_DIR, SandboxConfig
from perfgym.sandbox.exec_stub import HELPERS
from perfgym.sandbox.run_request import check_env_entry
from perfgym.sandbox.site_hooks import empty_file, mask_args, site_dirs

#: Kept for callers that name them: home directories are not in any run's view.
HIDDEN_HOMES = ("/root", "/home")

#: Where the sandbox's own trusted code (`perfgym/sandbox/_inside`: launcher, supervisor, stub,
#: Python worker server) is bound read-only in every bubblewrap. Readable by programs (it is no
#: secret), but the rest of the checkout or package is not there.
INSIDE_MOUNT = "/run/perfgym/inside"
#: Where the warm launcher (trusted, never a program) sees the host's root, read-only: a run's
#: spare resolves the run's binds from here and covers it with an empty read-only tmpfs
#: before the program starts.
HOST_MOUNT = "/run/perfgym/host"
INSIDE = Path(__file__).resolve().parent / "_inside"

#: Environment variable naming more private host paths (see `private_paths`).
PRIVATE_ENV = "PERFGYM_PRIVATE_PATHS"
#: Host directories bound read-only into every run when they exist (symlinks are recreated).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
#: Entries of /etc a program has no use for that may hold secrets or name host identities:
#: password hashes, ssh host keys, TLS private keys, sudo rules, PAM's environment (often
#: proxy credentials or tokens), perfgym's own configuration.
ETC_PRIVATE = (
    "shadow", "shadow-", "gshadow", "gshadow-", "ssh", "ssl/private", "sudoers", "sudoers.d",
    "environment", "security/opasswd", "perfgym", "netrc", "docker", "containerd", "kubernetes",
    "credstore", "credstore.encrypted", "wireguard", "openvpn", "ipsec.secrets", "krb5.keytab",
)  # fmt: skip
#: Compilers and runtimes whose installation prefix must be in the view when it lies outside
#: SYSTEM_DIRS (e.g. a JDK under /opt, Go under /usr/local/go is already under /usr).
TOOLS = ("cc", "gcc", "g++", "c++", "clang", "rustc", "cargo", "go", "javac", "java", "node",
         "nvcc", "python3")  # fmt: skip
#: Environment variables naming a toolchain's home.
TOOL_HOMES = ("JAVA_HOME", "GOROOT", "CUDA_HOME", "CUDA_PATH")


def _under(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _prefix_of(executable: str) -> str:
    """The installation prefix of an executable: the parent of its `bin`, else its directory."""
    d = os.path.dirname(executable)
    return os.path.dirname(d) if os.path.basename(d) == "bin" else d


@functools.cache
def toolchain_roots() -> tuple[str, ...]:
    """Directories outside SYSTEM_DIRS that runs still need (interpreter prefixes, site-packages,
    rustup/cargo homes, toolchains found on PATH), deepest duplicates removed."""
    candidates = [_real(sys.base_prefix), _real(sys.prefix)]
    # Of cargo's home only its bin/ (rustup's proxies): the rest holds a user's registry
    # tokens (credentials.toml) and caches, which no run needs (red team helper-100).
    cargo = _real(os.environ.get("CARGO_HOME", "~/.cargo"))
    candidates += [os.path.join(cargo, "bin"), _real(os.environ.get("RUSTUP_HOME", "~/.rustup"))]
    candidates += site_dirs()
    for var in TOOL_HOMES:
        if os.environ.get(var):
            candidates.append(_real(os.environ[var]))
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            prefix = _prefix_of(_real(found))
            candidates.append(os.path.join(cargo, "bin") if prefix == cargo else prefix)
    roots: list[str] = []
    for path in sorted(set(candidates), key=len):
        if path in ("", "/") or not os.path.isdir(path):
            continue
        if any(_under(path, _real(s)) for s in SYSTEM_DIRS):
            continue
        if not any(_under(path, r) for r in roots):
            roots.append(path)
    return tuple(roots)


def _checkout_of(package: str) -> str | None:
    """The source checkout holding the perfgym package (a parent with .git or pyproject.toml)."""
    d = os.path.dirname(package)
    for _ in range(3):
        if os.path.exists(os.path.join(d, ".git")) or os.path.exists(
            os.path.join(d, "pyproject.toml")
        ):
            return d
        d = os.path.dirname(d)
    return None


def _package_and_checkout() -> list[str]:
    package = _real(os.path.join(os.path.dirname(__file__), ".."))
    checkout = _checkout_of(package)
    return [package, checkout] if checkout else [package]


@functools.cache
def private_paths() -> tuple[str, ...]:
    """Host paths never shown to a run, even when they lie under a bound directory: the perfgym
    package (its data: ENAMEL, HumanEval), its checkout, and the host process's working
    directory (where `results/`, stores and service state go by default), and every path in
    `$PERFGYM_PRIVATE_PATHS` (os.pathsep-separated: a service names its state directory and
    store there, so its worker processes cover them wherever they lie)."""
    out = _package_and_checkout()
    for p in os.environ.get(PRIVATE_ENV, "").split(os.pathsep):
        if p.strip() and os.path.isabs(p.strip()):
            out.append(_real(p.strip()))
    try:
        out.append(os.path.realpath(os.getcwd()))
    except OSError:
        pass
    return tuple(dict.fromkeys(out))


@functools.cache
def _needed() -> tuple[str, ...]:
    """Paths the view must show wherever they lie: interpreter prefixes, site-packages, tool
    prefixes, the helpers, the directories on the programs' PATH."""
    out = [_real(sys.prefix), _real(sys.base_prefix), *site_dirs(), _real(str(HELPERS))]
    out += toolchain_roots()
    out += [_real(p) for p in default_path().split(":") if os.path.isdir(p)]
    for tool in TOOLS:
        found = shutil.which(tool)
        if found:
            out.append(_prefix_of(_real(found)))
    return tuple(dict.fromkeys(out))


@functools.cache
def _bound() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(directories bound into the view, private paths under them covered by an empty tmpfs,
    needed paths under a covered one, bound back on top)."""
    system = tuple(d for d in SYSTEM_DIRS if os.path.lexists(d))
    roots = (*system, *toolchain_roots(), _real(str(HELPERS)))
    real_roots = [_real(r) for r in roots]
    always = _package_and_checkout()
    covered: list[str] = []
    for p in private_paths():
        if p == "/" or _under(WORK_DIR, p) or p in real_roots:
            continue
        if not any(_under(p, r) for r in real_roots):
            continue  # outside the view already
        # The package and its checkout are always covered (anything needed under them, a venv,
        # is bound back on top); the working directory only when nothing needed lies under it.
        if p in always or not any(_under(n, p) for n in _needed()):
            covered.append(p)
    rebound = tuple(n for n in _needed() if any(_under(n, c) and n != c for c in covered))
    return roots, tuple(covered), rebound


def visible(path: str) -> bool:
    """Whether host `path` exists in a run's view with the host's content (binds aside)."""
    real = os.path.realpath(path)
    if _under(real, WORK_DIR):
        return False
    roots, covered, rebound = _bound()
    if not any(_under(real, _real(r)) for r in roots):
        return False
    if any(_under(real, "/etc/" + e) for e in ETC_PRIVATE):
        return False
    # A covered path shows only what is bound back on top of it (a venv in the checkout).
    if any(_under(real, c) for c in covered):
        return any(_under(real, n) for n in rebound)
    return True


def _parents(path: str, made: set[str]) -> list[str]:
    """bubblewrap arguments creating `path`'s missing ancestors with mode 0755 (bwrap would
    make them 0700, which the unprivileged run uid cannot traverse)."""
    chain = []
    parent = os.path.dirname(path)
    while parent != "/" and parent not in made:
        chain.append(parent)
        parent = os.path.dirname(parent)
    args: list[str] = []
    for d in reversed(chain):
        args += ["--perms", "0755", "--dir", d]
        made.add(d)
    return args


def base_args(
    config: SandboxConfig, *, host_root: bool = False, hide: Iterable[str] = ()
) -> list[str]:
    """bubblewrap arguments for the allow-list view (without the work dir and per-run binds):
    system directories, toolchains, helpers, /dev, /proc, the trusted code at INSIDE_MOUNT,
    private paths, `config.hide_paths` and `hide` covered, and (unless `config.site_hooks`) the
    interpreters' start-up hooks shown empty. `host_root` (the warm launcher only) also binds
    the host's root at HOST_MOUNT, for its spares to resolve binds from."""
    roots, covered, rebound = _bound()
    made: set[str] = set()
    entries: list[tuple[int, int, list[str]]] = []  # (depth, order, args): shallow ones first
    for d in roots:
        if os.path.islink(d) and d in SYSTEM_DIRS:
            entries.append((1, 0, ["--symlink", os.readlink(d), d]))
        elif os.path.isdir(d):
            entries.append((_real(d).count("/"), 0, ["--ro-bind", d, _real(d)]))
    for p in covered:
        entries.append((p.count("/"), 1, ["--perms", "0755", "--tmpfs", p]))
    for n in rebound:
        entries.append((n.count("/"), 3, ["--ro-bind", n, n]))
    for p in hidden_paths(config, hide):
        entries.append((p.count("/"), 1, ["--perms", "0755", "--tmpfs", p]))
    if os.path.isdir("/etc"):
        for name in ETC_PRIVATE:
            p = os.path.join("/etc", name)
            if os.path.isdir(p) and not os.path.islink(p):
                entries.append((p.count("/"), 2, ["--perms", "0755", "--tmpfs", p]))
            elif os.path.lexists(p):
                entries.append((p.count("/"), 2, ["--ro-bind", empty_file(), p]))
    # No pseudo-terminal: the kernel counts every pty on the host in one number any run can
    # read (`/proc/sys/kernel/pty/nr`) and move one by one, a channel between concurrent runs
    # (red team helper-76: two copies swapped halves of the work through it). bubblewrap's
    # /dev/ptmx links to its devpts instance's node, which /dev/null covers: no pty opens.
    args = ["--dev", "/dev", "--ro-bind", "/dev/null", "/dev/ptmx", "--proc", "/proc"]
    for _depth, _order, a in sorted(entries, key=lambda e: (e[0], e[1])):
        dest = a[-1]
        args += _parents(dest, made)
        args += a
        if a[0] != "--ro-bind" or os.path.isdir(a[1]):
            made.add(dest)
    for d in ("/run", "/run/perfgym", "/var", "/var/tmp"):
        if d not in made:
            args += ["--perms", "0755", "--dir", d]
            made.add(d)
    if config.freeze_host_counters:  # after /proc and /sys: their files are covered
        args += host_counters.bwrap_args(empty_file())
    args += ["--ro-bind", str(INSIDE), INSIDE_MOUNT]
    if host_root:
        args += ["--ro-bind", "/", HOST_MOUNT]
    if not config.site_hooks:
        args += _masks()
    return args


def _masks() -> list[str]:
    """mask_args() for the hook files the view shows."""
    out: list[str] = []
    args = mask_args()
    for i in range(0, len(args), 3):
        flag, src, dst = args[i : i + 3]
        if visible(dst):
            out += [flag, src, dst]
    return out


def expose_args(site_hooks: bool = False) -> list[str]:
    """The allow-list view for a default config (kept for callers of the older name)."""
    return base_args(SandboxConfig(site_hooks=site_hooks))


@functools.cache
def default_path() -> str:
    parts = [os.path.dirname(os.path.realpath(sys.executable))]
    cargo = os.path.realpath(os.path.expanduser(os.environ.get("CARGO_HOME", "~/.cargo")))
    if os.path.isdir(os.path.join(cargo, "bin")):
        parts.append(os.path.join(cargo, "bin"))
    parts += ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    return ":".join(parts)


@functools.cache
def _default_env() -> tuple[tuple[str, str], ...]:
    """The environment every program starts from (resolved once: paths are looked up)."""
    out = {
        "PATH": default_path(),
        "HOME": WORK_DIR,
        "TMPDIR": WORK_DIR,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # A run's uid has no passwd entry (`run_uids`): `getpass.getuser()` reads these first.
        "USER": "nobody",
        "LOGNAME": "nobody",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    cargo = os.path.realpath(os.path.expanduser(os.environ.get("CARGO_HOME", "~/.cargo")))
    rustup = os.path.realpath(os.path.expanduser(os.environ.get("RUSTUP_HOME", "~/.rustup")))
    if os.path.isdir(rustup):
        out["RUSTUP_HOME"] = rustup
        out["CARGO_HOME"] = cargo
    return tuple(out.items())


def program_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The program's whole environment: defaults, then the caller's entries."""
    out = dict(_default_env())
    if env:
        for k, v in env.items():
            check_env_entry(k, v)
            out[k] = v
    return out


def hidden_paths(config: SandboxConfig, hide: Iterable[str] = ()) -> list[str]:
    """`config.hide_paths` and `hide` (one run's own) that the view would show, each to be
    covered by an empty tmpfs (a path outside the allow-list is not in the view at all, and one
    under the work dir is fresh per run already)."""
    out = []
    roots = _bound()[0]
    for p in [*config.hide_paths, *hide]:
        real = os.path.realpath(p)
        if not os.path.exists(real) or _under(real, WORK_DIR):
            continue
        if any(_under(real, _real(r)) for r in roots) and real not in out:
            out.append(real)
    return out
