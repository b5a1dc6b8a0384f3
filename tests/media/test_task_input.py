"""Every DVPP task reads its input when the stream reaches it: a picture a queued copy brings into a reused buffer
is the one the task works on, whatever the buffer held at the call."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import acl
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task
from tests.media.helpers import M, nv12_pic, pic, planes_of, to_device
from tests.media.images import jpeg_bytes, photo, png_bytes

W, H = 64, 32
NV12_SIZE = W * H * 3 // 2


def _nv12_bytes(seed: int) -> bytes:
    desc, ptr = nv12_pic(W, H, fill=planes_of(photo(W, H, seed=seed)))
    data = acl.util.ptr_to_bytes(ptr, NV12_SIZE)
    M.dvpp_destroy_pic_desc(desc)
    M.dvpp_free(ptr)
    return data


def _vpc(channel, stream, src, src_ptr):
    dst, dst_ptr = nv12_pic(32, 16)
    assert M.dvpp_vpc_resize_async(channel, src, dst, M.dvpp_create_resize_config(), stream) == 0
    return lambda: acl.util.ptr_to_bytes(dst_ptr, 32 * 16 * 3 // 2)


def _vpc_batch(channel, stream, src, src_ptr):
    sources, outputs = M.dvpp_create_batch_pic_desc(1), M.dvpp_create_batch_pic_desc(1)
    member = M.dvpp_get_pic_desc(sources, 0)
    for name in ("data", "size", "format", "width", "height", "width_stride", "height_stride"):
        getattr(M, f"dvpp_set_pic_desc_{name}")(member, getattr(M, f"dvpp_get_pic_desc_{name}")(src))
    out_ptr, _ = M.dvpp_malloc(32 * 16 * 3 // 2)
    out = M.dvpp_get_pic_desc(outputs, 0)
    for name, value in [("data", out_ptr), ("size", 768), ("format", 1), ("width", 32), ("height", 16),
                        ("width_stride", 32), ("height_stride", 16)]:  # fmt: skip
        getattr(M, f"dvpp_set_pic_desc_{name}")(out, value)
    crop = M.dvpp_create_roi_config(0, W - 1, 0, H - 1)
    assert M.dvpp_vpc_batch_crop_async(channel, sources, [1], outputs, [crop], stream)[-1] == 0
    return lambda: acl.util.ptr_to_bytes(out_ptr, 768)


def _jpege(channel, stream, src, src_ptr):
    M.dvpp_set_pic_desc_height_stride(src, H)
    holder = np.array([1 << 20], np.uint32).tobytes()
    out, _ = M.dvpp_malloc(1 << 20)
    cfg = M.dvpp_create_jpege_config()
    assert M.dvpp_jpeg_encode_async(channel, src, out, acl.util.bytes_to_ptr(holder), cfg, stream) == 0
    return lambda: acl.util.ptr_to_bytes(out, int(np.frombuffer(holder, np.uint32)[0]))


@pytest.mark.parametrize("operation", [_vpc, _vpc_batch, _jpege], ids=["vpc", "vpc_batch", "jpege"])
def test_a_picture_task_reads_the_picture_a_queued_copy_brought(channel, stream, operation):
    wanted = _nv12_bytes(seed=5)
    reference_src, reference_ptr = nv12_pic(W, H)
    acl.rt.memcpy(reference_ptr, NV12_SIZE, acl.util.bytes_to_ptr(wanted), NV12_SIZE, 1)
    reference = operation(channel, stream, reference_src, reference_ptr)
    assert acl.rt.synchronize_stream(stream) == 0
    expected = reference()

    src, src_ptr = nv12_pic(W, H, fill=planes_of(photo(W, H, seed=9)))  # the buffer's previous picture
    gate = threading.Event()
    rt_device.resolve(stream).enqueue(work_task("gate", gate.wait))
    assert acl.rt.memcpy_async(src_ptr, NV12_SIZE, acl.util.bytes_to_ptr(wanted), NV12_SIZE, 1, stream) == 0
    result = operation(channel, stream, src, src_ptr)
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert result() == expected


@pytest.mark.parametrize("kind", ["jpeg", "png"])
def test_a_decode_task_reads_the_file_a_queued_copy_brought(channel, stream, kind):
    """The header too: the previous file in the buffer has another size."""
    encode = jpeg_bytes if kind == "jpeg" else png_bytes
    previous, wanted = encode(photo(96, 64, seed=1)), encode(photo(W, H, seed=2))
    capacity = max(len(previous), len(wanted))
    dev = to_device(previous + bytes(capacity - len(previous)))
    out, _ = M.dvpp_malloc(1 << 16)
    desc = pic(out, 1 << 16, 1 if kind == "jpeg" else 12)
    decode = M.dvpp_jpeg_decode_async if kind == "jpeg" else M.dvpp_png_decode_async
    gate = threading.Event()
    rt_device.resolve(stream).enqueue(work_task("gate", gate.wait))
    assert acl.rt.memcpy_async(dev, len(wanted), acl.util.bytes_to_ptr(wanted), len(wanted), 1, stream) == 0
    assert decode(channel, dev, len(wanted), desc, stream) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert (M.dvpp_get_pic_desc_width(desc), M.dvpp_get_pic_desc_height(desc)) == (W, H)
