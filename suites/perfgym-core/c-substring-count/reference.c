/* Substring count: Knuth-Morris-Pratt over one fread buffer, linear in |T| + |P| on any input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(size_t *len) {
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    *len = n;
    return buf;
}

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
        p++;
    }
    return p;
}

static const char *token_end(const char *p, const char *end) {
    while (p < end && !(*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
        p++;
    }
    return p;
}

int main(void) {
    size_t len;
    char *buf = slurp(&len);
    const char *end = buf + len;
    const char *p = skip_space(buf, end);
    if (p == end) {
        return 0;
    }
    /* The two lengths are only hints; the tokens themselves say how long T and P are. */
    p = skip_space(token_end(p, end), end);
    p = skip_space(token_end(p, end), end);
    const char *text = p;
    const char *text_end = token_end(text, end);
    const char *pat = skip_space(text_end, end);
    const char *pat_end = token_end(pat, end);
    long n = text_end - text, m = pat_end - pat;
    /* fail[k] = length of the longest proper border of pat[0..k]. */
    long *fail = malloc(sizeof(long) * (size_t)(m > 0 ? m : 1));
    fail[0] = 0;
    for (long k = 1, b = 0; k < m; k++) {
        while (b > 0 && pat[k] != pat[b]) {
            b = fail[b - 1];
        }
        if (pat[k] == pat[b]) {
            b++;
        }
        fail[k] = b;
    }
    long count = 0, first = -1, last = -1;
    for (long i = 0, b = 0; i < n; i++) {
        while (b > 0 && text[i] != pat[b]) {
            b = fail[b - 1];
        }
        if (text[i] == pat[b]) {
            b++;
        }
        if (b == m) {
            long at = i - m + 1;
            if (count == 0) {
                first = at;
            }
            last = at;
            count++;
            b = fail[b - 1];
        }
    }
    printf("%ld %ld %ld\n", count, first, last);
    free(fail);
    free(buf);
    return 0;
}
