"""Operators that move data without arithmetic: slices, transposes, reshapes, concatenations."""

from __future__ import annotations

from openacl.ops import kinds as A
from openacl.ops.record import AttrSpec, Builder, Operand, OpRecord, Output, attr_mismatch, input_mismatch

INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)


# ----- Slice: offsets and size (-1: to the end) -----


def _slice_ends(offsets: list[int], size: list[int]) -> list[int]:
    """Each end, clamped to int64 (ONNX clamps ends to the dim anyway): 2**63-1 + 2 must not overflow."""
    ends = [INT64_MAX if n == -1 else start + n for start, n in zip(offsets, size, strict=True)]
    return [min(max(end, INT64_MIN), INT64_MAX) for end in ends]


def _slice(b: Builder, x: Operand, starts: str, ends: str, count: int) -> list[str]:
    if count != x.rank:
        raise input_mismatch(b.op_type, f"offsets and size need one value per dim of x {x.shape}, got {count}")
    return [b.one("Slice", [x.name, starts, ends])]


def _lower_slice(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    x, offsets, size = inputs
    if offsets.const is not None and size.const is not None:
        starts, lengths = b.const_ints(offsets, "offsets"), b.const_ints(size, "size")
        if len(starts) != len(lengths):
            raise input_mismatch(b.op_type, f"{len(starts)} offsets but {len(lengths)} sizes")
        return _slice(b, x, b.int64s(starts), b.int64s(_slice_ends(starts, lengths)), len(starts))
    # Offsets and size known only when the op runs: ends = size == -1 ? INT64_MAX : offsets + size.
    starts, lengths = b.as_int64(offsets), b.as_int64(size)
    to_end = b.one("Equal", [lengths, b.int64s([-1])])
    ends = b.one("Where", [to_end, b.int64s([INT64_MAX]), b.one("Add", [starts, lengths])])
    count = offsets.shape[0] if offsets.rank == 1 and offsets.shape[0] >= 0 else -1
    return _slice(b, x, starts, ends, count)


def _lower_slice_d(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    starts, lengths = list(attrs["offsets"]), list(attrs["size"])
    if len(starts) != len(lengths):
        raise attr_mismatch(b.op_type, f"{len(starts)} offsets but {len(lengths)} sizes")
    return _slice(b, inputs[0], b.int64s(starts), b.int64s(_slice_ends(starts, lengths)), len(starts))


# ----- StridedSlice: TensorFlow's begin/end/strides with masks -----

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _strided(b: Builder, x: Operand, begin: list[int], end: list[int], strides: list[int], attrs: dict) -> list[str]:
    if attrs["ellipsis_mask"] or attrs["new_axis_mask"]:
        raise attr_mismatch(b.op_type, "ellipsis_mask and new_axis_mask are not supported (must be 0)")
    if not len(begin) == len(end) == len(strides) or len(begin) > x.rank:
        raise input_mismatch(b.op_type, f"begin {begin}, end {end}, strides {strides} for x {x.shape}")
    if 0 in strides:
        raise input_mismatch(b.op_type, "a stride of 0")
    starts, ends, steps, squeeze = [], [], [], []
    for axis, (start, stop, step) in enumerate(zip(begin, end, strides, strict=True)):
        bit = 1 << axis
        if attrs["shrink_axis_mask"] & bit:
            starts.append(start)
            ends.append(start + 1 if start != -1 else INT64_MAX)
            steps.append(1)
            squeeze.append(axis)
            continue
        if attrs["begin_mask"] & bit:
            start = 0 if step > 0 else INT64_MAX
        if attrs["end_mask"] & bit:
            stop = INT64_MAX if step > 0 else INT64_MIN
        starts.append(start)
        ends.append(stop)
        steps.append(step)
    axes = list(range(len(starts)))
    y = b.one("Slice", [x.name, b.int64s(starts), b.int64s(ends), b.int64s(axes), b.int64s(steps)])
    return [b.one("Squeeze", [y, b.int64s(squeeze)]) if squeeze else y]


def _lower_strided(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    x, begin, end, strides = inputs
    values = [b.const_ints(operand, what) for operand, what in ((begin, "begin"), (end, "end"), (strides, "strides"))]
    return _strided(b, x, *values, attrs)


def _lower_strided_d(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    return _strided(b, inputs[0], list(attrs["begin"]), list(attrs["end"]), list(attrs["strides"]), attrs)


# ----- Transpose, Reshape -----


def _transpose(b: Builder, x: Operand, perm: list[int]) -> list[str]:
    if x.rank == 0:
        raise input_mismatch(b.op_type, "x is a scalar: a transpose needs 1 or more dims")
    if sorted(perm) != list(range(x.rank)):
        raise input_mismatch(b.op_type, f"perm {perm} is not a permutation of x's {x.rank} dims")
    return [b.one("Transpose", [x.name], perm=perm)]


def _lower_transpose(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    x, perm = inputs
    return _transpose(b, x, b.const_ints(perm, "perm"))


def _lower_transpose_d(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    return _transpose(b, inputs[0], list(attrs["perm"]))


def _lower_reshape(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    x, shape = inputs
    if attrs["axis"] != 0 or attrs["num_axes"] != -1:
        raise attr_mismatch(b.op_type, "only axis=0, num_axes=-1 (the whole shape) is supported")
    return [b.one("Reshape", [x.name, b.as_int64(shape)])]


# ----- concatenation -----


def _concat(b: Builder, tensors: list[Operand], axis: int, declared_n: int | None) -> list[str]:
    if declared_n is not None and declared_n != len(tensors):
        raise attr_mismatch(b.op_type, f"N is {declared_n} but {len(tensors)} tensors were given")
    rank = tensors[0].rank
    if not -rank <= axis < rank:
        raise attr_mismatch(b.op_type, f"concat_dim {axis} is outside the inputs' {rank} dims")
    return [b.one("Concat", [t.name for t in tensors], axis=axis)]


def _lower_concat_d(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    return _concat(b, list(inputs), attrs["concat_dim"], attrs["N"])


def _concat_dim(b: Builder, dim: Operand) -> int:
    values = b.const_ints(dim, "concat_dim")
    if len(values) != 1:
        raise input_mismatch(b.op_type, f"concat_dim holds {len(values)} values, not 1")
    return values[0]


def _lower_concat_v2(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    *tensors, dim = inputs
    return _concat(b, tensors, _concat_dim(b, dim), attrs["N"])


def _lower_concat(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    dim, *tensors = inputs
    return _concat(b, tensors, _concat_dim(b, dim), attrs["N"])


def _list(name: str, doc: str = "") -> AttrSpec:
    return AttrSpec(name, A.LIST_INT, onnx="", doc=doc)


_N = AttrSpec("N", A.INT, None, "", "number of tensors; default: as many as given")
_MASK_SPECS = tuple(AttrSpec(name, A.INT, 0, "", "bit i applies to dim i") for name in _MASKS)

RECORDS = (
    OpRecord("Slice", "Slice", ("x", "offsets", "size"), ("y",), (), _lower_slice, "x[offsets : offsets+size]"),
    OpRecord(
        "SliceD", "Slice", ("x",), ("y",), (_list("offsets"), _list("size", "-1: to the end")), _lower_slice_d, ""
    ),
    OpRecord(
        "StridedSlice",
        "Slice",
        ("x", "begin", "end", "strides"),
        ("y",),
        _MASK_SPECS,
        _lower_strided,
        "x[begin:end:strides] with TensorFlow's masks; begin/end/strides const",
    ),
    OpRecord(
        "StridedSliceD",
        "Slice",
        ("x",),
        ("y",),
        (_list("begin"), _list("end"), _list("strides"), *_MASK_SPECS),
        _lower_strided_d,
        "as StridedSlice, begin/end/strides attributes",
    ),
    OpRecord("Transpose", "Transpose", ("x", "perm"), ("y",), (), _lower_transpose, "perm const"),
    OpRecord("TransposeD", "Transpose", ("x",), ("y",), (_list("perm"),), _lower_transpose_d, ""),
    OpRecord(
        "Reshape",
        "Reshape",
        ("x", "shape"),
        ("y",),
        (AttrSpec("axis", A.INT, 0), AttrSpec("num_axes", A.INT, -1)),
        _lower_reshape,
        "ONNX Reshape: 0 copies x's dim, -1 is inferred",
    ),
    OpRecord(
        "ConcatD",
        "Concat",
        ("x*",),
        ("y",),
        (AttrSpec("concat_dim", A.INT, onnx="axis"), _N),
        _lower_concat_d,
        "joins the tensors along concat_dim",
    ),
    OpRecord(
        "ConcatV2D", "Concat", ("x*",), ("y",), (AttrSpec("concat_dim", A.INT, onnx="axis"), _N), _lower_concat_d, ""
    ),
    OpRecord("ConcatV2", "Concat", ("x*", "concat_dim"), ("y",), (_N,), _lower_concat_v2, "concat_dim const, last"),
    OpRecord("Concat", "Concat", ("concat_dim", "x*"), ("y",), (_N,), _lower_concat, "concat_dim const, first"),
)
