"""Compare two CANN dump trees operator by operator, as msaccucmp's ``compare -m NPU -g GOLDEN [-f RULE]`` does.

``compare_dumps(a, b)`` pairs the dump files of ``a`` (the run under test, usually the NPU; msaccucmp's ``-m``)
with those of ``b`` (the golden run, usually the CPU; msaccucmp's ``-g``), compares every input and output tensor
and marks the first tensor, in the execution order of ``a``, whose error passes a threshold: that is where the
run under test starts to diverge from the golden one.

Pairing, in this order (each step only sees the files still unpaired):

1. Two single files given directly are always compared with each other, whatever their names.
2. With a fusion rule (:mod:`openacl.tools.fusion_rule`, msaccucmp's ``-f``), a device op pairs with the LAST
   golden op (in B's execution order) among the model nodes it covers; each of its outputs compares with the
   golden output its ``_datadump_origin_name`` / ``_datadump_origin_output_index`` name, else with the same
   output of that last op. A fused op's inputs (fused weights, the first node's data) are not compared.
3. Structure: the ops of A and of B, each in execution order, are aligned by their signature, the op type and the
   original shapes of every input and output (longest matching subsequence). This survives an inserted or
   removed node, which renumbers every later unnamed node (``Relu_36`` becomes ``Relu_37``) and would make a
   pairing by name compare each later op with its neighbour.
4. Names: ``(op_type, op_name, task_id)`` from the file name (a hashed long name gets its original name back
   from ``mapping.csv``), then ``(op_type, op_name)``, then ``op_name`` alone (an NPU's op types, ``Conv2D``,
   differ from ONNX's, ``Conv``). When a key occurs several times (several steps), the k-th occurrence in A pairs
   with the k-th in B. Point both sides at the same step directories when they dumped different steps.
5. Whatever is still left is reported as ``missing in B`` / ``missing in A``.

Execution order is the file-name timestamp (the dump time), then the task id, then the path. Only binary dumps
are compared; stats-mode dumps (``*.csv``) hold no tensor data and are listed in :attr:`CompareResult.skipped`
with the reason, as are files whose names are not dump file names.

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
``x`` has a NaN where ``y`` does not. Each keyword of :func:`compare_dumps` overrides one threshold for every
dtype. Rows that were not compared (missing, shape or layout mismatch, unreadable, not numeric) carry a
``reason``, NaN metrics and never exceed; :attr:`CompareResult.incomparable` counts those that are not merely
missing.
"""

from __future__ import annotations

import csv
import difflib
import math
import os
import pathlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from openacl import dtypes
from openacl.atomicfile import replacing
from openacl.dump import layouts
from openacl.dump.format import MAPPING_FILE_NAME, sanitize
from openacl.dump.reader import DumpFile, Names, TensorInfo, find_dump_files, read_dump, read_header
from openacl.tools.fusion_rule import FusedOp, read_fusion_rule

__all__ = [
    "CSV_HEADER",
    "DEFAULT_THRESHOLDS",
    "STATS_REASON",
    "CompareResult",
    "TensorComparison",
    "Thresholds",
    "compare_dumps",
    "match_key",
    "render",
    "summary",
    "write_csv",
]

#: The header line :func:`write_csv` writes.
CSV_HEADER = (
    "Index",
    "OpType",
    "OpName",
    "Tensor",
    "Shape",
    "DataType",
    "MaxAbsError",
    "MaxRelError",
    "RelL2Error",
    "CosineSimilarity",
    "Exceeds",
    "Reason",
    "GoldenOp",
)
_NAN = math.nan
_COMPARABLE_KINDS = frozenset("biufc")
_MARKER = "<< first divergence"
#: The reason :attr:`CompareResult.skipped` gives for a stats-mode dump.
STATS_REASON = "stats-mode dump (CSV): holds no tensor data, only binary dumps are compared"
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
#: 3x both ways (README, "Comparing with an NPU dump"). Integers and bools must be equal.
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


