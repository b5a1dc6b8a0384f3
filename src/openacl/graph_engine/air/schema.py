"""The ``ge.proto`` messages of GE's graph IR (``ge_ir.proto``) that an AIR file holds, in a private pool.

Only the fields openacl reads or writes are declared, with GE's names, numbers and types, so the bytes are GE's:
a ``ModelDef`` written here parses with GE's schema, and one GE wrote parses here (proto3 keeps the fields not
declared here as unknown fields and ignores them). The descriptor is built in code, field by field; the pool is
openacl's own, so a process that also loads GE's generated ``ge_ir_pb2`` (package ``ge.proto``) sees no clash.
"""

from __future__ import annotations

from openacl import lazy

# This module is itself loaded at the first AIR file (``gepy.graph`` reads it through ``lazy``), and builds its pool
# when loaded: these load protobuf then.
descriptor_pb2 = lazy.module("google.protobuf.descriptor_pb2")
descriptor_pool = lazy.module("google.protobuf.descriptor_pool")
message_factory = lazy.module("google.protobuf.message_factory")

__all__ = ["DATA_TYPES", "AttrDef", "GraphDef", "ModelDef", "NamedAttrs", "OpDef", "TensorDef", "TensorDescriptor"]

_F = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_SCALARS = {
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
    "int64": _F.TYPE_INT64,
    "uint32": _F.TYPE_UINT32,
    "float": _F.TYPE_FLOAT,
    "bool": _F.TYPE_BOOL,
}

#: ``ge.proto.DataType`` in order from 0 (these numbers differ from ``ge::DataType``'s; see dtypes.py).
DATA_TYPES = [
    "DT_UNDEFINED",
    "DT_FLOAT",
    "DT_FLOAT16",
    "DT_INT8",
    "DT_UINT8",
    "DT_INT16",
    "DT_UINT16",
    "DT_INT32",
    "DT_INT64",
    "DT_UINT32",
    "DT_UINT64",
    "DT_BOOL",
    "DT_DOUBLE",
    "DT_STRING",
    "DT_DUAL_SUB_INT8",
    "DT_DUAL_SUB_UINT8",
    "DT_COMPLEX64",
    "DT_COMPLEX128",
    "DT_QINT8",
    "DT_QINT16",
    "DT_QINT32",
    "DT_QUINT8",
    "DT_QUINT16",
    "DT_RESOURCE",
    "DT_STRING_REF",
    "DT_DUAL",
    "DT_VARIANT",
    "DT_BF16",
    "DT_INT4",
    "DT_UINT1",
    "DT_INT2",
    "DT_UINT2",
    "DT_COMPLEX32",
    "DT_HIFLOAT8",
    "DT_FLOAT8_E5M2",
    "DT_FLOAT8_E4M3FN",
    "DT_FLOAT8_E8M0",
    "DT_FLOAT6_E3M2",
    "DT_FLOAT6_E2M3",
    "DT_FLOAT4_E2M1",
    "DT_FLOAT4_E1M2",
    "DT_HIFLOAT4",
]
_LIST_VALUE_TYPES = [
    "VT_LIST_NONE",
    "VT_LIST_STRING",
    "VT_LIST_INT",
    "VT_LIST_FLOAT",
    "VT_LIST_BOOL",
    "VT_LIST_BYTES",
    "VT_LIST_TENSOR_DESC",
    "VT_LIST_TENSOR",
    "VT_LIST_GRAPH",
    "VT_LIST_NAMED_ATTRS",
    "VT_LIST_DATA_TYPE",
]


def _field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    number: int,
    kind: str,
    repeated: bool = False,
    oneof: int | None = None,
) -> None:
    """One field: ``kind`` a scalar name or a message/enum type name (``.ge.proto.X``)."""
    field = message.field.add(name=name, number=number, label=_REPEATED if repeated else _OPTIONAL)
    if kind in _SCALARS:
        field.type = _SCALARS[kind]
    else:
        field.type = _F.TYPE_ENUM if kind.endswith(("DataType", "ListValueType")) else _F.TYPE_MESSAGE
        field.type_name = kind
    if oneof is not None:
        field.oneof_index = oneof


def _map(message: descriptor_pb2.DescriptorProto, name: str, number: int, value: str) -> None:
    """``map<string, value> name = number``: a repeated entry message, as protoc declares maps."""
    entry = message.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
    entry.options.map_entry = True
    _field(entry, "key", 1, "string")
    _field(entry, "value", 2, value)
    _field(message, name, number, f"{_full(message.name)}.{entry.name}", repeated=True)


def _full(name: str) -> str:
    return f".ge.proto.{name}"


