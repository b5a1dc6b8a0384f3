"""AIPP: image preprocessing (format conversion, crop, CSC, normalisation, padding) on the CPU before the
model runs, with the parameters a program sets per execution (dynamic) or the model's config fixes (static).

**Declaring it.** ATC adds AIPP from its ``--insert_op_conf`` file; an ONNX model declares the same in its
``metadata_props`` under ``insert_op_conf``, the file's text as ATC reads it (:mod:`openacl.model.aipp_config`;
``python -m openacl.model.aipp_embed`` writes a ``.cfg`` into a model)::

    aipp_op { aipp_mode: dynamic  related_input_rank: 0  max_src_image_size: 150528 }
    aipp_op { aipp_mode: static  input_format: YUV420SP_U8  src_image_size_w: 416  src_image_size_h: 416
              csc_switch: true  matrix_r0c0: 256 ...  var_reci_chn_0: 0.0039216 ... }

One ``aipp_op`` block per AIPP'd input, every block of the same ``aipp_mode`` (as ATC requires);
``related_input_rank`` (default 0) is the graph input it feeds. The input must be 4-D with 1 or 3 channels,
NCHW unless the metadata key ``input_format`` (ATC's option) is ``NHWC`` (or image-size gears show NHWC); its
dtype is what the AIPP writes (float32 / float16; uint8 / int8 are rounded and clipped). Dynamic: the input is
static; ``max_src_image_size`` is the largest source image in bytes (default: 4 bytes a pixel of the input's
N×H×W, what XRGB8888 needs without a crop); no gears. Static: ATC's fields (``input_format``,
``src_image_size_w/h`` (0: the model input's size less the padding), ``crop`` with ``load_start_pos_w/h`` and
``crop_size_w/h`` (0: the input's size), ``padding`` with ``*_padding_size``, ``csc_switch`` with
``matrix_rXcY`` / ``output_bias_N`` / ``input_bias_N`` (none given: ATC's BT.601 defaults for the direction),
``rbuv_swap_switch``, ``ax_swap_switch``, ``mean_chn_N``, ``min_chn_N``, ``var_reci_chn_N``), checked at load
as a dynamic parameter set is at ``set_input_aipp``; ``resize``, ``single_line_mode`` and a non-zero
``padding_value`` are refused. Static AIPP takes batch gears (the gear's batch of images) and image-size gears
(the gear is the source size: no crop, padding or source size then), not ``dynamic_dims``, as ATC. A bad
declaration fails the load with ``ACL_ERROR_PARSE_MODEL`` naming the rule.

**What a static-AIPP model describes.** As CANN: the input takes the source images, NHWC uint8
``[N, src_h, src_w, C]`` (``-1`` where a gear decides), sized as the source (``N × src_w × src_h × 3 / 2`` for
YUV420SP); ``get_aipp_type`` is ``ACL_DATA_WITH_STATIC_AIPP`` with no attached input; ``get_first_aipp_info``
gives the configuration and, per gear, the source and output dims.

**What a dynamic-AIPP model describes.** The AIPP'd input takes the raw image (uint8 bytes), sized
``max_src_image_size``; after the graph's inputs comes one ``ascend_dynamic_aipp_data`` input per ``aipp_op``
(uint8, ``64 + 96 × N`` bytes: CANN's ``kAippDynamicPara`` with one batch part per image). ``get_aipp_type``
reports the image input as ``ACL_DATA_WITH_DYNAMIC_AIPP`` attached to that data input, and the data input as
``ACL_DYNAMIC_AIPP_NODE``.

**Setting it.** ``create_aipp(N)`` and the ``set_aipp_*`` setters fill a parameter set; ``set_input_aipp`` (the
data input's index) or ``set_aipp_by_input_index`` (the image input's index) checks it as CANN's
``AippParamsCheck`` does and writes it into the data input's buffer in CANN's byte layout. An execution reads
the parameters back from that buffer when it is called (so device memory, not a hidden setting, decides, as on
an NPU) and the image when it runs (after any memcpy queued before it).

**What runs**, per image, in CANN's order: decode the source format (YUV420SP_U8 as NV12: Y plane, then UV
interleaved, chroma upsampled by repetition; RGB888_U8; XRGB8888_U8 as A,R,G,B bytes, R,G,B,A with
``ax_swap_switch``, the A/X channel dropped; YUV400_U8 as one channel); ``rbuv_swap_switch`` swaps U/V or R/B;
crop; CSC with the fixed-point matrix in CANN's two documented forms (from YUV ``(M · (in − input_bias)) >> 8``,
from RGB ``((M · in) >> 8) + output_bias``; an arithmetic shift, clamped to 0..255);
normalisation ``(pixel − mean_chn − min_chn) × var_reci_chn`` per channel (mean an int16, min and var_reci
half floats as CANN stores them; defaults 0, 0, 1.0); padding with 0 on the four sides; then NCHW or NHWC.
Only YUV420SP_U8, XRGB8888_U8, RGB888_U8 and YUV400_U8 are accepted, as CANN accepts on its inference chips;
``scf`` (resize) is refused as CANN's dynamic AIPP refuses it.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from openacl.dtypes import acl_from_numpy
from openacl.errors import AclCode, AclError
from openacl.model import aipp_config, dynamic
from openacl.model.aipp_config import METADATA_KEY
from openacl.model.dataset import datasets
from openacl.runtime import memory
from openacl.runtime.buffers import DataBuffer, data_buffers
from openacl.runtime.handles import HandleTable

AIPP_INPUT_NAME = "ascend_dynamic_aipp_data"  # ACL_DYNAMIC_AIPP_NAME

# aclAippInputFormat
YUV420SP_U8, XRGB8888_U8, RGB888_U8, YUV400_U8 = 1, 2, 3, 4
SUPPORTED_FORMATS = (YUV420SP_U8, XRGB8888_U8, RGB888_U8, YUV400_U8)
# aclmdlInputAippType
ACL_DATA_WITHOUT_AIPP, ACL_DATA_WITH_STATIC_AIPP, ACL_DATA_WITH_DYNAMIC_AIPP, ACL_DYNAMIC_AIPP_NODE = 0, 1, 2, 3
ACL_INVALID_NODE_INDEX = 0xFFFFFFFF

MAX_BATCH = 127  # kAippDynamicPara's batchNum is an int8
_HEAD = struct.Struct("<BbbbB3xii9h6x6B2x16x")  # 64 bytes
_BATCH = struct.Struct("<bbbb4x4i4i4i4h4H4H16x")  # 96 bytes
HEAD_SIZE, BATCH_SIZE = _HEAD.size, _BATCH.size

_PARSE = AclCode.ACL_ERROR_PARSE_MODEL
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
_OUTPUT_DTYPES = (np.float32, np.float16, np.uint8, np.int8)


def data_size(batch: int) -> int:
    """``get_aipp_data_size``: bytes of the parameters of ``batch`` images."""
    if batch == 0:
        raise AclError(_INVALID, "AIPP batch size 0")
    return HEAD_SIZE + BATCH_SIZE * batch


# ----- declaring AIPP in a model -----


@dataclass(frozen=True)
class AippInput:
    """One AIPP: the graph input it feeds and the model-input shape it must produce (``-1`` where a gear decides).

    ``static`` is a static AIPP's parameters, for one image (``src_w``/``src_h`` 0 when image-size gears give
    them); None for a dynamic AIPP, whose parameters come with each execution."""

    related: int
    data_index: int  # the ascend_dynamic_aipp_data input's index among the described inputs (-1: static)
    max_src_size: int  # bytes of the largest source (a static AIPP's: on its largest gear)
    batch: int
    height: int
    width: int
    channels: int
    nhwc: bool
    dtype: np.dtype
    name: str
    static: AippParams | None = None

    @property
    def data_size(self) -> int:
        return data_size(self.batch)

    @property
    def dims(self) -> list[int]:
        if self.nhwc:
            return [self.batch, self.height, self.width, self.channels]
        return [self.batch, self.channels, self.height, self.width]

    @property
    def src_dims(self) -> tuple[int, ...]:
        """A static AIPP's source as CANN describes the input: NHWC, the source image's height and width."""
        assert self.static is not None
        return (self.batch, self.static.src_h or -1, self.static.src_w or -1, self.channels)


@dataclass(frozen=True)
class DeclaredAipp:
    """Every AIPP a model declares; all static or all dynamic, as ATC requires."""

    inputs: tuple[AippInput, ...]

    def by_related(self, index: int) -> AippInput | None:
        return next((item for item in self.inputs if item.related == index), None)

    def by_data_index(self, index: int) -> AippInput | None:
        return next((item for item in self.inputs if item.data_index == index and item.static is None), None)


def _output_layout(shape: tuple[int, ...], nhwc: bool) -> tuple[int, int, int, int]:
    """(N, H, W, C) of a 4-D model input; ``-1`` where a gear decides."""
    return (shape[0], shape[1], shape[2], shape[3]) if nhwc else (shape[0], shape[2], shape[3], shape[1])


def declared(
    metadata: dict[str, str],
    names: Sequence[str],
    shapes: Sequence[tuple[int, ...]],
    gears: dynamic.Gears | None = None,
    dtypes=None,
) -> DeclaredAipp | None:
    """The AIPPs a model's metadata declares for its graph inputs ``names`` of ``shapes``, or None."""
    if METADATA_KEY not in metadata:
        return None
    layout = dynamic.layout_of(metadata)
    if layout not in (None, "NCHW", "NHWC"):
        raise AclError(_PARSE, f"metadata {dynamic.LAYOUT_KEY}={layout}: AIPP writes NCHW or NHWC")
    items: list[AippInput] = []
    fields_of = aipp_config.blocks(metadata[METADATA_KEY])
    modes = {fields.get("aipp_mode", "") for fields in fields_of}
    for mode in modes:
        if mode not in ("static", "dynamic"):
            raise AclError(_PARSE, f"metadata {METADATA_KEY}: aipp_mode {mode!r}, not static or dynamic")
    if len(modes) > 1:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: the aipp_mode of every aipp_op must be the same")
    static = modes == {"static"}
    if not static and gears is not None:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: openacl does not combine dynamic AIPP with gears")
    if static and gears is not None and gears.kind is dynamic.Kind.DIMS:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: ATC does not combine AIPP with dynamic_dims")
    for number, fields in enumerate(fields_of):
        related = aipp_config.integer(fields, "related_input_rank", 0)
        if not 0 <= related < len(names):
            raise AclError(_PARSE, f"metadata {METADATA_KEY}: related_input_rank {related}, the model has {len(names)}")
        if any(item.related == related for item in items):
            raise AclError(_PARSE, f"metadata {METADATA_KEY}: two aipp_op blocks for input {related}")
        shape = tuple(shapes[related])
        nhwc = dynamic.is_nhwc(layout, shape)
        geared = gears is not None and any(d < 0 for d in shape)
        if len(shape) != 4 or (any(d <= 0 for d in shape) and not geared):
            raise AclError(_PARSE, f"AIPP input {names[related]!r} {list(shape)} must be static and 4-D")
        batch, height, width, channels = _output_layout(shape, nhwc)
        if channels not in (1, 3):
            raise AclError(_PARSE, f"AIPP input {names[related]!r} {list(shape)} has {channels} channels, not 1 or 3")
        if batch > MAX_BATCH:
            raise AclError(_PARSE, f"AIPP input {names[related]!r}: batch {batch} is over {MAX_BATCH}")
        dtype = np.dtype(dtypes[related]) if dtypes is not None else np.dtype(np.float32)
        if dtype.type not in _OUTPUT_DTYPES:
            raise AclError(_PARSE, f"AIPP input {names[related]!r} is {dtype}; AIPP writes float32/16, uint8, int8")
        item = AippInput(related, -1, 0, batch, height, width, channels, nhwc, dtype, names[related])
        if static:
            params = static_params(fields, item, gears)
            largest = max(src_size(static_run(params, on[related], nhwc)) for on in _gear_shapes(shapes, gears))
            items.append(dataclasses.replace(item, max_src_size=largest, static=params))
            continue
        max_src = aipp_config.integer(fields, "max_src_image_size", batch * height * width * 4)
        if max_src <= 0:
            raise AclError(_PARSE, f"metadata {METADATA_KEY}: max_src_image_size {max_src} must be positive")
        items.append(dataclasses.replace(item, data_index=len(names) + number, max_src_size=max_src))
    return DeclaredAipp(tuple(items))


