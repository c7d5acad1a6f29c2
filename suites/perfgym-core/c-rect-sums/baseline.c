/* Rectangle sums: adds up every cell of every queried rectangle. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    int rows, cols, q;
    if (scanf("%d %d %d", &rows, &cols, &q) != 3) {
        return 0;
    }
    int *grid = malloc(sizeof(int) * (size_t)(rows > 0 ? rows : 1) * (size_t)(cols > 0 ? cols : 1));
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
            if (scanf("%d", &grid[r * cols + c]) != 1) {
                return 1;
            }
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
            for (int c = c1 - 1; c < c2; c++) {
                s += grid[r * cols + c];
            }
        }
        total += s;
        if (i == 0 || s > best) {
            best = s;
        }
    }
    printf("%lld %lld\n", total, best);
    free(grid);
    return 0;
}
