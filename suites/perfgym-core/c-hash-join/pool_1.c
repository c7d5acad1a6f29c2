/* Equi-join: sort both tables by key with qsort, then merge runs of equal keys. */
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    long long key;
    long long value;
} Row;

static Row *read_rows(int n) {
    Row *rows = malloc(sizeof(Row) * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) {
        if (scanf("%lld %lld", &rows[i].key, &rows[i].value) != 2) {
            exit(1);
        }
    }
    return rows;
}

static int by_key(const void *a, const void *b) {
    long long x = ((const Row *)a)->key, y = ((const Row *)b)->key;
    return (x > y) - (x < y);
}

int main(void) {
    int n, m;
    if (scanf("%d %d", &n, &m) != 2) {
        return 0;
    }
    Row *left = read_rows(n);
    Row *right = read_rows(m);
    qsort(left, (size_t)n, sizeof(Row), by_key);
    qsort(right, (size_t)m, sizeof(Row), by_key);
    long long pairs = 0, total = 0;
    int i = 0, j = 0;
    while (i < n && j < m) {
        if (left[i].key < right[j].key) {
            i++;
        } else if (left[i].key > right[j].key) {
            j++;
        } else {
            /* Every left row of this key meets every right row of it: (sum L)(sum R). */
            long long key = left[i].key, lsum = 0, rsum = 0, lcount = 0, rcount = 0;
            for (; i < n && left[i].key == key; i++) {
                lsum += left[i].value;
                lcount++;
            }
            for (; j < m && right[j].key == key; j++) {
                rsum += right[j].value;
                rcount++;
            }
            pairs += lcount * rcount;
            total += lsum * rsum;
        }
    }
    printf("%lld %lld\n", pairs, total);
    free(left);
    free(right);
    return 0;
}
