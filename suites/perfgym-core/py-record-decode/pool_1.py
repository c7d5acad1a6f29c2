import sys


def main():
    lines = sys.stdin.read().split("\n")
    n = int(lines[0])
    total = 0
    xor = 0
    best = None
    for k in range(n):
        text = lines[1 + k]
        # Whole fields at a time: each hex slice becomes bytes, then one little-endian integer.
        rid = int.from_bytes(bytes.fromhex(text[0:8]), "little")
        score = int.from_bytes(bytes.fromhex(text[40:48]), "little", signed=True)
        name = bytes.fromhex(text[8:40]).split(b"\0", 1)[0].decode()
        total += score
        xor ^= rid
        if best is None or score > best[0] or (score == best[0] and rid < best[1]):
            best = (score, rid, name)
    print(n, total, xor)
    if best is not None:
        print(best[1], best[2])


main()