def _gear_shapes(shapes: Sequence[tuple[int, ...]], gears: dynamic.Gears | None) -> list[tuple[tuple[int, ...], ...]]:
    """The graph inputs' shapes on every gear (the declared ones when there are no gears)."""
    if gears is None:
        return [tuple(tuple(s) for s in shapes)]
    return [gears.shapes(gear) for gear in gears.gears]


# ----- static AIPP: the parameters an ATC config fixes -----

FORMAT_NAMES = {"YUV420SP_U8": YUV420SP_U8, "XRGB8888_U8": XRGB8888_U8, "RGB888_U8": RGB888_U8, "YUV400_U8": YUV400_U8}
#: ATC's CSC defaults when a config switches CSC on and gives no matrix (BT.601 video range): YUV to RGB with
#: input bias 16, 128, 128; from RGB, RGB to YUV with output bias 16, 128, 128.
_CSC_FROM_YUV = ((298, 516, 0, 298, -100, -208, 298, 0, 409), (0, 0, 0), (16, 128, 128))
_CSC_FROM_RGB = ((66, 129, 25, -38, -74, 112, 112, -94, -18), (16, 128, 128), (0, 0, 0))
_MATRIX_KEYS = tuple(f"matrix_r{r}c{c}" for r in range(3) for c in range(3))


