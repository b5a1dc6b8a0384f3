"""JPEG and PNG through real codecs: header facts, decoding to planes, encoding from planes.

The JPEG header is walked here (markers up to the frame header, as DVPP's host-side checks do) so that info and
size predictions need not decode anything; pixels always come from a codec:

- JPEG decoding: FFmpeg's ``mjpeg`` decoder through PyAV, which hands over the JPEG's own planes (``yuvj420p``,
  ``yuvj422p``, ... ``gray``) as JPEGD does: full-range BT.601 YCbCr, no RGB round trip, no chroma resampling
  when the output has the source's subsampling (otherwise chroma is box-averaged down or bilinearly up).
  ``err_detect=explode`` makes a truncated scan an error instead of a concealed picture. Pictures with an EXIF
  orientation other than 1 are decoded by Pillow (``draft("YCbCr")``), which turns them upright.
- JPEG encoding and PNG decoding: Pillow (libjpeg-turbo, zlib).
"""

from __future__ import annotations

import io
import struct
import warnings
from dataclasses import dataclass

import numpy as np

from openacl import lazy
from openacl.errors import AclCode, AclError
from openacl.media.formats import JpegFormat
from openacl.media.picture import Planes, chroma_shape

av = lazy.module("av")
Image = lazy.module("PIL.Image")
ImageOps = lazy.module("PIL.ImageOps")

# Frame-header markers: SOF0 baseline and SOF1 extended sequential (Huffman) are what JPEGD decodes; the
# others are progressive (C2, C6, CA, CE), lossless (C3, C7, CB, CF) or arithmetic-coded (C9..CF).
_SOF_MARKERS = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})
_DECODABLE_SOF = frozenset({0xC0, 0xC1})
_EXIF_SWAPS = frozenset({5, 6, 7, 8})  # orientations that turn the picture a quarter turn
_SAMPLING = {(1, 1): JpegFormat.YUV444, (2, 1): JpegFormat.YUV422, (2, 2): JpegFormat.YUV420}
_SAMPLING |= {(1, 2): JpegFormat.YUV440, (4, 1): JpegFormat.YUV411}

BAD_DATA = AclCode.ACL_ERROR_FAILURE


@dataclass(frozen=True)
class JpegInfo:
    width: int  # after the EXIF orientation
    height: int
    components: int
    format: int  # JpegFormat
    sof: int
    precision: int
    orientation: int


def _exif_orientation(data: bytes) -> int:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(data)) as image:
                return int(image.getexif().get(0x0112, 1))
    except Exception:  # a broken EXIF block is not a broken picture
        return 1


