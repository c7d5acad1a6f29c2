/* Rectangle sums: prefix sums along each row, so a query costs one step per row. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int rows, cols, q;
    if (scanf("%d %d %d", &rows, &cols, &q) != 3) {
        return 0;
    }
    size_t stride = (size_t)cols + 1;
    long long *pre = calloc((size_t)(rows > 0 ? rows : 1) * stride, sizeof(long long));
    for (int r = 0; r < rows; r++) {
        long long *row = pre + (size_t)r * stride;
        for (int c = 0; c < cols; c++) {
            int v;
            if (scanf("%d", &v) != 1) {
                return 1;
            }
            row[c + 1] = row[c] + v;
        }
    }
    long long total = 0, best = 0;
    for (int i = 0; i < q; i++) {
        int r1, c1, r2, c2;
        if (scanf("%d %d %d %d", &r1, &c1, &r2, &c2) != 4) {
            return 1;
        }
        long long s = 0;
        for (int r = r1 - 1; r < r2; r++) {
            const long long *row = pre + (size_t)r * stride;
            s += row[c2] - row[c1 - 1];
        }
        total += s;
        if (i == 0 || s > best) {
            best = s;
        }
    }
    printf("%lld %lld\n", total, best);
    free(pre);
    return 0;
}
