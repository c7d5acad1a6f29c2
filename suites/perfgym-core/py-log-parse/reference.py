import sys
from bisect import bisect_left
from collections import Counter
from itertools import compress, repeat
from operator import add, ge, itemgetter, mul

SCALE = 1_000_000  # latencies are below this, so hour * SCALE + latency sorts by hour first


def main():
    # Every line has exactly five space-separated fields, so one whitespace split yields the
    # columns as strided slices; everything up to the 24-step output loop runs in C.
    tokens = sys.stdin.buffer.read().split()
    hours = list(map(int, map(itemgetter(slice(11, 13)), tokens[0::5])))
    latencies = map(int, map(itemgetter(slice(0, -2)), tokens[4::5]))
    # Statuses are three digits, so byte-wise comparison is numeric comparison.
    errors = Counter(compress(hours, map(ge, tokens[3::5], repeat(b"500"))))
    # One sorted list of combined keys gives each hour's count (a bisect range) and its
    # largest latency (the last key of the range).
    keys = sorted(map(add, map(mul, hours, repeat(SCALE)), latencies))
    out = []
    for hour in range(24):
        lo = bisect_left(keys, hour * SCALE)
        hi = bisect_left(keys, (hour + 1) * SCALE)
        if hi > lo:
            out.append(f"{hour:02d} {hi - lo} {errors[hour]} {keys[hi - 1] - hour * SCALE}")
    if out:
        print("\n".join(out))


main()
