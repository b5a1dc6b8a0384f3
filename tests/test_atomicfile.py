"""``atomicfile.replacing``: a file under its final name is complete or absent, whatever fails mid-write."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from openacl.atomicfile import replacing, write_text


def leftovers(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "report.csv"
    write_text(path, "old\n")
    with pytest.raises(RuntimeError, match="midway"), replacing(path) as out:
        out.write("new, half of it" * 10000)
        raise RuntimeError("midway")
    assert path.read_text() == "old\n"
    assert leftovers(tmp_path) == []
    absent = tmp_path / "never.txt"
    with pytest.raises(RuntimeError), replacing(absent, "wb") as out:
        out.write(b"x" * 100000)
        raise RuntimeError("midway")
    assert not absent.exists() and leftovers(tmp_path) == []


def test_a_finished_write_replaces_the_file_with_the_asked_permissions(tmp_path):
    path = tmp_path / "out.bin"
    write_text(path, "old")
    with replacing(path, "wb", permissions=0o600) as out:
        out.write(b"\x00\x01")
    assert path.read_bytes() == b"\x00\x01"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with replacing(tmp_path / "lines.csv", newline="") as out:
        out.write("a\r\nb\n")
    assert (tmp_path / "lines.csv").read_bytes() == b"a\r\nb\n"
    assert leftovers(tmp_path) == []
    with pytest.raises(ValueError, match="whole file"), replacing(path, "a"):
        pass


def test_a_symlink_keeps_pointing_at_the_replaced_file(tmp_path):
    real = tmp_path / "real.txt"
    write_text(real, "old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_pipe_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), name="test-fifo-reader")
    reader.start()
    write_text(fifo, "through the pipe")
    reader.join(timeout=30)
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
