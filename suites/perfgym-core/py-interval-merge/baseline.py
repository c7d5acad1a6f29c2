import sys


def main():
    data = sys.stdin.read().split()
    n = int(data[0])
    intervals = [(int(data[1 + 2 * i]), int(data[2 + 2 * i])) for i in range(n)]
    end = max((r for _, r in intervals), default=0)
    # Mark every covered unit [x, x + 1), then walk the whole line looking for runs.
    covered = [False] * (end + 1)
    for left, right in intervals:
        for x in range(left, right):
            covered[x] = True
    count = 0
    total = 0
    longest = 0
    run = 0
    for x in range(end + 1):
        if covered[x]:
            run += 1
        elif run:
            count += 1
            total += run
            longest = max(longest, run)
            run = 0
    print(count, total, longest)


main()
