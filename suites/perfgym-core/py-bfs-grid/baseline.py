import sys


def main():
    lines = sys.stdin.read().split("\n")
    h, w = map(int, lines[0].split())
    grid = [list(lines[1 + r]) for r in range(h)]
    for r in range(h):
        for c in range(w):
            if grid[r][c] == "S":
                start = (r, c)
            elif grid[r][c] == "T":
                target = (r, c)
    dist = {start: 0}
    queue = [start]
    while queue:
        r, c = queue.pop(0)
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < h and 0 <= nc < w and grid[nr][nc] != "#" and (nr, nc) not in dist:
                dist[(nr, nc)] = dist[(r, c)] + 1
                queue.append((nr, nc))
    print(dist.get(target, -1), len(dist))


main()
