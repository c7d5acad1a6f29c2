import sys


def main():
    data = sys.stdin.read().split()
    n, m = int(data[0]), int(data[1])
    customers = sorted((int(data[2 + 2 * i]), data[3 + 2 * i]) for i in range(n))
    base = 2 + 2 * n
    orders = sorted((int(data[base + 3 * j + 1]), int(data[base + 3 * j + 2])) for j in range(m))
    # Sort-merge join: both sides ordered by customer id, walked once in step.
    counts = {}
    totals = {}
    matched = 0
    i = 0
    for cid, amount in orders:
        while i < n and customers[i][0] < cid:
            i += 1
        if i < n and customers[i][0] == cid:
            country = customers[i][1]
            counts[country] = counts.get(country, 0) + 1
            totals[country] = totals.get(country, 0) + amount
            matched += 1
    print(matched, m - matched)
    for country in sorted(counts):
        print(country, counts[country], totals[country])


main()
