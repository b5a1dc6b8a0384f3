"""``ge._capi.pyes_graph_builder_wrapper``: the one question programs ask of GE-PY's ES C-API layer."""

from __future__ import annotations

__all__ = ["is_generated_lib_available"]


def is_generated_lib_available() -> bool:
    """True: what GE-PY's generated op library (``libes_all.so``) provides, the op functions and the ``+ - * /``
    of TensorHolder, openacl has built in (``ge.es.all``), so code guarded by this check runs."""
    return True
