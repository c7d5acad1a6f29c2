import sys


def main():
    tokens = sys.stdin.read().split()
    n = int(tokens[0])
    a = [int(t) for t in tokens[1 : n + 1]]
    # best[i]: length of the longest strictly increasing subsequence ending at a[i].
    best = [1] * n
    for i in range(n):
        for j in range(i):
            if a[j] < a[i] and best[j] + 1 > best[i]:
                best[i] = best[j] + 1
    print(max(best) if best else 0)


main()
