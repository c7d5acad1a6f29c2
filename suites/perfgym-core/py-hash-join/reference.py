import sys


def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    # Build side: the small customer table as a hash map (ids stay as bytes: no parsing needed,
    # as both sides print ids the same way).
    country_of = dict(zip(data[2 : 2 + 2 * n : 2], data[3 : 3 + 2 * n : 2], strict=True))
    base = 2 + 2 * n
    # Probe side, all in C: look every order's customer up at once.
    countries = list(map(country_of.get, data[base + 1 : base + 3 * m : 3]))
    amounts = data[base + 2 : base + 3 * m : 3]
    counts = {}
    totals = {}
    for country, amount in zip(countries, amounts, strict=True):
        if country is None:
            continue
        if country in totals:
            totals[country] += int(amount)
            counts[country] += 1
        else:
            totals[country] = int(amount)
            counts[country] = 1
    unmatched = countries.count(None)
    print(m - unmatched, unmatched)
    for country in sorted(counts):
        print(country.decode(), counts[country], totals[country])


main()
