import sys


def main():
    lines = sys.stdin.read().split("\n")
    text = lines[0]
    q = int(lines[1])
    # Only positions holding the pattern's first letter can start a match.
    starts = {}
    for i, c in enumerate(text):
        starts.setdefault(c, []).append(i)
    out = []
    for k in range(q):
        pattern = lines[2 + k]
        count = 0
        for i in starts.get(pattern[0], ()):
            if text.startswith(pattern, i):
                count += 1
        out.append(count)
    print("\n".join(map(str, out)))


main()
