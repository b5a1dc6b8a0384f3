"""Gears: ATC's dynamic batch, dynamic image size and dynamic dims, declared in an ONNX model's metadata.

ATC compiles one ``.om`` per gear list (``--dynamic_batch_size="1,2,4,8"``, ``--dynamic_image_size="224,224;
448,448"``, ``--dynamic_dims="20,1;40,2"``) and adds one input, ``ascend_mbatch_shape_data``, that carries the
chosen gear. An ONNX model declares the same thing in its ``metadata_props`` under the ATC option's name
(``dynamic_batch_size``, ``dynamic_image_size`` or ``dynamic_dims``, one of them, value in ATC's syntax); the
dynamic dimensions are the inputs' symbolic ones (``-1`` in ``get_input_dims``), as ATC's ``--input_shape``
marks them with ``-1``:

- batch: every dynamic input has exactly one symbolic dimension, its first (N);
- image size: every dynamic input is 4-D with symbolic H and W and nothing else symbolic: NCHW
  (``[n, c, -1, -1]``) or NHWC (``[n, -1, -1, c]``), as the metadata key ``input_format`` (ATC's
  ``--input_format``) says, or as the symbolic dims show when it says nothing;
- dims: each gear gives one value per symbolic dimension, over all inputs in input order.

Gear lists hold 2 to 100 gears of positive, distinct values, as ATC requires; anything else fails the load
with ``ACL_ERROR_PARSE_MODEL`` naming the rule. A model whose inputs have symbolic dimensions but no declared
gears is a dynamic-shape model (ATC's ``--input_shape_range``): no gear input, size 0, and the shape of each
execution is solved from the input buffer's size.

The gear input is ``int64`` with shape ``[n]`` (1 for batch, 2 for HW, the count of symbolic dimensions for
dims), ``8 * n`` bytes, the model's last input, as CANN reports it. ``set_dynamic_*`` writes the gear into
that buffer (u64 values when it holds ``8 * n`` bytes, u32 when it holds only ``4 * n``), and an execution
reads the gear back from it when it is called (also for ``execute_async``), so the device memory, not a
hidden setting, decides the gear, as on an NPU.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from openacl import lazy
from openacl.errors import AclCode, AclError
from openacl.model.dataset import datasets
from openacl.runtime import memory
from openacl.runtime.buffers import DataBuffer, data_buffers

LAYOUT_KEY = "input_format"  # metadata naming the inputs' layout, after ATC's --input_format
LAYOUTS = ("NCHW", "NHWC", "ND", "NCDHW", "NDHWC")  # what ATC's --input_format takes

onnx = lazy.module("onnx")

GEAR_INPUT_NAME = "ascend_mbatch_shape_data"  # ACL_DYNAMIC_TENSOR_NAME
GEAR_INPUT_DTYPE = np.dtype(np.int64)
MIN_GEARS, MAX_GEARS = 2, 100  # ATC's limits on a gear list
MAX_GEAR_VALUE = np.iinfo(GEAR_INPUT_DTYPE).max  # a gear value is a dim and travels in the int64 gear input
MAX_GEAR_DIMS_QUERY = 4096  # pyACL's own limit on get_input_dynamic_dims's gear_count
MAX_DIM_COUNT = 128  # ACL_MAX_DIM_CNT: the dims array of an aclmdlIODims

_PARSE = AclCode.ACL_ERROR_PARSE_MODEL
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
_NOT_A_GEAR = AclCode.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID  # 145013, for every kind of gear
_SHORT_GEAR_BUFFER = AclCode.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID  # 145012

Shape = tuple[int, ...]
Gear = tuple[int, ...]


class Kind(enum.Enum):
    """Which ATC option declared the gears; the value is the metadata key."""

    BATCH = "dynamic_batch_size"
    HW = "dynamic_image_size"
    DIMS = "dynamic_dims"


@dataclass(frozen=True)
class Gears:
    """A model's gears: the declared input shapes (``-1`` where dynamic) and each gear's values."""

    kind: Kind
    gears: tuple[Gear, ...]
    input_shapes: tuple[Shape, ...]  # every graph input, in input order, -1 where dynamic

    @property
    def width(self) -> int:
        """Values per gear: what the gear input holds."""
        return len(self.gears[0])

    @property
    def gear_input_shape(self) -> Shape:
        return (self.width,)

    @property
    def gear_input_size(self) -> int:
        return self.width * GEAR_INPUT_DTYPE.itemsize

    def shapes(self, gear: Gear) -> tuple[Shape, ...]:
        """Every graph input's concrete shape on ``gear``: its ``-1`` dimensions filled from the gear's values."""
        values = iter(gear)
        out = []
        for shape in self.input_shapes:
            if self.kind is not Kind.DIMS:
                values = iter(gear)  # every dynamic input takes the same batch, or the same height and width
            out.append(tuple(next(values) if dim < 0 else dim for dim in shape))
        return tuple(out)

    def check(self, gear: Gear, what: str) -> None:
        """``gear`` must be one of the model's: 145013 otherwise, as GE answers."""
        if gear not in self.gears:
            listed = "; ".join(",".join(map(str, g)) for g in self.gears)
            value = ",".join(map(str, gear))
            raise AclError(_NOT_A_GEAR, f"{what} {value}: not one of the model's {self.kind.value} gears ({listed})")

    @property
    def largest(self) -> Gear:
        """The gear whose inputs take the most bytes (the last such gear on a tie)."""
        return max(reversed(self.gears), key=lambda gear: sum(math.prod(s) for s in self.shapes(gear)))

    def largest_input_shapes(self) -> tuple[Shape, ...]:
        """Per input, its shape on the gear where it is largest: what ``get_input_size_by_index`` sizes."""
        per_gear = [self.shapes(gear) for gear in self.gears]
        return tuple(max(column, key=math.prod) for column in zip(*per_gear, strict=True))


