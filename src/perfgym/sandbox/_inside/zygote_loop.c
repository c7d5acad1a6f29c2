/* The zygote's command loop in C (`zygote_commands.Commands.serve`, the same protocol and
 * replies): a function call costs the zygote a recvmsg, a fork, a send, a wait4 and a send,
 * and no Python code of its own between forks. Each fork write-protects every page of the
 * zygote, so each Python object the loop touched afterwards was a copy-on-write fault in the
 * zygote, call after call (about 105 faults and 0.4 ms of CPU a call on the 2-core VM).
 *
 * Built as a CPython extension module on first use (`perfgym.sandbox.zygote_ext`); without a C
 * compiler or Python's headers the zygote keeps the Python loop. Module `_perfgym_zygote`:
 *   serve(conn_fd, request_pid, uid) -> ("go", -1, status) | ("hand over", fd, status)
 *       | ("end", -1, status) in the zygote; ("child", [fds], vsize) in a call's child
 *       (forked exactly as os.fork forks: PyOS_BeforeFork / PyOS_AfterFork_*).
 *       status: the request process's wait status when a reap found it dead, else None.
 *   sit_home(cores) -> None: back on `cores` if a spawn moved this process.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SPAWN_FDS 8
#define MAX_FIGURES 16

static cpu_set_t sitting;
static int sitting_set = 0; /* a spawn moved this process onto `sitting` */

static long long own_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void close_all(const int *fds, int n) {
    for (int i = 0; i < n; i++) close(fds[i]);
}

/* (virtual size, resident) in bytes, as worker_meter.statm. */
static int statm(long long *vsize, long long *rss) {
    char buf[200];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    long long pages = sysconf(_SC_PAGESIZE), v = 0, r = 0;
    if (sscanf(buf, "%lld %lld", &v, &r) != 2) return -1;
    *vsize = v * pages;
    *rss = r * pages;
    return 0;
}

/* worker_forget.shuffle_pids: the PID namespace's next PID at random before a fork, so that no
 * call can tell from a PID how many processes an earlier call forked. Best effort. */
static void shuffle_pids(void) {
    static long pid_max = 0;
    if (pid_max == 0) {
        char buf[32];
        int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        buf[n > 0 ? n : 0] = 0;
        pid_max = n > 0 ? atol(buf) : 32768;
        if (pid_max < 1000) pid_max = 32768;
    }
    unsigned int r = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t got = read(fd, &r, sizeof r);
    close(fd);
    if (got != (ssize_t)sizeof r) return;
    long span = pid_max - 600;
    char out[32];
    int len = snprintf(out, sizeof out, "%ld", 300 + (long)(r % (unsigned long)span));
    fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    if (write(fd, out, (size_t)len) < 0) { /* best effort */ }
    close(fd);
}

/* Sit on the cores request process `request_pid` sits on now (zygote_commands.sit_with). */
static void sit_with(pid_t request_pid) {
    cpu_set_t cores;
    CPU_ZERO(&cores);
    if (sched_getaffinity(request_pid, sizeof cores, &cores) != 0) return;
    if (sitting_set && CPU_EQUAL(&cores, &sitting)) return;
    if (sched_setaffinity(0, sizeof cores, &cores) == 0) {
        sitting = cores;
        sitting_set = 1;
    }
}

/* worker_child.killed_before_confined: exited (not reaped), killed by a signal while its real
 * uid was not yet `uid`. */
static int killed_before_confined(pid_t pid, uid_t uid) {
    if (uid == 0) return 0;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) return 0;
    if (info.si_pid == 0) return 0;
    if (info.si_code != CLD_KILLED && info.si_code != CLD_DUMPED) return 0;
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *line = strstr(buf, "\nUid:");
    if (line == NULL) return 0;
    long real = -1;
    if (sscanf(line + 5, "%ld", &real) != 1) return 0;
    return real != (long)uid;
}

static long long ns_of(struct timeval tv) {
    return (long long)tv.tv_sec * 1000000000LL + (long long)tv.tv_usec * 1000LL;
}

struct loop {
    pid_t request_pid;
    uid_t uid;
    int have_status;
    int request_status;
};

/* Reap every process that has ended, never waiting: (user ns, system ns, count). */
static void reap_exited(struct loop *lp, long long *out) {
    long long user = 0, sys = 0, count = 0;
    for (;;) {
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, WNOHANG, &ru);
        if (pid < 0 && errno == EINTR) continue;
        if (pid <= 0) break;
        if (pid == lp->request_pid) {
            lp->have_status = 1;
            lp->request_status = status;
            continue;
        }
        user += ns_of(ru.ru_utime);
        sys += ns_of(ru.ru_stime);
        count++;
    }
    out[0] = user;
    out[1] = sys;
    out[2] = count;
}

