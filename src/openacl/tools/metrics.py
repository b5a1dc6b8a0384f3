"""How far one tensor of the run under test is from its golden tensor, and whether that is too far.

:func:`compare_tensor` gives one :class:`TensorComparison` row for a pair of tensors that
:mod:`openacl.tools.pairing` paired.

Layouts: a device tensor stored in NC1HWC0, NC1HWC0_C04, NDC1HWC0, FRACTAL_Z, FRACTAL_Z_3D or FRACTAL_NZ (or a
plain permutation such as NHWC) is converted to its original format and shape from the header
(:mod:`openacl.dump.layouts`), then to the golden tensor's format when both are plain formats, before any metric. A
tensor that cannot be converted, or whose shape then differs from the golden's (other than by dimensions of 1), is
a row with a ``reason``.

Metrics, per tensor pair ``x`` (from ``a``) and ``y`` (from ``b``, the golden), computed in float64 (complex128
for complex tensors; integers and bools by value; bf16 as the float32 :func:`read_dump` widens it to):

* ``max_abs_error = max |x - y|``.
* ``max_rel_error = max |x - y| / max(|y|, floor)`` with ``floor = max(rms(y), absolute floor of the dtype)``
  (:attr:`Thresholds.floor`: 2**-14, fp16's smallest normal, for fp16 and bf16; 1e-30 for fp32): relative to the golden
  element where it is as large as the tensor's typical value, and relative to that typical value (the RMS of the
  golden tensor) below it. Float noise around a golden zero (after a Relu, a cancelling sum) no longer reads as
  an enormous relative error, yet every element counts.
* ``rel_l2_error = ||x - y|| / max(||y||, floor * sqrt(n))`` (msaccucmp's RelativeEuclideanDistance, floored the
  same way): the error of the tensor as a whole. A 5 % scale error gives 0.05; fp16 rounding gives ~1e-3.
* ``cosine`` = cosine similarity over the elements finite on both sides: 1.0 when both are all zero (or when
  there is no such element), NaN when exactly one side is all zero, else clipped to [-1, 1]. Blind to scale.
* Non-finite values: NaN against NaN and an infinity against the same infinity count as equal (error 0).
  Any other position where either side is NaN or infinite, or where the difference overflows, has an
  infinite absolute and relative error.
* An empty tensor pair (equal shapes) is equal: errors 0, cosine 1.0.

Thresholds (:data:`DEFAULT_THRESHOLDS`) depend on the less precise dtype of the pair (fp16 vs an fp32 golden
is judged as fp16). A compared row ``exceeds`` when ``max_rel_error > max_rel``, ``rel_l2_error > max_rel_l2``,
``cosine < min_cosine``, ``max_abs_error > max_abs`` (only when given: it depends on the tensor's scale), or
``x`` has a NaN where ``y`` does not. Each keyword of :func:`openacl.tools.compare.compare_dumps` overrides one
threshold for every dtype. Rows that were not compared (missing, shape or layout mismatch, unreadable, not numeric)
carry a ``reason``, NaN metrics and never exceed; :attr:`openacl.tools.compare.CompareResult.incomparable` counts
those that are not merely missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from openacl import dtypes
from openacl.dump import layouts
from openacl.dump.reader import TensorInfo

__all__ = [
    "DEFAULT_THRESHOLDS",
    "Judge",
    "TensorComparison",
    "Thresholds",
    "compare_tensor",
    "not_compared",
    "shape_text",
]

_NAN = math.nan
_COMPARABLE_KINDS = frozenset("biufc")
#: Elements per block of the streaming metrics: small enough that a block's temporaries stay in cache.
_BLOCK = 1 << 18


@dataclass(frozen=True)
class Thresholds:
    """When a compared tensor exceeds: see the module docstring. ``max_abs`` ``None`` means not checked."""

    max_rel: float
    max_rel_l2: float
    min_cosine: float
    max_abs: float | None = None
    floor: float = 1e-30  # the absolute floor under the golden RMS in max_rel_error and rel_l2_error

    def exceeded(self, max_abs: float, max_rel: float, rel_l2: float, cosine: float, nan_in_a: bool) -> bool:
        return (
            nan_in_a
            or max_rel > self.max_rel
            or rel_l2 > self.max_rel_l2
            or cosine < self.min_cosine
            or (self.max_abs is not None and max_abs > self.max_abs)
        )


#: Per dtype class of the less precise side. fp16 and bf16 come from healthy device runs (fp32 accumulation,
#: 16-bit storage) measured against an fp32 golden on a Conv/BN/Relu network: fp16 has a margin of 4x over the
#: healthy run while a 5 % error in one layer's weights exceeds ``max_rel_l2`` by 10x; bf16, 8x coarser, about
#: 3x both ways (docs/compare.md). Integers and bools must be equal.
DEFAULT_THRESHOLDS: dict[str, Thresholds] = {
    "float64": Thresholds(max_rel=1e-3, max_rel_l2=1e-4, min_cosine=0.99999, floor=1e-300),
    "float32": Thresholds(max_rel=1e-2, max_rel_l2=1e-3, min_cosine=0.99999, floor=1e-30),
    "float16": Thresholds(max_rel=2e-2, max_rel_l2=5e-3, min_cosine=0.9999, floor=2.0**-14),
    "bfloat16": Thresholds(max_rel=1e-1, max_rel_l2=2e-2, min_cosine=0.999, floor=2.0**-14),
    "integer": Thresholds(max_rel=0.0, max_rel_l2=0.0, min_cosine=1.0, max_abs=0.0, floor=1.0),
}
_PRECISION = ["integer", "float64", "float32", "float16", "bfloat16"]  # from strictest to loosest


@dataclass(frozen=True)
class TensorComparison:
    """One tensor of one operator, compared (``reason == ""``) or not (``reason`` says why; metrics are NaN).

    ``golden_op`` names the golden op when it is not ``op_name`` (paired by structure or a fusion rule).
    """

    op_type: str
    op_name: str
    tensor: str  # "input.0", "output.1", or "-" for a whole file (missing, unreadable)
    shape: tuple[int, ...] | None
    dtype: str | None
    max_abs_error: float
    max_rel_error: float
    cosine: float
    reason: str = ""
    exceeds: bool = False
    rel_l2_error: float = _NAN
    golden_op: str = ""


def shape_text(shape: tuple[int, ...]) -> str:
    inner = ",".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1)


@dataclass(frozen=True)
class _Metrics:
    max_abs: float
    max_rel: float
    rel_l2: float
    cosine: float
    nan_in_a: bool


def _cosine_from(xy: float, xx: float, yy: float) -> float:
    if xx == 0.0 and yy == 0.0:
        return 1.0
    if xx == 0.0 or yy == 0.0:
        return _NAN
    return min(1.0, max(-1.0, xy / math.sqrt(xx * yy)))


def _finite_metrics(x: np.ndarray, y: np.ndarray, absolute_floor: float) -> _Metrics | None:
    """Streaming metrics of two flat real arrays, block by block in float64; ``None`` if any value is not finite.

    Two passes over ``y`` (its RMS is the floor of the relative error) and one over ``x``; no full-size temporary.
    """
    n = x.size
    # The floor needs the golden's RMS only to a few digits: float32 blocks (no conversion of fp32 data), summed
    # in float64. The metrics below are exact float64 sums.
    rough = 0.0
    for start in range(0, n, _BLOCK):
        yb = y[start : start + _BLOCK]
        yb = yb if yb.dtype == np.float32 else yb.astype(np.float32)
        rough += float(np.dot(yb, yb))
    if not math.isfinite(rough):
        return None
    floor = max(math.sqrt(rough / n), absolute_floor)
    yy = 0.0
    max_abs = max_rel = xy = xx = dd = 0.0
    for start in range(0, n, _BLOCK):
        xb = x[start : start + _BLOCK].astype(np.float64)
        yb = y[start : start + _BLOCK].astype(np.float64)
        d = np.subtract(xb, yb)
        dd_block = float(np.dot(d, d))
        xx_block = float(np.dot(xb, xb))
        if not (math.isfinite(dd_block) and math.isfinite(xx_block)):
            return None
        dd += dd_block
        xx += xx_block
        xy += float(np.dot(xb, yb))
        yy += float(np.dot(yb, yb))
        np.abs(d, out=d)
        max_abs = max(max_abs, float(d.max()))
        np.abs(yb, out=yb)
        np.maximum(yb, floor, out=yb)
        np.divide(d, yb, out=d)
        max_rel = max(max_rel, float(d.max()))
    rel_l2 = math.sqrt(dd) / max(math.sqrt(yy), floor * math.sqrt(n))
    cosine = 1.0 if dd == 0.0 else _cosine_from(xy, xx, yy)
    return _Metrics(max_abs, max_rel, rel_l2, cosine, False)


def _general_metrics(a: np.ndarray, b: np.ndarray, absolute_floor: float) -> _Metrics:
    """Metrics of any two numeric arrays (complex, NaN, infinities), on whole float64/complex128 copies."""
    wide = np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64
    x = np.asarray(a, dtype=wide).reshape(-1)
    y = np.asarray(b, dtype=wide).reshape(-1)
    with np.errstate(all="ignore"):
        nan_x, nan_y = np.isnan(x), np.isnan(y)
        equal = (x == y) | (nan_x & nan_y)
        diff = np.abs(x - y)
        diff[equal] = 0.0
        diff[~np.isfinite(diff)] = np.inf  # NaN against a number, inf against a number or the other inf
        finite = np.isfinite(x) & np.isfinite(y)
        magnitude = np.abs(y)
        fy = magnitude[finite]
        floor = max(float(np.sqrt(np.mean(fy * fy))) if fy.size else 0.0, absolute_floor)
        rel = diff / np.maximum(magnitude, floor)
        rel[diff == 0.0] = 0.0  # also where y is infinite and equal
        rel[np.isinf(diff) | np.isnan(rel)] = np.inf
        fd = diff[finite]
        ny = float(np.linalg.norm(y[finite])) if fy.size else 0.0
        rel_l2 = float(np.linalg.norm(fd)) / max(ny, floor * math.sqrt(max(fy.size, 1)))
        if not np.all(finite | equal):
            rel_l2 = math.inf
        if not fd.any():
            cosine = 1.0  # equal vectors have cosine 1.0 exactly, not 1.0 give or take rounding
        else:
            xf, yf = x[finite], y[finite]
            sx, sy = float(np.max(np.abs(xf))), float(np.max(np.abs(yf)))
            if sx == 0.0 and sy == 0.0:
                cosine = 1.0
            elif sx == 0.0 or sy == 0.0:
                cosine = _NAN
            else:
                xf, yf = xf / sx, yf / sy  # scaled first, so that no norm overflows
                value = float(np.real(np.vdot(xf, yf))) / (float(np.linalg.norm(xf)) * float(np.linalg.norm(yf)))
                cosine = min(1.0, max(-1.0, value))
    return _Metrics(float(diff.max()), float(rel.max()), rel_l2, cosine, bool(np.any(nan_x & ~nan_y)))


def _metrics(a: np.ndarray, b: np.ndarray, absolute_floor: float = 1e-30) -> _Metrics:
    """The metrics of two arrays with the same number of elements: streaming when real and finite."""
    if a.size == 0:
        return _Metrics(0.0, 0.0, 0.0, 1.0, False)
    if a.dtype.kind != "c" and b.dtype.kind != "c":
        x = a.reshape(-1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(-1)
        y = b.reshape(-1) if b.flags.c_contiguous else np.ascontiguousarray(b).reshape(-1)
        if x.dtype.kind == "b":
            x = x.view(np.uint8)
        if y.dtype.kind == "b":
            y = y.view(np.uint8)
        with np.errstate(all="ignore"):
            found = _finite_metrics(x, y, absolute_floor)
        if found is not None:
            return found
    return _general_metrics(a, b, absolute_floor)


def _precision(dtype: np.dtype, info: TensorInfo | None) -> str:
    if info is not None and info.data_type == dtypes.ProtoDataType.DT_BF16:
        return "bfloat16"
    if dtype.kind in "biu":
        return "integer"
    if dtype.kind == "c":
        return "float64" if dtype.itemsize >= 16 else "float32"
    return {2: "float16", 4: "float32"}.get(dtype.itemsize, "float64")


def _dtype_text(a: np.ndarray, b: np.ndarray, info_a: TensorInfo | None, info_b: TensorInfo | None) -> str:
    names = []
    for array, info in ((a, info_a), (b, info_b)):
        bf16 = info is not None and info.data_type == dtypes.ProtoDataType.DT_BF16
        names.append("bfloat16" if bf16 else str(array.dtype))
    return names[0] if names[0] == names[1] else f"{names[0]} vs {names[1]}"


def not_compared(op_type: str, op_name: str, tensor: str, reason: str, shape=None, dtype=None) -> TensorComparison:
    return TensorComparison(op_type, op_name, tensor, shape, dtype, _NAN, _NAN, _NAN, reason=reason)


def _to_golden_layout(array: np.ndarray, info: TensorInfo | None, golden: TensorInfo | None) -> np.ndarray:
    """``array`` of A in the layout of B's tensor: device layouts undone, then plain formats permuted."""
    if info is None:
        return array
    original = info.original_shape or (golden.original_shape if golden is not None else None)
    converted = layouts.to_original(array, info.format, original, info.original_format)
    if golden is None:
        return converted
    source = layouts.original_layout(info.format, info.original_format)
    return layouts.to_layout(converted, source, layouts.original_layout(golden.format, golden.original_format))


