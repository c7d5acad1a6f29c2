/* exec_stub: the last step between the run supervisor and the program (built on first use).
 *
 * The supervisor starts this stub with posix_spawn (no copy of the supervisor's address space,
 * no Python in the child), having already set fds 0-2, a new session and default signals. The
 * stub pins itself to the run's core, waits at the gate while the supervisor places it in the
 * run's cgroups, applies the per-process limits, drops to the run's uid and execs the program.
 *
 *   exec_stub CORE UID GID CPU_S FSIZE NOFILE NPROC CWD -- ARGV...
 *     CORE, NPROC: -1 for none.  fd 3: error pipe (close-on-exec).  fd 4: the gate.
 *
 * Any failure is written to fd 3 and the stub exits 127, like a failed exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ERR_FD 3
#define GATE_FD 4

static void fail(const char *what, int err) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
    if (n > 0) {
        ssize_t ignored = write(ERR_FD, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
        (void)ignored;
    }
    _exit(127);
}

static long long number(const char *text, const char *what) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) fail(what, EINVAL);
    return v;
}

static void limit(int resource, long long soft, long long hard, const char *what) {
    struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
    if (setrlimit(resource, &rl) != 0) fail(what, errno);
}

static void close_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = first; fd < (max > 0 ? max : 65536); fd++) close((int)fd);
}

int main(int argc, char **argv) {
    if (argc < 11 || strcmp(argv[9], "--") != 0) fail("exec_stub usage", EINVAL);
    long long core = number(argv[1], "core");
    long long uid = number(argv[2], "uid");
    long long gid = number(argv[3], "gid");
    long long cpu_s = number(argv[4], "cpu limit");
    long long fsize = number(argv[5], "file size limit");
    long long nofile = number(argv[6], "open files limit");
    long long nproc = number(argv[7], "process limit");
    const char *cwd = argv[8];
    char **program = argv + 10;

    if (fcntl(ERR_FD, F_SETFD, FD_CLOEXEC) != 0) _exit(127);
    if (core >= 0) { /* pinned before the program exists: it never runs elsewhere */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((int)core, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) fail("sched_setaffinity", errno);
    }
    char go;
    if (read(GATE_FD, &go, 1) != 1) _exit(127); /* the supervisor gave up on the run */
    close(GATE_FD);
    close_from(GATE_FD + 1);

    limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    limit(RLIMIT_CPU, cpu_s, cpu_s + 1, "RLIMIT_CPU");
    limit(RLIMIT_FSIZE, fsize, fsize, "RLIMIT_FSIZE");
    limit(RLIMIT_NOFILE, nofile, nofile, "RLIMIT_NOFILE");
    if (nproc >= 0) limit(RLIMIT_NPROC, nproc, nproc, "RLIMIT_NPROC");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs", errno);
    if (uid >= 0) { /* all three ids non-zero: the kernel clears every capability */
        for (int cap = 0; cap < 64; cap++) /* bounding set emptied too (needs CAP_SETPCAP) */
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
        if (setgroups(0, NULL) != 0) fail("setgroups", errno);
        if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) fail("setresgid", errno);
        if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) fail("setresuid", errno);
    }
    if (chdir(cwd) != 0) fail(cwd, errno);
    execvp(program[0], program); /* PATH from the program's environment */
    int err = errno;
    char what[300];
    snprintf(what, sizeof what, "[Errno %d] exec %s", err, program[0]);
    fail(what, err);
    return 127;
}
