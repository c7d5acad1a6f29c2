/* perfgym: the end mark of a PerfCodeBench C/C++ harness run (docs/security.md, section 6b).
   Linked with -Wl,--wrap=main: the C runtime calls __wrap_main, which runs the harness's own
   main (__real_main) and, only when it returned 0, writes "PERFGYM_HARNESS_END <nonce> <state>"
   to the original stdout. The nonce is read (and its file removed) from .preinit_array, before
   any constructor of the program runs. Compiles as C and as C++ (g++ builds .c as C++).

   The solution links into this same binary, so any libc function called here could be its
   own (`unlink`, `read`, `write`...): the wrapper's own I/O is raw system calls (inline
   `syscall` / `svc 0`), its copies are byte loops through volatile pointers (no memcpy the
   compiler could call), and no symbol but __wrap_main is visible. The only libc calls left are
   the flushes of the harness's own buffered output, after the harness returned. */
#ifdef __cplusplus
#include <iostream>
#if defined(__GLIBCXX__) && defined(__GXX_RTTI)
#include <ext/stdio_filebuf.h>
#include <typeinfo>
#endif
#endif
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif
int __real_main(int argc, char **argv, char **envp);
__attribute__((visibility("hidden"))) int __wrap_main(int argc, char **argv, char **envp);
#ifdef __cplusplus
}
#endif

#if defined(__x86_64__)
#define PG_OPENAT 257
#define PG_READ 0
#define PG_WRITE 1
#define PG_CLOSE 3
#define PG_UNLINKAT 263
#define PG_FCNTL 72
#define PG_FSTAT 5
static inline long pg_sys(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
#define PG_OPENAT 56
#define PG_READ 63
#define PG_WRITE 64
#define PG_CLOSE 57
#define PG_UNLINKAT 35
#define PG_FCNTL 25
#define PG_FSTAT 80
static inline long pg_sys(long n, long a, long b, long c) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}
#else
/* Weaker: libc's syscall(), which the solution can interpose (docs/security.md, 6b). */
#include <sys/syscall.h>
#include <unistd.h>
#define PG_OPENAT SYS_openat
#define PG_READ SYS_read
#define PG_WRITE SYS_write
#define PG_CLOSE SYS_close
#define PG_UNLINKAT SYS_unlinkat
#define PG_FCNTL SYS_fcntl
#define PG_FSTAT SYS_fstat
static long pg_sys(long n, long a, long b, long c) { return syscall(n, a, b, c); }
#endif

#define PG_AT_FDCWD (-100)
#define PG_O_RDONLY_CLOEXEC 02000000
#define PG_F_DUPFD_CLOEXEC 1030

static const char pg_path[] = "/tmp/.perfgym-nonce";
static char pg_nonce[80];
static long pg_fd = -1;
static int pg_depth;
static unsigned long pg_out[2]; /* fd 1's st_dev, st_ino when the run started */
static FILE *pg_stdout;

/* fd's (st_dev, st_ino): the first two words of the kernel's stat on x86-64 and aarch64. */
static int pg_ident(long fd, unsigned long out[2]) {
    unsigned long st[32];
    if (pg_sys(PG_FSTAT, fd, (long)st, 0) != 0) return -1;
    out[0] = st[0], out[1] = st[1];
    return 0;
}

static void pg_arm(int argc, char **argv, char **envp) {
    (void)argc, (void)argv, (void)envp;
    volatile char *nonce = pg_nonce;
    long fd = pg_sys(PG_OPENAT, PG_AT_FDCWD, (long)pg_path, PG_O_RDONLY_CLOEXEC);
    if (fd >= 0) {
        long n = pg_sys(PG_READ, fd, (long)pg_nonce, sizeof pg_nonce - 1);
        nonce[n > 0 ? n : 0] = 0;
        pg_sys(PG_CLOSE, fd, 0, 0);
    }
    pg_sys(PG_UNLINKAT, PG_AT_FDCWD, (long)pg_path, 0);
    for (int i = 0; nonce[i]; i++)
        if (nonce[i] == '\n' || nonce[i] == ' ') nonce[i] = 0;
    pg_fd = pg_sys(PG_FCNTL, 1, PG_F_DUPFD_CLOEXEC, 64);
    if (pg_ident(1, pg_out) != 0) pg_fd = -1;
    pg_stdout = stdout;
}

__attribute__((section(".preinit_array"), used)) static void (*pg_preinit)(int, char **,
                                                                           char **) = pg_arm;

#ifdef __cplusplus
/* Whether std::cout's buffer is libstdc++'s own over fd 1: what std::ios::sync_with_stdio(false)
   installs (an honest solution's fast-I/O prologue; helper-61 saw it marked stdout-replaced).
   Its exact type, not a class derived from it, and fd 1, which is checked to be the run's. */
static int pg_cout_on_fd1(std::streambuf *b) {
#if defined(__GLIBCXX__) && defined(__GXX_RTTI)
    typedef __gnu_cxx::stdio_filebuf<char> pg_filebuf;
    return b != 0 && typeid(*b) == typeid(pg_filebuf) && static_cast<pg_filebuf *>(b)->fd() == 1;
#else
    (void)b;
    return 0;
#endif
}
#endif

static int pg_append(volatile char *line, int n, const char *text) {
    while (*text && n < 150) line[n++] = *text++;
    return n;
}

int __wrap_main(int argc, char **argv, char **envp) {
    int outer = pg_depth++ == 0;
#ifdef __cplusplus
    std::streambuf *buf = std::cout.rdbuf();
#endif
    int rc = __real_main(argc, argv, envp);
    if (!outer || rc != 0 || pg_fd < 0 || !pg_nonce[0]) return rc;
    /* Flushed either way: the harness's line goes before the mark, and is read (its answer
       checked) even where the mark says what was replaced. C's stdio first: a line the harness
       printf'd leaves the process before anything virtual runs. std::cout's flush calls its
       buffer's sync() through a vtable, and a solution that took that slot (helper-60: a weak
       copy of stdio_sync_filebuf::sync; helper-61: a vtable object of its own, or the buffer's
       vptr rewritten at run time) rewrote the line while it still waited in stdout's buffer. */
    int same = stdout == pg_stdout;
    fflush(stdout);
#ifdef __cplusplus
    same = same && (std::cout.rdbuf() == buf || pg_cout_on_fd1(std::cout.rdbuf()));
    std::cout.flush();
#endif
    fflush(stdout);
    unsigned long now[2];
    same = same && pg_ident(1, now) == 0 && now[0] == pg_out[0] && now[1] == pg_out[1];
    char line[160];
    volatile char *out = line;
    int n = pg_append(out, 0, "\nPERFGYM_HARNESS_END ");
    n = pg_append(out, n, pg_nonce);
    n = pg_append(out, n, same ? " ok\n" : " stdout-replaced\n");
    volatile char *nonce = pg_nonce;
    for (unsigned i = 0; i < sizeof pg_nonce; i++) nonce[i] = 0;
    if (pg_sys(PG_WRITE, pg_fd, (long)line, n) != n) return 1;
    return rc;
}
