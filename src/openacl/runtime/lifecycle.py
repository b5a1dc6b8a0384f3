"""Whether ``acl.init`` is in effect, for the floors below ``process.py``.

``process.py`` owns ``acl.init`` and ``acl.finalize`` and records each here. A module loaded after ``acl.init``
(the dump settings load on a program's first ``init_dump``) asks here rather than being told at init, which it
could not be: it was not loaded yet.

Invariant: only ``process.py`` sets the flag, inside its init lock; a read is one attribute read (atomic).
"""

from __future__ import annotations

_initialized = False


def set_initialized(value: bool) -> None:
    """``process.py`` only: ``acl.init`` succeeded (True), or ``acl.finalize`` or a reset ended it (False)."""
    global _initialized
    _initialized = value


def initialized() -> bool:
    return _initialized
