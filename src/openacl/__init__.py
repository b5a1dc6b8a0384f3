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
#: The pyACL package name and where openacl implements it.
ACL_PACKAGE, ACL_FACADE = "acl", "openacl.acl"


def install() -> None:
    """Make ``import acl`` (``acl.rt``, ...) and ``import ge`` (``ge.graph``, ``ge.es.all``, ...) resolve to openacl.

    ``acl`` is aliased at once; its submodules load on first use (``acl.rt``, ``import acl.rt``). ``acl.x`` and
    ``ge`` with its submodules resolve through a finder at the front of ``sys.meta_path``, so nothing of GE loads
    until a program imports it, and no ``ge`` exists on disk (a real CANN ``ge-py`` installed beside openacl stays
    untouched outside ``openacl run``).
    """
    from openacl import acl

    sys.modules[ACL_PACKAGE] = acl
    if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())


class _AliasFinder:
    """``ge`` -> ``openacl.gepy``, ``ge.x.y`` -> ``openacl.gepy.x.y``, ``acl.x`` -> ``openacl.acl.x``: the same
    module objects under both names (never a second copy of a facade module loaded from the same file).

    A meta path finder and its loader by protocol, not ``importlib.abc``'s classes: importing that module (and
    ``importlib.resources`` with it) would cost every ``import openacl`` more than the rest of this file."""

    ALIASES = ((GE_PACKAGE, GE_FACADE), (ACL_PACKAGE, ACL_FACADE))

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        real = next(
            (
                facade + fullname[len(package) :]
                for package, facade in self.ALIASES
                if fullname == package or fullname.startswith(package + ".")
            ),
            None,
        )
        if real is None:
            return None
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
