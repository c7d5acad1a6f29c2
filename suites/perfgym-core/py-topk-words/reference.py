import sys
from collections import Counter
from heapq import nlargest


def main():
    data = sys.stdin.buffer.read().split()
    k = int(data[0])
    counts = Counter(data[1:])
    if k <= 0 or not counts:
        return
    # The k-th largest count is a threshold: only words at or above it can be in the answer,
    # so just those few are sorted with the tie-break instead of the whole vocabulary.
    threshold = nlargest(k, counts.values())[-1]
    top = [(-c, w) for w, c in counts.items() if c >= threshold]
    top.sort()
    print("\n".join(f"{w.decode()} {-c}" for c, w in top[:k]))


main()
