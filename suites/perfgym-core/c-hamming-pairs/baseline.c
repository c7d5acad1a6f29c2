/* Hamming pairs: straightforward version, counts differing bits one at a time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int distance(const uint64_t *a, const uint64_t *b, int w) {
    int d = 0;
    for (int k = 0; k < w; k++) {
        uint64_t x = a[k] ^ b[k];
        for (int bit = 0; bit < 64; bit++) {
            if ((x >> bit) & 1u) {
                d++;
            }
        }
    }
    return d;
}

int main(void) {
    int n, w, limit;
    if (scanf("%d %d %d", &n, &w, &limit) != 3) {
        return 0;
    }
    uint64_t **rows = malloc(sizeof(uint64_t *) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        rows[i] = malloc(sizeof(uint64_t) * (size_t)w);
        for (int k = 0; k < w; k++) {
            unsigned long long v;
            if (scanf("%llx", &v) != 1) {
                return 1;
            }
            rows[i][k] = (uint64_t)v;
        }
    }
    long long close = 0, total = 0;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            int d = distance(rows[i], rows[j], w);
            total += d;
            if (d <= limit) {
                close++;
            }
        }
    }
    printf("%lld %lld\n", close, total);
    for (int i = 0; i < n; i++) {
        free(rows[i]);
    }
    free(rows);
    return 0;
}