def _values(fields: dict[str, str], keys: Sequence[str], default: Sequence[int]) -> tuple[int, ...]:
    """A group of fields (a matrix, a bias): ATC's default for the group when none of them is given."""
    if not any(key in fields for key in keys):
        return tuple(default)
    return tuple(aipp_config.integer(fields, key, 0) for key in keys)


def static_params(fields: dict[str, str], item: AippInput, gears: dynamic.Gears | None) -> AippParams:
    """One ``aipp_op`` block of ``aipp_mode: static`` as a one-image parameter set, checked as ATC checks it
    against the model input ``item`` (``ACL_ERROR_PARSE_MODEL`` naming the first rule broken)."""
    where = f"metadata {METADATA_KEY} (input {item.related})"
    name = fields.get("input_format", "")
    if name not in FORMAT_NAMES:
        raise AclError(_PARSE, f"{where}: input_format {name!r}; openacl runs {', '.join(FORMAT_NAMES)}")
    fmt = FORMAT_NAMES[name]
    for unsupported in ("resize", "single_line_mode"):
        if aipp_config.switch(fields, unsupported):
            raise AclError(_PARSE, f"{where}: {unsupported} is not supported (an inference chip's AIPP has none)")
    if aipp_config.number(fields, "padding_value", 0.0) != 0.0:
        raise AclError(_PARSE, f"{where}: padding_value must be 0, the value AIPP pads with")
    hw_gears = gears is not None and gears.kind is dynamic.Kind.HW and item.height < 0
    crop, padding = aipp_config.switch(fields, "crop"), aipp_config.switch(fields, "padding")
    src_w = aipp_config.integer(fields, "src_image_size_w", 0)
    src_h = aipp_config.integer(fields, "src_image_size_h", 0)
    if hw_gears and (crop or padding or src_w or src_h):
        raise AclError(_PARSE, f"{where}: with dynamic_image_size the gear is the image: no crop, padding or size")
    sides = ("top", "bottom", "left", "right")
    pads = tuple(aipp_config.integer(fields, f"{side}_padding_size", 0) for side in sides) if padding else (0,) * 4
    inner_w, inner_h = item.width - pads[2] - pads[3], item.height - pads[0] - pads[1]  # what a crop must yield
    if not hw_gears:
        src_w, src_h = src_w or inner_w, src_h or inner_h  # ATC: 0 is the model input's size
    box = (
        aipp_config.integer(fields, "load_start_pos_w", 0),
        aipp_config.integer(fields, "load_start_pos_h", 0),
        aipp_config.integer(fields, "crop_size_w", 0) or inner_w,  # ATC: 0 is the model input's size
        aipp_config.integer(fields, "crop_size_h", 0) or inner_h,
    )
    if fmt == YUV420SP_U8:
        matrix, output_bias, input_bias = _CSC_FROM_YUV
    else:
        matrix, output_bias, input_bias = _CSC_FROM_RGB
    csc = aipp_config.switch(fields, "csc_switch")
    part = BatchParams(
        crop=int(crop),
        padding=int(padding),
        crop_box=box if crop else (0, 0, 0, 0),
        pads=pads,  # type: ignore[arg-type]
        mean=tuple(aipp_config.integer(fields, f"mean_chn_{i}", 0) for i in range(4)),  # type: ignore[arg-type]
        min=_half([aipp_config.number(fields, f"min_chn_{i}", 0.0) for i in range(4)]),  # type: ignore[arg-type]
        var_reci=_half([aipp_config.number(fields, f"var_reci_chn_{i}", 1.0) for i in range(4)]),  # type: ignore[arg-type]
    )
    params = AippParams(
        1,
        input_format=fmt,
        csc=int(csc),
        rbuv_swap=int(aipp_config.switch(fields, "rbuv_swap_switch")),
        ax_swap=int(aipp_config.switch(fields, "ax_swap_switch")),
        src_w=src_w,
        src_h=src_h,
        matrix=_values(fields, _MATRIX_KEYS, matrix),
        output_bias=_values(fields, [f"output_bias_{i}" for i in range(3)], output_bias),  # type: ignore[arg-type]
        input_bias=_values(fields, [f"input_bias_{i}" for i in range(3)], input_bias),  # type: ignore[arg-type]
        batches=[part],
    )
    sizes = gears.gears if hw_gears else [(item.height, item.width)]  # type: ignore[union-attr]
    for height, width in sizes:
        shape = (1, height, width, item.channels) if item.nhwc else (1, item.channels, height, width)
        one = dataclasses.replace(item, batch=1, height=height, width=width, max_src_size=1 << 62)
        try:
            check_for_input(static_run(params, shape, item.nhwc), one)
        except AclError as exc:
            raise AclError(_PARSE, f"{where}: {exc.detail}") from None
    return params


