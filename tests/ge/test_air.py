"""AIR files (``graph_engine/air``): a graph as GE's ``ge.proto.ModelDef``, written as GE writes it and read back,
including what only GE writes (a NetOutput node, fields openacl does not declare, values it does not read)."""

from __future__ import annotations

import numpy as np
import pytest

from openacl.graph_engine._ops import GE_DOMAIN
from openacl.graph_engine.air import codec, schema
from openacl.graph_engine.graph import Graph, PortDesc


def sample() -> Graph:
    g = Graph("g")
    x = g.data("x", index=0, shape=[2, None], dtype="float32", format=0)
    c = g.const("c", np.array([[1, 2]], dtype=np.int32))
    [r] = g.ge_op("Relu", [x])
    [s] = g.ge_op("ConcatV2", [[x, r], c], {"N": 2})
    g.set_outputs([s, r])
    g.add_control_edge("c", r.name)
    g.attrs.update({"s": "v", "i": 3, "fl": [0.5, 1.5], "ll": [[1, 2], [3]], "b": True})
    g.set_port_attr(r.name, "output", 0, "_tag", ["a", "b"])
    g.set_port_desc(r.name, "output", 0, PortDesc((2, -1), 0, 0))
    return g


def test_model_def_is_ges_layout():
    model = codec.to_model_def(sample())
    [graph] = model.graph
    ops = {op.name: op for op in graph.op}
    assert list(graph.input) == ["x:0"] and list(graph.output) == ["ConcatV2_1:0", "Relu_0:0"]
    assert list(ops["Relu_0"].input) == ["x:0", "c:-1"]  # data inputs, then control edges
    assert list(ops["ConcatV2_1"].input) == ["x:0", "Relu_0:0", "c:0"]
    net = ops["NetOutput_g"]
    assert net.type == "NetOutput" and list(net.input) == ["ConcatV2_1:0", "Relu_0:0"]
    x_desc = ops["x"].output_desc[0]
    assert (list(x_desc.shape.dim), x_desc.layout, x_desc.dtype) == (
        [2, -1],
        "NCHW",
        schema.DESCRIPTOR.enum_types_by_name["DataType"].values_by_name["DT_FLOAT"].number,
    )
    assert ops["x"].attr["index"].i == 0 and "shape" not in ops["x"].attr
    value = ops["c"].attr["value"].t
    assert value.desc.dtype == 7 and list(value.desc.shape.dim) == [1, 2]  # ge.proto DT_INT32 is 7
    assert np.frombuffer(value.data, "<i4").tolist() == [1, 2]
    assert graph.attr["ll"].list_list_int.list_list_i[1].list_i == [3]
    assert ops["Relu_0"].output_desc[0].attr["_tag"].list.s == [b"a", b"b"]


def test_round_trip_keeps_the_graph(tmp_path):
    path = tmp_path / "deep" / "g.air"
    codec.save(sample(), path)  # the directory is made, as GE makes it
    g = codec.load(path)
    assert [(n.name, n.type, n.inputs, n.outputs, n.control) for n in g.nodes] == [
        ("x", "Data", [], ["x"], ()),
        ("c", "Const", [], ["c"], ()),
        ("Relu_0", "Relu", ["x"], ["Relu_0"], ("c",)),
        ("ConcatV2_1", "ConcatV2", ["x", "Relu_0", "c"], ["ConcatV2_1"], ()),
        ("NetOutput_g", "NetOutput", ["ConcatV2_1", "Relu_0"], [], ()),  # GE's graphs end with one
    ]
    assert g.outputs == ["ConcatV2_1", "Relu_0"] and g.node("Relu_0").domain == GE_DOMAIN
    assert g.node("ConcatV2_1").groups == (2, 1) and g.node("ConcatV2_1").attrs["N"] == 2
    assert g.node("x").attrs["shape"] == (2, None) and g.node("x").attrs["format"] == 0
    np.testing.assert_array_equal(g.node("c").attrs["value"], [[1, 2]])
    assert g.attrs == {"s": "v", "i": 3, "fl": [0.5, 1.5], "ll": [[1, 2], [3]], "b": True}
    assert g.port_attr("Relu_0", "output", 0, "_tag") == ["a", "b"]
    assert g.port_desc("Relu_0", "output", 0) == PortDesc((2, -1), 0, 0)
    codec.save(g, tmp_path / "again.air")
    assert (tmp_path / "again.air").read_bytes() == path.read_bytes()


def test_subgraphs_follow_the_root_and_are_named_by_the_op():
    g = Graph("main")
    cond = g.data("cond", index=0, shape=[], dtype="bool")
    branches = []
    for name, value in (("then", 1.0), ("else", 2.0)):
        b = Graph(name)
        b.set_outputs([b.const(f"{name}_c", np.float32(value))])
        branches.append(b)
    [out] = g.ge_op(
        "If", [cond, []], {}, output_counts=[1], subgraphs={"then_branch": branches[0], "else_branch": branches[1]}
    )
    g.set_outputs(out)
    model = codec.to_model_def(g)
    assert [gd.name for gd in model.graph] == ["main", "then", "else"]
    assert list(next(op for op in model.graph[0].op if op.type == "If").subgraph_name) == ["then", "else"]
    back = codec.from_model_def(model)
    node = next(n for n in back.nodes if n.type == "If")
    assert node.attrs["then_branch"].name == "then" and node.attrs["else_branch"].outputs == ["else_c"]


def test_reads_what_only_ge_writes(tmp_path):
    """A NetOutput node gives the outputs; fields openacl does not declare (OpDef.stream_id = 22) and values it does
    not read (a NamedAttrs) are kept and written back; a type not in the op table stays a GE node."""
    model = schema.ModelDef(name="m")
    graph = model.graph.add(name="ge_graph")
    data = graph.op.add(name="in", type="Data")
    data.attr["index"].i = 0
    data.output_desc.add(dtype=8, layout="ND").shape.dim.extend([-2])  # ge.proto DT_INT64, unknown rank
    npu = graph.op.add(name="k", type="SomeNpuKernel", input=["in:0"])
    npu.attr["cfg"].func.name = "f"
    npu.output_desc.add(dtype=1, layout="NC1HWC0")
    graph.op.add(name="NetOutput", type="NetOutput", input=["k:0"])
    extra = bytes([0xB0, 0x01, 0x05])  # field 22, varint 5: unknown to openacl's OpDef
    model.graph[0].op[1].MergeFromString(extra)
    (tmp_path / "ge.air").write_bytes(model.SerializeToString())
    g = codec.load(tmp_path / "ge.air")
    assert g.name == "ge_graph" and g.outputs == ["k"] and g.node("in").attrs["shape"] is None
    assert g.node("in").attrs["dtype"] == np.int64 and g.node("k").domain == GE_DOMAIN
    assert g.port_desc("k", "output", 0).format == 3  # NC1HWC0
    written = codec.to_model_def(g)
    kernel = next(op for op in written.graph[0].op if op.name == "k")
    assert kernel.attr["cfg"].func.name == "f"


def test_bad_files_are_value_errors_and_a_failed_save_leaves_nothing(tmp_path):
    bad = tmp_path / "bad.air"
    bad.write_bytes(b"\xff\xff\xff")
    with pytest.raises(ValueError, match="not a GE ModelDef"):
        codec.load(bad)
    empty = tmp_path / "empty.air"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="no graph"):
        codec.load(empty)
    g = Graph("g")
    g.attrs["o"] = object()
    with pytest.raises(ValueError, match="attribute 'o'"):
        codec.save(g, tmp_path / "o.air")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.air", "empty.air"]  # no o.air, no temporary file
