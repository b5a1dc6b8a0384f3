"""pyACL's desc accessors, generated from the floor's field declarations (``openacl.runtime.fields``).

For each field of a :class:`~openacl.runtime.fields.Fields`, pyACL has ``<family>_set_<desc>_<field>(handle,
value)`` (format ``k`` and the field's kind, returns the code) and ``<family>_get_<desc>_<field>(handle)``
(format ``k``, returns the bare value, 0 for an unknown handle), as ``dvpp_set_pic_desc_width``. Each is an
``@api`` function like the hand-written ones, named, qualified and placed in its facade module as if written
there, so the module's static ``__all__``, the coverage table and ``inspect`` see an ordinary function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from openacl.acl._args import BARE, api
from openacl.runtime.fields import Fields


def accessors(module: str, family: str, desc: str, fields: Fields, handle: str | None = None) -> dict[str, Callable]:
    """Every setter and getter pyACL has for ``fields``, by name, for ``globals().update`` in ``module``;
    ``handle`` names the desc argument (default: ``desc``)."""
    made: dict[str, Callable] = {}
    for field, declared in fields:
        if "w" in declared.access:
            name = f"{family}_set_{desc}_{field}"
            made[name] = api("k" + declared.kind)(_named(_setter(fields, field), name, module, handle or desc, field))
        if "r" in declared.access:
            name = f"{family}_get_{desc}_{field}"
            made[name] = api("k", BARE)(_named(_getter(fields, field), name, module, handle or desc))
    return made


def _setter(fields: Fields, field: str) -> Callable:
    def body(handle: int, value: int) -> None:
        fields.set(handle, field, value)

    return body


def _getter(fields: Fields, field: str) -> Callable:
    def body(handle: int) -> object:
        return fields.get(handle, field)

    return body


def _named(body: Callable, name: str, module: str, *parameters: str) -> Callable:
    """``body`` as if defined by ``def name(*parameters)`` at the top of ``module``."""
    body.__name__ = body.__qualname__ = name
    body.__module__ = module
    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in parameters]
    )
    return body