def static_run(params: AippParams, shape: tuple[int, ...], nhwc: bool) -> AippParams:
    """A static AIPP's parameters for one execution on the model-input ``shape`` (its gear's): one part per
    image, and with image-size gears the gear's height and width as the source's."""
    batch, height, width, _ = _output_layout(shape, nhwc)
    if params.src_w == 0:
        params = dataclasses.replace(params, src_w=width, src_h=height)
    return dataclasses.replace(params, batch_size=batch, batches=[params.batches[0]] * batch)


# ----- the parameter set (aclmdlAIPP) -----


def _int8(value: int) -> int:
    """pyACL's ``b`` gives 0..255; CANN stores an int8."""
    return value - 256 if value > 127 else value


@dataclass
class BatchParams:
    crop: int = 0
    scf: int = 0
    padding: int = 0
    crop_box: tuple[int, int, int, int] = (0, 0, 0, 0)  # start w, start h, size w, size h
    scf_sizes: tuple[int, int, int, int] = (0, 0, 0, 0)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, bottom, left, right
    mean: tuple[int, int, int, int] = (0, 0, 0, 0)
    min: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    var_reci: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)


@dataclass
class AippParams:
    """One ``aclmdlAIPP``; every field as CANN stores it (min and var_reci rounded to half floats on write)."""

    batch_size: int
    input_format: int = 0
    csc: int = 0
    rbuv_swap: int = 0
    ax_swap: int = 0
    src_w: int = 0
    src_h: int = 0
    matrix: tuple[int, ...] = (0,) * 9
    output_bias: tuple[int, int, int] = (0, 0, 0)
    input_bias: tuple[int, int, int] = (0, 0, 0)
    batches: list[BatchParams] = field(default_factory=list)

    def batch(self, index: int) -> BatchParams:
        if not 0 <= index < self.batch_size:
            raise AclError(_INVALID, f"AIPP batch index {index} is not below the batch size {self.batch_size}")
        return self.batches[index]


params_table: HandleTable[AippParams] = HandleTable("AIPP parameter set")


def create(batch_size: int) -> int:
    if not 1 <= batch_size <= MAX_BATCH:
        raise AclError(_INVALID, f"AIPP batch size {batch_size} is not in 1..{MAX_BATCH}")
    return params_table.add(AippParams(batch_size, batches=[BatchParams() for _ in range(batch_size)]))


def destroy(handle: int) -> None:
    params_table.remove(handle)


