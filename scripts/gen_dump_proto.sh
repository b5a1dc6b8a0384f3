#!/usr/bin/env bash
# Regenerate src/openacl/dump/proto/dump_data_pb2.py from dump_data.proto.
#
# Uses grpcio-tools' bundled protoc (`python -m grpc_tools.protoc`) from the project's virtual environment, or
# $PYTHON. The proto is compiled relative to src/, so it registers as "openacl/dump/proto/dump_data.proto" in
# protobuf's default descriptor pool and cannot clash with another package's "dump_data.proto".
#
# The generated module starts with a protobuf runtime-version guard: it refuses to import under a protobuf runtime
# older than the protoc that generated it (protoc 35.x -> protobuf >= 7.35.x). Keep pyproject's protobuf floor in
# step with the "Protobuf Python Version" line of the output.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"

cd "$root/src"
"$python" -m grpc_tools.protoc --version
"$python" -m grpc_tools.protoc --proto_path=. --python_out=. openacl/dump/proto/dump_data.proto
grep -m1 "Protobuf Python Version" openacl/dump/proto/dump_data_pb2.py
