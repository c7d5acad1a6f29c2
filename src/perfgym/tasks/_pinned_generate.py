"""Child process of `generate`: runs ENAMEL generators with string hashing pinned.

Reads a pickled {"prompt", "generator", "specs": [(size, seed, level, index), ...]} from
stdin and writes the pickled list of argument lists to stdout. Started by
`perfgym.tasks.generate` with PYTHONHASHSEED=0.
"""

from __future__ import annotations

import pickle
import sys

from perfgym.tasks.generate import run_enamel_generator


def main() -> None:
    request = pickle.loads(sys.stdin.buffer.read())
    values = [
        run_enamel_generator(request["prompt"], request["generator"], *spec)
        for spec in request["specs"]
    ]
    sys.stdout.buffer.write(pickle.dumps(values))


if __name__ == "__main__":
    main()
