import sys


def main():
    lines = sys.stdin.read().split("\n")
    n = int(lines[0])
    total = 0
    xor = 0
    best = None
    for k in range(n):
        text = lines[1 + k]
        raw = [int(text[i : i + 2], 16) for i in range(0, 48, 2)]
        rid = raw[0] + (raw[1] << 8) + (raw[2] << 16) + (raw[3] << 24)
        name = ""
        for b in raw[4:20]:
            if b == 0:
                break
            name += chr(b)
        score = raw[20] + (raw[21] << 8) + (raw[22] << 16) + (raw[23] << 24)
        if score >= 2**31:
            score -= 2**32
        total += score
        xor ^= rid
        if best is None or score > best[0] or (score == best[0] and rid < best[1]):
            best = (score, rid, name)
    print(n, total, xor)
    if best is not None:
        print(best[1], best[2])


main()
