"""The fusion rule msaccucmp takes with ``-f`` (msprobe: ``-fr``): which model nodes each device op covers.

ATC fuses model nodes into one device op (Conv + BatchNormalization + Relu becomes one Conv2D, say). The fusion
rule is the compiled graph as JSON (``atc --mode=1 --om model.om --json fusion_result.json``)::

    {"graph": [{"op": [{"name": "conv1_fused", "type": "Conv2D", "id": 3, "input": ["x:0"],
                        "attr": [{"key": "_datadump_original_op_names",
                                  "value": {"list": {"s": ["conv1", "bn1", "relu1"]}}}],
                        "output_desc": [{"attr": [{"key": "_datadump_origin_name", "value": {"s": "relu1"}},
                                                  {"key": "_datadump_origin_output_index", "value": {"i": 0}}]}]},
                       ...]}]}

What is read, per op of every graph: ``name``; ``type``; ``attr`` ``_datadump_original_op_names`` (a list of
strings: the model nodes the op covers, in model order; an op without it covers only the node of its own name);
and per output, ``output_desc[i].attr`` ``_datadump_origin_name`` / ``_datadump_origin_output_index`` (which
model node's output it is). Everything else (inputs, ids, L1 fusion numbers, quantisation rules) is ignored.
A file that is not JSON or has no ``graph`` list of ``op`` lists is :class:`FusionRuleError` (a ``ValueError``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from openacl.dump.format import sanitize

__all__ = ["FusedOp", "FusionRuleError", "read_fusion_rule"]


class FusionRuleError(ValueError):
    """A fusion rule file that cannot be read."""


@dataclass(frozen=True)
class FusedOp:
    """One device op of a fusion rule: the model nodes it covers and where each of its outputs comes from."""

    name: str
    op_type: str
    originals: tuple[str, ...]
    output_origins: tuple[tuple[str, int] | None, ...] = ()

    @property
    def fused(self) -> bool:
        """Whether the op covers more than one model node (or one of another name)."""
        return self.originals != (self.name,)


def _attr(attrs: list, key: str):
    for attr in attrs:
        if isinstance(attr, dict) and attr.get("key") == key:
            return attr.get("value")
    return None


def _strings(value) -> tuple[str, ...] | None:
    if not isinstance(value, dict):
        return None
    listed = value.get("list")
    if not isinstance(listed, dict):
        return None
    names = listed.get("s", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise FusionRuleError("_datadump_original_op_names must be a list of strings")
    return tuple(n for n in names if n)


def _origin(desc) -> tuple[str, int] | None:
    attrs = desc.get("attr") if isinstance(desc, dict) else None
    if not isinstance(attrs, list):
        return None
    name = _attr(attrs, "_datadump_origin_name")
    index = _attr(attrs, "_datadump_origin_output_index")
    if not isinstance(name, dict) or not isinstance(name.get("s"), str) or not name["s"]:
        return None
    position = index.get("i", 0) if isinstance(index, dict) else 0
    return name["s"], int(position) if isinstance(position, int) else 0


def read_fusion_rule(path: str | os.PathLike[str]) -> dict[str, FusedOp]:
    """Device op name (as :func:`openacl.dump.format.sanitize` writes it in file names) -> :class:`FusedOp`."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as exc:
        raise FusionRuleError(f"cannot read fusion rule {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FusionRuleError(f"fusion rule {path} is not JSON: {exc}") from None
    graphs = document.get("graph") if isinstance(document, dict) else None
    if not isinstance(graphs, list):
        raise FusionRuleError(f'fusion rule {path} has no "graph" list')
    ops: dict[str, FusedOp] = {}
    for graph in graphs:
        entries = graph.get("op") if isinstance(graph, dict) else None
        if not isinstance(entries, list):
            raise FusionRuleError(f'fusion rule {path}: a graph has no "op" list')
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise FusionRuleError(f'fusion rule {path}: an op has no "name" string')
            name = entry["name"]
            attrs = entry.get("attr") if isinstance(entry.get("attr"), list) else []
            originals = _strings(_attr(attrs, "_datadump_original_op_names"))
            descs = entry.get("output_desc") if isinstance(entry.get("output_desc"), list) else []
            ops[sanitize(name)] = FusedOp(
                name,
                str(entry.get("type", "")),
                originals if originals else (name,),
                tuple(_origin(desc) for desc in descs),
            )
    return ops
