import sys


def main():
    data = sys.stdin.read().split()
    k = int(data[0])
    counts = {}
    for word in data[1:]:
        counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))
    for word, count in ranked[:k]:
        print(word, count)


main()