def _dynamic_axes(shape: Shape) -> list[int]:
    return [axis for axis, dim in enumerate(shape) if dim < 0]


def layout_of(metadata: dict[str, str]) -> str | None:
    """The inputs' layout the metadata declares (``input_format``), None when it declares none."""
    if LAYOUT_KEY not in metadata:
        return None
    layout = metadata[LAYOUT_KEY].strip().upper()
    if layout not in LAYOUTS:
        raise AclError(_PARSE, f"metadata {LAYOUT_KEY}={layout!r}: ATC takes {', '.join(LAYOUTS)}")
    return layout


def is_nhwc(layout: str | None, shape: Shape) -> bool:
    """Whether a 4-D input is NHWC: as declared, else when its symbolic dims are H and W of NHWC."""
    if len(shape) != 4:
        return False
    if layout is not None:
        return layout == "NHWC"
    return _dynamic_axes(shape) == [1, 2]


# ----- declaring gears -----


def _parse_gear_list(kind: Kind, text: str) -> tuple[Gear, ...]:
    """ATC's syntax: ``"1,2,4"`` for batch (one value a gear), ``"h,w;h,w"`` and ``"a,b;a,b"`` otherwise."""
    groups = [g.strip() for g in text.strip().strip(";").split(";")] if kind is not Kind.BATCH else None
    try:
        if kind is Kind.BATCH:
            gears = tuple((int(v),) for v in text.strip().strip(",").split(","))
        else:
            gears = tuple(tuple(int(v) for v in group.split(",")) for group in groups or ())
    except ValueError:
        raise AclError(_PARSE, f"metadata {kind.value}={text!r}: gears must be integers") from None
    if not MIN_GEARS <= len(gears) <= MAX_GEARS:
        raise AclError(_PARSE, f"metadata {kind.value}={text!r}: {len(gears)} gears, ATC allows 2 to 100")
    if any(not 0 < v <= MAX_GEAR_VALUE for gear in gears for v in gear):
        raise AclError(_PARSE, f"metadata {kind.value}={text!r}: gear values must be positive int64 values")
    if len(set(gears)) != len(gears):
        raise AclError(_PARSE, f"metadata {kind.value}={text!r}: a gear is listed twice")
    if len({len(gear) for gear in gears}) != 1:
        raise AclError(_PARSE, f"metadata {kind.value}={text!r}: gears have different numbers of values")
    return gears


