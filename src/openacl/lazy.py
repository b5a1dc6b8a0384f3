"""Modules imported where they are first used, so ``import acl`` costs what pyACL's does.

ml_dtypes, onnx, onnxruntime, PyAV, Pillow, protobuf, rich, tensorboardX and safetensors together take longer to
import than the rest of openacl, and most programs touch few of them; openacl's own models, operators, DVPP and
dumps, and lighter libraries such as ``json`` that only a config file or a report needs, are the same on a
smaller scale. A module names one once, at its top::

    ort = lazy.module("onnxruntime")
    helper = lazy.module("onnx.helper")

and uses it as it would the module itself: the first attribute read imports it. A package whose submodules most
programs never touch (``acl.media``, ``acl.mdl``, ...) names them once instead, with module ``__getattr__`` and
``__dir__`` (PEP 562)::

    SUBMODULES = ("rt", "mdl")
    __getattr__, __dir__ = lazy.submodules(__name__, SUBMODULES)

so ``acl.rt`` imports ``acl/rt.py`` on its first read and is the real module from then on (``import acl.rt``,
``from acl import rt`` and ``dir(acl)`` work as for any package). These two are the one way openacl defers an
import (``tests/test_imports.py`` refuses a function-level import of the heavy libraries, and treats
``lazy.module("openacl.x")`` and each name of ``lazy.submodules`` as an import of that module, so no floor rule
is dodged through them).

Guarantees:

* Thread-safe without a lock of ours: ``importlib.import_module`` holds the import system's per-module lock, so
  two threads reading a proxy at once import the library once, and a forked child inherits nothing to renew.
* An attribute, once read, is kept on the proxy: later reads are plain module attribute reads. A library that
  rebinds one of its own attributes later is not seen (none of these does).
* Only attribute reads import: naming the proxy, annotations (``from __future__ import annotations``) and
  :func:`loaded` do not.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable

__all__ = ["LazyModule", "loaded", "module", "submodules"]


class LazyModule(types.ModuleType):
    """A stand-in for the module ``__name__`` that imports it on the first attribute read."""

    def __getattr__(self, attribute: str) -> object:
        # Called only for names not yet on the proxy. Dunder lookups (copy, pickle, inspect probe them) must not
        # import a library.
        if attribute.startswith("__") and attribute.endswith("__"):
            raise AttributeError(attribute)
        value = getattr(importlib.import_module(self.__name__), attribute)
        setattr(self, attribute, value)
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}{' (imported)' if loaded(self) else ''}>"


def module(name: str) -> LazyModule:
    """A proxy of the module ``name`` (``"onnx"``, ``"PIL.Image"``), imported on its first attribute read."""
    return LazyModule(name)


def loaded(proxy: LazyModule | types.ModuleType) -> bool:
    """Whether the module is imported (by anyone): an ``isinstance`` against one of its classes can only be true
    when it is, so hot paths ask this first and leave the library unimported."""
    return proxy.__name__ in sys.modules


def submodules(package: str, names: Iterable[str]) -> tuple[Callable[[str], types.ModuleType], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) that import its submodule ``names`` on first read.

    The import binds the submodule as an attribute of the package (the import system does), so only the first
    read comes here; the same per-module import lock as :func:`module` makes it thread-safe."""
    wanted = frozenset(names)

    def __getattr__(name: str) -> types.ModuleType:
        if name not in wanted:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return importlib.import_module(f"{package}.{name}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *wanted})

    return __getattr__, __dir__
