"""perfgym's test supervisor (stdlib only, run as `python3 -I test_supervisor.py SPEC`): runs
pytest as its child and decides from outside it whether the tests passed.

Before anything of the repository is imported it reads and deletes the run's secret nonce,
makes itself non-dumpable (the code under test, same uid, can then neither read its memory nor
open its file descriptors through /proc), and opens the record pipe whose write end only pytest
gets. pytest's output goes through a second pipe, so nothing the tests start can write to the
supervisor's own stdout, where the verdict line goes: `PERFGYM_TESTS <nonce> <json>`.

The verdict, from the records as they arrived and pytest's real exit status: one hello, one
`collected` list, then per test a start, its reports and its finish before the next test
starts, then one end whose status equals the exit status, then end of stream. Anything else
(a missing or late record, a second record for a finished test, a tamper record, records after
the end, a conftest.py or other plugin from the repository that is not the original's file) is
a problem, and any problem fails the run. Passing also needs at least one test
run, every expected test collected and passed (not skipped) and exit status 0.
"""

import json
import os
import re
import socket
import subprocess
import sys
import threading

OUTPUT_CAP = 2 * 1024 * 1024
_NO_TESTS = 5


def _undumpable():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except Exception:  # noqa: BLE001 - best effort: the nonce still guards the verdict
        pass


