"""A forked child gets every lock, thread and queue of openacl anew: the package is walked for them, so that none
made another way can be forgotten, and a child forked while other threads hold every one of them makes progress."""

from __future__ import annotations

import ast
import gc
import importlib
import os
import pkgutil
import queue
import threading
import weakref
from collections import deque
from concurrent.futures import Executor
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import acl
import openacl
from openacl import atfork, ge
from openacl.model.model import DEMO_MODEL
from openacl.runtime.sched import lock as sched_lock
from tests.forking import held, in_child

SRC = Path(openacl.__file__).parent
SUCCESS = 0

LOCKS = (type(threading.Lock()), type(threading.RLock()), threading.Condition, threading.Event, threading.Semaphore)
RENEWED = (threading.Thread, queue.Queue, queue.SimpleQueue, Executor)
CONTAINERS = (dict, list, tuple, set, frozenset, deque)


def package_modules() -> list[ModuleType]:
    names = [m.name for m in pkgutil.walk_packages(openacl.__path__, "openacl.") if m.name != "openacl.__main__"]
    return [importlib.import_module(name) for name in ["openacl", *names]]


def _ours(obj: object) -> bool:
    module = getattr(type(obj), "__module__", "") or ""
    return module == "openacl" or module.startswith("openacl.")


class Walk:
    """Everything reachable from openacl's module globals, through openacl objects, classes and containers."""

    def __init__(self) -> None:
        self.locks: dict[int, tuple[str, object]] = {}
        self.renewed: dict[int, tuple[str, object, bool]] = {}  # id -> (path, object, some owner on a path renews it)
        self._seen: set[int] = set()
        for module in package_modules():
            for name, value in list(vars(module).items()):
                if isinstance(value, ModuleType) or (isinstance(value, type) and value.__module__ != module.__name__):
                    continue
                self._visit(value, f"{module.__name__}.{name}", [module.__name__], 0)

    def _visit(self, obj: object, path: str, owners: list[object], depth: int) -> None:
        if isinstance(obj, LOCKS):
            self.locks.setdefault(id(obj), (path, obj))
            return
        if isinstance(obj, RENEWED):
            covered = any(atfork.is_registered(owner) for owner in owners)
            known = self.renewed.get(id(obj))
            self.renewed[id(obj)] = (path, obj, covered or (known is not None and known[2]))
            return
        if depth > 12 or id(obj) in self._seen:
            return
        if isinstance(obj, (dict, weakref.WeakValueDictionary)):
            self._seen.add(id(obj))
            for key, value in list(obj.items()):
                self._visit(value, f"{path}[{key!r}]", owners, depth + 1)
        elif isinstance(obj, (*CONTAINERS, weakref.WeakSet)):
            self._seen.add(id(obj))
            for i, value in enumerate(list(obj)):
                self._visit(value, f"{path}[{i}]", owners, depth + 1)
        elif isinstance(obj, type) and obj.__module__.startswith("openacl"):
            self._seen.add(id(obj))
            for name, value in list(vars(obj).items()):
                if not callable(value) and not isinstance(value, (property, staticmethod, classmethod)):
                    self._visit(value, f"{path}.{name}", owners, depth + 1)
        elif _ours(obj) and not isinstance(obj, type):
            self._seen.add(id(obj))
            fields = dict(getattr(obj, "__dict__", {}))
            for cls in type(obj).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    if hasattr(obj, slot):
                        fields[slot] = getattr(obj, slot)
            for name, value in fields.items():
                # the object renews it, or the module of its class does (report.py's subscriptions, for one)
                self._visit(value, f"{path}.{name}", [*owners, obj, type(obj).__module__], depth + 1)


@pytest.fixture
def busy_runtime(ctx, stream):
    """A runtime with its threads and queues in use: engine workers, the exception-info callback's thread, a
    subscription, a util thread, a loaded model, a GE session's asynchronous worker."""
    src, _ = acl.rt.malloc_host(64)
    dst, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy_async(dst, 64, src, 64, 1, stream) == SUCCESS
    assert acl.rt.synchronize_stream(stream) == SUCCESS
    assert acl.rt.set_exception_info_callback(lambda info: None) == SUCCESS
    stop = threading.Event()
    tid, ret = acl.util.start_thread(lambda args: stop.wait(), [])
    assert ret == SUCCESS
    assert acl.rt.subscribe_report(tid, stream) == SUCCESS
    model_id, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
    assert ret == SUCCESS
    assert ge.ge_initialize() == SUCCESS
    session, graph, ran = ge.Session(), ge.Graph("g"), threading.Event()
    graph.set_outputs([graph.op("Relu", [graph.data("x", index=0, shape=[2], dtype="float32")])])
    assert session.add_graph(1, graph) == SUCCESS
    assert session.run_graph_async(1, [np.ones(2, np.float32)], lambda code, outputs: ran.set()) == SUCCESS
    assert ran.wait(30)
    yield stream
    assert ge.ge_finalize() == SUCCESS
    acl.mdl.unload(model_id)
    assert acl.rt.unsubscribe_report(tid, stream) == SUCCESS
    stop.set()
    assert acl.util.stop_thread(tid) == SUCCESS
    acl.rt.set_exception_info_callback(None)


