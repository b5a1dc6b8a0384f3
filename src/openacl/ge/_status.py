"""The status-code face's one error convention: the engine raises ``GeError`` carrying a GE status and its one
line; the public form returns the status (``GeStatus.SUCCESS`` is 0) or ``(value, status)``, after logging the
line once.

    @returns_status()
    def add_graph(self, ...) -> None: ...            # SUCCESS, or the GeError's code

    @returns_status(value=list)
    def run_graph(self, ...) -> list[np.ndarray]: ...  # (outputs, SUCCESS), or ([], code)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from openacl.errors import GeError, GeStatus
from openacl.log import get_logger

__all__ = ["failed", "returns_status"]

log = get_logger("ge")
F = TypeVar("F", bound=Callable[..., Any])


def failed(exc: GeError) -> int:
    """Log the error's one line at its level; its code."""
    log.log(exc.level, "%s", exc.detail)
    return exc.code


def returns_status(*, value: Callable[[], Any] | None = None) -> Callable[[F], F]:
    """Map a GeError raised by the engine to its code (and ``value()`` as the value), logging its one line at the
    error's level. TypeError (a wrong Python type) passes through."""

    def decorate(fn: F) -> F:
        if value is None:

            @functools.wraps(fn)
            def bare(*args: Any, **kwargs: Any) -> int:
                try:
                    fn(*args, **kwargs)
                except GeError as exc:
                    return failed(exc)
                return GeStatus.SUCCESS

            return bare  # type: ignore[return-value]

        @functools.wraps(fn)
        def with_value(*args: Any, **kwargs: Any) -> tuple[Any, int]:
            try:
                result = fn(*args, **kwargs)
            except GeError as exc:
                return value(), failed(exc)
            return result, GeStatus.SUCCESS

        return with_value  # type: ignore[return-value]

    return decorate
