/* Hamming pairs: popcount by 4-bit (nibble) lookup table over a flat row array. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Bits set in each nibble value. */
static const unsigned char bits4[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

static int distance(const uint64_t *a, const uint64_t *b, int w) {
    int d = 0;
    for (int k = 0; k < w; k++) {
        uint64_t x = a[k] ^ b[k];
        for (int s = 0; s < 64; s += 4) {
            d += bits4[(x >> s) & 0xfu];
        }
    }
    return d;
}

int main(void) {
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
