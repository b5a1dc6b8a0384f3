"""The scheduling lock's hot-path acquire (``lock.acquire``)."""

from __future__ import annotations

import threading
import time

from openacl.runtime.sched import lock


def test_wait_for_lock_takes_the_lock_once_its_holder_lets_go():
    """A holder that keeps LOCK across a GIL-free wait outlasts the tries; the waiter then blocks, and gets
    LOCK only after the holder released it."""
    held, release = threading.Event(), threading.Event()
    order: list[str] = []

    def holder() -> None:
        with lock.LOCK:
            held.set()
            release.wait(10)
            order.append("released")

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    waiter_done = threading.Event()

    def waiter() -> None:
        lock.acquire()
        order.append("acquired")
        lock.LOCK.release()
        waiter_done.set()

    other = threading.Thread(target=waiter)
    other.start()
    assert not waiter_done.wait(0.2)  # LOCK is still held: the waiter has not got it
    release.set()
    assert waiter_done.wait(10)
    thread.join()
    other.join()
    assert order == ["released", "acquired"]
    assert not lock.LOCK.locked()


def test_wait_for_lock_under_contention_keeps_every_update():
    """Two threads take LOCK the hot-path way around a read-modify-write that yields the GIL halfway (so
    without the lock updates would be lost): none is."""
    counter = [0]

    def bump() -> None:
        for _ in range(2_000):
            if not lock.LOCK.acquire(False):
                lock.acquire()
            try:
                value = counter[0]
                time.sleep(0)
                counter[0] = value + 1
            finally:
                lock.LOCK.release()

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == 4_000
