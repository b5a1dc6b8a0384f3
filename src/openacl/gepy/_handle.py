"""``_handle``: GE-PY objects carry the address of their C object there; openacl has no C object behind them.

Programs and GE-PY's own tests check only that it is set, so each facade object gets an opaque, non-zero,
read-only int (its ``id``). It is never a pointer and nothing in openacl takes it back.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OpaqueHandle"]


class OpaqueHandle:
    """A class attribute: ``obj._handle`` is ``id(obj)``; assigning it is AttributeError (there is no C handle
    to replace, so a program that swaps handles meets the difference at once instead of later)."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else id(obj)

    def __set__(self, obj: Any, value: Any) -> None:
        raise AttributeError(f"{type(obj).__name__}._handle is read-only: openacl has no C handle behind it")
