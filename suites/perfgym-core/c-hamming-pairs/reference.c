/* Hamming pairs: branch-free SWAR popcount inlined into a flat, cache-friendly pair loop. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Portable popcount: -O2 without -mpopcnt would turn __builtin_popcountll into a libgcc call. */
static inline unsigned popcount64(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

int main(void) {
    int n, w, limit;
    if (scanf("%d %d %d", &n, &w, &limit) != 3) {
        return 0;
    }
    size_t cells = (size_t)(n > 0 ? n : 1) * (size_t)(w > 0 ? w : 1);
    uint64_t *rows = malloc(sizeof(uint64_t) * cells);
    for (size_t i = 0; i < (size_t)n * (size_t)w; i++) {
        unsigned long long v;
        if (scanf("%llx", &v) != 1) {
            return 1;
        }
        rows[i] = (uint64_t)v;
    }
    long long close = 0;
    unsigned long long total = 0;
    for (int i = 0; i < n; i++) {
        const uint64_t *a = rows + (size_t)i * w;
        for (int j = i + 1; j < n; j++) {
            const uint64_t *b = rows + (size_t)j * w;
            unsigned d = 0;
            for (int k = 0; k < w; k++) {
                d += popcount64(a[k] ^ b[k]);
            }
            total += d;
            close += d <= (unsigned)limit;
        }
    }
    printf("%lld %llu\n", close, total);
    free(rows);
    return 0;
}
