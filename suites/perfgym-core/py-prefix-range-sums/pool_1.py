import sys


def main():
    data = sys.stdin.read().split()
    n, q = int(data[0]), int(data[1])
    # A Fenwick tree answers each prefix sum in O(log n): far better than summing every range,
    # though a plain prefix array would make each query O(1).
    tree = [0] * (n + 1)
    for i in range(1, n + 1):
        v = int(data[1 + i])
        j = i
        while j <= n:
            tree[j] += v
            j += j & -j

    def prefix(i):
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    total = 0
    largest = None
    pos = 2 + n
    for _ in range(q):
        left, right = int(data[pos]), int(data[pos + 1])
        pos += 2
        s = prefix(right) - prefix(left - 1)
        total += s
        if largest is None or s > largest:
            largest = s
    print(total, largest)


main()
