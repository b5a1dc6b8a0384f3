"""``ge.graph``: ``Graph``, ``DumpFormat``, ``Node``, ``Operator``, ``Tensor``, ``Shape``, ``TensorDesc``, the enums."""

from __future__ import annotations

from openacl.gepy.graph.graph import DumpFormat, Graph
from openacl.gepy.graph.node import Node, Operator
from openacl.gepy.graph.tensor import Tensor
from openacl.gepy.graph.tensor_desc import Shape, TensorDesc
from openacl.gepy.graph.types import AttrValueType, DataType, Format, Placement

__all__ = [
    "AttrValueType",
    "DataType",
    "DumpFormat",
    "Format",
    "Graph",
    "Node",
    "Operator",
    "Placement",
    "Shape",
    "Tensor",
    "TensorDesc",
]
