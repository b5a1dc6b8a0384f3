"""The C++-shaped GE API's one error convention: an engine method raises ``GeError``; its public form returns
the status (``GeStatus.SUCCESS`` is 0) or ``(value, status)``, after logging the failure once.

    @returns_status("AddGraph")
    def add_graph(self, ...) -> None: ...            # SUCCESS, or the GeError's code

    @returns_status("RunGraph", value=list)
    def run_graph(self, ...) -> list[np.ndarray]: ...  # (outputs, SUCCESS), or ([], code)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from openacl.errors import GeError, GeStatus
from openacl.log import get_logger

__all__ = ["returns_status", "verbatim"]

log = get_logger("ge")
F = TypeVar("F", bound=Callable[..., Any])


def verbatim(exc: GeError) -> GeError:
    """Mark an error whose text is GE's own log line (``No summary callback found, graph_id:1``): it is logged as
    it is, without the ``<api>:`` prefix."""
    exc.verbatim = True  # type: ignore[attr-defined]
    return exc


def _log(api: str, exc: GeError) -> None:
    if getattr(exc, "verbatim", False):
        log.log(exc.level, "%s", exc.detail)
    else:
        log.log(exc.level, "%s: %s", api, exc.detail)


def returns_status(api: str, *, value: Callable[[], Any] | None = None) -> Callable[[F], F]:
    """Map a GeError raised by the method to its code (and ``value()`` as the value), logging
    ``"<api>: <detail>"`` (or a :func:`verbatim` detail alone) at the error's level. TypeError (a wrong Python
    type) passes through."""

    def decorate(fn: F) -> F:
        if value is None:

            @functools.wraps(fn)
            def bare(*args: Any, **kwargs: Any) -> int:
                try:
                    fn(*args, **kwargs)
                except GeError as exc:
                    _log(api, exc)
                    return exc.code
                return GeStatus.SUCCESS

            return bare  # type: ignore[return-value]

        @functools.wraps(fn)
        def with_value(*args: Any, **kwargs: Any) -> tuple[Any, int]:
            try:
                result = fn(*args, **kwargs)
            except GeError as exc:
                _log(api, exc)
                return value(), exc.code
            return result, GeStatus.SUCCESS

        return with_value  # type: ignore[return-value]

    return decorate
