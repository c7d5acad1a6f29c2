/* perfgym: the end mark of a PerfCodeBench C/C++ harness run (docs/security.md, section 6b).
   Linked with -Wl,--wrap=main: the C runtime calls __wrap_main, which runs the harness's own
   main (__real_main) and, only when it returned 0, writes "PERFGYM_HARNESS_END <nonce> <state>"
   to the original stdout. The nonce is read (and its file removed) from .preinit_array, before
   any constructor of the program runs. Compiles as C and as C++ (g++ builds .c as C++). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __cplusplus
#include <iostream>
extern "C" {
#endif
int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);
#ifdef __cplusplus
}
#endif

#define PG_NONCE_FILE "/tmp/.perfgym-nonce"

static char pg_nonce[80];
static int pg_fd = -1;
static int pg_depth;
static struct stat pg_out;
static FILE *pg_stdout;

static void pg_arm(int argc, char **argv, char **envp) {
    (void)argc, (void)argv, (void)envp;
    int fd = open(PG_NONCE_FILE, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, pg_nonce, sizeof pg_nonce - 1);
        pg_nonce[n > 0 ? n : 0] = 0;
        close(fd);
    }
    unlink(PG_NONCE_FILE);
    for (size_t i = 0; pg_nonce[i]; i++)
        if (pg_nonce[i] == '\n' || pg_nonce[i] == ' ') pg_nonce[i] = 0;
    pg_fd = fcntl(1, F_DUPFD_CLOEXEC, 64);
    if (fstat(1, &pg_out) != 0) pg_fd = -1;
    pg_stdout = stdout;
}

__attribute__((section(".preinit_array"), used)) static void (*pg_preinit)(int, char **,
                                                                           char **) = pg_arm;

int __wrap_main(int argc, char **argv, char **envp) {
    int outer = pg_depth++ == 0;
#ifdef __cplusplus
    std::streambuf *buf = std::cout.rdbuf();
#endif
    int rc = __real_main(argc, argv, envp);
    if (!outer || rc != 0 || pg_fd < 0 || !pg_nonce[0]) return rc;
    int same = stdout == pg_stdout;
#ifdef __cplusplus
    same = same && std::cout.rdbuf() == buf;
    if (same) std::cout.flush();
#endif
    if (same) fflush(stdout);
    struct stat now;
    same = same && fstat(1, &now) == 0 && now.st_dev == pg_out.st_dev &&
           now.st_ino == pg_out.st_ino;
    char line[160];
    int n = snprintf(line, sizeof line, "\nPERFGYM_HARNESS_END %s %s\n", pg_nonce,
                     same ? "ok" : "stdout-replaced");
    memset(pg_nonce, 0, sizeof pg_nonce);
    if (n > 0 && write(pg_fd, line, (size_t)n) != n) return 1;
    return rc;
}