def _check_inputs(
    kind: Kind, gears: tuple[Gear, ...], names: Sequence[str], shapes: Sequence[Shape], layout: str | None
) -> None:
    dynamic = [(name, shape) for name, shape in zip(names, shapes, strict=True) if _dynamic_axes(shape)]
    if not dynamic:
        raise AclError(_PARSE, f"metadata {kind.value}: no input has a symbolic (-1) dimension")
    for name, shape in dynamic:
        axes = _dynamic_axes(shape)
        if kind is Kind.BATCH and axes != [0]:
            raise AclError(_PARSE, f"{kind.value}: input {name!r} {list(shape)} must be dynamic in its first dim only")
        if kind is Kind.HW and (len(shape) != 4 or axes != ([1, 2] if is_nhwc(layout, shape) else [2, 3])):
            raise AclError(
                _PARSE,
                f"{kind.value}: input {name!r} {list(shape)} must be dynamic in H and W only: NCHW [n, c, -1, -1] "
                f"or NHWC [n, -1, -1, c] (metadata {LAYOUT_KEY}: {layout or 'not given'})",
            )
    if kind is Kind.HW and len(gears[0]) != 2:
        raise AclError(_PARSE, f"{kind.value}: each gear is one height and one width")
    if kind is Kind.DIMS:
        count = sum(len(_dynamic_axes(shape)) for _, shape in dynamic)
        if len(gears[0]) != count:
            raise AclError(_PARSE, f"{kind.value}: each gear needs {count} values, one per symbolic dimension")


def declared(metadata: dict[str, str], names: Sequence[str], shapes: Sequence[Shape]) -> Gears | None:
    """The gears a model's metadata declares for inputs ``names`` of ``shapes``, or None."""
    kinds = [kind for kind in Kind if kind.value in metadata]
    if not kinds:
        return None
    if len(kinds) > 1:
        raise AclError(_PARSE, f"metadata declares {' and '.join(k.value for k in kinds)}: ATC allows only one")
    kind = kinds[0]
    gears = _parse_gear_list(kind, metadata[kind.value])
    _check_inputs(kind, gears, names, shapes, layout_of(metadata))
    return Gears(kind, gears, tuple(tuple(s) for s in shapes))


def output_shapes(proto, input_names: Sequence[str], gears: Gears) -> dict[Gear, list[Shape] | None]:
    """Each gear's output shapes by ONNX shape inference; None for a gear whose outputs it cannot fix."""
    found: dict[Gear, list[Shape] | None] = {}
    for gear in gears.gears:
        fixed = onnx.ModelProto()
        fixed.CopyFrom(proto)
        by_name = dict(zip(input_names, gears.shapes(gear), strict=True))
        for value_info in fixed.graph.input:
            if value_info.name in by_name:
                for dim, size in zip(value_info.type.tensor_type.shape.dim, by_name[value_info.name], strict=True):
                    dim.Clear()
                    dim.dim_value = size
        try:
            inferred = onnx.shape_inference.infer_shapes(fixed, strict_mode=False, data_prop=True)
        except Exception:
            found[gear] = None
            continue
        shapes = []
        for value_info in inferred.graph.output:
            dims = value_info.type.tensor_type.shape.dim
            shape = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in dims)
            shapes.append(shape)
        complete = all(value_info.type.tensor_type.HasField("shape") for value_info in inferred.graph.output)
        found[gear] = shapes if complete and all(d >= 0 for s in shapes for d in s) else None
    return found


