import sys


def main():
    lines = sys.stdin.read().split("\n")
    text = lines[0]
    q = int(lines[1])
    out = []
    for k in range(q):
        pattern = lines[2 + k]
        count = 0
        # str.find scans in C; restart one past each match so overlapping matches count.
        i = text.find(pattern)
        while i != -1:
            count += 1
            i = text.find(pattern, i + 1)
        out.append(count)
    print("\n".join(map(str, out)))


main()
