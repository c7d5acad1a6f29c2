import sys


def main():
    lines = sys.stdin.read().split("\n")
    n = int(lines[0])
    total = 0
    xor = 0
    best = None
    for k in range(n):
        raw = bytes.fromhex(lines[1 + k])
        rid = int.from_bytes(raw[0:4], "little")
        score = int.from_bytes(raw[20:24], "little", signed=True)
        total += score
        xor ^= rid
        if best is None or score > best[0] or (score == best[0] and rid < best[1]):
            best = (score, rid, raw[4:20].split(b"\0", 1)[0].decode())
    print(n, total, xor)
    if best is not None:
        print(best[1], best[2])


main()
