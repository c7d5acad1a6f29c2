import sys


def main():
    data = sys.stdin.buffer.read().split(b"\n")
    h, w = map(int, data[0].split())
    # Cell (r, c) is bit r*(w+1) + c of one big integer; the extra wall column stops shifts by
    # one from wrapping into the next row. A whole BFS level then costs a few big-int ops.
    w1 = w + 1
    flat = b"#".join(data[1 : 1 + h]) + b"#"
    start, target = flat.index(b"S"), flat.index(b"T")
    bits = flat.translate(bytes.maketrans(b".ST#", b"1110"))
    unvisited = int(bits[::-1], 2)
    frontier = 1 << start
    unvisited ^= frontier
    target_bit = 1 << target
    answer = -1
    depth = 0
    reached = 0
    while frontier:
        reached += frontier.bit_count()
        if answer < 0 and frontier & target_bit:
            answer = depth
        frontier = (
            (frontier << 1) | (frontier >> 1) | (frontier << w1) | (frontier >> w1)
        ) & unvisited
        unvisited ^= frontier
        depth += 1
    print(answer, reached)


main()
