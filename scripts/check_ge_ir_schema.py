"""Check openacl's AIR schema (graph_engine/air/schema.py) against GE's own ``ge_ir.proto``.

    python scripts/check_ge_ir_schema.py SET.pb [FILE.air ...]

SET.pb is a descriptor set of hicann/ge's ``graph_metadef/proto/ge_ir.proto`` (``protoc --descriptor_set_out``;
grpcio-tools' ``python -m grpc_tools.protoc`` serves). Every field openacl declares must exist in GE's message
with the same number, type and label, every enum value with the same number; each FILE.air given must parse
with GE's ``ModelDef``, and openacl's reading of it must write back what GE's reads. Prints what differs; exit
status 1 if anything does.
"""

from __future__ import annotations

import sys
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from openacl.graph_engine.air import schema


def main(argv: list[str]) -> int:
    ge_set = descriptor_pb2.FileDescriptorSet.FromString(Path(argv[0]).read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in ge_set.file:
        pool.Add(file)
    problems = []
    for name, ours in schema.DESCRIPTOR.message_types_by_name.items():
        problems += _compare(ours, pool.FindMessageTypeByName(f"ge.proto.{name}"))
    ge_enum = pool.FindEnumTypeByName("ge.proto.DataType")
    for value in schema.DESCRIPTOR.enum_types_by_name["DataType"].values:
        if ge_enum.values_by_name.get(value.name) is None or ge_enum.values_by_name[value.name].number != value.number:
            problems.append(f"DataType.{value.name} = {value.number} differs")
    ge_model = message_factory.GetMessageClass(pool.FindMessageTypeByName("ge.proto.ModelDef"))
    for path in argv[1:]:
        data = Path(path).read_bytes()
        theirs, ours = ge_model.FromString(data), schema.ModelDef.FromString(data)
        if ge_model.FromString(ours.SerializeToString()) != theirs:  # openacl's reading loses nothing
            problems.append(f"{path}: GE's ModelDef and openacl's read it differently")
        print(f"{path}: {len(theirs.graph)} graph(s), {sum(len(g.op) for g in theirs.graph)} ops under GE's schema")
    for problem in problems:
        print(problem)
    print("schema matches GE's ge_ir.proto" if not problems else f"{len(problems)} difference(s)")
    return 1 if problems else 0


def _compare(ours, theirs) -> list[str]:
    """Fields and enums of one message and of the messages nested in it."""
    found = []
    for field in ours.fields:
        other = theirs.fields_by_name.get(field.name)
        if other is None:
            found.append(f"{ours.full_name}.{field.name}: not in GE's schema")
        elif (field.number, field.type, _repeated(field)) != (other.number, other.type, _repeated(other)):
            found.append(f"{ours.full_name}.{field.name}: number/type/label differ from GE's")
        elif field.message_type is not None and field.message_type.full_name != other.message_type.full_name:
            found.append(f"{ours.full_name}.{field.name}: message type differs from GE's")
    for nested in ours.nested_types:
        found += _compare(nested, theirs.nested_types_by_name[nested.name])
    for enum in ours.enum_types:
        theirs_enum = theirs.enum_types_by_name[enum.name]
        for value in enum.values:
            if theirs_enum.values_by_name[value.name].number != value.number:
                found.append(f"{enum.full_name}.{value.name}: number differs")
    return found


def _repeated(field) -> bool:
    return field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
