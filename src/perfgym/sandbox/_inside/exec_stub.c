/* exec_stub: the last step between the run supervisor and the program (built on first use).
 *
 * The supervisor starts this stub with posix_spawn (no copy of the supervisor's address space,
 * no Python in the child) with the program's stdio on fds 0-2, a new session and default
 * signals, usually before the run is even requested. The stub then waits at the gate for its
 * orders; on them it pins itself to the run's cores, joins the run's cgroups, applies the
 * per-process limits, drops to the run's uid and execs the program.
 *
 *   fd 3: error pipe (close-on-exec).  fd 4: the gate, which carries the orders:
 *   a 4-byte little-endian length, then that many bytes of NUL-terminated fields
 *     CORES UID GID CPU_S FSIZE NOFILE NPROC CWD  NCG CGROUP_PROCS...  NARGV ARGV...  NENV ENV...
 *   CORES: -1 for none, else the run's cores separated by commas ("3", "0,1");
 *   NPROC: -1 for none; CGROUP_PROCS: the cgroup.procs file of each cgroup to join.
 *
 * End of file on the gate (the supervisor gave up on the run) makes the stub exit 127
 * silently; any other failure is written to fd 3 and the stub exits 127, like a failed exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ERR_FD 3
#define GATE_FD 4
#define MAX_ORDERS (64u << 20)

extern char **environ;

static void fail(const char *what, int err) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
    if (n > 0) {
        ssize_t ignored = write(ERR_FD, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1));
        (void)ignored;
    }
    _exit(127);
}

/* Read exactly n bytes from the gate; 0 on end of file before the first byte. */
static int read_all(char *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(GATE_FD, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) fail("reading the orders", errno);
        if (r == 0) {
            if (got == 0) return 0;
            fail("the orders ended early", EPROTO);
        }
        got += (size_t)r;
    }
    return 1;
}

/* The orders' fields, in order. */
struct fields {
    char *next, *end;
};

static char *field(struct fields *f, const char *what) {
    char *start = f->next;
    char *nul = memchr(start, '\0', (size_t)(f->end - start));
    if (start >= f->end || nul == NULL) fail(what, EPROTO);
    f->next = nul + 1;
    return start;
}

static long long number(struct fields *f, const char *what) {
    const char *text = field(f, what);
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) fail(what, EINVAL);
    return v;
}

/* NULL-terminated array of the next `count` fields (count is itself a field). */
static char **list(struct fields *f, const char *what, int at_least) {
    long long count = number(f, what);
    if (count < at_least || count > 1 << 20) fail(what, EINVAL);
    char **items = calloc((size_t)count + 1, sizeof *items);
    if (items == NULL) fail(what, ENOMEM);
    for (long long i = 0; i < count; i++) items[i] = field(f, what);
    return items;
}

/* The CORES field: 0 for -1 (not pinned), else 1 with `set` holding the listed cores. */
static int core_set(struct fields *f, cpu_set_t *set) {
    const char *text = field(f, "cores");
    if (strcmp(text, "-1") == 0) return 0;
    CPU_ZERO(set);
    const char *at = text;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long v = strtol(at, &end, 10);
        if (errno || end == at || v < 0 || v >= CPU_SETSIZE) fail("cores", EINVAL);
        CPU_SET((int)v, set);
        if (*end == '\0') return 1;
        if (*end != ',') fail("cores", EINVAL);
        at = end + 1;
    }
}

static void limit(int resource, long long soft, long long hard, const char *what) {
    struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
    if (setrlimit(resource, &rl) != 0) fail(what, errno);
}

static void join_cgroup(const char *procs) {
    int fd = open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(procs, errno);
    if (write(fd, "0", 1) != 1) fail(procs, errno); /* 0: the writing process itself */
    close(fd);
}

static void close_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = first; fd < (max > 0 ? max : 65536); fd++) close((int)fd);
}

int main(void) {
    if (fcntl(ERR_FD, F_SETFD, FD_CLOEXEC) != 0) _exit(127);
    unsigned char head[4];
    if (!read_all((char *)head, sizeof head)) _exit(127); /* no run after all */
    uint32_t size = (uint32_t)head[0] | (uint32_t)head[1] << 8 | (uint32_t)head[2] << 16 |
                    (uint32_t)head[3] << 24;
    if (size == 0 || size > MAX_ORDERS) fail("orders size", EINVAL);
    char *orders = malloc(size);
    if (orders == NULL) fail("orders", ENOMEM);
    if (!read_all(orders, size)) fail("the orders ended early", EPROTO);
    close(GATE_FD);
    close_from(GATE_FD + 1);

    struct fields f = {orders, orders + size};
    cpu_set_t cores;
    int pinned = core_set(&f, &cores);
    long long uid = number(&f, "uid");
    long long gid = number(&f, "gid");
    long long cpu_s = number(&f, "cpu limit");
    long long fsize = number(&f, "file size limit");
    long long nofile = number(&f, "open files limit");
    long long nproc = number(&f, "process limit");
    const char *cwd = field(&f, "cwd");
    char **cgroups = list(&f, "cgroups", 0);
    char **program = list(&f, "argv", 1);
    char **env = list(&f, "env", 0);

    if (pinned) { /* pinned before the program exists: it never runs elsewhere */
        if (sched_setaffinity(0, sizeof cores, &cores) != 0) fail("sched_setaffinity", errno);
    }
    for (char **cg = cgroups; *cg; cg++) join_cgroup(*cg);

    limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    /* No RLIMIT_CPU: the supervisor enforces the CPU limit on the whole tree. An armed
       RLIMIT_CPU makes the process CPU clock (clock(), CLOCK_PROCESS_CPUTIME_ID) move only at
       scheduler ticks, so a harness timing itself would read 0 for sub-tick work. */
    (void)cpu_s;
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
    environ = env; /* execvpe searches the PATH of the program's environment */
    execvpe(program[0], program, env);
    int err = errno;
    char what[300];
    snprintf(what, sizeof what, "[Errno %d] exec %s", err, program[0]);
    fail(what, err);
    return 127;
}
