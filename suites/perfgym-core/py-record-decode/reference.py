import sys
from array import array
from functools import reduce
from operator import xor


def main():
    data = sys.stdin.buffer.read()
    head, _, body = data.partition(b"\n")
    n = int(head)
    # fromhex skips whitespace, so the whole body decodes in one C call.
    blob = bytes.fromhex(body.decode("ascii"))
    if n == 0:
        print(0, 0, 0)
        return
    # Each record is six 32-bit words: id, four words of name, score. Strided slices of one
    # typed array pick out whole columns without a Python loop per record.
    words = array("I", blob)
    if sys.byteorder != "little":
        words.byteswap()
    ids = words[0::6]
    scores = array("i", words[5::6].tobytes())
    top = max(scores)
    best = min((rid, i) for i, (rid, s) in enumerate(zip(ids, scores, strict=True)) if s == top)
    rid, at = best
    name = blob[24 * at + 4 : 24 * at + 20].split(b"\0", 1)[0].decode()
    print(n, sum(scores), reduce(xor, ids, 0))
    print(rid, name)


main()
