/* Access-log summary: parses each line with sscanf into a record list, then summarises the list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *stamp;
    char *method;
    char *path;
    int status;
    long long bytes;
    long long latency_us;
} Record;

/* strdup is POSIX, not C11. */
static char *copy(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    memcpy(d, s, n);
    return d;
}

int main(void) {
    char line[4096];
    char stamp[64], method[16], path[2048];
    size_t count = 0, cap = 1024;
    Record *records = malloc(sizeof(Record) * cap);
    while (fgets(line, sizeof line, stdin)) {
        int status;
        long long size, ms, frac;
        if (strspn(line, " \t\r\n") == strlen(line)) {
            continue;
        }
        if (sscanf(line, "%63s %15s %2047s %d %lld %lld.%lldms", stamp, method, path, &status, &size,
                   &ms, &frac) != 7) {
            return 1;
        }
        if (count == cap) {
            cap *= 2;
            records = realloc(records, sizeof(Record) * cap);
        }
        Record *r = &records[count++];
        r->stamp = copy(stamp);
        r->method = copy(method);
        r->path = copy(path);
        r->status = status;
        r->bytes = size;
        r->latency_us = ms * 1000 + frac;
    }
    long long classes[4] = {0, 0, 0, 0}, bytes = 0, lat_total = 0, lat_max = 0;
    long long per_hour[24] = {0};
    for (size_t i = 0; i < count; i++) {
        const Record *r = &records[i];
        int hour;
        if (sscanf(r->stamp, "%*d-%*d-%*dT%d", &hour) != 1) {
            return 1;
        }
        classes[r->status / 100 - 2]++;
        bytes += r->bytes;
        lat_total += r->latency_us;
        if (r->latency_us > lat_max) {
            lat_max = r->latency_us;
        }
        per_hour[hour]++;
    }
    int busiest = 0;
    for (int h = 1; h < 24; h++) {
        if (per_hour[h] > per_hour[busiest]) {
            busiest = h;
        }
    }
    printf("lines %zu\n", count);
    printf("status %lld %lld %lld %lld\n", classes[0], classes[1], classes[2], classes[3]);
    printf("bytes %lld\n", bytes);
    printf("latency_us %lld %lld\n", lat_total, lat_max);
    printf("busiest_hour %d %lld\n", busiest, per_hour[busiest]);
    for (size_t i = 0; i < count; i++) {
        free(records[i].stamp);
        free(records[i].method);
        free(records[i].path);
    }
    free(records);
    return 0;
}
