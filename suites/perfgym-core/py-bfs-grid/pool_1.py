import sys
from collections import deque


def main():
    lines = sys.stdin.read().split("\n")
    h, w = map(int, lines[0].split())
    grid = lines[1 : 1 + h]
    start = target = None
    for r, row in enumerate(grid):
        if "S" in row:
            start = (r, row.index("S"))
        if "T" in row:
            target = (r, row.index("T"))
    dist = [[-1] * w for _ in range(h)]
    dist[start[0]][start[1]] = 0
    queue = deque([start])
    reached = 1
    while queue:
        r, c = queue.popleft()
        d = dist[r][c] + 1
        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= nr < h and 0 <= nc < w and dist[nr][nc] < 0 and grid[nr][nc] != "#":
                dist[nr][nc] = d
                reached += 1
                queue.append((nr, nc))
    print(dist[target[0]][target[1]], reached)


main()
