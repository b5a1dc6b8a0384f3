"""JPEGD and JPEGE: header queries, size predictions, and decode / encode as stream tasks (spec §2.7, §6.1-§6.2).

Decisions where CANN is silent:
- Header queries read the bytes at the address given (host memory from ``bytes_to_ptr``, or device memory).
  Bytes that hold no JPEG frame header: ``ACL_ERROR_FAILURE`` (500001).
- The decode call checks the channel, the memory ranges and the output desc; the JPEG itself is device memory
  (perhaps filled by a copy still queued on the stream), so its header is read when the task runs: a picture
  outside 32..8192 a side, progressive, lossless, arithmetic-coded, 12-bit, CMYK or 4:1:1
  (``ACL_ERROR_UNSUPPORTED_JPEG``, 148052), or an output desc too small, fails the task with that code.
- JPEGD writes the picture with its own strides, ``align128(w)`` (310) or ``align64(w)`` (310P) by
  ``align16(h)``, unless the output desc already holds strides at least that large and of that alignment (acllite
  on the 310P sets 128-aligned ones), and writes width, height, strides and format back into the output desc.
  Odd sizes are rounded down to even in the subsampled axes.
- Entropy data that does not decode (a truncated or corrupt file) fails the task (ret_code 1, sync 500001).
- The picture a codec decodes must have the geometry of the first frame header (a second frame header, which the
  codec obeys, would leave part of the output unwritten): otherwise the task fails (ret_code 1, sync 500001).
- JPEGE reads the picture when the task runs and writes the encoded length into the uint32 at ``size_ptr`` then;
  the buffer size held there is a host-side argument, read at the call as ACL reads it. An encoded picture
  longer than the buffer fails the task and leaves the length unchanged.
"""

from __future__ import annotations

import numpy as np

from openacl.errors import AclCode, AclError
from openacl.media import chip as _chip
from openacl.media import codecs, picture, tasks
from openacl.media import descs as _descs
from openacl.media.checks import FORMAT, INVALID, memory_view, pic_desc
from openacl.media.chip import ChipRules
from openacl.media.formats import (
    LAYOUTS,
    NV12_NV21,
    PACKED_422,
    ChannelMode,
    JpegFormat,
    PixelFormat,
    align_up,
    buffer_size,
    format_for_sampling,
)
from openacl.runtime import memory as _memory

JPEGD_OUTPUT_FORMATS = NV12_NV21 | {
    PixelFormat.YUV_SEMIPLANAR_422,
    PixelFormat.YVU_SEMIPLANAR_422,
    PixelFormat.YUV_SEMIPLANAR_444,
    PixelFormat.YVU_SEMIPLANAR_444,
    PixelFormat.YUV_SEMIPLANAR_440,
    PixelFormat.YVU_SEMIPLANAR_440,
    PixelFormat.UNKNOWN,
}
JPEGE_INPUT_FORMATS = NV12_NV21 | PACKED_422
HEADER_BYTES = 640  # JPEGE's size prediction: picture + header + 128, rounded up to 2 MiB (ACL's constants)
ENC_PAD = 128
ENC_ROUND = 2 * 1024 * 1024


def read_host(ptr: int, size: int) -> bytes:
    if ptr == 0 or size == 0:
        raise AclError(INVALID, f"JPEG data {ptr:#x} of {size} bytes")
    return _memory.read_bytes(ptr, size)


def image_info(ptr: int, size: int) -> codecs.JpegInfo:
    return codecs.jpeg_info(read_host(ptr, size))


def _output_format(out_fmt: int, info: codecs.JpegInfo) -> int:
    if out_fmt not in JPEGD_OUTPUT_FORMATS:
        raise AclError(FORMAT, f"JPEGD does not write pixel format {out_fmt}")
    return format_for_sampling(info.format) if out_fmt == PixelFormat.UNKNOWN else out_fmt


def _check_size(info: codecs.JpegInfo, rules: ChipRules) -> None:
    low, high = rules.jpeg_min, rules.jpeg_max
    if not (low <= info.width <= high and low <= info.height <= high):
        raise AclError(INVALID, f"JPEG of {info.width}x{info.height} is outside {low}x{low}..{high}x{high}")


def _strides(info: codecs.JpegInfo, rules: ChipRules) -> tuple[int, int]:
    return align_up(info.width, rules.jpegd_width_align), align_up(info.height, rules.jpegd_height_align)


def predict_dec_size(ptr: int, size: int, out_fmt: int) -> int:
    info = image_info(ptr, size)
    rules = _chip.current()
    _check_size(info, rules)
    fmt = _output_format(out_fmt, info)
    ws, hs = _strides(info, rules)
    return buffer_size(fmt, ws, hs)


