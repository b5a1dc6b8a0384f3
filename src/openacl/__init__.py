"""openacl: Ascend pyACL's callback system in Python, on any Linux machine."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types

__version__ = "0.1.0"

#: The GE-PY package name and where openacl implements it.
GE_PACKAGE, GE_FACADE = "ge", "openacl.gepy"


def install() -> None:
    """Make ``import acl`` (``acl.rt``, ...) and ``import ge`` (``ge.graph``, ``ge.es.all``, ...) resolve to openacl.

    ``acl`` is aliased at once. ``ge`` and its submodules resolve through a finder at the front of
    ``sys.meta_path``, so nothing of GE loads until a program imports it, and no ``ge`` exists on disk (a real
    CANN ``ge-py`` installed beside openacl stays untouched outside ``openacl run``).
    """
    from openacl import acl

    sys.modules["acl"] = acl
    for name in acl.SUBMODULES:
        sys.modules[f"acl.{name}"] = getattr(acl, name)
    if not any(isinstance(finder, _GeFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _GeFinder())


class _GeFinder:
    """``ge`` -> ``openacl.gepy``, ``ge.x.y`` -> ``openacl.gepy.x.y``: the same module objects under both names.

    A meta path finder and its loader by protocol, not ``importlib.abc``'s classes: importing that module (and
    ``importlib.resources`` with it) would cost every ``import openacl`` more than the rest of this file."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != GE_PACKAGE and not fullname.startswith(GE_PACKAGE + "."):
            return None
        real = GE_FACADE + fullname[len(GE_PACKAGE) :]
        try:
            spec = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            return None
        if spec is None:
            return None
        return importlib.util.spec_from_loader(
            fullname, _AliasLoader(real), is_package=spec.submodule_search_locations is not None
        )


class _AliasLoader:
    def __init__(self, real: str) -> None:
        self.real = real
        self.real_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.real)
        self.real_spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        """The real module ran when it was imported; it keeps its own spec (the import system replaced it)."""
        module.__spec__ = self.real_spec