@dataclass
class CompareResult:
    """What :func:`compare_dumps` found.

    ``rows`` are in the execution order of A, each file's inputs before its outputs; rows for files only in B
    come last, in B's order. ``only_in_a`` / ``only_in_b`` are the op names (as in the file names) that the other
    side does not have at all. ``operators`` counts the paired files; ``skipped`` lists ``(path, reason)`` for
    files that were not compared at all (stats CSVs, names that are not dump file names). ``bytes_read`` counts
    the tensor bytes of every file read.
    """

    rows: list[TensorComparison]
    first_divergence: TensorComparison | None
    only_in_a: list[str]
    only_in_b: list[str]
    operators: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    bytes_read: int = 0

    @property
    def compared(self) -> int:
        """How many tensor pairs were compared."""
        return sum(1 for row in self.rows if not row.reason)

    @property
    def incomparable(self) -> int:
        """Rows of tensors both sides have that could not be compared (layout, shape, dtype, unreadable)."""
        return sum(1 for row in self.rows if row.reason and not row.reason.startswith("missing"))


# --------------------------------------------------------------------------------------------------------------
# Finding and pairing files
# --------------------------------------------------------------------------------------------------------------


def _split(file_name: str) -> tuple[str, str, int, int]:
    name = os.path.basename(os.fspath(file_name))
    parts = name.split(".")
    if len(parts) < 5 or not all(p.isascii() and p.isdigit() for p in parts[-3:]) or not parts[0]:
        raise ValueError(f"{name!r} is not a dump file name ({{op_type}}.{{op_name}}.{{task_id}}.{{stream}}.{{time}})")
    return parts[0], ".".join(parts[1:-3]), int(parts[-3]), int(parts[-1])


def match_key(file_name: str) -> tuple[str, str, int]:
    """``(op_type, op_name, task_id)`` of a dump file name ``{op_type}.{op_name}.{task_id}.{stream_id}.{time}``.

    A path is reduced to its last component. This is what pairs files across two dumps by name: the stream id
    and the timestamp differ between runs. ``ValueError`` for a name that is not a dump file name (a stats
    ``.csv`` too).
    """
    op_type, op_name, task_id, _ = _split(file_name)
    return op_type, op_name, task_id


@dataclass(eq=False)
class _Entry:
    path: pathlib.Path
    key: tuple[str, str, int]
    order: tuple[int, int, str]
    partner: _Entry | None = None
    how: str = ""  # "fusion", "structure" or "name"
    fused: FusedOp | None = None
    _signature: tuple | None = None

    def signature(self) -> tuple:
        """Op type and the original shapes of every input and output; ``()`` for an unreadable header."""
        if self._signature is None:
            try:
                header = read_header(self.path)
            except (OSError, ValueError):
                self._signature = ()
            else:

                def shape(t) -> tuple[int, ...]:
                    return tuple(t.original_shape.dim) if t.HasField("original_shape") else tuple(t.shape.dim)

                self._signature = (
                    self.key[0],
                    tuple(shape(t) for t in header.input),
                    tuple(shape(t) for t in header.output),
                )
        return self._signature


def _stats_files(root: pathlib.Path, names: Names) -> list[pathlib.Path]:
    if root.is_file():
        return [root] if names.original(root).endswith(".csv") else []
    found = []
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            path = pathlib.Path(directory, name)
            if name != MAPPING_FILE_NAME and names.original(path).endswith(".csv") and path.is_file():
                found.append(path)
    return sorted(found)


def _collect(root: str | os.PathLike[str], skipped: list[tuple[str, str]]) -> list[_Entry]:
    """The dump files under ``root`` in execution order; everything left out goes into ``skipped``."""
    root = pathlib.Path(root)
    names = Names()
    stats = _stats_files(root, names)
    skipped.extend((str(path), STATS_REASON) for path in stats)
    stats_set = set(stats)
    entries = []
    for path in find_dump_files(root, names):
        if path in stats_set:
            continue
        try:
            op_type, op_name, task_id, timestamp = _split(names.original(path))
        except ValueError as exc:
            if root.is_file():  # a single file given directly is compared whatever its name
                op_type, op_name, task_id, timestamp = "-", path.name, 0, 0
            else:
                skipped.append((str(path), str(exc)))
                continue
        entries.append(_Entry(path, (op_type, op_name, task_id), (timestamp, task_id, str(path))))
    entries.sort(key=lambda entry: entry.order)
    return entries