static int reap(struct loop *lp, const char *arg, size_t len, long long *fig) {
    char num[32];
    if (len == 0 || len >= sizeof num) goto bad;
    memcpy(num, arg, len);
    num[len] = 0;
    char *end;
    errno = 0;
    long pid = strtol(num, &end, 10);
    /* int(arg): optional surrounding whitespace, an optional sign, digits */
    while (*end == ' ' || *end == '\t' || *end == '\n') end++;
    if (errno || *end || end == num) goto bad;
    if (pid <= 1 || pid == lp->request_pid) goto bad;
    int unconfined = killed_before_confined((pid_t)pid, lp->uid);
    int status;
    struct rusage ru;
    pid_t got;
    do got = wait4((pid_t)pid, &status, 0, &ru);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        fig[0] = -1;
        fig[1] = errno;
        return 2;
    }
    fig[0] = status;
    fig[1] = ns_of(ru.ru_utime);
    fig[2] = ns_of(ru.ru_stime);
    fig[3] = ru.ru_maxrss;
    fig[4] = unconfined;
    reap_exited(lp, fig + 5);
    return 8;
bad:
    fig[0] = -1;
    fig[1] = 0;
    return 2;
}

static PyObject *status_of(struct loop *lp) {
    if (lp->have_status) return PyLong_FromLong(lp->request_status);
    Py_RETURN_NONE;
}

static PyObject *serve(PyObject *self, PyObject *args) {
    int conn, request_pid;
    unsigned int uid;
    if (!PyArg_ParseTuple(args, "iiI", &conn, &request_pid, &uid)) return NULL;
    struct loop lp = {request_pid, uid, 0, 0};
    for (;;) {
        char msg[64];
        char control[CMSG_SPACE(SPAWN_FDS * sizeof(int))];
        struct iovec iov = {msg, sizeof msg};
        struct msghdr mh;
        memset(&mh, 0, sizeof mh);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = control;
        mh.msg_controllen = sizeof control;
        ssize_t n = recvmsg(conn, &mh, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Py_BuildValue("(siN)", "end", -1, status_of(&lp));
        int fds[SPAWN_FDS * 2];
        int nfds = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k && nfds < SPAWN_FDS * 2; i++)
                memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        }
        if (n == 0) {
            close_all(fds, nfds);
            return Py_BuildValue("(siN)", "end", -1, status_of(&lp));
        }
        char kind = msg[0];
        if (kind == 'g') {
            close_all(fds, nfds);
            return Py_BuildValue("(siN)", "go", -1, status_of(&lp));
        }
        if (kind == 'h' && nfds == 1)
            return Py_BuildValue("(siN)", "hand over", fds[0], status_of(&lp));
        long long fig[MAX_FIGURES];
        int nfig = 0;
        if (kind == '?') {
            close_all(fds, nfds);
        } else if (kind == 'c' && nfds == SPAWN_FDS) {
            long long vsize = 0, rss = 0;
            if (statm(&vsize, &rss) != 0) {
                close_all(fds, nfds);
                fig[0] = -1;
                fig[1] = errno ? errno : 0;
                nfig = 2;
            } else {
                sit_with(lp.request_pid);
                shuffle_pids();
                PyOS_BeforeFork();
                pid_t pid = fork();
                if (pid == 0) {
                    PyOS_AfterFork_Child();
                    PyObject *list = PyList_New(nfds);
                    if (list == NULL) _exit(2);
                    for (int i = 0; i < nfds; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(fds[i]));
                    return Py_BuildValue("(sNL)", "child", list, vsize);
                }
                int err = errno;
                PyOS_AfterFork_Parent();
                close_all(fds, nfds);
                if (pid < 0) {
                    fig[0] = -1;
                    fig[1] = err;
                    nfig = 2;
                } else {
                    fig[0] = pid;
                    fig[1] = rss;
                    nfig = 2;
                }
            }
        } else {
            close_all(fds, nfds);
            if (kind == 'r') {
                nfig = reap(&lp, msg + 1, (size_t)n - 1, fig);
            } else if (kind == 'e') {
                reap_exited(&lp, fig);
                nfig = 3;
            } else {
                fig[0] = -1;
                fig[1] = 0;
                nfig = 2;
            }
        }
        char out[MAX_FIGURES * 24 + 32];
        size_t len = 0;
        for (int i = 0; i < nfig; i++)
            len += (size_t)snprintf(out + len, sizeof out - len, "%lld ", fig[i]);
        len += (size_t)snprintf(out + len, sizeof out - len, "%lld", own_cpu_ns());
        ssize_t sent;
        do sent = send(conn, out, len, MSG_NOSIGNAL);
        while (sent < 0 && errno == EINTR);
        if (sent < 0) return Py_BuildValue("(siN)", "end", -1, status_of(&lp));
    }
}

static PyObject *sit_home(PyObject *self, PyObject *arg) {
    if (!sitting_set) Py_RETURN_NONE;
    PyObject *seq = PySequence_Fast(arg, "cores must be a sequence");
    if (seq == NULL) return NULL;
    cpu_set_t home;
    CPU_ZERO(&home);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (c < 0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return NULL;
        }
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &home);
    }
    Py_DECREF(seq);
    if (!CPU_EQUAL(&home, &sitting)) sched_setaffinity(0, sizeof home, &home);
    sitting_set = 0;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"serve", serve, METH_VARARGS, "Serve one request process's commands (see the file's head)."},
    {"sit_home", sit_home, METH_O, "Back on the given cores if a spawn moved this process."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_perfgym_zygote",
                                    "The zygote's command loop in C.", -1, methods};

PyMODINIT_FUNC PyInit__perfgym_zygote(void) { return PyModule_Create(&module); }
