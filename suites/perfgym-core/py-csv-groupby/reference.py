import sys
from bisect import bisect_left


def main():
    data = sys.stdin.buffer.read()
    lines = data.split(b"\n")
    del lines[0]
    if lines and lines[-1] == b"":
        lines.pop()
    # Sorting the raw lines puts each region's rows in one contiguous block (',' sorts
    # just below '-'), so every aggregate afterwards is a C-speed slice operation.
    lines.sort()
    out = []
    i = 0
    n = len(lines)
    while i < n:
        first = lines[i]
        region = first[: first.find(b",")]
        j = bisect_left(lines, region + b"-", i)
        cells = b",".join(lines[i:j]).split(b",")
        amounts = list(map(int, cells[2::3]))
        out.append(
            f"{region.decode()} {j - i} {len(set(cells[1::3]))} {sum(amounts)} {max(amounts)}"
        )
        i = j
    if out:
        print("\n".join(out))


main()
