"""openacl's dump schema lives in a private descriptor pool, so CANN's own ``dump_data_pb2`` imports beside it.

The clashing module is built the way protoc builds CANN's: ``dump_data.proto`` (CANN's file name), package
``toolkit.dumpdata``, added to protobuf's default pool at import. Each order runs in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool

from openacl.dump.proto import dump_data_pb2

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.subprocess


def _cann_module(directory: Path) -> Path:
    """A ``dump_data_pb2.py`` as protoc writes it for CANN's ``dump_data.proto``."""
    proto = descriptor_pb2.FileDescriptorProto()
    dump_data_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = "dump_data.proto"
    source = f"""\
        from google.protobuf import descriptor_pool as _descriptor_pool
        from google.protobuf.internal import builder as _builder

        DESCRIPTOR = _descriptor_pool.Default().AddSerializedFile({proto.SerializeToString()!r})
        _builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())
        _builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, "dump_data_pb2", globals())
        """
    path = directory / "dump_data_pb2.py"
    path.write_text(textwrap.dedent(source))
    return path


def _python(code: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(cwd)])}
    return subprocess.run(
        [sys.executable, *args, *(["-c", code] if code else [])],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


# What both orders check: openacl's header parses with CANN's class and back, bytes for bytes.
_ROUND_TRIP = """
import numpy as np
from openacl.dump import format as fmt
data = fmt.header("conv1", [np.zeros((1, 3), np.float16)], [np.ones(2, np.float32)], 7)[8:]
cann = dump_data_pb2.DumpData.FromString(data)
assert cann.op_name == "conv1" and cann.input[0].data_type == dump_data_pb2.DT_FLOAT16, cann
assert cann.SerializeToString() == data
ours = fmt.dump_data_pb2.DumpData.FromString(cann.SerializeToString())
assert type(ours) is not type(cann) and ours.output[0].size == 8
print("ok")
"""


def test_the_test_module_clashes_in_the_default_pool(tmp_path):
    """The stand-in for CANN's module really is the clash the issue reports, had openacl used the default pool."""
    _cann_module(tmp_path)
    proto = descriptor_pb2.FileDescriptorProto()
    dump_data_pb2.DESCRIPTOR.CopyToProto(proto)
    code = f"""
import dump_data_pb2
from google.protobuf import descriptor_pool
try:
    descriptor_pool.Default().AddSerializedFile({proto.SerializeToString()!r})
except Exception as exc:
    print("clash:", exc)
"""
    result = _python(code, tmp_path)
    assert "duplicate symbol" in result.stdout + result.stderr, result


def test_openacl_leaves_the_default_pool_alone():
    with pytest.raises(KeyError):
        descriptor_pool.Default().FindMessageTypeByName("toolkit.dumpdata.DumpData")
    assert dump_data_pb2.DumpData.DESCRIPTOR.file.pool is dump_data_pb2.POOL


def test_cann_dump_data_pb2_imported_before_openacl(tmp_path):
    _cann_module(tmp_path)
    result = _python("import dump_data_pb2\nimport openacl.dump.format\n" + _ROUND_TRIP, tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_cann_dump_data_pb2_imported_after_openacl(tmp_path):
    _cann_module(tmp_path)
    result = _python("import openacl.dump.format\nimport dump_data_pb2\n" + _ROUND_TRIP, tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.parametrize("first", ["acl", "dump_data_pb2"])
def test_import_acl_under_openacl_run_beside_cann_dump_data_pb2(tmp_path, first):
    _cann_module(tmp_path)
    second = "dump_data_pb2" if first == "acl" else "acl"
    program = tmp_path / "prog.py"
    program.write_text(
        f"import {first}\nimport {second}\n"
        "ret = acl.init()\nassert ret == 0, ret\nacl.mdl.init_dump()\nacl.mdl.finalize_dump()\nacl.finalize()\n"
        "print(dump_data_pb2.DumpData(op_name='x').op_name)\n"
    )
    result = _python("", tmp_path, "-m", "openacl", "run", str(program))
    assert result.returncode == 0 and result.stdout.strip() == "x", result.stderr