def test_every_lock_thread_and_queue_in_the_package_is_renewed_at_fork(busy_runtime):
    """Each lock, condition and event reachable from a module of openacl was made by ``atfork`` (so it is free in
    a forked child); each thread, queue and executor belongs to an object or module with a renewal."""
    walk = Walk()
    assert len(walk.locks) > 20 and walk.renewed, "the walk found next to nothing: it is broken"
    found = [path for path, _, _ in walk.renewed.values()]
    for owner in ("_deliverer.thread", "_writer._queue", "engine._queue", "._worker._thread", "subscription.queue"):
        assert any(path.endswith(owner) for path in found), f"the walk did not reach {owner}: {found}"
    made_elsewhere = sorted(path for path, lock in walk.locks.values() if not atfork.is_fork_safe(lock))
    assert not made_elsewhere, f"locks not made by openacl.atfork (held for ever in a forked child): {made_elsewhere}"
    unrenewed = sorted(path for path, _, covered in walk.renewed.values() if not covered)
    assert not unrenewed, f"threads/queues that no at-fork renewal covers: {unrenewed}"


# A primitive made with threading directly is found by the walk only if it is reachable when the walk runs; the
# source is read too. Each exception says why it is safe.
MADE_DIRECTLY_ALLOWED = {
    ("atfork.py", "threading.Lock"): "the factory itself",
    ("atfork.py", "threading.RLock"): "the factory itself",
    ("atfork.py", "threading.Condition"): "the factory itself",
    ("atfork.py", "threading.Event"): "the factory itself",
    ("demo.py", "threading.Event"): "the demo program's own flag, as a user program would make it",
    ("runtime/sched/waiting.py", "_thread.allocate_lock"): "a waiter's one-shot signal: taken at creation, released "
    "by its waker; a child never waits on a waiter of the parent's",
}
PRIMITIVES = {f"threading.{name}" for name in ("Lock", "RLock", "Condition", "Event", "Semaphore", "BoundedSemaphore")}
PRIMITIVES |= {"_thread.allocate_lock", "_thread.RLock"}
RENEWABLE = {
    "Thread",
    "Queue",
    "SimpleQueue",
    "LifoQueue",
    "PriorityQueue",
    "ThreadPoolExecutor",
    "ProcessPoolExecutor",
}


def _made_in(tree: ast.AST) -> list[str]:
    """Dotted names of what ``tree`` calls, hands over as a ``default_factory`` or decorates with, and the bases of
    its classes."""
    used = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Call):
            targets = [node.func, *(k.value for k in node.keywords if k.arg == "default_factory")]
        elif isinstance(node, ast.ClassDef):
            targets = [*node.bases, *node.decorator_list]
        elif isinstance(node, ast.FunctionDef):
            targets = node.decorator_list
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                used.append(f"{target.value.id}.{target.attr}")
            elif isinstance(target, ast.Name):
                used.append(target.id)
    return used


def test_no_module_makes_a_lock_or_thread_that_atfork_does_not_know():
    made, unregistered = [], []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        used = _made_in(ast.parse(path.read_text()))
        made += [f"{rel}: {name}" for name in used if name in PRIMITIVES and (rel, name) not in MADE_DIRECTLY_ALLOWED]
        renews = {"atfork.register", "atfork.at_child"} & set(used)
        if any(name.rpartition(".")[2] in RENEWABLE for name in used) and not renews and rel != "demo.py":
            unregistered.append(rel)
    assert not made, f"made with threading directly, not with openacl.atfork: {made}"
    assert not unregistered, f"modules with threads or queues but no at-fork renewal: {unregistered}"


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_while_other_threads_hold_every_lock_makes_progress(busy_runtime):
    """Another thread holds every lock the walk finds (the scheduling LOCK aside: the at-fork hook itself takes it
    around fork()) while the process forks; the child takes each of them, runs stream work and a model."""
    stream = busy_runtime
    walk = Walk()
    underlying: dict[int, tuple[str, object]] = {}
    for path, lock in walk.locks.values():
        if isinstance(lock, threading.Event):
            lock = lock._cond
        if isinstance(lock, threading.Condition):
            lock = lock._lock
        if lock is not sched_lock.LOCK:
            underlying.setdefault(id(lock), (path, lock))
    locks = [lock for _, lock in underlying.values()]
    assert len(locks) > 20

    def child() -> str:
        stuck = [path for path, lock in underlying.values() if not lock.acquire(timeout=2)]
        for path, lock in underlying.values():
            if path not in stuck:
                lock.release()
        src, _ = acl.rt.malloc_host(64)
        dst, _ = acl.rt.malloc(64, 0)
        acl.rt.memset(src, 64, 7, 64)
        ok = acl.rt.memcpy_async(dst, 64, src, 64, 1, stream) == SUCCESS
        ok = ok and acl.rt.synchronize_stream_with_timeout(stream, 5_000) == SUCCESS
        ok = ok and acl.util.ptr_to_bytes(dst, 64) == b"\x07" * 64
        model_id, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
        ok = ok and ret == SUCCESS and acl.mdl.unload(model_id) == SUCCESS
        return f"stuck={stuck} work={'ok' if ok else 'failed'}"

    with held(locks):
        answer = in_child(child)
    assert answer == "stuck=[] work=ok"


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_forked_child_hung_destroying_an_onnxruntime_session_it_inherited(ctx):
    """A model unloaded in the parent whose session was still garbage (or any session the child dropped) was
    destroyed in the child, which joined onnxruntime's pool threads that only the parent has: the child hung. A
    child never destroys a session it inherits, even after it forks in turn."""
    model_id, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
    assert ret == SUCCESS

    def child() -> str:
        ret = acl.mdl.unload(model_id)  # the child's copy of the model and its session let go
        gc.collect()
        grandchild = in_child(lambda: "ok")  # and the child forks in turn: its own fork lets go of nothing either
        gc.collect()
        return f"unload={ret} grandchild={grandchild}"

    try:
        assert in_child(child) == "unload=0 grandchild=ok"
    finally:
        acl.mdl.unload(model_id)
