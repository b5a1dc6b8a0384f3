"""A program that frees memory from another thread while one public call is reading or writing it.

Run by ``test_memory_pinning.py`` as ``python -m tests.runtime.pinning_child SCENARIO [DIR]``: a crash kills only
this process. The free is made to land at the worst moment, deterministically: a dry run counts the checks of the
memory (``AddressSpace.find`` returning its region) the call makes; the real run frees it from another thread
right after the last one, when only the access itself is left. The memory is 64 MiB, above glibc's largest mmap
threshold, so a free that is not held off by a pin unmaps it and the access is a SIGSEGV. Prints ``fired <ret>``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

import openacl

openacl.install()

import acl  # noqa: E402  (resolves to openacl's facade)
from openacl.runtime import memory  # noqa: E402

BIG = 64 << 20
H2D, D2H = 1, 2


class FreeRacer:
    """Frees ``ptr`` (with ``free``) from its own thread right after the ``n``-th check of it in this thread."""

    def __init__(self, ptr: int, free: Callable[[int], int]) -> None:
        self.ptr, self.free = ptr, free
        self.checks, self.fire_at, self.fired = 0, 0, False
        self.go, self.done = threading.Event(), threading.Event()
        self.ret: int | None = None
        self.thread = threading.Thread(target=self._free, name="racer", daemon=True)
        self.thread.start()

    def _free(self) -> None:
        self.go.wait()
        self.ret = self.free(self.ptr)
        self.done.set()

    def _local(self, frame, event, arg):
        if event == "return" and isinstance(arg, memory.Region) and arg.addr <= self.ptr < arg.end:
            self.checks += 1
            if self.checks == self.fire_at:
                self.go.set()
                assert self.done.wait(30), "the free did not return: it waits for an access that waits for it"
                self.fired = True
        return self._local

    def _global(self, frame, event, arg):
        return self._local if frame.f_code is memory.AddressSpace.find.__code__ else None

    def run(self, call: Callable[[], object], fire_at: int = 0) -> object:
        self.checks, self.fire_at = 0, fire_at
        sys.settrace(self._global)
        try:
            return call()
        finally:
            sys.settrace(None)


def _put(ptr: int, data: bytes) -> None:
    assert acl.rt.memcpy(ptr, BIG, acl.util.bytes_to_ptr(data), len(data), H2D) == 0


def _device(data: bytes) -> tuple[int, Callable[[int], int]]:
    ptr, ret = acl.rt.malloc(BIG, 0)
    assert ret == 0
    _put(ptr, data)
    return ptr, acl.rt.free


def _dvpp(data: bytes) -> tuple[int, Callable[[int], int]]:
    ptr, ret = acl.media.dvpp_malloc(BIG)
    assert ret == 0
    _put(ptr, data)
    return ptr, acl.media.dvpp_free


# Each scenario: (ptr, free, call, check) with check(result) asserting the raced call did its job.


def ptr_to_bytes(ctx: int, tmp: Path):
    data = np.random.default_rng(0).integers(0, 256, 1 << 16, np.uint8).tobytes()
    ptr, free = _device(data)
    return ptr, free, lambda: acl.util.ptr_to_bytes(ptr, len(data)), lambda got: got == data


def memcpy(ctx: int, tmp: Path):
    data = bytes(range(256)) * 16
    ptr, free = _device(data)
    host = bytes(len(data))
    call = lambda: acl.rt.memcpy(acl.util.bytes_to_ptr(host), len(data), ptr, len(data), D2H)  # noqa: E731
    return ptr, free, call, lambda ret: ret == 0 and host == data


def memset(ctx: int, tmp: Path):
    ptr, free = _device(b"\0")
    return ptr, free, lambda: acl.rt.memset(ptr, BIG, 7, BIG), lambda ret: ret == 0


def jpeg_image_info(ctx: int, tmp: Path):
    from tests.media.images import jpeg_bytes, photo

    data = jpeg_bytes(photo(64, 48))
    ptr, free = _dvpp(data)
    call = lambda: acl.media.dvpp_jpeg_get_image_info(ptr, len(data))  # noqa: E731
    return ptr, free, call, lambda got: got[:2] == (64, 48) and got[-1] == 0


def vdec_send_frame(ctx: int, tmp: Path):
    from tests.media.test_vdec import Channel
    from tests.media.video_clips import H264_MAIN, encode_clip

    packet = encode_clip("h264", count=1)[0]
    ptr, free = _dvpp(packet)
    channel = Channel(ctx, H264_MAIN)
    stream_desc = acl.media.dvpp_create_stream_desc()
    acl.media.dvpp_set_stream_desc_data(stream_desc, ptr)
    acl.media.dvpp_set_stream_desc_size(stream_desc, len(packet))

    def call():
        out = acl.media.dvpp_create_pic_desc()
        buffer, _ = acl.media.dvpp_malloc(200 * 130 * 2)
        acl.media.dvpp_set_pic_desc_data(out, buffer)
        acl.media.dvpp_set_pic_desc_size(out, 200 * 130 * 2)
        return acl.media.vdec_send_frame(channel.desc, stream_desc, out, channel.config, None)

    return ptr, free, call, lambda ret: ret == 0


def venc_send_frame(ctx: int, tmp: Path):
    from tests.media.test_venc import Encoder
    from tests.media.video_clips import H264_MAIN

    encoder = Encoder(ctx, H264_MAIN, 192, 128)
    ptr, free = _dvpp(bytes(192 * 128 * 3 // 2))
    acl.media.dvpp_set_pic_desc_data(encoder.pic, ptr)
    call = lambda: acl.media.venc_send_frame(encoder.desc, encoder.pic, 0, encoder.config, None)  # noqa: E731
    return ptr, free, call, lambda ret: ret == 0


def set_tensor_const(ctx: int, tmp: Path):
    values = np.arange(4, dtype=np.float32)
    ptr, free = _device(values.tobytes())
    desc = acl.create_tensor_desc(0, [4], 2)
    return ptr, free, lambda: acl.set_tensor_const(desc, ptr, values.nbytes), lambda ret: ret == 0


def load_from_mem(ctx: int, tmp: Path):
    from openacl.model.model import DEMO_MODEL

    data = DEMO_MODEL.read_bytes()
    ptr, free = _device(data)
    return ptr, free, lambda: acl.mdl.load_from_mem(ptr, len(data)), lambda got: got[1] == 0


def query_size_from_mem(ctx: int, tmp: Path):
    from openacl.model.model import DEMO_MODEL

    data = DEMO_MODEL.read_bytes()
    ptr, free = _device(data)
    return ptr, free, lambda: acl.mdl.query_size_from_mem(ptr, len(data)), lambda got: got[-1] == 0


def bundle_load_from_mem(ctx: int, tmp: Path):
    import zipfile

    from openacl.model.model import DEMO_MODEL

    path = tmp / "bundle.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("m.onnx", DEMO_MODEL.read_bytes())
    data = path.read_bytes()
    ptr, free = _device(data)
    return ptr, free, lambda: acl.mdl.bundle_load_from_mem(ptr, len(data)), lambda got: got[1] == 0


def set_input_aipp(ctx: int, tmp: Path):
    from tests.aipp_models import aipp_model
    from tests.model.test_aipp import RGB888_U8, AippIO, _params

    model = AippIO(aipp_model(tmp / "m.onnx"))
    ptr, free = _device(b"\0")
    buffer = acl.mdl.get_dataset_buffer(model.inputs, model.aipp_index)
    assert acl.update_data_buffer(buffer, ptr, BIG) == 0
    handle = _params(RGB888_U8, 6, 4)  # the model takes 4x6 RGB
    call = lambda: acl.mdl.set_input_aipp(model.model_id, model.inputs, model.aipp_index, handle)  # noqa: E731
    return ptr, free, call, lambda ret: ret == 0


def set_dynamic_batch_size(ctx: int, tmp: Path):
    from tests.gear_models import GearIO, batch_model

    io = GearIO(batch_model(tmp / "m.onnx"))
    ptr, free = _device(b"\0")
    buffer = acl.mdl.get_dataset_buffer(io.inputs[0], io.gear_index)
    assert acl.update_data_buffer(buffer, ptr, BIG) == 0
    call = lambda: acl.mdl.set_dynamic_batch_size(io.model_id, io.inputs[0], io.gear_index, 2)  # noqa: E731
    return ptr, free, call, lambda ret: ret == 0


SCENARIOS = {
    f.__name__: f
    for f in (
        ptr_to_bytes,
        memcpy,
        memset,
        jpeg_image_info,
        vdec_send_frame,
        venc_send_frame,
        set_tensor_const,
        load_from_mem,
        query_size_from_mem,
        bundle_load_from_mem,
        set_input_aipp,
        set_dynamic_batch_size,
    )
}


def op_output_into_memory_reallocated_smaller() -> None:
    """``execute_v2`` writes a data-dependent output (Reshape to a shape read from memory: 64 KiB) through a data
    buffer created for 64 KiB whose memory was freed and allocated again, 32 KiB, at the same address."""
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    x = np.arange(16384, dtype=np.float32)
    shape = np.array([16384], np.int64)
    ins = []
    for array in (x, shape):
        ptr, _ = acl.rt.malloc(array.nbytes, 0)
        host = array.tobytes()
        assert acl.rt.memcpy(ptr, array.nbytes, acl.util.bytes_to_ptr(host), array.nbytes, H2D) == 0
        ins.append(acl.create_data_buffer(ptr, array.nbytes))
    in_descs = [acl.create_tensor_desc(0, [16384], 2), acl.create_tensor_desc(9, [1], 2)]  # float32, int64
    out_desc = acl.create_tensor_desc(0, [1], 2)
    ptr, _ = acl.rt.malloc(x.nbytes, 0)
    out_buf = acl.create_data_buffer(ptr, x.nbytes)
    assert acl.rt.free(ptr) == 0
    held = []
    while len(held) < 4096 and (not held or held[-1] != ptr):
        held.append(acl.rt.malloc(x.nbytes // 2, 0)[0])
    assert held[-1] == ptr, "the allocator never handed the address out again"
    assert acl.op.execute_v2("Reshape", in_descs, ins, [out_desc], [out_buf], 0, stream) == 0
    ret = acl.rt.synchronize_stream(stream)
    for addr in held:  # glibc finds a heap overrun here, if not before
        acl.rt.free(addr)
    held = [acl.rt.malloc(4096, 0)[0] for _ in range(64)]
    print(f"synchronize {ret}", flush=True)


def main(name: str) -> None:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    ctx, ret = acl.rt.create_context(0)
    assert ret == 0
    if name == op_output_into_memory_reallocated_smaller.__name__:
        op_output_into_memory_reallocated_smaller()
        os._exit(0)
    with tempfile.TemporaryDirectory() as tmp:
        ptr, free, call, check = SCENARIOS[name](ctx, Path(tmp))
        racer = FreeRacer(ptr, free)
        dry = racer.run(call)  # the dry run: how many times the call checks the memory
        assert check(dry), f"{name}: the call returned {dry!r} without a race"
        result = racer.run(call, fire_at=racer.checks)
        assert racer.fired, f"{name}: the memory was never checked"
        assert racer.ret == 0, f"{name}: the racing free returned {racer.ret}"
        assert check(result), f"{name}: the raced call returned {result!r}"
        print("fired", flush=True)
    os._exit(0)  # the scenario's channels and threads die with the process


if __name__ == "__main__":
    main(sys.argv[1])
