import sys


def main():
    tokens = sys.stdin.read().split()
    n = int(tokens[0])
    a = list(map(int, tokens[1 : n + 1]))
    best = []
    for x in a:
        # Still quadratic, but each row is one comprehension instead of an interpreted loop.
        prev = [b for v, b in zip(a, best, strict=False) if v < x]
        best.append(max(prev) + 1 if prev else 1)
    print(max(best) if best else 0)


main()
