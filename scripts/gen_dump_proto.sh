#!/usr/bin/env bash
# Regenerate src/openacl/dump/proto/dump_data.desc (a serialized FileDescriptorProto) from dump_data.proto.
#
# Uses grpcio-tools' bundled protoc (`python -m grpc_tools.protoc`) from the project's virtual environment, or
# $PYTHON. openacl does not use protoc's Python output: dump_data_pb2.py adds this descriptor to a private
# descriptor pool, so it never clashes with CANN's own dump_data_pb2 (same package, toolkit.dumpdata) and carries
# no protobuf runtime-version guard.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cd "$root/src"
"$python" -m grpc_tools.protoc --version
"$python" -m grpc_tools.protoc --proto_path=. --descriptor_set_out="$tmp/set.pb" openacl/dump/proto/dump_data.proto
"$python" - "$tmp/set.pb" openacl/dump/proto/dump_data.desc <<'PY'
import sys

from google.protobuf import descriptor_pb2

files = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], "rb").read()).file
assert len(files) == 1, [f.name for f in files]
open(sys.argv[2], "wb").write(files[0].SerializeToString())
print(f"{sys.argv[2]}: {files[0].name}, package {files[0].package}")
PY
