"""The GE-PY facade: ``import ge`` (``ge.graph``, ``ge.session``, ``ge.es``, ...) resolves here under ``openacl run``.

CANN's ``ge`` package is empty at its top level, and so is this one: the work is in the submodules, which
convert GE-PY's objects (``Tensor``, ``DataType``, the ES builder) to the GE engine below
(:mod:`openacl.graph_engine`) and its errors to GE-PY's exceptions. ``openacl.install()`` aliases the names, so
nothing called ``ge`` is installed on disk (it would shadow a real CANN ``ge-py``).
"""

from __future__ import annotations

#: GE-PY's module names below ``ge`` that openacl provides (``ge.<name>`` -> ``openacl.gepy.<name>``).
SUBMODULES = (
    "graph",
    "graph.types",
    "session",
    "ge_global",
    "error",
    "allocator",
    "es",
    "es.graph_builder",
    "es.tensor_holder",
    "es.tensor_like",
    "es.all",
    "utils",
    "utils.ge_utils",
    "_capi",
    "_capi.pyes_graph_builder_wrapper",
    "_capi.pyge_utils_wrapper",
    "graph._attr",
    "graph.tensor",
)