def _link(a: _Entry, b: _Entry, how: str) -> None:
    a.partner, b.partner, a.how, b.how = b, a, how, how


def _pair_by(a: list[_Entry], b: list[_Entry], key: Callable[[_Entry], tuple]) -> None:
    """Pair the still unpaired entries of ``a`` and ``b`` with equal ``key``, k-th occurrence with k-th."""
    waiting: dict[tuple, list[_Entry]] = defaultdict(list)
    for entry in b:
        if entry.partner is None:
            waiting[key(entry)].append(entry)
    for entry in a:
        if entry.partner is None:
            queue = waiting.get(key(entry))
            if queue:
                _link(entry, queue.pop(0), "name")


def _pair_by_fusion(a: list[_Entry], b: list[_Entry], rule: dict[str, FusedOp]) -> None:
    """Each device op the rule names pairs with the last golden op it covers (in B's execution order)."""
    position = {}
    for index, entry in enumerate(b):
        position.setdefault(entry.key[1], []).append(index)
    for entry in a:
        fused = rule.get(entry.key[1])
        if fused is None or entry.partner is not None:
            continue
        entry.fused = fused
        covered = [i for name in fused.originals for i in position.get(sanitize(name), []) if b[i].partner is None]
        if covered:
            _link(entry, b[max(covered)], "fusion")


