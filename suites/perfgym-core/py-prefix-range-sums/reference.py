import sys
from itertools import accumulate
from operator import sub


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    prefix = [0, *accumulate(map(int, data[2 : 2 + n]))]
    bounds = data[2 + n : 2 + n + 2 * q]
    # Right ends index prefix directly; left ends need prefix[left - 1], i.e. a list shifted by
    # one. Both lookups and the subtraction run in C via map.
    rights = map(prefix.__getitem__, map(int, bounds[1::2]))
    lefts = map([0, *prefix].__getitem__, map(int, bounds[0::2]))
    sums = list(map(sub, rights, lefts))
    print(sum(sums), max(sums))


main()
