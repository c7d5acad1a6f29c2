import sys


def main():
    lines = sys.stdin.read().split("\n")
    n, q = map(int, lines[0].split())
    a = list(map(int, lines[1].split())) if n else []
    total = 0
    largest = None
    for k in range(q):
        left, right = map(int, lines[2 + k].split())
        s = sum(a[left - 1 : right])
        total += s
        if largest is None or s > largest:
            largest = s
    print(total, largest)


main()
