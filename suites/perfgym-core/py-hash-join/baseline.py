import sys


def main():
    lines = sys.stdin.read().splitlines()
    n, m = map(int, lines[0].split())
    customer_ids = []
    customer_country = []
    for line in lines[1 : 1 + n]:
        cid, country = line.split()
        customer_ids.append(int(cid))
        customer_country.append(country)
    orders = {}
    totals = {}
    unmatched = 0
    for line in lines[1 + n : 1 + n + m]:
        _, cid, amount = line.split()
        cid = int(cid)
        if cid not in customer_ids:
            unmatched += 1
            continue
        country = customer_country[customer_ids.index(cid)]
        orders[country] = orders.get(country, 0) + 1
        totals[country] = totals.get(country, 0) + int(amount)
    print(m - unmatched, unmatched)
    for country in sorted(orders):
        print(country, orders[country], totals[country])


main()