def jpeg_info(data: bytes) -> JpegInfo:
    """The frame header of a JPEG; ``ACL_ERROR_FAILURE`` if the bytes hold none."""
    if data[:2] != b"\xff\xd8":
        raise AclError(BAD_DATA, "not a JPEG (no SOI marker)")
    pos, exif = 2, False
    while True:
        while pos < len(data) and data[pos] == 0xFF:
            pos += 1
        if pos + 3 > len(data):
            raise AclError(BAD_DATA, "JPEG header ends before its frame header")
        marker = data[pos]
        pos += 1
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            continue
        if marker in (0xD9, 0xDA):
            raise AclError(BAD_DATA, "JPEG has no frame header before its scan")
        (length,) = struct.unpack_from(">H", data, pos)
        if length < 2 or pos + length > len(data):
            raise AclError(BAD_DATA, f"JPEG segment {marker:#x} is cut short")
        if marker == 0xE1 and data[pos + 2 : pos + 6] == b"Exif":
            exif = True
        if marker in _SOF_MARKERS:
            break
        pos += length
    if length < 8:
        raise AclError(BAD_DATA, "JPEG frame header is cut short")
    precision, height, width, count = struct.unpack_from(">BHHB", data, pos + 2)
    if length < 8 + 3 * count or count == 0 or width == 0 or height == 0:
        raise AclError(BAD_DATA, "JPEG frame header is malformed")
    factors = [(data[pos + 9 + 3 * i] >> 4, data[pos + 9 + 3 * i] & 15) for i in range(count)]
    if count == 1:
        fmt = JpegFormat.YUV400
    elif count == 3 and factors[1] == factors[2] and all(factors[1]):
        ratio = (factors[0][0] // factors[1][0], factors[0][1] // factors[1][1])
        exact = factors[0][0] % factors[1][0] == 0 and factors[0][1] % factors[1][1] == 0
        fmt = _SAMPLING.get(ratio, JpegFormat.UNKNOWN) if exact else JpegFormat.UNKNOWN
    else:
        fmt = JpegFormat.UNKNOWN
    orientation = _exif_orientation(data) if exif else 1
    if orientation in _EXIF_SWAPS:
        width, height = height, width
    return JpegInfo(width, height, count, int(fmt), marker, precision, orientation)


def check_decodable(info: JpegInfo) -> None:
    """What JPEGD refuses: progressive, lossless, arithmetic, 12-bit, CMYK and 4:1:1 pictures (148052)."""
    if info.sof not in _DECODABLE_SOF:
        raise AclError(AclCode.ACL_ERROR_UNSUPPORTED_JPEG, f"JPEG frame type SOF{info.sof - 0xC0} is not baseline")
    if info.precision != 8:
        raise AclError(AclCode.ACL_ERROR_UNSUPPORTED_JPEG, f"{info.precision}-bit JPEG samples")
    if info.format in (JpegFormat.UNKNOWN, JpegFormat.YUV411):
        raise AclError(AclCode.ACL_ERROR_UNSUPPORTED_JPEG, f"JPEG of {info.components} components, this sampling")


def _load(data: bytes, fmt: str) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image = Image.open(io.BytesIO(data), formats=[fmt])
            if fmt == "JPEG":
                image.draft("YCbCr", None)
            image.load()
            return image
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, struct.error, EOFError) as exc:
        raise AclError(BAD_DATA, f"{fmt} data does not decode: {exc}") from None


_AV_SUBSAMPLING = {"420p": (2, 2), "422p": (2, 1), "444p": (1, 1), "440p": (1, 2)}


def _av_frame(data: bytes) -> av.VideoFrame:
    try:
        context = av.CodecContext.create("mjpeg", "r")
        context.thread_count = 1  # one picture: frame threads would only hold it back until a flush
        context.options = {"err_detect": "explode"}
        frames = context.decode(av.Packet(data)) or context.decode(None)
    except av.error.FFmpegError as exc:
        raise AclError(BAD_DATA, f"JPEG data does not decode: {exc}") from None
    if not frames:
        raise AclError(BAD_DATA, "JPEG data decodes to no picture")
    return frames[0]


def _plane(frame: av.VideoFrame, index: int, rows: int, cols: int) -> np.ndarray:
    plane = frame.planes[index]
    return np.frombuffer(plane, np.uint8).reshape(-1, plane.line_size)[:rows, :cols]


