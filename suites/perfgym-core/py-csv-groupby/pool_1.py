import sys


def main():
    lines = sys.stdin.read().splitlines()
    rows = []
    for line in lines[1:]:
        if not line:
            continue
        region, store, amount = line.split(",")
        rows.append([region, store, int(amount)])
    out = []
    for region in sorted(set(r[0] for r in rows)):
        # One full scan of the table per group.
        selected = [r for r in rows if r[0] == region]
        amounts = [r[2] for r in selected]
        stores = set(r[1] for r in selected)
        out.append(f"{region} {len(selected)} {len(stores)} {sum(amounts)} {max(amounts)}")
    if out:
        print("\n".join(out))


main()
