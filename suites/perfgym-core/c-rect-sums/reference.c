/* Rectangle sums: 2-D prefix sums (O(1) per query) and a single-buffer integer reader. */
#include <stdio.h>
#include <stdlib.h>

static char *buf;
static size_t len, pos;

static void slurp(void) {
    size_t cap = 1 << 20;
    buf = malloc(cap);
    for (;;) {
        size_t got = fread(buf + len, 1, cap - len, stdin);
        len += got;
        if (len < cap) {
            if (got == 0 || feof(stdin)) {
                break;
            }
            continue;
        }
        cap *= 2;
        buf = realloc(buf, cap);
    }
}

/* scanf parses a format string per call; a hand loop over the buffer is several times faster. */
static int next_int(long long *out) {
    while (pos < len && (buf[pos] < '0' || buf[pos] > '9') && buf[pos] != '-') {
        pos++;
    }
    if (pos >= len) {
        return 0;
    }
    int neg = 0;
    if (buf[pos] == '-') {
        neg = 1;
        pos++;
    }
    long long v = 0;
    while (pos < len && buf[pos] >= '0' && buf[pos] <= '9') {
        v = v * 10 + (buf[pos++] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

int main(void) {
    slurp();
    long long rows, cols, q;
    if (!next_int(&rows) || !next_int(&cols) || !next_int(&q)) {
        return 0;
    }
    size_t stride = (size_t)cols + 1;
    /* pre[r][c] = sum of grid[0..r)[0..c); row 0 and column 0 stay zero. */
    long long *pre = calloc((size_t)(rows + 1) * stride, sizeof(long long));
    for (long long r = 1; r <= rows; r++) {
        long long *cur = pre + (size_t)r * stride;
        const long long *up = cur - stride;
        long long run = 0;
        for (long long c = 1; c <= cols; c++) {
            long long v;
            if (!next_int(&v)) {
                return 1;
            }
            run += v;
            cur[c] = up[c] + run;
        }
    }
    long long total = 0, best = 0;
    for (long long i = 0; i < q; i++) {
        long long r1, c1, r2, c2;
        if (!next_int(&r1) || !next_int(&c1) || !next_int(&r2) || !next_int(&c2)) {
            return 1;
        }
        long long s = pre[r2 * stride + c2] - pre[(r1 - 1) * stride + c2] -
                      pre[r2 * stride + c1 - 1] + pre[(r1 - 1) * stride + c1 - 1];
        total += s;
        if (i == 0 || s > best) {
            best = s;
        }
    }
    printf("%lld %lld\n", total, best);
    free(pre);
    free(buf);
    return 0;
}