def _pair_by_structure(a: list[_Entry], b: list[_Entry]) -> None:
    """Align the unpaired entries of ``a`` and ``b`` by signature, in execution order (see the module doc)."""
    free_a = [entry for entry in a if entry.partner is None]
    free_b = [entry for entry in b if entry.partner is None]
    if not free_a or not free_b:
        return
    tokens: dict[tuple, int] = {}
    seq_a = [tokens.setdefault(entry.signature(), len(tokens)) if entry.signature() else -1 for entry in free_a]
    seq_b = [tokens.setdefault(entry.signature(), len(tokens)) if entry.signature() else -2 for entry in free_b]
    matcher = difflib.SequenceMatcher(None, seq_a, seq_b, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            _link(free_a[block.a + k], free_b[block.b + k], "structure")


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------------------------------------------
# Metrics
# --------------------------------------------------------------------------------------------------------------


def _shape_text(shape: tuple[int, ...]) -> str:
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


def _not_compared(op_type: str, op_name: str, tensor: str, reason: str, shape=None, dtype=None) -> TensorComparison:
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


class _Judge:
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


def _compare_tensor(
    op_type: str,
    op_name: str,
    tensor: str,
    a: np.ndarray,
    b: np.ndarray,
    judge: _Judge,
    info_a: TensorInfo | None = None,
    info_b: TensorInfo | None = None,
) -> TensorComparison:
    dtype = _dtype_text(a, b, info_a, info_b)
    try:
        a = _to_golden_layout(a, info_a, info_b)
    except layouts.LayoutError as exc:
        return _not_compared(op_type, op_name, tensor, f"layout: {exc}", tuple(a.shape), dtype)
    shape = tuple(a.shape)
    if a.shape != b.shape and (a.size != b.size or _squeezed(a.shape) != _squeezed(b.shape)):
        reason = f"shape {_shape_text(a.shape)} vs {_shape_text(b.shape)}"
        return _not_compared(op_type, op_name, tensor, reason, shape, dtype)
    for side, array in (("A", a), ("B", b)):
        if array.dtype.kind not in _COMPARABLE_KINDS:
            return _not_compared(
                op_type, op_name, tensor, f"dtype {array.dtype} in {side} is not numeric", shape, dtype
            )
    limits = judge.limits(a, b, info_a, info_b)
    m = _metrics(a, b, limits.floor)
    exceeds = limits.exceeded(m.max_abs, m.max_rel, m.rel_l2, m.cosine, m.nan_in_a)
    return TensorComparison(
        op_type, op_name, tensor, shape, dtype, m.max_abs, m.max_rel, m.cosine, exceeds=exceeds, rel_l2_error=m.rel_l2
    )


def _read(path: pathlib.Path, cache: dict[pathlib.Path, DumpFile]) -> DumpFile:
    if path not in cache:
        cache[path] = read_dump(path)
    return cache[path]


def _compare_files(
    entry: _Entry, judge: _Judge, by_name_b: dict[str, list[_Entry]], counted: list[int]
) -> list[TensorComparison]:
    op_type, op_name, _ = entry.key
    assert entry.partner is not None
    cache: dict[pathlib.Path, DumpFile] = {}
    dumps = []
    for side, path in (("A", entry.path), ("B", entry.partner.path)):
        try:
            dumps.append(_read(path, cache))
        except (OSError, ValueError) as exc:
            return [_not_compared(op_type, op_name, "-", f"unreadable in {side}: {exc}")]
    dump_a, dump_b = dumps
    op_name = dump_a.op_name or op_name
    golden = dump_b.op_name or entry.partner.key[1]
    golden_op = "" if golden == op_name else golden
    rows = []
    kinds = [("output", dump_a.outputs, dump_b.outputs, dump_a.output_info, dump_b.output_info)]
    if entry.fused is None or not entry.fused.fused:
        kinds.insert(0, ("input", dump_a.inputs, dump_b.inputs, dump_a.input_info, dump_b.input_info))
    for kind, tensors_a, tensors_b, infos_a, infos_b in kinds:
        for i in range(max(len(tensors_a), len(tensors_b) if entry.fused is None else len(tensors_a))):
            tensor = f"{kind}.{i}"
            target_b, target_infos, target_name, j = tensors_b, infos_b, golden_op, i
            origins = entry.fused.output_origins if entry.fused is not None and kind == "output" else ()
            if i < len(origins) and origins[i] is not None:
                origin_name, j = origins[i]
                candidates = by_name_b.get(sanitize(origin_name), [])
                if candidates and candidates[-1].path != entry.partner.path:
                    try:
                        other = _read(candidates[-1].path, cache)
                    except (OSError, ValueError) as exc:
                        rows.append(_not_compared(op_type, op_name, tensor, f"unreadable in B: {exc}"))
                        continue
                    target_b, target_infos = other.outputs, other.output_info
                    target_name = other.op_name or origin_name
            if i >= len(tensors_a):
                y = target_b[j]
                row = _not_compared(op_type, op_name, tensor, "missing in A", tuple(y.shape), str(y.dtype))
            elif j >= len(target_b):
                x = tensors_a[i]
                row = _not_compared(op_type, op_name, tensor, "missing in B", tuple(x.shape), str(x.dtype))
            else:
                info_a = infos_a[i] if i < len(infos_a) else None
                info_b = target_infos[j] if j < len(target_infos) else None
                row = _compare_tensor(op_type, op_name, tensor, tensors_a[i], target_b[j], judge, info_a, info_b)
            rows.append(replace(row, golden_op=target_name))
    counted[0] += sum(d.nbytes for d in cache.values())
    return rows


def compare_dumps(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    max_abs: float | None = None,
    max_rel: float | None = None,
    max_rel_l2: float | None = None,
    min_cosine: float | None = None,
    fusion_rule: str | os.PathLike[str] | None = None,
    thresholds: dict[str, Thresholds] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> CompareResult:
    """Compare dump ``a`` (under test, e.g. the NPU run) with dump ``b`` (the golden, e.g. the CPU run).

    Each of ``a`` and ``b`` is a dump file or a directory tree of them (for example
    ``{dump_path}/{time}/{device}/{model}/{model_id}`` or one ``{step}`` below it). See the module docstring for
    pairing, layouts, metrics and thresholds: ``max_abs``, ``max_rel``, ``max_rel_l2`` and ``min_cosine``
    override one threshold for every dtype, ``thresholds`` replaces :data:`DEFAULT_THRESHOLDS`. ``fusion_rule``
    is msaccucmp's ``-f`` file (:func:`openacl.tools.fusion_rule.read_fusion_rule`; ``FusionRuleError`` if it
    cannot be read). ``progress(done, total)`` is called after each pair of files. ``FileNotFoundError`` if
    ``a`` or ``b`` does not exist.
    """
    judge = _Judge(
        {"max_abs": max_abs, "max_rel": max_rel, "max_rel_l2": max_rel_l2, "min_cosine": min_cosine},
        thresholds or DEFAULT_THRESHOLDS,
    )
    rule = read_fusion_rule(fusion_rule) if fusion_rule is not None else None
    skipped: list[tuple[str, str]] = []
    entries_a = _collect(a, skipped)
    entries_b = _collect(b, skipped)
    if pathlib.Path(a).is_file() and pathlib.Path(b).is_file() and len(entries_a) == len(entries_b) == 1:
        _link(entries_a[0], entries_b[0], "name")
    if rule is not None:
        _pair_by_fusion(entries_a, entries_b, rule)
    _pair_by_structure(entries_a, entries_b)
    _pair_by(entries_a, entries_b, lambda entry: entry.key)
    _pair_by(entries_a, entries_b, lambda entry: entry.key[:2])
    _pair_by(entries_a, entries_b, lambda entry: entry.key[1:2])

    names_b = {entry.key[1] for entry in entries_b}
    names_a = {entry.key[1] for entry in entries_a}
    only_in_a = _unique(entry.key[1] for entry in entries_a if entry.key[1] not in names_b)
    only_in_b = _unique(entry.key[1] for entry in entries_b if entry.key[1] not in names_a)
    by_name_b: dict[str, list[_Entry]] = defaultdict(list)
    for entry in entries_b:
        by_name_b[entry.key[1]].append(entry)

    total = sum(1 for entry in entries_a if entry.partner is not None)
    done = 0
    counted = [0]
    rows: list[TensorComparison] = []
    for entry in entries_a:
        if entry.partner is None:
            rows.append(_not_compared(entry.key[0], entry.key[1], "-", "missing in B"))
            continue
        rows.extend(_compare_files(entry, judge, by_name_b, counted))
        done += 1
        if progress is not None:
            progress(done, total)
    rows.extend(
        _not_compared(entry.key[0], entry.key[1], "-", "missing in A") for entry in entries_b if entry.partner is None
    )
    first = next((row for row in rows if row.exceeds), None)
    return CompareResult(rows, first, only_in_a, only_in_b, operators=total, skipped=skipped, bytes_read=counted[0])


# --------------------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------------------


def write_csv(result: CompareResult, path: str | os.PathLike[str]) -> None:
    """Write ``result.rows`` as CSV with :data:`CSV_HEADER`, one row each, ``Index`` counting from 0.

    Numbers are written with ``repr`` (round-trip exact; ``nan``, ``inf``), ``Shape`` as ``(2,3)`` and
    ``Exceeds`` as ``True``/``False``; fields unknown for a row are empty.
    """
    with replacing(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(CSV_HEADER)
        for index, row in enumerate(result.rows):
            writer.writerow(
                [
                    index,
                    row.op_type,
                    row.op_name,
                    row.tensor,
                    "" if row.shape is None else _shape_text(row.shape),
                    row.dtype or "",
                    repr(float(row.max_abs_error)),
                    repr(float(row.max_rel_error)),
                    repr(float(row.rel_l2_error)),
                    repr(float(row.cosine)),
                    row.exceeds,
                    row.reason,
                    row.golden_op,
                ]
            )


def _number(value: float, digits: int = 3) -> str:
    if math.isnan(value):
        return "-"
    if value == 0.0:
        return "0"
    return f"{value:.{digits}e}"


def _window(count: int, first: int | None, limit: int | None) -> tuple[int, int]:
    """The ``[start, stop)`` of at most ``limit`` rows to show, holding the first divergence if there is one."""
    if limit is None or count <= limit:
        return 0, count
    limit = max(limit, 1)
    if first is None or first < limit:
        return 0, limit
    start = max(0, min(first - limit // 2, count - limit))
    return start, start + limit


def render(result: CompareResult, console, limit: int | None = 50) -> None:
    """Print ``result`` on a rich ``console``: a table, then a summary line, then notes.

    The first divergence is marked ``<< first divergence`` in bold red; other rows over the threshold are red,
    rows not compared are dim. At most ``limit`` rows are shown (``None``: all), always including the first
    divergence.
    """
    from rich.table import Table
    from rich.text import Text

    rows = result.rows
    first = next((i for i, row in enumerate(rows) if row is result.first_divergence), None)
    if first is None and result.first_divergence is not None:  # a result put together by hand
        first = next((i for i, row in enumerate(rows) if row == result.first_divergence), None)
    start, stop = _window(len(rows), first, limit)
    table = Table(title="dump comparison: A (under test) vs B (golden)", title_justify="left")
    # Numbers never wrap; names fold onto more lines in a narrow terminal rather than being cut off.
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Operator", overflow="fold", ratio=3)
    table.add_column("Tensor", no_wrap=True)
    table.add_column("Shape", overflow="fold", ratio=1)
    table.add_column("DataType", overflow="fold")
    table.add_column("MaxAbsError", justify="right", no_wrap=True)
    table.add_column("MaxRelError", justify="right", no_wrap=True)
    table.add_column("RelL2Error", justify="right", no_wrap=True)
    table.add_column("Cosine", justify="right", no_wrap=True)
    table.add_column("Note", overflow="fold")
    for index in range(start, stop):
        row = rows[index]
        if index == first:
            style, note = "bold red", _MARKER
        elif row.exceeds:
            style, note = "red", "exceeds"
        elif row.reason:
            style, note = "dim", row.reason
        else:
            style, note = "", ""
        if row.golden_op and not row.reason:
            note = f"{note} (golden {row.golden_op})".strip()
        table.add_row(
            *(
                Text(cell)
                for cell in (
                    str(index),
                    f"{row.op_type}.{row.op_name}",
                    row.tensor,
                    "" if row.shape is None else _shape_text(row.shape),
                    row.dtype or "",
                    _number(row.max_abs_error),
                    _number(row.max_rel_error),
                    _number(row.rel_l2_error),
                    "-" if math.isnan(row.cosine) else f"{row.cosine:.6f}",
                    note,
                )
            ),
            style=style,
        )
    console.print(table)
    if start > 0 or stop < len(rows):
        console.print(Text(f"showing rows {start}-{stop - 1} of {len(rows)}; the CSV has them all", style="dim"))
    console.print(Text(summary(result)))
    notes = []
    if result.only_in_a:
        notes.append(f"only in A: {len(result.only_in_a)} operator(s): {', '.join(result.only_in_a[:10])}")
    if result.only_in_b:
        notes.append(f"only in B: {len(result.only_in_b)} operator(s): {', '.join(result.only_in_b[:10])}")
    not_compared = sum(1 for row in rows if row.reason)
    if not_compared:
        notes.append(f"{not_compared} row(s) not compared (see the Note column)")
    stats = sum(1 for _, reason in result.skipped if reason == STATS_REASON)
    if stats:
        notes.append(f"skipped {stats} stats-mode CSV file(s): only binary dumps are compared")
    if len(result.skipped) > stats:
        notes.append(f"skipped {len(result.skipped) - stats} file(s) whose names are not dump file names")
    for note in notes:
        console.print(Text(note, style="dim"))


def summary(result: CompareResult) -> str:
    """``compared N tensors of M operators; first divergence: ...`` (or ``no tensor passes the threshold``).

    When no tensor could be compared, or some could not be (layout, shape, dtype), the line says so: such a
    result is not a pass.
    """
    head = f"compared {result.compared} tensors of {result.operators} operators; "
    row = result.first_divergence
    if row is not None:
        return head + (
            f"first divergence: {row.op_type}.{row.op_name} {row.tensor} "
            f"(max rel error {row.max_rel_error:.3e}, rel L2 error {row.rel_l2_error:.3e}, cosine {row.cosine:.6f})"
        )
    if result.compared == 0:
        return head + "nothing was compared"
    if result.incomparable:
        return head + f"no tensor passes the threshold, but {result.incomparable} could not be compared"
    return head + "no tensor passes the threshold"
