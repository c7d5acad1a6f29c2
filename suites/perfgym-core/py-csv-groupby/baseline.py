import sys


def main():
    lines = sys.stdin.read().splitlines()
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        region, store, amount = line.split(",")
        rows.append([region, store, int(amount)])
    regions = []
    for row in rows:
        if row[0] not in regions:
            regions.append(row[0])
    regions.sort()
    for region in regions:
        # One full scan of the table per group.
        count = 0
        total = 0
        largest = 0
        stores = []
        for row in rows:
            if row[0] == region:
                count += 1
                total += row[2]
                if row[2] > largest:
                    largest = row[2]
                if row[1] not in stores:
                    stores.append(row[1])
        print(region, count, len(stores), total, largest)


main()