def _resample_chroma(plane: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    if plane.shape == shape:
        return plane
    shrink = plane.shape[0] >= shape[0] and plane.shape[1] >= shape[1]
    method = Image.Resampling.BOX if shrink else Image.Resampling.BILINEAR
    return np.asarray(Image.fromarray(np.ascontiguousarray(plane)).resize((shape[1], shape[0]), method))


def _check_decoded(info: JpegInfo, width: int, height: int) -> None:
    """The picture a codec decoded has the geometry the header walk found (data with a second frame header,
    which a codec obeys, does not): anything else would leave part of the output unwritten."""
    if (width, height) != (info.width, info.height):
        raise AclError(
            BAD_DATA, f"JPEG frame header says {info.width}x{info.height}, its data decodes to {width}x{height}"
        )


def decode_jpeg(data: bytes, info: JpegInfo, width: int, height: int, sub: tuple[int, int]) -> Planes:
    """The top-left ``width`` x ``height`` pixels of the JPEG, chroma at ``sub`` (None for gray)."""
    if info.orientation != 1:
        return _decode_upright(data, info, width, height, sub)
    frame = _av_frame(data)
    _check_decoded(info, frame.width, frame.height)
    name = frame.format.name
    if name.startswith("gray"):
        return Planes(_plane(frame, 0, height, width), None, None, sub)
    source = _AV_SUBSAMPLING.get(name[-4:])
    if source is None or not name.startswith("yuv"):
        raise AclError(AclCode.ACL_ERROR_UNSUPPORTED_JPEG, f"JPEG decodes to {name}")
    shape = chroma_shape(width, height, sub)
    source_shape = chroma_shape(width, height, source)
    u, v = (_plane(frame, i, *source_shape) for i in (1, 2))
    return Planes(_plane(frame, 0, height, width), _resample_chroma(u, shape), _resample_chroma(v, shape), sub)


def _decode_upright(data: bytes, info: JpegInfo, width: int, height: int, sub: tuple[int, int]) -> Planes:
    image = ImageOps.exif_transpose(_load(data, "JPEG"))
    _check_decoded(info, *image.size)
    if image.mode == "L":
        return Planes(np.asarray(image)[:height, :width], None, None, sub)
    if image.mode != "YCbCr":
        raise AclError(AclCode.ACL_ERROR_UNSUPPORTED_JPEG, f"JPEG decodes to {image.mode}, not YCbCr")
    if image.size != (width, height):
        image = image.crop((0, 0, width, height))
    y = np.asarray(image.getchannel(0))
    pixels = np.asarray(image.reduce(sub) if sub != (1, 1) else image)
    return Planes(y, pixels[..., 1], pixels[..., 2], sub)


def quality(level: int) -> int:
    """JPEGE level 1..100 is libjpeg's quality; 0 behaves like the best setting (acl_dvpp.h)."""
    return 100 if level == 0 else level


def encode_jpeg(planes: Planes, level: int) -> bytes:
    """A baseline Huffman JPEG of the planes, with their chroma subsampling (4:2:0 or 4:2:2)."""
    w, h = planes.width, planes.height
    chroma = [
        Image.fromarray(np.ascontiguousarray(p)).resize((w, h), Image.Resampling.NEAREST) for p in (planes.u, planes.v)
    ]  # type: ignore[arg-type]
    image = Image.merge("YCbCr", (Image.fromarray(np.ascontiguousarray(planes.y)), *chroma))
    out = io.BytesIO()
    subsampling = "4:2:0" if planes.sub == (2, 2) else "4:2:2"
    image.save(out, "JPEG", quality=quality(level), subsampling=subsampling)
    return out.getvalue()


# ----- PNG -----


@dataclass(frozen=True)
class PngInfo:
    width: int
    height: int
    components: int
    alpha: bool


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_info(data: bytes) -> PngInfo:
    if data[:8] != _PNG_SIGNATURE or len(data) < 33 or data[12:16] != b"IHDR":
        raise AclError(BAD_DATA, "not a PNG (no signature and IHDR chunk)")
    width, height, _depth, colour = struct.unpack_from(">IIBB", data, 16)
    if width == 0 or height == 0:
        raise AclError(BAD_DATA, "PNG of zero size")
    alpha = colour in (4, 6) or b"tRNS" in data[33 : data.find(b"IDAT")]
    components = {0: 1, 2: 3, 3: 3, 4: 2, 6: 4}.get(colour, 0)
    if components == 0:
        raise AclError(BAD_DATA, f"PNG colour type {colour}")
    if colour == 3 and alpha:
        components = 4
    return PngInfo(width, height, components, alpha)


def decode_png(data: bytes, info: PngInfo, alpha: bool) -> np.ndarray:
    """The PNG as (h, w, 3) RGB or (h, w, 4) RGBA, 8 bits a sample, of the size its header says."""
    image = _load(data, "PNG")
    if image.size != (info.width, info.height):
        raise AclError(BAD_DATA, f"PNG header says {info.width}x{info.height}, its data decodes to {image.size}")
    return np.asarray(image.convert("RGBA" if alpha else "RGB"))
