/* Access-log summary: one fread of the whole input and a single pointer walk, no copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(size_t *len) {
    size_t cap = 1 << 22, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
    }
    buf[n] = '\n'; /* sentinel: every scan below stops at a newline */
    *len = n;
    return buf;
}

static inline long long digits(const char **pp) {
    const char *p = *pp;
    long long v = 0;
    while ((unsigned)(*p - '0') < 10u) {
        v = v * 10 + (*p++ - '0');
    }
    *pp = p;
    return v;
}

int main(void) {
    size_t len;
    char *buf = slurp(&len);
    const char *p = buf, *end = buf + len;
    long long lines = 0, classes[4] = {0, 0, 0, 0}, bytes = 0, lat_total = 0, lat_max = 0;
    long long per_hour[24] = {0};
    while (p < end) {
        while (p < end && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t')) {
            p++;
        }
        if (p >= end) {
            break;
        }
        /* TIMESTAMP is fixed width: the hour sits at offset 11, the method starts at 21. */
        int hour = (p[11] - '0') * 10 + (p[12] - '0');
        p += 21;
        p = memchr(p, ' ', (size_t)(end - p)) + 1; /* skip METHOD */
        p = memchr(p, ' ', (size_t)(end - p)) + 1; /* skip PATH */
        int status = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
        p += 4;
        long long size = digits(&p);
        p++;
        long long ms = digits(&p);
        p++;
        long long us = ms * 1000 + (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
        p += 5; /* three digits and "ms" */
        lines++;
        classes[status / 100 - 2]++;
        bytes += size;
        lat_total += us;
        if (us > lat_max) {
            lat_max = us;
        }
        per_hour[hour]++;
    }
    int busiest = 0;
    for (int h = 1; h < 24; h++) {
        if (per_hour[h] > per_hour[busiest]) {
            busiest = h;
        }
    }
    printf("lines %lld\n", lines);
    printf("status %lld %lld %lld %lld\n", classes[0], classes[1], classes[2], classes[3]);
    printf("bytes %lld\n", bytes);
    printf("latency_us %lld %lld\n", lat_total, lat_max);
    printf("busiest_hour %d %lld\n", busiest, per_hour[busiest]);
    free(buf);
    return 0;
}
