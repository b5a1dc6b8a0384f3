"""Memory stays mapped for the whole access, and every task's write is bounded by the live memory it lands in.

The races run in a child process (``pinning_child.py``): on code that reads or writes after an unpinned check they
are a SIGSEGV (or glibc's abort), which must fail the test, not kill pytest.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.runtime import memory
from tests.conftest import hold_stream
from tests.model_io import ModelIO, demo_input
from tests.op.conftest import desc_for, to_device
from tests.plogs import plog_text
from tests.runtime import pinning_child

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "openacl"
DEVICE_MEM_ERROR = AclCode.ACL_ERROR_RT_DEVICE_MEM_ERROR


def _child(scenario: str, log_root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    env["ASCEND_PROCESS_LOG_PATH"] = str(log_root)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "tests.runtime.pinning_child", scenario],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


@pytest.mark.subprocess
@pytest.mark.parametrize("scenario", sorted(pinning_child.SCENARIOS))
def test_regression_memory_freed_during_an_access_was_a_segfault(scenario, tmp_path):
    """Each public call that reads or writes memory by address, with the memory freed by another thread between
    its check and its access: the call completes on the pinned bytes, the free returns 0 at once."""
    result = _child(scenario, tmp_path)
    assert result.returncode == 0, f"rc {result.returncode}\n{result.stdout}\n{result.stderr[-3000:]}"
    assert "fired" in result.stdout


@pytest.mark.subprocess
def test_regression_op_output_overflowed_memory_reallocated_smaller(tmp_path):
    """A data buffer made for 64 KiB over memory since freed and allocated again (32 KiB) at the same address: the
    operator's data-dependent output is checked against the live allocation when written, and fails the task."""
    result = _child("op_output_into_memory_reallocated_smaller", tmp_path)
    assert result.returncode == 0, f"rc {result.returncode}\n{result.stdout}\n{result.stderr[-3000:]}"
    assert f"synchronize {int(DEVICE_MEM_ERROR)}" in result.stdout
    assert "do not fit in a live allocation" in plog_text(tmp_path)


# ----- the rule: nothing outside runtime/memory.py touches memory by address -----

# ctypes' ways to read or write an address, and numpy's way to wrap one.
RAW_ACCESS = {"memmove", "memset", "string_at", "wstring_at", "from_address", "cast", "pointer", "POINTER"}
# Where a raw access is no user memory's business, and why.
ALLOWED = {
    ("onnxrt.py", "memmove"): "copies an OrtValue's own buffer into a fresh array of ours",
}


