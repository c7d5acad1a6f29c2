"""A variant's files are written whole: a judge running the variant never reads a file another
judge preparing the same variant has truncated (a baseline once imported an empty solution)."""

from __future__ import annotations

import os
import stat
import threading

from perfgym.judge.whole_file import write_whole


def test_the_same_content_is_left_alone(tmp_path) -> None:
    path = tmp_path / "solution.py"
    write_whole(path, b"x = 1\n")
    before = os.stat(path)
    write_whole(path, b"x = 1\n")
    after = os.stat(path)
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
    assert stat.S_IMODE(after.st_mode) == 0o644  # the run's unprivileged uid reads it


def test_new_content_replaces_the_file_and_a_reader_keeps_what_it_opened(tmp_path) -> None:
    path = tmp_path / "solution.py"
    write_whole(path, b"old\n")
    with open(path, "rb") as reader:
        write_whole(path, b"new\n")
        assert reader.read() == b"old\n"
    assert path.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["solution.py"]  # no temporary left


def test_a_reader_racing_the_writers_never_sees_a_partial_file(tmp_path) -> None:
    path = tmp_path / "solution.py"
    texts = [bytes([65 + k]) * 200_000 for k in range(4)]
    write_whole(path, texts[0])
    seen: set[bytes] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(path.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    for k in range(200):
        write_whole(path, texts[k % 4])
    stop.set()
    reader.join()
    assert seen <= set(texts)