# ----- the pyACL dicts -----


def batch_info(gears: Gears | None) -> dict:
    """``get_dynamic_batch``: a model without batch gears has ``batchCount`` 0."""
    batches = [gear[0] for gear in gears.gears] if gears is not None and gears.kind is Kind.BATCH else []
    return {"batchCount": len(batches), "batch": batches}


def hw_info(gears: Gears | None) -> dict:
    """``get_dynamic_hw``: ``[[h, w], ...]``; a model without HW gears has ``hwCount`` 0."""
    hws = [list(gear) for gear in gears.gears] if gears is not None and gears.kind is Kind.HW else []
    return {"hwCount": len(hws), "hw": hws}


def dims_gears(gears: Gears | None) -> tuple[Gear, ...]:
    return gears.gears if gears is not None and gears.kind is Kind.DIMS else ()


def gear_count(gears: Gears | None) -> int:
    """``get_input_dynamic_gear_count``: dims gears only (batch and HW models have 0, as CANN's)."""
    return len(dims_gears(gears))


def full_dims(gears: Gears, gear: Gear) -> list[int]:
    """One dims gear as CANN writes it: every input's shape on that gear, concatenated."""
    return [dim for shape in gears.shapes(gear) for dim in shape]


def dynamic_dims(gears: Gears | None, count: int) -> list[dict]:
    """``get_input_dynamic_dims``: ``count`` dicts (``name`` unused, as CANN says); beyond the model's, empty."""
    if count > MAX_GEAR_DIMS_QUERY:
        raise AclError(_INVALID, f"gear_count {count} is over pyACL's limit {MAX_GEAR_DIMS_QUERY}")
    listed = dims_gears(gears)
    if count < len(listed):
        raise AclError(_INVALID, f"gear_count {count} is smaller than the model's {len(listed)} dims gears")
    out = []
    for i in range(count):
        dims = full_dims(gears, listed[i]) if i < len(listed) else []  # type: ignore[arg-type]
        out.append({"name": "", "dimCount": len(dims), "dims": dims})
    return out


def gear_of_full_dims(gears: Gears, dims: Sequence[int]) -> Gear:
    """The gear a ``set_input_dynamic_dims`` dict names: all inputs' dims, the dynamic ones picked out."""
    if len(dims) > MAX_DIM_COUNT:
        raise AclError(_INVALID, f"dimCount {len(dims)} is over ACL_MAX_DIM_CNT ({MAX_DIM_COUNT})")
    total = sum(len(shape) for shape in gears.input_shapes)
    if len(dims) != total:
        raise AclError(_INVALID, f"dims has {len(dims)} values, the model's inputs have {total} dimensions")
    gear, at = [], 0
    for shape in gears.input_shapes:
        for declared_dim, value in zip(shape, dims[at : at + len(shape)], strict=True):
            if declared_dim < 0:
                gear.append(value)
            elif value != declared_dim:
                raise AclError(_NOT_A_GEAR, f"dims {list(dims)} change a static dimension ({declared_dim})")
        at += len(shape)
    return tuple(gear)


# ----- choosing a gear: the gear buffer -----


def _buffer_at(dataset: int, index: int) -> DataBuffer:
    buffers = datasets.get(dataset).buffers
    if not 0 <= index < len(buffers):
        raise AclError(_INVALID, f"the input dataset has {len(buffers)} buffers, no index {index}")
    buffer = data_buffers.get(buffers[index]) if buffers[index] in data_buffers else None
    if buffer is None:
        raise AclError(_INVALID, f"input buffer {index} was destroyed")
    if buffer.addr == 0:
        raise AclError(_INVALID, f"input buffer {index} has no memory")
    return buffer


def _value_width(buffer_size: int, count: int) -> int:
    """Bytes per gear value in a buffer of ``buffer_size``: 8 (u64) if it holds them, else 4 (u32)."""
    if buffer_size >= 8 * count:
        return 8
    if buffer_size >= 4 * count:
        return 4
    raise AclError(_SHORT_GEAR_BUFFER, f"gear buffer of {buffer_size} bytes cannot hold {count} gear values")


