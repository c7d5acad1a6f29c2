import sys
from bisect import bisect_left


def main():
    tokens = sys.stdin.buffer.read().split()
    n = int(tokens[0])
    # tails[k]: smallest possible last value of an increasing subsequence of length k + 1;
    # it stays sorted, so each element is placed by one C-level binary search.
    tails = []
    append = tails.append
    for x in map(int, tokens[1 : n + 1]):
        k = bisect_left(tails, x)
        if k == len(tails):
            append(x)
        else:
            tails[k] = x
    print(len(tails))


main()
