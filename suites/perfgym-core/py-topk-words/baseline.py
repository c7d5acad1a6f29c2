import sys


def main():
    data = sys.stdin.read().split()
    k = int(data[0])
    counts = {}
    for word in data[1:]:
        if word in counts:
            counts[word] += 1
        else:
            counts[word] = 1
    remaining = list(counts.items())
    # Selection: k passes, each picking the best remaining word.
    for _ in range(min(k, len(remaining))):
        best = 0
        for i in range(1, len(remaining)):
            word, count = remaining[i]
            bword, bcount = remaining[best]
            if count > bcount or (count == bcount and word < bword):
                best = i
        word, count = remaining.pop(best)
        print(word, count)


main()
