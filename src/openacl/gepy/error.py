"""``ge.error``: GE-PY's exception. Every engine ``GeError`` (a GE status and its one line) becomes a ``GeError``
here, raised by :func:`raising` around each engine call; the number itself is dropped, as GE-PY drops it (the
message says which API failed, with what, and GE's error text: the engine's line)."""

from __future__ import annotations

from typing import Any, NoReturn

from openacl.errors import GeError as EngineError
from openacl.graph_engine import errmsg

__all__ = ["GeError", "get_ge_error_msg", "raise_ge_error"]


class GeError(RuntimeError):
    """A GE API failed: ``api_name`` (e.g. ``"RunGraph"``), ``context`` (e.g. ``{"graph_id": 1}``) and
    ``error_message`` (GE's error text, possibly empty)."""

    def __init__(
        self, message: str = "", *, api_name: str = "", context: dict[str, Any] | None = None, error_message: str = ""
    ) -> None:
        super().__init__(message)
        self.api_name = api_name
        self.context = dict(context or {})
        self.error_message = error_message


def get_ge_error_msg() -> str:
    """GE's error text for this thread since it was last read (``GEGetErrorMsg``); reading clears it."""
    return errmsg.take()


def raise_ge_error(api_name: str, status: int | None = None, **context: Any) -> NoReturn:
    """Raise ``GeError("<api_name> failed; k=v, ...; <error text>")``; ``status`` is not part of it."""
    del status
    raise _error(api_name, get_ge_error_msg(), context)


class raising:
    """``with raising(api_name, **context):`` runs one engine call: an engine error becomes the GeError GE-PY
    raises for ``api_name``, its ``error_message`` the engine's line. GE's error record starts empty and the error
    consumes it, as GE-PY's ``raise_ge_error`` reads it. (A class, not a generator context manager: every
    ``run_graph`` enters one, and contextlib's would be a tenth of a tiny graph's run.)"""

    __slots__ = ("api_name", "context")

    def __init__(self, api_name: str, **context: Any) -> None:
        self.api_name = api_name
        self.context = context

    def __enter__(self) -> None:
        errmsg.clear()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        if isinstance(exc, EngineError):
            raise from_engine(exc, self.api_name, **self.context) from None
        return False


def from_engine(exc: EngineError, api_name: str, **context: Any) -> GeError:
    """The GE-PY error for a GeError the engine raised (an operator a CPU cannot run, a bad format, ...)."""
    errmsg.clear()
    return _error(api_name, exc.detail or str(exc), context)


def _error(api_name: str, error_message: str, context: dict[str, Any]) -> GeError:
    message = f"{api_name} failed"
    if context:
        message += "; " + ", ".join(f"{key}={value}" for key, value in context.items())
    if error_message:
        message += "; " + error_message
    return GeError(message, api_name=api_name, context=context, error_message=error_message)
