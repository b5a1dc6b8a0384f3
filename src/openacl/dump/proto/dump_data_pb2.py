"""The ``toolkit.dumpdata`` message classes, built in a descriptor pool of openacl's own.

Protobuf symbols are global within a pool: a process that imports CANN's own ``dump_data_pb2`` (the toolkit ships
one; tool builders compile ``dump_data.proto`` themselves) registers ``toolkit.dumpdata.*`` in protobuf's default
pool, and a second registration of the same names there fails with ``duplicate symbol``, whichever comes first.
So openacl never touches the default pool: the schema (``dump_data.desc``, a serialized ``FileDescriptorProto``
made from ``dump_data.proto`` by ``scripts/gen_dump_proto.sh``) is added to a private ``DescriptorPool`` and the
classes come from ``message_factory.GetMessageClass``. Messages of either pool share the wire format, so bytes
move freely between CANN's classes and these.

Being hand-written rather than protoc's output, this module has no runtime-version guard: any protobuf with
``message_factory.GetMessageClass`` (4.22 and later) builds it.

The names mirror what protoc's module would export (``DumpData``, ``OutputDataType``, ``DT_FLOAT``, ...).
"""

from __future__ import annotations

from importlib import resources

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

#: openacl's own pool: nothing else registers here, and nothing here reaches the default pool.
POOL = descriptor_pool.DescriptorPool()
DESCRIPTOR = POOL.AddSerializedFile(resources.files(__package__).joinpath("dump_data.desc").read_bytes())


def _message(name: str) -> type:
    return message_factory.GetMessageClass(DESCRIPTOR.message_types_by_name[name])


OriginalOp = _message("OriginalOp")
Shape = _message("Shape")
DimRange = _message("DimRange")
OpOutput = _message("OpOutput")
OpInput = _message("OpInput")
OpBuffer = _message("OpBuffer")
OpAttr = _message("OpAttr")
Workspace = _message("Workspace")
DumpData = _message("DumpData")

OutputDataType = EnumTypeWrapper(DESCRIPTOR.enum_types_by_name["OutputDataType"])
OutputFormat = EnumTypeWrapper(DESCRIPTOR.enum_types_by_name["OutputFormat"])
BufferType = EnumTypeWrapper(DESCRIPTOR.enum_types_by_name["BufferType"])

# Module-level enum values (DT_FLOAT, FORMAT_ND, L1, ...), as protoc's module has them.
globals().update({value.name: value.number for enum in DESCRIPTOR.enum_types_by_name.values() for value in enum.values})
