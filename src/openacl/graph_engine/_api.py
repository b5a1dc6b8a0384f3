"""The engine's one error convention: a public engine method raises :class:`~openacl.errors.GeError` whose
``detail`` is the one line its faces log or show (``"RunGraph: graph id 9 does not exist ..."``), and reports
that line to GE's error record (:mod:`.errmsg`). The faces translate it directly: :mod:`openacl.ge` to a status
code, :mod:`openacl.gepy` to GE-PY's exception.

    @names_api("AddGraph")
    def add_graph(self, ...) -> None: ...     # raises GeError(code, "AddGraph: <why>")
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from openacl.errors import GeError
from openacl.graph_engine import errmsg

__all__ = ["names_api", "one_line", "verbatim"]

F = TypeVar("F", bound=Callable[..., Any])


def verbatim(exc: GeError) -> GeError:
    """Mark an error whose text is GE's own log line (``No summary callback found, graph_id:1``): its one line is
    the text as it is, without the ``<api>:`` prefix."""
    exc.verbatim = True  # type: ignore[attr-defined]
    return exc


def one_line(api: str, exc: GeError) -> GeError:
    """``exc`` with its one line, ``"<api>: <detail>"`` (or a :func:`verbatim` detail alone), reported to the
    error record when it is an error (not a warning)."""
    line = exc.detail if getattr(exc, "verbatim", False) else f"{api}: {exc.detail}"
    if exc.level >= logging.ERROR:
        errmsg.report(line)
    return GeError(exc.code, line, level=exc.level)


def names_api(api: str) -> Callable[[F], F]:
    """Re-raise a GeError from the method as :func:`one_line` of ``api``. TypeError (a wrong Python type) passes
    through. A decorated method never calls another decorated one, so a line is named once."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except GeError as exc:
                raise one_line(api, exc) from None

        return call  # type: ignore[return-value]

    return decorate