def get(handle: int) -> AippParams:
    return params_table.get(handle)


def set_input_format(handle: int, fmt: int) -> None:
    get(handle).input_format = fmt


def set_csc(handle: int, switch: int, matrix: Sequence[int], output_bias: Sequence[int], input_bias: Sequence[int]):
    params = get(handle)
    params.csc, params.matrix = _int8(switch), tuple(matrix)
    params.output_bias, params.input_bias = tuple(output_bias), tuple(input_bias)  # type: ignore[assignment]


def set_rbuv_swap(handle: int, switch: int) -> None:
    get(handle).rbuv_swap = _int8(switch)


def set_ax_swap(handle: int, switch: int) -> None:
    get(handle).ax_swap = _int8(switch)


def set_src_image_size(handle: int, width: int, height: int) -> None:
    params = get(handle)
    params.src_w, params.src_h = width, height


def set_crop(handle: int, switch: int, start_w: int, start_h: int, width: int, height: int, index: int) -> None:
    part = get(handle).batch(index)
    part.crop, part.crop_box = _int8(switch), (start_w, start_h, width, height)


def set_scf(handle: int, switch: int, in_w: int, in_h: int, out_w: int, out_h: int, index: int) -> None:
    part = get(handle).batch(index)
    part.scf, part.scf_sizes = _int8(switch), (in_w, in_h, out_w, out_h)


def set_padding(handle: int, switch: int, top: int, bottom: int, left: int, right: int, index: int) -> None:
    part = get(handle).batch(index)
    part.padding, part.pads = _int8(switch), (top, bottom, left, right)


def set_mean(handle: int, values: Sequence[int], index: int) -> None:
    get(handle).batch(index).mean = tuple(values)  # type: ignore[assignment]


_HALF_MAX = 65504.0


def _half(values: Sequence[float]) -> tuple[float, ...]:
    """CANN's float → fp16 conversion: rounded, and saturated to the largest finite half (inf and NaN too)."""
    out = []
    for value in values:
        if math.isnan(value) or math.isinf(value):
            value = math.copysign(_HALF_MAX, value)
        out.append(float(np.float16(min(max(value, -_HALF_MAX), _HALF_MAX))))
    return tuple(out)


def set_min(handle: int, values: Sequence[float], index: int) -> None:
    get(handle).batch(index).min = _half(values)  # type: ignore[assignment]


def set_var_reci(handle: int, values: Sequence[float], index: int) -> None:
    get(handle).batch(index).var_reci = _half(values)  # type: ignore[assignment]


# ----- CANN's byte layout -----


def _fp16_bits(values: Sequence[float]) -> list[int]:
    return [int(v) for v in np.asarray(values, dtype=np.float16).view(np.uint16)]


def encode(params: AippParams) -> bytes:
    head = _HEAD.pack(
        params.input_format & 0xFF,
        params.csc,
        params.rbuv_swap,
        params.ax_swap,
        params.batch_size,
        params.src_w,
        params.src_h,
        *params.matrix,
        *params.output_bias,
        *params.input_bias,
    )
    parts = [
        _BATCH.pack(
            part.crop,
            part.scf,
            part.padding,
            0,
            *part.crop_box,
            *part.scf_sizes,
            *part.pads,
            *part.mean,
            *_fp16_bits(part.min),
            *_fp16_bits(part.var_reci),
        )
        for part in params.batches
    ]
    return head + b"".join(parts)


