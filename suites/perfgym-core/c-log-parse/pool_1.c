/* Access-log summary: one fgets and one sscanf per line, aggregated on the fly (no records). */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[4096];
    char stamp[64], method[16], path[2048];
    long long lines = 0, classes[4] = {0, 0, 0, 0}, bytes = 0, lat_total = 0, lat_max = 0;
    long long per_hour[24] = {0};
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
        /* TIMESTAMP is fixed width: the hour sits at offset 11. */
        int hour = (stamp[11] - '0') * 10 + (stamp[12] - '0');
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
