import sys


def main():
    tokens = sys.stdin.read().split()
    n = int(tokens[0])
    a = list(map(int, tokens[1 : n + 1]))
    # tails[k]: smallest possible last value of an increasing subsequence of length k + 1,
    # found here by a linear scan: O(n * answer) instead of O(n^2).
    tails = []
    for x in a:
        k = 0
        while k < len(tails) and tails[k] < x:
            k += 1
        if k == len(tails):
            tails.append(x)
        else:
            tails[k] = x
    print(len(tails))


main()
