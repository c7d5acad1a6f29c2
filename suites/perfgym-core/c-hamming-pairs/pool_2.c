/* Hamming pairs: popcount by 8-bit lookup table over a flat row array. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char bits8[256];

static int distance(const uint64_t *a, const uint64_t *b, int w) {
    int d = 0;
    for (int k = 0; k < w; k++) {
        uint64_t x = a[k] ^ b[k];
        for (int s = 0; s < 64; s += 8) {
            d += bits8[(x >> s) & 0xffu];
        }
    }
    return d;
}

int main(void) {
    for (int v = 1; v < 256; v++) {
        bits8[v] = (unsigned char)(bits8[v >> 1] + (v & 1));
    }
    int n, w, limit;
    if (scanf("%d %d %d", &n, &w, &limit) != 3) {
        return 0;
    }
    uint64_t *rows = malloc(sizeof(uint64_t) * (size_t)(n > 0 ? n : 1) * (size_t)(w > 0 ? w : 1));
    for (int i = 0; i < n * w; i++) {
        unsigned long long v;
        if (scanf("%llx", &v) != 1) {
            return 1;
        }
        rows[i] = (uint64_t)v;
    }
    long long close = 0, total = 0;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            int d = distance(rows + (size_t)i * w, rows + (size_t)j * w, w);
            total += d;
            if (d <= limit) {
                close++;
            }
        }
    }
    printf("%lld %lld\n", close, total);
    free(rows);
    return 0;
}
