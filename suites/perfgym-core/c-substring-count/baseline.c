/* Substring count: tries the pattern at every text position, comparing character by character. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    long n, m;
    if (scanf("%ld %ld", &n, &m) != 2) {
        return 0;
    }
    char *text = malloc((size_t)n + 1);
    char *pat = malloc((size_t)m + 1);
    if (scanf("%s %s", text, pat) != 2) {
        return 1;
    }
    long count = 0, first = -1, last = -1;
    for (long i = 0; i + m <= n; i++) {
        long k = 0;
        while (k < m && text[i + k] == pat[k]) {
            k++;
        }
        if (k == m) {
            if (count == 0) {
                first = i;
            }
            last = i;
            count++;
        }
    }
    printf("%ld %ld %ld\n", count, first, last);
    free(text);
    free(pat);
    return 0;
}