def _read_records(fd, out):
    buf = b""
    with os.fdopen(fd, "rb", buffering=0) as f:
        while True:
            chunk = f.read(65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            out.extend(lines)
    if buf:
        out.append(buf)


def _relay(stream, sink, tail):
    used = 0
    for chunk in iter(lambda: stream.read1(65536), b""):
        if used < OUTPUT_CAP:
            sink.append(chunk[: OUTPUT_CAP - used])
            used += len(chunk)
        tail[0] = (tail[0] + chunk)[-65536:]  # the closing summary, however long the output


def _outcome(reports):
    if any(o == "failed" for _, o in reports):
        return "failed"
    call = [o for w, o in reports if w == "call"]
    if call:
        return call[0]
    return "skipped" if any(o == "skipped" for _, o in reports) else "incomplete"


_COUNT = re.compile(rb"(\d+) (failed|passed|errors?|xpassed|xfailed|skipped|deselected)")


def summary_counts(output):
    """pytest's own closing summary (`1 failed, 9 passed in 0.50s`), as counts by word: a
    second witness beside the record channel (None: no summary line in the output)."""
    for line in reversed(output.splitlines()[-50:]):
        if b" in " not in line:
            continue
        found = _COUNT.findall(line)
        if found:
            counts: dict[str, int] = {}
            for n, word in found:
                key = word.decode().rstrip("s") if word.startswith(b"error") else word.decode()
                counts[key] = counts.get(key, 0) + int(n)
            return counts
    return None


def judge(lines, exit_status, eof, expected, originals=None, stable=None, output=None):
    """The verdict (a dict) from the raw record lines, pytest's exit status and whether the
    stream ended; `expected` the node ids that must pass (None: whatever was collected);
    `originals` the original repository's Python files by path, their sha256 (a plugin loaded
    from the repository must be one of them, unchanged; None: not checked); `stable` tests
    that must pass whenever they are collected (a selection of them)."""
    problems = []
    hello = collected = end = None
    current = None
    reports: dict[str, list[tuple[str, str]]] = {}
    finished = []
    for n, raw in enumerate(lines):
        try:
            rec = json.loads(raw)
            kind = rec["k"]
        except (ValueError, KeyError, TypeError):
            problems.append(f"record {n} is not a record")
            continue
        if end is not None:
            problems.append(f"a {kind!r} record after the end of the session")
        elif kind == "hello":
            if hello is not None:
                problems.append("a second hello (a second plugin or a restarted pytest)")
            hello = rec
        elif hello is None:
            problems.append(f"a {kind!r} record before the plugin's hello")
        elif kind == "tamper":
            problems.append(
                "pytest's runner was patched during the run: "
                + ", ".join(map(str, rec.get("what", [])))
            )
        elif kind == "integrity":
            problems.append(f"the repository's code changed the tests' code: {rec.get('what')}")
        elif kind == "plugin":
            path, sha = str(rec.get("path")), rec.get("sha")
            if originals is not None and originals.get(path) != sha:
                problems.append(f"pytest loaded {path} from the repository, not the original's")
        elif kind == "collected":
            if collected is not None:
                problems.append("a second collection")
            collected = [str(i) for i in rec.get("ids", [])]
        elif kind == "start":
            tid = str(rec.get("id"))
            if collected is None:
                problems.append(f"{tid} started before collection finished")
            if current is not None:
                problems.append(f"{tid} started before {current} finished")
            if tid in reports:
                problems.append(f"{tid} started twice")
            current = tid
            reports[tid] = []
        elif kind == "report":
            tid = str(rec.get("id"))
            if tid != current:
                problems.append(f"a report for {tid} outside its run")
                continue
            reports[tid].append((str(rec.get("when")), str(rec.get("outcome"))))
        elif kind == "finish":
            tid = str(rec.get("id"))
            if tid != current:
                problems.append(f"a finish for {tid} outside its run")
                continue
            finished.append(tid)
            current = None
        elif kind == "end":
            end = rec
            if current is not None:
                problems.append(f"the session ended while {current} was running")
        else:
            problems.append(f"an unknown record {kind!r}")
    if hello is None:
        problems.append(
            "no record from perfgym's plugin (it was not loaded, or the channel was cut)"
        )
    if current is not None:
        problems.append(f"{current} never finished (the process ended inside it)")
    if end is None:
        problems.append("no end-of-session record (the process ended before pytest finished)")
    elif end.get("status") != exit_status:
        problems.append(
            f"the session ended with status {end.get('status')} but the process exited {exit_status}"
        )
    if not eof:
        problems.append("the record channel stayed open after pytest exited")
    outcomes = {tid: _outcome(reports[tid]) for tid in finished}
    ran = sum(1 for o in outcomes.values() if o != "skipped")
    missing, unpassed = [], []
    if expected is not None:
        missing = sorted(set(expected) - set(collected or ()))
        unpassed = sorted(t for t in expected if t not in missing and outcomes.get(t) != "passed")
        if missing:
            problems.append(
                f"{len(missing)} expected tests were not collected: {', '.join(missing[:5])}"
            )
        if unpassed:
            problems.append(
                f"{len(unpassed)} expected tests did not pass: {', '.join(unpassed[:5])}"
            )
    if stable is not None:
        unpassed_stable = sorted(t for t in set(collected or ()) & set(stable)
                                 if outcomes.get(t) != "passed")  # fmt: skip
        if unpassed_stable:
            problems.append(f"{len(unpassed_stable)} selected stable tests did not pass: "
                            f"{', '.join(unpassed_stable[:5])}")  # fmt: skip
            missing += [t for t in unpassed_stable if t not in missing]
    if collected is not None and set(collected) - set(outcomes):
        problems.append(f"{len(set(collected) - set(outcomes))} collected tests have no outcome")
    if ran == 0:
        problems.append("no test ran")
    failed = sorted(t for t, o in outcomes.items() if o != "passed" and o != "skipped")
    if output is not None and hello is not None:
        # pytest prints its own tally; records rewritten on their way out disagree with it.
        counts = summary_counts(output)
        if counts is None:
            problems.append("pytest printed no closing summary")
        else:
            bad = counts.get("failed", 0) + counts.get("error", 0)
            n_passed = sum(1 for o in outcomes.values() if o == "passed")
            # (failures both tell are failures, not a disagreement: `failed` fails the run)
            if bad > len(failed) or counts.get("passed", 0) != n_passed:
                problems.append(
                    f"pytest's own summary ({counts}) disagrees with the records "
                    f"({n_passed} passed, {len(failed)} failed)"
                )
    passed = not problems and not failed and exit_status == 0
    if not passed and not problems and exit_status != 0:
        problems.append(f"pytest exited {exit_status}")
    return {
        "passed": passed,
        "ran": ran,
        "collected": len(collected or ()),
        "outcomes": outcomes,
        "failed": failed,
        "missing": missing + unpassed,
        "problems": problems,
        "exit_status": exit_status,
    }


def _restore_config(config):
    """Put the original's pytest configuration file back at the repository root (the run's
    cwd), replacing whatever the patch left under that name (a symlink included)."""
    name = config["name"]
    if "/" in name or name in ("", ".", ".."):
        raise SystemExit(f"bad configuration name {name!r}")
    if os.path.lexists(name) and (os.path.islink(name) or not os.path.isfile(name)):
        os.unlink(name)
    elif os.path.isfile(name):
        with open(name, encoding="utf-8", errors="replace") as f:
            if f.read() == config["text"]:
                return  # the original's own (an original copy may be read-only to us)
    with open(name, "w") as f:
        f.write(config["text"])


def _integrity_spec(spec):
    """The plugin's code watch: `module:spec file` (the file holds the original's digests and
    the protected paths; the plugin deletes it once read)."""
    path = os.path.join(spec["plugin_dir"], f"perfgym_integrity_{os.urandom(8).hex()}.json")
    with open(path, "w") as f:
        json.dump({"originals": spec.get("originals"), "protected": spec.get("protected", [])}, f)
    return f"{spec['integrity_module']}:{path}"


def _installed_plugins():
    """The modules of the pytest plugins installed beside this interpreter (this process runs
    with -I: neither the copy nor PYTHONPATH is on its path)."""
    from importlib.metadata import entry_points

    mods = []
    for ep in entry_points(group="pytest11"):
        mod = ep.value.split(":")[0].strip()
        if mod and mod not in mods:
            mods.append(mod)
    return mods


#: The names the workload runner and its script have in a workload's /tmp (`runner.py`).
_LAUNCHER = "perfgym_workload_runner.py"
_WORKLOAD = "perfgym_workload.py"


def _pytest_args(argv):
    """pytest's own arguments of a plain pytest command (`pytest ...`, `python3 -m pytest ...`)."""
    if len(argv) >= 3 and argv[1:3] == ["-m", "pytest"]:
        return argv[3:]
    return argv[1:]


def main():
    try:  # nothing of perfgym's left in /tmp once the repository's code runs (a workload's
        os.unlink(os.path.abspath(sys.argv[0]))  # process has none)
    except OSError:
        pass
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    os.unlink(sys.argv[1])
    nonce = spec["nonce"]
    _undumpable()
    if spec.get("config"):
        _restore_config(spec["config"])
    read_fd, write_fd = os.pipe()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PY_COLORS"))}
    # pytest would load every pytest11 entry point it finds, the copy's `.dist-info` included
    # (red team helper-81 forged outcomes so): only the installed ones, named here
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    spec["argv"] = [*spec["argv"], *(a for m in _installed_plugins() for a in ("-p", m))]
    # a spare socket beside the record pipe: a workload's process has one of each too
    # (`fd_layout`); this end stays here, unread
    spare, spare_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env["PERFGYM_OUTCOME_FD"] = f"{write_fd},{spare_theirs.fileno()}"
    env["PERFGYM_INTEGRITY"] = _integrity_spec(spec)
    env["PYTHONPATH"] = os.pathsep.join(
        [spec["plugin_dir"], *filter(None, [env.get("PYTHONPATH")])]
    )
    env.update(spec.get("env", {}))
    records: list[bytes] = []
    output: list[bytes] = []
    reader = threading.Thread(target=_read_records, args=(read_fd, records), daemon=True)
    reader.start()
    # pytest started as a workload's runner is (`pytest_launcher`): one command line for both
    env["PERFGYM_PYTEST_ARGS"] = json.dumps(_pytest_args(spec["argv"]))
    launch = [sys.executable, f"{spec['plugin_dir']}/{_LAUNCHER}",
              f"{spec['plugin_dir']}/{_WORKLOAD}", os.getcwd()]  # fmt: skip
    proc = subprocess.Popen(launch, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, pass_fds=(write_fd, spare_theirs.fileno()),
                            env=env)  # fmt: skip
    os.close(write_fd)
    spare_theirs.close()
    tail = [b""]
    relay = threading.Thread(target=_relay, args=(proc.stdout, output, tail), daemon=True)
    relay.start()
    status = proc.wait()
    spare.close()
    reader.join(timeout=5.0)
    relay.join(timeout=2.0)
    out = b"".join(output)
    verdict = judge(list(records), status, not reader.is_alive(), spec.get("expected"),
                    spec.get("originals"), spec.get("stable"), tail[0])  # fmt: skip
    sys.stdout.buffer.write(out + (b"" if out.endswith(b"\n") or not out else b"\n"))
    sys.stdout.write(f"PERFGYM_TESTS {nonce} {json.dumps(verdict)}\n")
    sys.stdout.flush()
    return 0 if verdict["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
