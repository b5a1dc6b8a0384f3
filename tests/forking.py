"""Fork tests without hanging: run a function in a forked child and get its answer, or fail if the child hangs;
hold locks on another thread across the fork."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import select
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence

import pytest

CHILD_TIMEOUT_S = 60.0


def in_child(fn: Callable[[], str], timeout: float = CHILD_TIMEOUT_S) -> str:
    """Fork; run ``fn`` in the child and return the text it returns (its traceback if it raised). A child that does
    not answer within ``timeout`` seconds is killed and the test fails: a hang fails, it never hangs the suite."""
    read, write = os.pipe()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a hung child prints where it hangs, then dies
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            try:
                answer = fn()
            except BaseException:
                answer = "raised:\n" + traceback.format_exc()
            os.write(write, answer.encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([read], [], [], max(left, 0))
            if not ready:
                os.kill(pid, signal.SIGUSR1)
                time.sleep(1)  # for the traceback to be written (on stderr, which pytest shows)
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"the forked child did not answer within {timeout} s (it hangs); it said: {chunks}")
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    return b"".join(chunks).decode()


@contextlib.contextmanager
def held(locks: Sequence[object]) -> Iterator[None]:
    """Another thread holds every one of ``locks`` (each with ``acquire``/``release``) until the block ends."""
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with contextlib.ExitStack() as stack:
            for lock in locks:
                stack.enter_context(lock)
            taken.set()
            done.wait()

    holder = threading.Thread(target=hold, name="test-lock-holder")
    holder.start()
    try:
        assert taken.wait(10), "the holder thread could not take the locks"
        yield
    finally:
        done.set()
        holder.join()
