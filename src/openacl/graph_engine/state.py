"""Process-wide GE state: ``GEInitialize``/``GEFinalize``, one GE instance per process (as CANN documents).
Like every public engine function, they raise ``GeError`` (:mod:`openacl.graph_engine._api`).

Owned by :mod:`openacl.process`, which finalizes it at exit (:func:`finalize_at_exit`) and resets it with the
rest of openacl. Sessions register here so GEFinalize can close them.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any, Protocol

from openacl import atfork
from openacl.errors import GeError, GeStatus
from openacl.graph_engine._api import names_api
from openacl.log import get_logger

__all__ = ["finalize_at_exit", "ge_finalize", "ge_initialize", "is_initialized"]

log = get_logger("ge")


class _Closable(Protocol):
    def close(self) -> None: ...


class _Ge:
    def __init__(self) -> None:
        self.lock = atfork.lock()
        # Invariant: ``generation`` changes at every GEFinalize, under ``lock``; a session of an older
        # generation is dead.
        self.initialized = False
        self.generation = 0
        self.options: dict[str, str] = {}
        self.sessions: weakref.WeakSet[_Closable] = weakref.WeakSet()


_ge = _Ge()


@names_api("GEInitialize")
def ge_initialize(options: Mapping[Any, Any] | None = None) -> None:
    """``GEInitialize``: succeeds also when already initialised (GE ignores the second call; differing
    options are only warned about). An empty option key is FAILED."""
    parsed, bad = parse_options(options)
    if bad:
        raise GeError(GeStatus.FAILED, bad)
    with _ge.lock:  # records are logged after it: a logging handler is user code
        again = _ge.initialized
        ignored = again and parsed != _ge.options
        if not again:
            _ge.initialized = True
            _ge.options = parsed
    if ignored:
        log.warning("GEInitialize is called more than once; the new options are ignored")
    if not again:
        log.info("GEInitialize: %s", parsed)


def ge_finalize() -> None:
    """``GEFinalize``: closes every session (queued async runs get FAILED); never fails, also when not
    initialised."""
    with _ge.lock:
        before_initialize = not _ge.initialized
    if before_initialize:  # logged without the lock: a logging handler is user code
        log.warning("GEFinalize is called before GEInitialize")
        return
    with _ge.lock:
        if not _ge.initialized:  # finalized meanwhile by another thread
            return
        _ge.initialized = False
        _ge.generation += 1
        _ge.options = {}
        sessions = list(_ge.sessions)
        _ge.sessions.clear()
    for session in sessions:
        session.close()


def is_initialized() -> bool:
    return _ge.initialized


def generation() -> int:
    return _ge.generation


def join(session: _Closable) -> tuple[int, dict[str, str] | None]:
    """Register a new session: ``(generation, GE's options)``, the options None when GE is not initialised."""
    with _ge.lock:
        if not _ge.initialized:
            return _ge.generation, None
        _ge.sessions.add(session)
        return _ge.generation, dict(_ge.options)


def leave(session: _Closable) -> None:
    with _ge.lock:
        _ge.sessions.discard(session)


def finalize_at_exit() -> None:
    """GEFinalize at exit when the program did not (``openacl.process``): a session worker still inside
    onnxruntime while the interpreter is torn down aborts the process ("terminate called without an active
    exception")."""
    if _ge.initialized:
        ge_finalize()


def parse_options(options: Mapping[Any, Any] | None) -> tuple[dict[str, str], str | None]:
    """Options as ``str -> str`` (bytes decoded), and why they are unusable (an empty key), or None."""
    if options is None:
        return {}, None
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict of str to str, not {type(options).__name__}")
    parsed = {text(k): text(v) for k, v in options.items()}
    if "" in parsed:
        return parsed, "an option key is empty"
    return parsed, None


def text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    return str(value)
