import sys
from itertools import compress
from operator import lt, sub


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    # Sorting starts and ends independently is enough: the union has a gap between the i-th
    # and (i+1)-th smallest start exactly when the i-th smallest end lies before that start.
    starts = sorted(map(int, data[1 : 1 + 2 * n : 2]))
    ends = sorted(map(int, data[2 : 2 + 2 * n : 2]))
    if not starts:
        print(0, 0, 0)
        return
    gaps = list(compress(range(n - 1), map(lt, ends, starts[1:])))
    block_ends = [ends[i] for i in gaps]
    block_ends.append(ends[-1])
    block_starts = [starts[0]]
    block_starts.extend([starts[i + 1] for i in gaps])
    lengths = list(map(sub, block_ends, block_starts))
    print(len(lengths), sum(lengths), max(lengths))


main()