def decode_async(channel: int, ptr: int, size: int, out_pic: int, stream_handle: int) -> None:
    """Checks the channel, memory and output desc now; the header, like the pixels, is read when the task runs
    (the data is device memory, filled by copies that may still be queued on the stream)."""
    _descs.channel(channel, ChannelMode.JPEGD)
    stream = tasks.stream_for(stream_handle)
    if ptr == 0 or size == 0:
        raise AclError(INVALID, f"JPEG data {ptr:#x} of {size} bytes")
    data_view = memory_view(ptr, size, "JPEG data", write=False)
    desc = pic_desc(out_pic, "output")
    if desc.format not in JPEGD_OUTPUT_FORMATS:
        raise AclError(FORMAT, f"JPEGD does not write pixel format {desc.format}")
    if desc.size == 0:
        raise AclError(INVALID, "output pic desc size is 0")
    out = memory_view(desc.data, desc.size, "output picture", write=True)
    rules = _chip.current()
    requested = (desc.format, desc.width_stride, desc.height_stride)

    def work() -> None:
        data = bytes(data_view)
        info = codecs.jpeg_info(data)
        _check_size(info, rules)
        codecs.check_decodable(info)
        fmt = _output_format(requested[0], info)
        lay = LAYOUTS[fmt]
        ws, hs = _strides(info, rules)
        if requested[1] >= ws and requested[1] % rules.jpegd_width_align == 0:
            ws = requested[1]
        if requested[2] >= hs and requested[2] % rules.jpegd_height_align == 0:
            hs = requested[2]
        need = buffer_size(fmt, ws, hs)
        if out.size < need:
            raise AclError(INVALID, f"output size {out.size} is less than the {need} bytes JPEGD writes ({ws}x{hs})")
        width = info.width & ~1 if lay.sub[0] == 2 else info.width
        height = info.height & ~1 if lay.sub[1] == 2 else info.height
        planes = codecs.decode_jpeg(data, info, width, height, lay.sub)
        if planes.u is None:
            planes = picture.scale(planes, width, height, lay.sub, "nearest")  # gray: chroma 0x80
        picture.write(out, lay, ws, hs, planes)
        desc.width, desc.height, desc.width_stride, desc.height_stride, desc.format = width, height, ws, hs, fmt

    tasks.submit(stream, "jpeg_decode", work, [desc], writes=[out], reads=[data_view])


# ----- JPEGE -----


def _check_encode_input(handle: int, rules: ChipRules) -> tuple[_descs.PicDesc, int]:
    desc = pic_desc(handle, "input")
    fmt, w, h, ws, hs = desc.format, desc.width, desc.height, desc.width_stride, desc.height_stride
    if fmt not in JPEGE_INPUT_FORMATS:
        raise AclError(FORMAT, f"JPEGE does not take pixel format {fmt}")
    low, high = rules.jpeg_min, rules.jpeg_max
    if not (low <= w <= high and low <= h <= high):
        raise AclError(INVALID, f"JPEGE input {w}x{h} is outside {low}x{low}..{high}x{high}")
    if w % 2 or (fmt in NV12_NV21 and h % 2):
        raise AclError(INVALID, f"JPEGE input {w}x{h} must have an even width (and height for 4:2:0)")
    if fmt in PACKED_422:
        if ws != align_up(2 * w, 16):
            raise AclError(INVALID, f"JPEGE width stride {ws} of packed 4:2:2 must be {align_up(2 * w, 16)}")
    elif ws % 16 or ws < w:
        raise AclError(INVALID, f"JPEGE width stride {ws} must be a multiple of 16 of at least {w}")
    if not (hs == h or (hs > h and hs % 16 == 0)):
        raise AclError(INVALID, f"JPEGE height stride {hs} must be {h} or a larger multiple of 16")
    return desc, buffer_size(fmt, ws, hs)


def predict_enc_size(in_pic: int, jpege_config: int) -> int:
    _descs.jpege_configs.get(jpege_config)
    _desc, raw = _check_encode_input(in_pic, _chip.current())
    return align_up(raw + HEADER_BYTES + ENC_PAD, ENC_ROUND)


def encode_async(channel: int, in_pic: int, out_ptr: int, size_ptr: int, jpege_config: int, stream_handle: int) -> None:
    _descs.channel(channel, ChannelMode.JPEGE)
    stream = tasks.stream_for(stream_handle)
    level = _descs.jpege_configs.get(jpege_config).level
    desc, need = _check_encode_input(in_pic, _chip.current())
    if desc.size < need:
        raise AclError(INVALID, f"input size {desc.size} is less than the {need} bytes of its strides")
    src = memory_view(desc.data, need, "input picture", write=False)
    length = memory_view(size_ptr, 4, "size pointer", write=True).view(np.uint32)
    capacity = int(length[0])
    if capacity == 0:
        raise AclError(INVALID, "the output size at size_ptr is 0")
    out = memory_view(out_ptr, capacity, "output buffer", write=True)
    lay = LAYOUTS[desc.format]
    w, h, ws, hs = desc.width, desc.height, desc.width_stride, desc.height_stride

    def work() -> None:
        planes = picture.read(src, lay, w, h, ws, hs)
        encoded = codecs.encode_jpeg(planes, level)
        if len(encoded) > capacity:
            raise AclError(
                AclCode.ACL_ERROR_FAILURE, f"the {len(encoded)}-byte JPEG exceeds the {capacity}-byte buffer"
            )
        out[: len(encoded)] = np.frombuffer(encoded, np.uint8)
        length[0] = len(encoded)

    tasks.submit(stream, "jpeg_encode", work, writes=[out, length], reads=[src])


def jpeg_format_of(info: codecs.JpegInfo) -> int:
    return int(JpegFormat(info.format))