def _raw_accesses(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    imports = [alias for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    aliases = {alias.asname or alias.name for alias in imports if alias.name == "ctypes"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            from_ctypes = isinstance(node.value, ast.Name) and node.value.id in aliases
            if (from_ctypes and node.attr in RAW_ACCESS) or node.attr in ("__array_interface__", "ctypeslib"):
                found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module in ("ctypes", "numpy.ctypeslib"):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return sorted(found)


def test_no_raw_memory_access_outside_runtime_memory():
    """Every read or write by address goes through runtime/memory.py's pinned access (a new one cannot be added
    elsewhere unnoticed)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative == "runtime/memory.py":
            continue
        for line, name in _raw_accesses(path):
            if (relative, name) not in ALLOWED:
                offenders.append(f"{relative}:{line}: {name}")
    assert not offenders, "raw memory access outside runtime/memory.py:\n" + "\n".join(offenders)


def test_the_walk_finds_a_raw_access(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import ctypes\nfrom ctypes import string_at\nctypes.memmove(1, 2, 3)\n")
    assert [name for _, name in _raw_accesses(sample)] == ["string_at", "memmove"]


def test_private_access_primitives_are_used_only_in_memory():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() == "runtime/memory.py":
            continue
        text = path.read_text()
        for name in ("_string_at", "_store", "_view("):
            assert f"memory.{name}" not in text, f"{path}: memory.{name}"


# ----- pinning, in process -----


def test_an_access_holds_the_bytes_a_racing_free_releases(ctx):
    """The free returns at once and the address is unknown from then on, but the bytes under an access stay
    mapped, and are not handed out again, until the access lets go."""
    addr = memory.malloc(1 << 20, 0, 0)
    memory.fill(addr, 0x5A, 1 << 20, memory.region_for(addr, 1 << 20, "x", write=True))
    freed = threading.Event()

    def free() -> None:
        memory.free(addr)
        freed.set()

    view = memory.view_array(addr, (1 << 20,), np.dtype(np.uint8))  # an access in progress: it pins the bytes
    worker = threading.Thread(target=free)
    worker.start()
    assert freed.wait(10)  # a free never waits for an access
    worker.join()
    with pytest.raises(AclError) as err:
        memory.read_bytes(addr, 1)
    assert err.value.code == AclCode.ACL_ERROR_INVALID_PARAM
    assert memory.malloc(1 << 20, 0, 0) != addr  # the pinned bytes are not free memory
    assert int(view[0]) == 0x5A and int(view[-1]) == 0x5A


def test_task_write_region_is_checked_when_the_task_writes(ctx):
    addr = memory.malloc(256, 0, 0)
    pinned = memory.region_for(addr, 256, "out", write=True)
    assert memory.task_write_region(addr, 256, "out", pinned) is pinned
    with pytest.raises(AclError) as err:
        memory.task_write_region(addr, 257, "out", pinned)
    assert err.value.code == DEVICE_MEM_ERROR and "do not fit in a live allocation" in err.value.detail
    memory.free(addr)
    with pytest.raises(AclError) as err:
        memory.task_write_region(addr, 16, "out", pinned)
    assert err.value.code == DEVICE_MEM_ERROR and "freed before the stream reached it" in err.value.detail


def test_task_write_region_takes_a_pinned_user_object_and_refuses_read_only_memory(ctx):
    data = bytes(64)
    addr = memory.bytes_address(data)
    pinned = memory.region_for(addr, 64, "out", write=True)
    memory.space.discard(pinned)  # forgotten, as a sweep forgets an object the program let go of
    memory.task_write(addr, b"\x01" * 8, "out", pinned)
    assert data[:8] == b"\x01" * 8
    frozen = np.zeros(8, np.uint8)
    frozen.flags.writeable = False
    with pytest.raises(AclError) as err:
        memory.task_write(memory.array_address(frozen), b"\x02", "out")
    assert err.value.code == DEVICE_MEM_ERROR and "read-only" in err.value.detail


def test_check_task_view_follows_the_view_to_the_region_it_pins(ctx):
    addr = memory.malloc(64, 0, 0)
    view = memory.view_array(addr, (4, 4), np.dtype(np.float32))[1:3]
    memory.check_task_view(view, "out")  # live
    data = bytes(64)
    user = memory.view_array(memory.bytes_address(data), (64,), np.dtype(np.uint8))
    memory.space.discard(memory.region_for(memory.bytes_address(data), 64, "x"))
    memory.check_task_view(user, "out")  # a program's own object: still the task's to fill
    memory.free(addr)
    with pytest.raises(AclError) as err:
        memory.check_task_view(view, "out")
    assert err.value.code == DEVICE_MEM_ERROR


def test_model_output_freed_before_the_stream_reaches_it_fails_the_task(stream, gate):
    """Model outputs are checked when written, as memcpy_async's are: 507053, and the memory is not touched."""
    io = ModelIO()
    io.load_input(demo_input())
    hold_stream(stream, gate)
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == 0
    ptr, _size = io.outputs[1][0]
    assert acl.rt.free(ptr) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == DEVICE_MEM_ERROR


def test_op_output_freed_before_the_stream_reaches_it_fails_the_task(stream, gate):
    """An operator writing in place (static output) is checked before onnxruntime writes: 507053."""
    a = np.ones((2, 3), np.float32)
    descs = [desc_for(a), desc_for(a)]
    bufs = [acl.create_data_buffer(to_device(a), a.nbytes) for _ in range(2)]
    out = to_device(np.zeros_like(a))
    hold_stream(stream, gate)
    assert acl.op.execute_v2("Add", descs, bufs, [desc_for(a)], [acl.create_data_buffer(out, a.nbytes)], 0, stream) == 0
    assert acl.rt.free(out) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == DEVICE_MEM_ERROR


def test_jpeg_decode_output_freed_before_the_stream_reaches_it_fails_the_task(stream, gate):
    """DVPP tasks check the views they fill when they run (``tasks.submit(writes=...)``), as copies do."""
    from tests.media.images import jpeg_bytes, photo

    media = acl.media
    channel = media.dvpp_create_channel_desc()
    assert media.dvpp_create_channel(channel) == 0
    data = jpeg_bytes(photo(64, 48))
    src, _ = media.dvpp_malloc(len(data))
    assert acl.rt.memcpy(src, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == 0
    size, _ = media.dvpp_jpeg_predict_dec_size(acl.util.bytes_to_ptr(data), len(data), 1)
    out, _ = media.dvpp_malloc(size)
    desc = media.dvpp_create_pic_desc()
    media.dvpp_set_pic_desc_data(desc, out)
    media.dvpp_set_pic_desc_size(desc, size)
    media.dvpp_set_pic_desc_format(desc, 1)
    hold_stream(stream, gate)
    assert media.dvpp_jpeg_decode_async(channel, src, len(data), desc, stream) == 0
    assert media.dvpp_free(out) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == DEVICE_MEM_ERROR
    assert media.dvpp_get_pic_desc_ret_code(desc) == 1
    assert media.dvpp_destroy_channel(channel) == 0


def test_a_view_keeps_a_user_region_known_through_a_sweep(ctx):
    """A view pins its region and counts as a reference to the program's object, so the sweep of forgotten
    objects leaves that region registered while the view lives."""
    addr = memory.bytes_address(bytes(bytearray(b"pinned by a view" * 4)))  # the program keeps no reference to it
    view = memory.view_array(addr, (64,), np.dtype(np.uint8))
    for _ in range(600):  # enough registrations for a sweep
        memory.bytes_address(bytes(8))
    assert memory.read_bytes(addr, 16) == b"pinned by a view"
    assert view[:6].tobytes() == b"pinned"
