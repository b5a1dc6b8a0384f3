"""JPEGD and JPEGE: header queries, size predictions, decode and encode as stream tasks."""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest
from PIL import Image

import acl
from openacl.errors import AclCode
from openacl.runtime import device as rt_device
from openacl.runtime.sched.task import work_task
from tests.conftest import hold_stream
from tests.media.helpers import M, nv12_pic, pic, planes_of, read_nv12, to_device, write_nv12
from tests.media.images import jpeg_bytes, photo

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def host(data: bytes) -> int:
    return acl.util.bytes_to_ptr(data)


@pytest.mark.parametrize(("subsampling", "fmt"), [("4:2:0", 2), ("4:2:2", 1), ("4:4:4", 0)])
def test_image_info_reports_size_components_and_sampling(subsampling, fmt):
    data = jpeg_bytes(photo(100, 60), subsampling=subsampling)
    assert M.dvpp_jpeg_get_image_info(host(data), len(data)) == (100, 60, 3, 0)
    assert M.dvpp_jpeg_get_image_info_v2(host(data), len(data)) == (100, 60, 3, fmt, 0)


def test_image_info_of_gray_and_of_exif_rotated_pictures():
    gray = jpeg_bytes(photo(80, 40)[..., 0])
    assert M.dvpp_jpeg_get_image_info_v2(host(gray), len(gray)) == (80, 40, 1, 3, 0)
    exif = Image.Exif()
    exif[0x0112] = 6  # rotated a quarter turn: width and height swap
    rotated = jpeg_bytes(photo(80, 40), exif=exif.tobytes())
    assert M.dvpp_jpeg_get_image_info(host(rotated), len(rotated)) == (40, 80, 3, 0)


