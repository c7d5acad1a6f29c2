import sys


def main():
    lines = sys.stdin.read().split("\n")
    text = lines[0]
    q = int(lines[1])
    for k in range(q):
        pattern = lines[2 + k]
        m = len(pattern)
        count = 0
        for i in range(len(text) - m + 1):
            if text[i : i + m] == pattern:
                count += 1
        print(count)


main()
