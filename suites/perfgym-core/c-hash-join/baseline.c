/* Equi-join: nested loops, every row of the left table against every row of the right. */
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

int main(void) {
    int n, m;
    if (scanf("%d %d", &n, &m) != 2) {
        return 0;
    }
    Row *left = read_rows(n);
    Row *right = read_rows(m);
    long long pairs = 0, total = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++) {
            if (left[i].key == right[j].key) {
                pairs++;
                total += left[i].value * right[j].value;
            }
        }
    }
    printf("%lld %lld\n", pairs, total);
    free(left);
    free(right);
    return 0;
}
