/* Equi-join: aggregate the left table per key in an open-addressing hash table, probe with the right. */
#include <stdint.h>
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
        if (got == 0) {
            break;
        }
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
}

static long long next_int(void) {
    while (pos < len && (buf[pos] < '0' || buf[pos] > '9') && buf[pos] != '-') {
        pos++;
    }
    int neg = 0;
    if (pos < len && buf[pos] == '-') {
        neg = 1;
        pos++;
    }
    long long v = 0;
    while (pos < len && buf[pos] >= '0' && buf[pos] <= '9') {
        v = v * 10 + (buf[pos++] - '0');
    }
    return neg ? -v : v;
}

typedef struct {
    long long key;
    long long count; /* 0 marks an empty slot */
    long long sum;
} Slot;

static inline size_t mix(long long key, size_t mask) {
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & mask;
}

int main(void) {
    slurp();
    long long n = next_int(), m = next_int();
    size_t cap = 16;
    while (cap < (size_t)n * 2) {
        cap <<= 1;
    }
    size_t mask = cap - 1;
    Slot *table = calloc(cap, sizeof(Slot));
    /* The join only needs per-key count and value sum of one side: (sum L)(sum R) per key. */
    for (long long i = 0; i < n; i++) {
        long long key = next_int(), value = next_int();
        size_t h = mix(key, mask);
        while (table[h].count != 0 && table[h].key != key) {
            h = (h + 1) & mask;
        }
        table[h].key = key;
        table[h].count++;
        table[h].sum += value;
    }
    long long pairs = 0, total = 0;
    for (long long j = 0; j < m; j++) {
        long long key = next_int(), value = next_int();
        size_t h = mix(key, mask);
        while (table[h].count != 0) {
            if (table[h].key == key) {
                pairs += table[h].count;
                total += table[h].sum * value;
                break;
            }
            h = (h + 1) & mask;
        }
    }
    printf("%lld %lld\n", pairs, total);
    free(table);
    free(buf);
    return 0;
}
