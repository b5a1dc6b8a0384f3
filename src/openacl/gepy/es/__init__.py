"""``ge.es``: the Eager-Style graph builder. ``ge.es.all`` (the generated op functions) is loaded with it, as GE-PY
loads its ``ge.es.plugins`` entry points; openacl's op table is built in, so nothing is printed about loading it."""

from __future__ import annotations

from types import ModuleType

from openacl.gepy.es import all
from openacl.gepy.es.graph_builder import GraphBuilder
from openacl.gepy.es.tensor_holder import TensorHolder

__all__ = ["GraphBuilder", "TensorHolder", "all", "get_plugin", "list_plugins"]

_PLUGINS: dict[str, ModuleType] = {"all": all}


def list_plugins() -> list[str]:
    return sorted(_PLUGINS)


def get_plugin(name: str) -> ModuleType | None:
    return _PLUGINS.get(name)