def test_predict_dec_size_follows_the_chip(monkeypatch):
    data = jpeg_bytes(photo(641, 479))
    assert M.dvpp_jpeg_predict_dec_size(host(data), len(data), 1) == (768 * 480 * 3 // 2, 0)
    assert M.dvpp_jpeg_predict_dec_size(host(data), len(data), 10000) == (768 * 480 * 3 // 2, 0)
    monkeypatch.setenv("OPENACL_SOC_NAME", "Ascend310P3")
    assert M.dvpp_jpeg_predict_dec_size(host(data), len(data), 2) == (704 * 480 * 3 // 2, 0)
    small = jpeg_bytes(photo(31, 40))
    assert M.dvpp_jpeg_predict_dec_size(host(small), len(small), 1) == (0, INVALID)
    assert M.dvpp_jpeg_predict_dec_size(host(data), len(data), 12) == (0, AclCode.ACL_ERROR_FORMAT_NOT_MATCH)


def decode(channel, stream, data: bytes, fmt: int = 1, size: int | None = None):
    dev = to_device(data)
    size = size or M.dvpp_jpeg_predict_dec_size(host(data), len(data), fmt)[0]
    out, _ = M.dvpp_malloc(size)
    desc = pic(out, size, fmt)
    assert M.dvpp_jpeg_decode_async(channel, dev, len(data), desc, stream) == 0
    return desc


def test_decode_rounds_odd_sizes_down_and_writes_the_geometry_back(channel, stream, gate):
    rgb = photo(641, 479)
    data = jpeg_bytes(rgb)
    hold_stream(stream, gate)  # the stream cannot reach the decode before the first assert, however loaded the host
    desc = decode(channel, stream, data)
    assert M.dvpp_get_pic_desc_width(desc) == 0  # nothing is written before the task runs
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert (M.dvpp_get_pic_desc_width(desc), M.dvpp_get_pic_desc_height(desc)) == (640, 478)
    assert (M.dvpp_get_pic_desc_width_stride(desc), M.dvpp_get_pic_desc_height_stride(desc)) == (768, 480)
    assert M.dvpp_get_pic_desc_ret_code(desc) == 0
    y, u, _v = read_nv12(desc)
    reference = Image.open(io.BytesIO(data))
    reference.draft("YCbCr", None)  # libjpeg's samples, no RGB round trip (its chroma upsampled)
    ycbcr = np.asarray(reference, dtype=np.int16)[:478, :640]
    assert np.abs(y - ycbcr[..., 0]).max() <= 1  # another decoder's IDCT rounding
    cb = ycbcr[..., 1].reshape(239, 2, 320, 2).mean(axis=(1, 3))
    assert np.abs(u - cb).mean() < 1


def test_decode_to_nv21_swaps_chroma_and_gray_gets_neutral_chroma(channel, stream):
    data = jpeg_bytes(photo(64, 48))
    nv12, nv21 = decode(channel, stream, data, 1), decode(channel, stream, data, 2)
    gray = decode(channel, stream, jpeg_bytes(photo(64, 48)[..., 1]), 1)
    assert acl.rt.synchronize_stream(stream) == 0
    a, b = read_nv12(nv12), read_nv12(nv21, nv21=True)
    assert all(np.array_equal(p, q) for p, q in zip(a, b, strict=True))
    _, u, v = read_nv12(gray)
    assert (u == 128).all() and (v == 128).all()


def test_decode_unknown_keeps_the_source_sampling(channel, stream):
    data = jpeg_bytes(photo(64, 48), subsampling="4:4:4")
    desc = decode(channel, stream, data, 10000)
    assert acl.rt.synchronize_stream(stream) == 0
    assert M.dvpp_get_pic_desc_format(desc) == 5  # YUV_SEMIPLANAR_444


def test_decode_runs_in_stream_order_between_copies(channel, stream):
    data = jpeg_bytes(photo(64, 64))
    dev, _ = M.dvpp_malloc(len(data))
    size = M.dvpp_jpeg_predict_dec_size(host(data), len(data), 1)[0]
    out, _ = M.dvpp_malloc(size)
    desc = pic(out, size, 1)
    gate = threading.Event()
    rt_device.resolve(stream).enqueue(work_task("gate", gate.wait))
    assert acl.rt.memcpy_async(dev, len(data), host(data), len(data), 1, stream) == 0  # the JPEG arrives later
    assert M.dvpp_jpeg_decode_async(channel, dev, len(data), desc, stream) == 0
    host_copy = bytes(size)
    assert acl.rt.memcpy_async(host(host_copy), size, out, size, 2, stream) == 0
    assert M.dvpp_get_pic_desc_width(desc) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert M.dvpp_get_pic_desc_width(desc) == 64
    y, _u, _v = read_nv12(desc)
    assert np.frombuffer(host_copy, np.uint8)[: 128 * 64].reshape(64, 128)[:, :64].tolist() == y.tolist()


def encode_input(width=128, height=96):
    rgb = photo(width, height)
    ws = (width + 15) // 16 * 16
    desc, _ptr = nv12_pic(width, height, ws, height, fill=planes_of(rgb))
    return desc, rgb


def test_predict_enc_size_and_its_checks(ctx):
    desc, _ = encode_input(128, 96)
    cfg = M.dvpp_create_jpege_config()
    expected = (128 * 96 * 3 // 2 + 640 + 128 + (2 << 20) - 1) // (2 << 20) * (2 << 20)
    assert M.dvpp_jpeg_predict_enc_size(desc, cfg) == (expected, 0)
    assert M.dvpp_set_pic_desc_height_stride(desc, 98) == 0  # neither h nor a multiple of 16
    assert M.dvpp_jpeg_predict_enc_size(desc, cfg) == (0, INVALID)
    assert M.dvpp_set_pic_desc_height_stride(desc, 96) == 0
    assert M.dvpp_set_pic_desc_width_stride(desc, 120) == 0
    assert M.dvpp_jpeg_predict_enc_size(desc, cfg) == (0, INVALID)


@pytest.mark.parametrize("pointer_of", ["bytes", "numpy"])
def test_encode_writes_a_jpeg_and_its_length_into_the_callers_memory(channel, stream, pointer_of):
    desc, rgb = encode_input()
    cfg = M.dvpp_create_jpege_config()
    size, _ = M.dvpp_jpeg_predict_enc_size(desc, cfg)
    out, _ = M.dvpp_malloc(size)
    if pointer_of == "bytes":
        holder = np.array([size], dtype=np.int32).tobytes()
        size_ptr = acl.util.bytes_to_ptr(holder)
    else:
        holder = np.array([size], dtype=np.int32)  # acllite: a 1-element int32 array through numpy_to_ptr
        with pytest.warns(Warning):
            size_ptr = acl.util.numpy_to_ptr(holder)
    assert M.dvpp_jpeg_encode_async(channel, desc, out, size_ptr, cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    length = int(np.frombuffer(holder if pointer_of == "bytes" else holder.tobytes(), np.uint32)[0])
    assert 0 < length < size
    encoded = acl.util.ptr_to_bytes(out, length)
    back = np.asarray(Image.open(io.BytesIO(encoded)).convert("RGB"), dtype=np.int16)
    assert back.shape == rgb.shape and np.abs(back - rgb).mean() < 6


def test_encode_into_a_buffer_too_small_fails_the_task_and_the_stream_goes_on(channel, stream, acl_log):
    desc, _ = encode_input()
    cfg = M.dvpp_create_jpege_config()
    out, _ = M.dvpp_malloc(64)
    holder = np.array([64], dtype=np.uint32).tobytes()
    assert M.dvpp_jpeg_encode_async(channel, desc, out, acl.util.bytes_to_ptr(holder), cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_FAILURE
    assert np.frombuffer(holder, np.uint32)[0] == 64
    assert sum("jpeg_encode" in r.getMessage() for r in acl_log.records) == 1
    assert acl.rt.synchronize_stream(stream) == 0


def test_encode_packed_yuyv(channel, stream):
    width, height = 64, 32
    ws = 128
    ptr, _ = M.dvpp_malloc(ws * height)
    buf = acl.util.ptr_to_numpy(ptr, (height, ws), 2)
    buf[:, 0::2], buf[:, 1::4], buf[:, 3::4] = 100, 90, 160
    desc = pic(ptr, ws * height, 7, width, height, ws, height)
    cfg = M.dvpp_create_jpege_config()
    size, ret = M.dvpp_jpeg_predict_enc_size(desc, cfg)
    assert ret == 0
    out, _ = M.dvpp_malloc(size)
    holder = np.array([size], np.uint32).tobytes()
    assert M.dvpp_jpeg_encode_async(channel, desc, out, acl.util.bytes_to_ptr(holder), cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    length = int(np.frombuffer(holder, np.uint32)[0])
    image = Image.open(io.BytesIO(acl.util.ptr_to_bytes(out, length)))
    image.draft("YCbCr", None)
    ycbcr = np.asarray(image.convert("YCbCr"), np.int16)
    assert np.abs(ycbcr - (100, 90, 160)).max() <= 2


def test_jpegd_output_then_jpege_round_trip_through_nv12(channel, stream):
    rgb = photo(96, 64)
    dec = decode(channel, stream, jpeg_bytes(rgb, quality=95))
    assert acl.rt.synchronize_stream(stream) == 0
    ws = M.dvpp_get_pic_desc_width_stride(dec)
    assert M.dvpp_set_pic_desc_height_stride(dec, 64) == 0
    assert ws == 128
    cfg = M.dvpp_create_jpege_config()
    size, ret = M.dvpp_jpeg_predict_enc_size(dec, cfg)
    assert ret == 0
    out, _ = M.dvpp_malloc(size)
    holder = np.array([size], np.uint32).tobytes()
    assert M.dvpp_jpeg_encode_async(channel, dec, out, acl.util.bytes_to_ptr(holder), cfg, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    encoded = acl.util.ptr_to_bytes(out, int(np.frombuffer(holder, np.uint32)[0]))
    back = np.asarray(Image.open(io.BytesIO(encoded)), dtype=np.int16)
    first = np.asarray(Image.open(io.BytesIO(jpeg_bytes(rgb, quality=95))), dtype=np.int16)
    again = np.asarray(Image.open(io.BytesIO(jpeg_bytes(first.astype(np.uint8), quality=100))), dtype=np.int16)
    assert np.abs(back - again).mean() < 2  # as close as Pillow's own second generation


def test_write_nv12_helper_round_trips():
    buf = np.zeros(32 * 4 * 3 // 2, np.uint8)
    planes = (np.full((4, 32), 1, np.uint8), np.full((2, 16), 2, np.uint8), np.full((2, 16), 3, np.uint8))
    write_nv12(buf, planes, 32, 4)
    assert buf[128:].tolist() == [2, 3] * 32


def test_an_exif_rotated_jpeg_decodes_upright(channel, stream):
    rgb = photo(96, 64)
    exif = Image.Exif()
    exif[0x0112] = 6  # the camera was turned: the picture is shown a quarter turn clockwise
    data = jpeg_bytes(rgb, exif=exif.tobytes())
    desc = decode(channel, stream, data)
    assert acl.rt.synchronize_stream(stream) == 0
    assert (M.dvpp_get_pic_desc_width(desc), M.dvpp_get_pic_desc_height(desc)) == (64, 96)
    y, _u, _v = read_nv12(desc)
    upright = np.asarray(Image.fromarray(rgb).transpose(Image.Transpose.ROTATE_270).convert("L"), np.int16)
    assert np.abs(y - upright).mean() < 4