def write_gear(dataset: int, index: int, gears: Gears, gear: Gear, what: str) -> None:
    """``set_dynamic_*``: check the buffer and the gear, then write the gear into the buffer."""
    buffer = _buffer_at(dataset, index)
    gears.check(gear, what)
    width = _value_width(buffer.size, len(gear))
    packed = np.asarray(gear, dtype=np.uint64 if width == 8 else np.uint32).tobytes()
    memory.write_bytes(buffer.addr, packed, f"gear buffer {index}")  # checked and pinned while written


def read_gear(gears: Gears, buffer: DataBuffer) -> Gear:
    """The gear an execution runs on: what the gear buffer holds now (145013 if not a gear: never set)."""
    width = _value_width(buffer.size, gears.width)
    raw = memory.read_bytes(buffer.addr, width * gears.width)
    gear = tuple(int(v) for v in np.frombuffer(raw, dtype=np.uint64 if width == 8 else np.uint32))
    gears.check(gear, f"the gear input ({GEAR_INPUT_NAME}, set by set_dynamic_*) holds")
    return gear


def _gears_of_kind(model, dataset: int, index: int, kind: Kind) -> Gears:
    """The model's gears if they are of ``kind``; 145013 otherwise (GE finds the value in no gear list)."""
    gears: Gears | None = model.gears
    if gears is None or gears.kind is not kind:
        _buffer_at(dataset, index)
        have = "no gears" if gears is None else f"{gears.kind.value} gears"
        raise AclError(_NOT_A_GEAR, f"model {model.id} has {have}, not {kind.value}")
    return gears


def set_gear(model, dataset: int, index: int, kind: Kind, gear: Gear) -> None:
    """``set_dynamic_batch_size`` / ``set_dynamic_hw_size``: write ``gear`` for ``model`` into ``dataset[index]``.

    ``model`` is anything with ``id``, ``gears`` and ``select_gear`` (the gear ``get_cur_output_dims`` reports).
    """
    what = "batch size" if kind is Kind.BATCH else "height,width"
    if any(v == 0 for v in gear):
        raise AclError(_INVALID, f"{what} {','.join(map(str, gear))}: 0 is not a gear")
    gears = _gears_of_kind(model, dataset, index, kind)
    write_gear(dataset, index, gears, gear, what)
    model.select_gear(gear)


def set_full_dims(model, dataset: int, index: int, dims: Sequence[int]) -> None:
    """``set_input_dynamic_dims``: ``dims`` are all inputs' dims, as ``get_input_dynamic_dims`` lists them."""
    gears = _gears_of_kind(model, dataset, index, Kind.DIMS)
    gear = gear_of_full_dims(gears, dims)
    write_gear(dataset, index, gears, gear, "dynamic dims")
    model.select_gear(gear)


def input_range(shape: Shape, gears: Gears | None, input_index: int) -> list[list[int]]:
    """``get_input_dims_range``: fixed dims ``[d, d]``; a gear dim spans its gears; a free one ``[1, -1]``."""
    if gears is not None and input_index < len(gears.input_shapes):
        # Each -1 of the described shape, in order, spans the gears of the graph input's -1 dims, in order: the
        # same dims, or a static AIPP's NHWC source of an NCHW input (N, then H and W in both).
        declared_shape = gears.input_shapes[input_index]
        per_gear = [gears.shapes(gear)[input_index] for gear in gears.gears]
        columns = zip(*per_gear, strict=True)
        spans = iter([[min(c), max(c)] for c, d in zip(columns, declared_shape, strict=True) if d < 0])
        return [next(spans, [1, -1]) if d < 0 else [d, d] for d in shape]
    return [[d, d] if d >= 0 else [1, -1] for d in shape]
