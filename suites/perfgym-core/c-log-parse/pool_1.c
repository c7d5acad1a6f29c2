/* Access-log summary: streams lines with fgets and parses fields with strtoll, no records kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns a pointer just past the next space (or the end of the string). */
static char *after_field(char *p) {
    char *sp = strchr(p, ' ');
    return sp ? sp + 1 : p + strlen(p);
}

int main(void) {
    char line[4096];
    long long lines = 0, classes[4] = {0, 0, 0, 0}, bytes = 0, lat_total = 0, lat_max = 0;
    long long per_hour[24] = {0};
    while (fgets(line, sizeof line, stdin)) {
        if (strspn(line, " \t\r\n") == strlen(line)) {
            continue;
        }
        /* TIMESTAMP is fixed width: the hour sits at offset 11. */
        int hour = (line[11] - '0') * 10 + (line[12] - '0');
        char *p = after_field(after_field(after_field(line)));
        char *end;
        int status = (int)strtol(p, &end, 10);
        long long size = strtoll(end, &end, 10);
        long long ms = strtoll(end, &end, 10);
        long long frac = strtoll(end + 1, &end, 10);
        long long us = ms * 1000 + frac;
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
    return 0;
}
