import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    ends = list(map(int, data[2 : 2 + 2 * n : 2]))
    end = max(ends, default=0)
    # Painting with slice assignment runs in C; the walk over the line is still per unit.
    covered = bytearray(end + 1)
    for i in range(n):
        left = int(data[1 + 2 * i])
        covered[left : ends[i]] = b"\x01" * (ends[i] - left)
    count = 0
    total = 0
    longest = 0
    run = 0
    for c in covered:
        if c:
            run += 1
        elif run:
            count += 1
            total += run
            if run > longest:
                longest = run
            run = 0
    print(count, total, longest)


main()
