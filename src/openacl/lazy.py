"""Heavy libraries imported where they are first used, so ``import acl`` costs what pyACL's does.

ml_dtypes, onnx, onnxruntime, PyAV, Pillow, protobuf, rich, tensorboardX and safetensors together take longer to
import than the rest of openacl, and most programs touch few of them. A module names one once, at its top::

    ort = lazy.module("onnxruntime")
    helper = lazy.module("onnx.helper")

and uses it as it would the module itself: the first attribute read imports it. This is the one way openacl
defers an import (``tests/test_imports.py`` refuses a function-level import of these libraries, and treats
``lazy.module("openacl.x")`` as an import of ``openacl.x``, so no floor rule is dodged through it).

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

__all__ = ["LazyModule", "loaded", "module"]


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
