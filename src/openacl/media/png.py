"""PNGD: header query, size prediction and decode to RGB888 / RGBA8888 as a stream task (the 310 only).

The 310P has no PNG decoder (ACL: ``ACL_ERROR_FEATURE_UNSUPPORTED``). Decisions where the docs are silent for the
Python API: PNGD writes ``width_stride = align128(width * bytes_per_pixel)`` and ``height_stride = align16(height)``
(sizes predicted the same way), takes pictures of 32x32..4096x4096, writes RGB888 for ``PIXEL_FORMAT_UNKNOWN``
unless the PNG has alpha (then RGBA8888), and writes the geometry back into the output desc.

The decode call checks the channel, the memory ranges and the output desc's format; the PNG is device memory
(perhaps filled by a copy still queued on the stream), so its header, like its pixels, is read when the task runs:
a picture outside 32..4096 a side, or an output desc too small for it, fails the task with that code
(``ret_code`` 1), as does data that does not decode to the size its header says (500001).
"""

from __future__ import annotations

from openacl.errors import AclCode, AclError
from openacl.media import chip as _chip
from openacl.media import codecs, tasks
from openacl.media import descs as _descs
from openacl.media.checks import FORMAT, INVALID, memory_view, pic_desc
from openacl.media.formats import ChannelMode, PixelFormat, align_up
from openacl.media.jpeg import read_host

PNG_MIN, PNG_MAX = 32, 4096
_BPP = {PixelFormat.RGB_888: 3, PixelFormat.RGBA_8888: 4}


def _supported() -> None:
    rules = _chip.current()
    if not rules.png:
        raise AclError(AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, f"PNG decoding on {rules.name}")


def image_info(ptr: int, size: int) -> codecs.PngInfo:
    _supported()
    return codecs.png_info(read_host(ptr, size))


def _geometry(info: codecs.PngInfo, out_fmt: int) -> tuple[int, int, int]:
    if not (PNG_MIN <= info.width <= PNG_MAX and PNG_MIN <= info.height <= PNG_MAX):
        raise AclError(INVALID, f"PNG of {info.width}x{info.height} is outside {PNG_MIN}..{PNG_MAX} a side")
    if out_fmt == PixelFormat.UNKNOWN:
        out_fmt = PixelFormat.RGBA_8888 if info.alpha else PixelFormat.RGB_888
    if out_fmt not in _BPP:
        raise AclError(FORMAT, f"PNGD does not write pixel format {out_fmt}")
    return out_fmt, align_up(info.width * _BPP[out_fmt], 128), align_up(info.height, 16)


def predict_dec_size(ptr: int, size: int, out_fmt: int) -> int:
    info = image_info(ptr, size)
    _fmt, ws, hs = _geometry(info, out_fmt)
    return ws * hs


def decode_async(channel: int, ptr: int, size: int, out_pic: int, stream_handle: int) -> None:
    """Checks the channel, memory and output desc now; the PNG, header and pixels, is read when the task runs
    (the data is device memory, filled by copies that may still be queued on the stream)."""
    _supported()
    _descs.channel(channel, ChannelMode.PNGD)
    stream = tasks.stream_for(stream_handle)
    if ptr == 0 or size == 0:
        raise AclError(INVALID, f"PNG data {ptr:#x} of {size} bytes")
    data_view = memory_view(ptr, size, "PNG data", write=False)
    desc = pic_desc(out_pic, "output")
    requested = desc.format
    if requested != PixelFormat.UNKNOWN and requested not in _BPP:
        raise AclError(FORMAT, f"PNGD does not write pixel format {requested}")
    if desc.size == 0:
        raise AclError(INVALID, "output pic desc size is 0")
    out = memory_view(desc.data, desc.size, "output picture", write=True)

    def work() -> None:
        data = bytes(data_view)
        info = codecs.png_info(data)
        fmt, ws, hs = _geometry(info, requested)
        if out.size < ws * hs:
            raise AclError(INVALID, f"output size {out.size} is less than the {ws * hs} bytes PNGD writes")
        bpp = _BPP[fmt]
        pixels = codecs.decode_png(data, info, alpha=bpp == 4)
        rows = out[: ws * hs].reshape(hs, ws)
        rows[: info.height, : info.width * bpp] = pixels.reshape(info.height, info.width * bpp)
        desc.width, desc.height, desc.width_stride, desc.height_stride, desc.format = (
            info.width,
            info.height,
            ws,
            hs,
            fmt,
        )

    tasks.submit(stream, "png_decode", work, [desc], writes=[out], reads=[data_view])
