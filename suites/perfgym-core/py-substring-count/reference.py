import sys


def has_border(p):
    """True when a proper prefix of p is also its suffix (then matches can overlap)."""
    fail = [0] * len(p)
    k = 0
    for i in range(1, len(p)):
        while k and p[i] != p[k]:
            k = fail[k - 1]
        if p[i] == p[k]:
            k += 1
        fail[i] = k
    return bool(p) and fail[-1] > 0


def main():
    lines = sys.stdin.buffer.read().split(b"\n")
    text = lines[0]
    q = int(lines[1])
    out = []
    for k in range(q):
        pattern = lines[2 + k]
        if not has_border(pattern):
            # Without a border two matches cannot overlap, so the C-level non-overlapping
            # count is already the overlapping count.
            out.append(text.count(pattern))
            continue
        count = 0
        i = text.find(pattern)
        while i != -1:
            count += 1
            i = text.find(pattern, i + 1)
        out.append(count)
    print("\n".join(map(str, out)))


main()