class Judge:
    """The thresholds of a tensor pair: the table with the caller's overrides, by the less precise dtype."""

    def __init__(self, overrides: dict[str, float | None], table: dict[str, Thresholds]) -> None:
        self._table = {
            name: replace(limits, **{k: v for k, v in overrides.items() if v is not None})
            for name, limits in table.items()
        }

    def limits(self, a: np.ndarray, b: np.ndarray, info_a: TensorInfo | None, info_b: TensorInfo | None) -> Thresholds:
        loosest = max(_PRECISION.index(_precision(a.dtype, info_a)), _PRECISION.index(_precision(b.dtype, info_b)))
        if _precision(a.dtype, info_a) == "integer" and _precision(b.dtype, info_b) == "integer":
            loosest = 0
        elif loosest == 0:
            loosest = 1  # an integer side against a float side: judged as floats
        return self._table[_PRECISION[loosest]]


def compare_tensor(
    op_type: str,
    op_name: str,
    tensor: str,
    a: np.ndarray,
    b: np.ndarray,
    judge: Judge,
    info_a: TensorInfo | None = None,
    info_b: TensorInfo | None = None,
) -> TensorComparison:
    dtype = _dtype_text(a, b, info_a, info_b)
    try:
        a = _to_golden_layout(a, info_a, info_b)
    except layouts.LayoutError as exc:
        return not_compared(op_type, op_name, tensor, f"layout: {exc}", tuple(a.shape), dtype)
    shape = tuple(a.shape)
    if a.shape != b.shape and (a.size != b.size or _squeezed(a.shape) != _squeezed(b.shape)):
        reason = f"shape {shape_text(a.shape)} vs {shape_text(b.shape)}"
        return not_compared(op_type, op_name, tensor, reason, shape, dtype)
    for side, array in (("A", a), ("B", b)):
        if array.dtype.kind not in _COMPARABLE_KINDS:
            return not_compared(op_type, op_name, tensor, f"dtype {array.dtype} in {side} is not numeric", shape, dtype)
    limits = judge.limits(a, b, info_a, info_b)
    m = _metrics(a, b, limits.floor)
    exceeds = limits.exceeded(m.max_abs, m.max_rel, m.rel_l2, m.cosine, m.nan_in_a)
    return TensorComparison(
        op_type, op_name, tensor, shape, dtype, m.max_abs, m.max_rel, m.cosine, exceeds=exceeds, rel_l2_error=m.rel_l2
    )