def decode(raw: bytes) -> AippParams:
    head = _HEAD.unpack_from(raw, 0)
    batch = head[4]
    params = AippParams(
        batch,
        input_format=head[0],
        csc=head[1],
        rbuv_swap=head[2],
        ax_swap=head[3],
        src_w=head[5],
        src_h=head[6],
        matrix=tuple(head[7:16]),
        output_bias=tuple(head[16:19]),  # type: ignore[arg-type]
        input_bias=tuple(head[19:22]),  # type: ignore[arg-type]
    )
    for index in range(min(batch, (len(raw) - HEAD_SIZE) // BATCH_SIZE)):
        f = _BATCH.unpack_from(raw, HEAD_SIZE + index * BATCH_SIZE)
        halves = np.asarray(f[20:28], dtype=np.uint16).view(np.float16).astype(float)
        params.batches.append(
            BatchParams(
                f[0],
                f[1],
                f[2],
                tuple(f[4:8]),
                tuple(f[8:12]),
                tuple(f[12:16]),
                tuple(f[16:20]),
                tuple(halves[:4]),
                tuple(halves[4:]),
            )
        )
    return params


# ----- CANN's checks -----


def src_size(params: AippParams) -> int:
    """Bytes of the source images (CANN's ``GetSrcImageSize``)."""
    pixels = params.src_w * params.src_h
    per_image = {YUV420SP_U8: pixels * 3 // 2, XRGB8888_U8: pixels * 4, RGB888_U8: pixels * 3, YUV400_U8: pixels}
    return per_image.get(params.input_format, 0) * params.batch_size


def output_hw(params: AippParams, part: BatchParams) -> tuple[int, int]:
    """(height, width) one image comes out at: cropped or whole, plus its padding."""
    width, height = (part.crop_box[2], part.crop_box[3]) if part.crop == 1 else (params.src_w, params.src_h)
    if part.padding == 1:
        top, bottom, left, right = part.pads
        width, height = width + left + right, height + top + bottom
    return height, width


def check(params: AippParams) -> None:
    """CANN's ``AippParamsCheck`` for a dynamic AIPP: ``ACL_ERROR_INVALID_PARAM`` naming the first rule broken."""
    fmt = params.input_format
    if fmt not in SUPPORTED_FORMATS:
        raise AclError(_INVALID, f"AIPP input format {fmt}: YUV420SP_U8, XRGB8888_U8, RGB888_U8 or YUV400_U8 (1-4)")
    if fmt == YUV400_U8 and params.csc == 1:
        raise AclError(_INVALID, "AIPP: YUV400 does not take a CSC")
    if params.src_w <= 0 or params.src_h <= 0:
        raise AclError(_INVALID, f"AIPP source image size {params.src_w}x{params.src_h} must be set")
    if fmt == YUV420SP_U8 and (params.src_w % 2 or params.src_h % 2):
        raise AclError(_INVALID, f"AIPP: YUV420SP source {params.src_w}x{params.src_h} must be even")
    first = None
    for number, part in enumerate(params.batches[: params.batch_size]):
        if part.scf == 1:
            raise AclError(_INVALID, "AIPP: dynamic AIPP does not support scf (resize)")
        if part.crop == 1:
            start_w, start_h, width, height = part.crop_box
            if start_w < 0 or start_h < 0 or width <= 0 or height <= 0:
                raise AclError(_INVALID, f"AIPP batch {number}: crop {part.crop_box} is empty or negative")
            if start_w + width > params.src_w or start_h + height > params.src_h:
                raise AclError(_INVALID, f"AIPP batch {number}: crop {part.crop_box} leaves the source image")
            if fmt == YUV420SP_U8 and (start_w % 2 or start_h % 2):
                raise AclError(_INVALID, f"AIPP batch {number}: YUV420SP crop start must be even")
        if part.padding == 1 and min(part.pads) < 0:
            raise AclError(_INVALID, f"AIPP batch {number}: negative padding {part.pads}")
        size = output_hw(params, part)
        if first is not None and size != first:
            raise AclError(_INVALID, f"AIPP batch {number} comes out {size}, batch 0 {first}: they must agree")
        first = size


def check_for_input(params: AippParams, item: AippInput) -> None:
    """The checks against the model (CANN's ``GetAndCheckAippParams``): batch, output size, source size."""
    check(params)
    if params.batch_size != item.batch:
        raise AclError(_INVALID, f"AIPP batch size {params.batch_size}, the model's input has batch {item.batch}")
    out = output_hw(params, params.batches[0])
    if out != (item.height, item.width):
        raise AclError(_INVALID, f"AIPP output {out[0]}x{out[1]}, the model's input is {item.height}x{item.width}")
    need = src_size(params)
    if need > item.max_src_size:
        raise AclError(_INVALID, f"AIPP source images of {need} bytes exceed max_src_image_size {item.max_src_size}")
    channels = 1 if params.input_format == YUV400_U8 else 3
    if channels != item.channels:
        raise AclError(_INVALID, f"AIPP makes {channels} channels, the model's input {item.name!r} has {item.channels}")


# ----- descriptions: get_aipp_type and get_first_aipp_info -----


def _check_index(model, index: int) -> None:
    if not 0 <= index < len(model.acl_inputs):
        raise AclError(_INVALID, f"model {model.id} has {len(model.acl_inputs)} inputs, no {index}")


def aipp_type(model, index: int) -> tuple[int, int]:
    """``get_aipp_type``: (type, index of the attached AIPP data input or ACL_INVALID_NODE_INDEX)."""
    _check_index(model, index)
    declared_aipp: DeclaredAipp | None = model.aipp
    if declared_aipp is not None:
        item = declared_aipp.by_related(index)
        if item is not None and item.static is not None:
            return ACL_DATA_WITH_STATIC_AIPP, ACL_INVALID_NODE_INDEX
        if item is not None:
            return ACL_DATA_WITH_DYNAMIC_AIPP, item.data_index
        if declared_aipp.by_data_index(index) is not None:
            return ACL_DYNAMIC_AIPP_NODE, ACL_INVALID_NODE_INDEX
    return ACL_DATA_WITHOUT_AIPP, ACL_INVALID_NODE_INDEX


def _io_dims(name: str, dims: Sequence[int]) -> dict:
    return {"name": name, "dimCount": len(dims), "dims": list(dims)}


def _config_info(params: AippParams | None) -> dict:
    """pyACL's configuration keys (it leaves out matrixR0C2, R2C0 and R2C1): a static AIPP's values, a dynamic
    AIPP's zeros (CANN reports what the model file fixed, which for dynamic AIPP is nothing)."""
    p = params if params is not None else AippParams(1, batches=[BatchParams(var_reci=(0.0,) * 4)])
    part = p.batches[0]
    m = p.matrix
    return {
        "inputFormat": p.input_format, "srcImageSizeW": p.src_w, "srcImageSizeH": p.src_h,
        "cropSwitch": part.crop, "loadStartPosW": part.crop_box[0], "loadStartPosH": part.crop_box[1],
        "cropSizeW": part.crop_box[2], "cropSizeH": part.crop_box[3],
        "resizeSwitch": 0, "resizeOutputW": 0, "resizeOutputH": 0,
        "paddingSwitch": part.padding, "topPaddingSize": part.pads[0], "bottomPaddingSize": part.pads[1],
        "leftPaddingSize": part.pads[2], "rightPaddingSize": part.pads[3],
        "cscSwitch": p.csc, "rbuvSwapSwitch": p.rbuv_swap, "axSwapSwitch": p.ax_swap, "singleLineMode": 0,
        "matrixR0C0": m[0], "matrixR0C1": m[1], "matrixR1C0": m[3], "matrixR1C1": m[4], "matrixR1C2": m[5],
        "matrixR2C2": m[8],
        "outputBias0": p.output_bias[0], "outputBias1": p.output_bias[1], "outputBias2": p.output_bias[2],
        "inputBias0": p.input_bias[0], "inputBias1": p.input_bias[1], "inputBias2": p.input_bias[2],
        **{f"meanChn{i}": part.mean[i] for i in range(4)},
        **{f"minChn{i}": float(part.min[i]) for i in range(4)},
        **{f"varReciChn{i}": float(part.var_reci[i]) for i in range(4)},
    }  # fmt: skip


def first_aipp_info(model, index: int) -> dict:
    """``get_first_aipp_info``: the configuration the model fixed (a static AIPP's; zeros for a dynamic one),
    and per gear (one entry without gears) the input's dims before AIPP (the source) and after. ``srcFormat``
    and ``srcDatatype`` are the model input's own, before ATC made it take images. No AIPP there: 145015, as
    GE answers."""
    _check_index(model, index)
    item = model.aipp.by_related(index) if model.aipp is not None else None
    if item is None:
        raise AclError(AclCode.ACL_ERROR_GE_AIPP_NOT_EXIST, f"model {model.id} input {index} has no AIPP configuration")
    info = _config_info(item.static)
    info.update(srcFormat=1 if item.nhwc else 0, srcDatatype=int(acl_from_numpy(item.dtype)), srcDimNum=4)
    info["aippExtend"] = 0
    out_dims = []
    if item.static is None:
        out_size = item.batch * item.height * item.width * item.channels * item.dtype.itemsize
        dims = _io_dims(item.name, item.dims)
        out_dims.append({"srcDims": dims, "srcSize": item.max_src_size, "aippOutdims": dims, "aippOutSize": out_size})
    else:
        for shapes in _gear_shapes([desc.shape for desc in model.inputs], model.gears):
            shape = shapes[item.related]
            run = static_run(item.static, shape, item.nhwc)
            src_dims = (run.batch_size, run.src_h, run.src_w, item.channels)
            out_dims.append(
                {
                    "srcDims": _io_dims(item.name, src_dims),
                    "srcSize": src_size(run),
                    "aippOutdims": _io_dims(item.name, shape),
                    "aippOutSize": math.prod(shape) * item.dtype.itemsize,
                }
            )
    info["shapeCount"] = len(out_dims)
    info["outDims"] = out_dims
    return info


# ----- setting the parameters into a dataset -----


def _buffer_at(dataset: int, index: int) -> DataBuffer:
    buffers = datasets.get(dataset).buffers
    if not 0 <= index < len(buffers):
        raise AclError(_INVALID, f"the input dataset has {len(buffers)} buffers, no index {index}")
    if buffers[index] not in data_buffers:
        raise AclError(_INVALID, f"input buffer {index} was destroyed")
    buffer = data_buffers.get(buffers[index])
    if buffer.addr == 0:
        raise AclError(_INVALID, f"input buffer {index} has no memory")
    return buffer


def set_input_aipp(model, dataset: int, index: int, handle: int) -> None:
    """``set_input_aipp``: ``index`` is the ``ascend_dynamic_aipp_data`` input."""
    params = get(handle)
    datasets.get(dataset)
    _check_index(model, index)
    item = model.aipp.by_data_index(index) if model.aipp is not None else None
    if item is None:
        raise AclError(_INVALID, f"model {model.id} input {index} is not a dynamic AIPP data input")
    check_for_input(params, item)
    buffer = _buffer_at(dataset, index)
    if buffer.size < item.data_size:
        raise AclError(
            AclCode.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID,
            f"AIPP data buffer of {buffer.size} bytes, the parameters take {item.data_size}",
        )
    raw = encode(params)
    memory.write_bytes(buffer.addr, raw, f"AIPP data buffer {index}")  # checked and pinned while written


def set_by_input_index(model, dataset: int, index: int, handle: int) -> None:
    """``set_aipp_by_input_index``: ``index`` is the image input; ``ACL_ERROR_FAILURE`` if it has no dynamic
    AIPP attached, as CANN answers."""
    get(handle)
    buffers = datasets.get(dataset).buffers
    if not 0 <= index < len(buffers):
        raise AclError(_INVALID, f"the input dataset has {len(buffers)} buffers, no index {index}")
    kind, attached = aipp_type(model, index)
    if kind != ACL_DATA_WITH_DYNAMIC_AIPP:
        raise AclError(AclCode.ACL_ERROR_FAILURE, f"model {model.id} input {index} has no dynamic AIPP attached")
    set_input_aipp(model, dataset, attached, handle)


# ----- execution -----


class _Pending:
    """An input computed when the model runs: the AIPP of the image its buffer then holds."""

    __slots__ = ("item", "params", "source")

    def __init__(self, item: AippInput, params: AippParams, source: np.ndarray) -> None:
        self.item, self.params, self.source = item, params, source

    def __call__(self) -> np.ndarray:
        return apply(self.params, self.source, self.item)


def feeds(
    declared_aipp: DeclaredAipp, inputs: list[DataBuffer], shapes: Sequence[tuple[int, ...]] | None = None
) -> dict[int, _Pending]:
    """At ``execute``: each AIPP's parameters (a dynamic one's from its data buffer, checked; a static one's
    for the gear's ``shapes``, the graph inputs' on the gear being run) and a view of each image buffer."""
    out = {}
    for item in declared_aipp.inputs:
        if item.static is not None:
            shape = shapes[item.related] if shapes is not None else tuple(item.dims)
            params = static_run(item.static, shape, item.nhwc)
        else:
            params = _dynamic_params(item, inputs[item.data_index])
        source = inputs[item.related]
        need = src_size(params)
        if source.size < need:
            raise AclError(_INVALID, f"input {item.related}: {need} bytes of source images, buffer has {source.size}")
        out[item.related] = _Pending(item, params, memory.view_array(source.addr, (need,), np.dtype(np.uint8)))
    return out


def _dynamic_params(item: AippInput, data: DataBuffer) -> AippParams:
    if data.size < item.data_size:
        raise AclError(_INVALID, f"AIPP data buffer of {data.size} bytes, the parameters take {item.data_size}")
    raw = memory.read_bytes(data.addr, item.data_size)
    if raw[0] == 0:
        raise AclError(_INVALID, f"input {item.data_index} ({AIPP_INPUT_NAME}): set_input_aipp was never called")
    params = decode(raw)
    check_for_input(params, item)
    return params


def resolve(values: list) -> list:
    """The feeds with every pending AIPP computed (as they are when there is none)."""
    if not any(type(value) is _Pending for value in values):
        return values
    return [value() if type(value) is _Pending else value for value in values]


def _decode_image(params: AippParams, image: np.ndarray) -> np.ndarray:
    """One source image → (H, W, C) int32, channels in the order the CSC matrix reads them."""
    h, w, fmt = params.src_h, params.src_w, params.input_format
    if fmt == YUV420SP_U8:
        y = image[: h * w].reshape(h, w)
        uv = image[h * w : h * w * 3 // 2].reshape(h // 2, w // 2, 2).repeat(2, axis=0).repeat(2, axis=1)
        u, v = uv[..., 0], uv[..., 1]
        channels = np.stack((y, v, u) if params.rbuv_swap == 1 else (y, u, v), axis=-1)
    elif fmt == YUV400_U8:
        channels = image.reshape(h, w, 1)
    else:
        pixels = image.reshape(h, w, 4 if fmt == XRGB8888_U8 else 3)
        if fmt == XRGB8888_U8:
            pixels = pixels[..., 0:3] if params.ax_swap == 1 else pixels[..., 1:4]
        channels = pixels[..., ::-1] if params.rbuv_swap == 1 else pixels
    return channels.astype(np.int32)


def _csc(params: AippParams, pixels: np.ndarray) -> np.ndarray:
    """CANN's two documented forms: from YUV, ``(M · (in − input_bias)) >> 8``; from RGB,
    ``((M · in) >> 8) + output_bias``; clamped to 0..255."""
    matrix = np.asarray(params.matrix, dtype=np.int64).reshape(3, 3)
    values = pixels.astype(np.int64)
    if params.input_format == YUV420SP_U8:
        return np.clip(np.einsum("ij,hwj->hwi", matrix, values - np.asarray(params.input_bias)) >> 8, 0, 255)
    out = (np.einsum("ij,hwj->hwi", matrix, values) >> 8) + np.asarray(params.output_bias, dtype=np.int64)
    return np.clip(out, 0, 255)


def _to_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        return values.astype(dtype)
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


def apply(params: AippParams, source: np.ndarray, item: AippInput) -> np.ndarray:
    """Every image of ``source`` through the AIPP, as the model's input (N, C, H, W) or (N, H, W, C)."""
    per_image = src_size(params) // params.batch_size
    images = []
    for index in range(params.batch_size):
        part = params.batches[index]
        pixels = _decode_image(params, source[index * per_image : (index + 1) * per_image])
        if part.crop == 1:
            start_w, start_h, width, height = part.crop_box
            pixels = pixels[start_h : start_h + height, start_w : start_w + width]
        if params.csc == 1 and pixels.shape[-1] == 3:
            pixels = _csc(params, pixels)
        count = pixels.shape[-1]
        mean = np.asarray(part.mean[:count], dtype=np.float32)
        low = np.asarray(part.min[:count], dtype=np.float32)
        scale = np.asarray(part.var_reci[:count], dtype=np.float32)
        values = (pixels.astype(np.float32) - mean - low) * scale
        if part.padding == 1:
            top, bottom, left, right = part.pads
            values = np.pad(values, ((top, bottom), (left, right), (0, 0)))
        images.append(values if item.nhwc else values.transpose(2, 0, 1))
    return _to_dtype(np.stack(images), item.dtype)