def _file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(name="openacl/ge_ir.proto", package="ge.proto", syntax="proto3")
    dtype = f.enum_type.add(name="DataType")
    for number, name in enumerate(DATA_TYPES):
        dtype.value.add(name=name, number=number)

    attr = f.message_type.add(name="AttrDef")
    lv = attr.nested_type.add(name="ListValue")
    vt = lv.enum_type.add(name="ListValueType")
    for number, name in enumerate(_LIST_VALUE_TYPES):
        vt.value.add(name=name, number=number)
    for name, number, kind in [
        ("s", 2, "bytes"),
        ("i", 3, "int64"),
        ("f", 4, "float"),
        ("b", 5, "bool"),
        ("bt", 7, "bytes"),
        ("td", 8, _full("TensorDescriptor")),
        ("t", 9, _full("TensorDef")),
        ("g", 10, _full("GraphDef")),
        ("na", 11, _full("NamedAttrs")),
        ("dt", 12, "int64"),
    ]:
        _field(lv, name, number, kind, repeated=True)
    _field(lv, "val_type", 20, _full("AttrDef.ListValue.ListValueType"))
    lli = attr.nested_type.add(name="ListListInt")
    _field(lli.nested_type.add(name="ListInt"), "list_i", 1, "int64", repeated=True)
    _field(lli, "list_list_i", 1, _full("AttrDef.ListListInt.ListInt"), repeated=True)
    llf = attr.nested_type.add(name="ListListFloat")
    _field(llf.nested_type.add(name="ListFloat"), "list_f", 1, "float", repeated=True)
    _field(llf, "list_list_f", 1, _full("AttrDef.ListListFloat.ListFloat"), repeated=True)
    attr.oneof_decl.add(name="value")
    for name, number, kind in [
        ("s", 2, "bytes"),
        ("i", 3, "int64"),
        ("f", 4, "float"),
        ("b", 5, "bool"),
        ("bt", 7, "bytes"),
        ("list", 1, _full("AttrDef.ListValue")),
        ("func", 10, _full("NamedAttrs")),
        ("td", 11, _full("TensorDescriptor")),
        ("t", 12, _full("TensorDef")),
        ("g", 13, _full("GraphDef")),
        ("list_list_int", 14, _full("AttrDef.ListListInt")),
        ("dt", 15, "int64"),
        ("list_list_float", 16, _full("AttrDef.ListListFloat")),
        ("expression", 17, "bytes"),
    ]:
        _field(attr, name, number, kind, oneof=0)

    named = f.message_type.add(name="NamedAttrs")
    _field(named, "name", 1, "string")
    _map(named, "attr", 2, _full("AttrDef"))

    shape = f.message_type.add(name="ShapeDef")
    _field(shape, "dim", 1, "int64", repeated=True)

    desc = f.message_type.add(name="TensorDescriptor")
    _field(desc, "name", 1, "string")
    _field(desc, "dtype", 2, _full("DataType"))
    _field(desc, "shape", 3, _full("ShapeDef"))
    _field(desc, "layout", 4, "string")
    _map(desc, "attr", 5, _full("AttrDef"))

    tensor = f.message_type.add(name="TensorDef")
    _field(tensor, "desc", 1, _full("TensorDescriptor"))
    _field(tensor, "data", 2, "bytes")

    op = f.message_type.add(name="OpDef")
    _field(op, "name", 1, "string")
    _field(op, "type", 2, "string")
    _field(op, "input", 5, "string", repeated=True)
    _map(op, "attr", 10, _full("AttrDef"))
    _field(op, "id", 21, "int64")
    _field(op, "input_desc", 33, _full("TensorDescriptor"), repeated=True)
    _field(op, "output_desc", 34, _full("TensorDescriptor"), repeated=True)
    _field(op, "subgraph_name", 35, "string", repeated=True)

    graph = f.message_type.add(name="GraphDef")
    _field(graph, "name", 1, "string")
    _field(graph, "input", 4, "string", repeated=True)
    _field(graph, "output", 5, "string", repeated=True)
    _field(graph, "op", 6, _full("OpDef"), repeated=True)
    _map(graph, "attr", 11, _full("AttrDef"))

    model = f.message_type.add(name="ModelDef")
    _field(model, "name", 1, "string")
    _field(model, "version", 2, "uint32")
    _field(model, "custom_version", 3, "string")
    _field(model, "graph", 7, _full("GraphDef"), repeated=True)
    _map(model, "attr", 11, _full("AttrDef"))
    return f


#: openacl's own pool: nothing else registers here, and nothing here reaches the default pool.
POOL = descriptor_pool.DescriptorPool()
DESCRIPTOR = POOL.Add(_file())
_FILE = POOL.FindFileByName("openacl/ge_ir.proto")


def _message(name: str) -> type:
    return message_factory.GetMessageClass(_FILE.message_types_by_name[name])


AttrDef = _message("AttrDef")
NamedAttrs = _message("NamedAttrs")
TensorDescriptor = _message("TensorDescriptor")
TensorDef = _message("TensorDef")
OpDef = _message("OpDef")
GraphDef = _message("GraphDef")
ModelDef = _message("ModelDef")
