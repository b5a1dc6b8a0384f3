"""Compare two CANN dump trees operator by operator, as msaccucmp's ``compare -m NPU -g GOLDEN`` does.

``compare_dumps(a, b)`` pairs the dump files of ``a`` (the run under test, usually the NPU; msaccucmp's ``-m``)
with those of ``b`` (the golden run, usually the CPU; msaccucmp's ``-g``), compares every input and output tensor
and marks the first tensor, in the execution order of ``a``, whose error passes a threshold: that is where the
run under test starts to diverge from the golden one.

Pairing:

* A file is identified by :func:`match_key`, ``(op_type, op_name, task_id)`` from its name (a hashed long name
  gets its original name back from ``mapping.csv``); the stream id and timestamp differ between runs.
* When a tree holds the same key several times (several steps, ``{...}/{model_id}/{step}/``), the k-th
  occurrence in ``a`` (in execution order) pairs with the k-th in ``b``. Point both sides at the same step
  directories when they dumped different steps.
* Files left over after that pair by ``(op_type, op_name)`` in execution order, so runs that number their tasks
  differently still line up. Whatever is still left is reported as ``missing in B`` / ``missing in A``.
* Two single files given directly are always compared with each other, whatever their names.
* Execution order is the file-name timestamp (the dump time), then the task id, then the path.
* Only binary dumps are compared. Stats-mode dumps (``*.csv``) hold no tensor data: they are listed in
  :attr:`CompareResult.skipped` with the reason, as are files whose names are not dump file names.

Metrics, per tensor pair ``x`` (from ``a``) and ``y`` (from ``b``, the golden), both widened to float64
(complex128 for complex tensors; integers and bools compare by value; bf16 is float32 as :func:`read_dump`
returns it); shapes must be equal, or equal once dimensions of 1 are dropped; dtypes may differ:

* ``max_abs_error = max |x - y|``.
* ``max_rel_error = max |x - y| / |y|`` over the elements where the golden ``y`` is not 0, as msaccucmp
  computes it: float noise around a golden zero (after a Relu, say) would otherwise read as an enormous
  relative error; such an element still counts in ``max_abs_error`` and in the cosine.
* ``cosine`` = cosine similarity over the elements finite on both sides: 1.0 when both are all zero (or when
  there is no such element), NaN when exactly one side is all zero (as msaccucmp), else clipped to [-1, 1].
* Non-finite values: NaN against NaN and an infinity against the same infinity count as equal (error 0).
  Any other position where either side is NaN or infinite, or where the difference overflows, has an
  infinite absolute and relative error.
* An empty tensor pair (equal shapes) is equal: errors 0, cosine 1.0.

A compared row ``exceeds`` when ``max_rel_error > max_rel``, ``cosine < min_cosine``, the cosine is NaN (one side
all zero) while the values differ, ``max_abs_error > max_abs`` (when ``max_abs`` is given), or ``x`` has a NaN
where ``y`` does not.
Rows that were not compared (missing, shape mismatch, unreadable, not numeric) carry a ``reason``, NaN metrics and
never exceed.
"""

from __future__ import annotations

import csv
import math
import os
import pathlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from openacl.dump.format import MAPPING_FILE_NAME, read_dump
from openacl.tools.parse import _Names, find_dump_files

__all__ = [
    "CSV_HEADER",
    "STATS_REASON",
    "CompareResult",
    "TensorComparison",
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
    "CosineSimilarity",
    "Exceeds",
    "Reason",
)
_NAN = math.nan
_COMPARABLE_KINDS = frozenset("biufc")
_MARKER = "<< first divergence"
#: The reason :attr:`CompareResult.skipped` gives for a stats-mode dump.
STATS_REASON = "stats-mode dump (CSV): holds no tensor data, only binary dumps are compared"


@dataclass(frozen=True)
class TensorComparison:
    """One tensor of one operator, compared (``reason == ""``) or not (``reason`` says why; metrics are NaN)."""

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


@dataclass
class CompareResult:
    """What :func:`compare_dumps` found.

    ``rows`` are in the execution order of A, each file's inputs before its outputs; rows for files only in B
    come last, in B's order. ``only_in_a`` / ``only_in_b`` are the op names (as in the file names) that the other
    side does not have at all. ``operators`` counts the paired files; ``skipped`` lists ``(path, reason)`` for
    files that were not compared at all (stats CSVs, names that are not dump file names).
    """

    rows: list[TensorComparison]
    first_divergence: TensorComparison | None
    only_in_a: list[str]
    only_in_b: list[str]
    operators: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def compared(self) -> int:
        """How many tensor pairs were compared."""
        return sum(1 for row in self.rows if not row.reason)


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

    A path is reduced to its last component. This is what pairs files across two dumps: the stream id and the
    timestamp differ between runs. ``ValueError`` for a name that is not a dump file name (a stats ``.csv`` too).
    """
    op_type, op_name, task_id, _ = _split(file_name)
    return op_type, op_name, task_id


@dataclass
class _Entry:
    path: pathlib.Path
    key: tuple[str, str, int]
    order: tuple[int, int, str]
    partner: _Entry | None = None


def _stats_files(root: pathlib.Path, names: _Names) -> list[pathlib.Path]:
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
    names = _Names()
    stats = _stats_files(root, names)
    skipped.extend((str(path), STATS_REASON) for path in stats)
    stats_set = set(stats)
    entries = []
    for path in find_dump_files(root):
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
                partner = queue.pop(0)
                entry.partner, partner.partner = partner, entry


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


def _cosine(x: np.ndarray, y: np.ndarray) -> float:
    """Cosine similarity of two finite vectors, scaled first so that no norm overflows."""
    scale_x = float(np.max(np.abs(x))) if x.size else 0.0
    scale_y = float(np.max(np.abs(y))) if y.size else 0.0
    if scale_x == 0.0 and scale_y == 0.0:
        return 1.0
    if scale_x == 0.0 or scale_y == 0.0:
        return _NAN
    x = x / scale_x
    y = y / scale_y
    value = float(np.real(np.vdot(x, y))) / (float(np.linalg.norm(x)) * float(np.linalg.norm(y)))
    return min(1.0, max(-1.0, value))


def _metrics(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, bool]:
    """``(max_abs, max_rel, cosine, nan in a where b has none)`` of two arrays with the same number of elements."""
    wide = np.complex128 if a.dtype.kind == "c" or b.dtype.kind == "c" else np.float64
    x = np.asarray(a, dtype=wide).reshape(-1)
    y = np.asarray(b, dtype=wide).reshape(-1)
    if x.size == 0:
        return 0.0, 0.0, 1.0, False
    with np.errstate(all="ignore"):
        nan_x, nan_y = np.isnan(x), np.isnan(y)
        equal = (x == y) | (nan_x & nan_y)
        diff = np.abs(x - y)
        diff[equal] = 0.0
        diff[~np.isfinite(diff)] = np.inf  # NaN against a number, inf against a number or the other inf
        magnitude = np.abs(y)
        nonzero = magnitude > 0
        rel = np.zeros(diff.shape)
        rel[nonzero] = diff[nonzero] / magnitude[nonzero]
        rel[diff == 0.0] = 0.0  # also where y is infinite and equal
        rel[np.isinf(diff) | np.isnan(rel)] = np.inf
        finite = np.isfinite(x) & np.isfinite(y)
        # equal vectors have cosine 1.0 exactly, not 1.0 give or take rounding
        cosine = 1.0 if not diff[finite].any() else _cosine(x[finite], y[finite])
    return float(diff.max()), float(rel.max()), cosine, bool(np.any(nan_x & ~nan_y))


def _dtype_text(a: np.ndarray, b: np.ndarray) -> str:
    return str(a.dtype) if a.dtype == b.dtype else f"{a.dtype} vs {b.dtype}"


def _not_compared(op_type: str, op_name: str, tensor: str, reason: str, shape=None, dtype=None) -> TensorComparison:
    return TensorComparison(op_type, op_name, tensor, shape, dtype, _NAN, _NAN, _NAN, reason=reason)


@dataclass(frozen=True)
class _Thresholds:
    max_abs: float | None
    max_rel: float
    min_cosine: float

    def exceeded(self, max_abs: float, max_rel: float, cosine: float, nan_in_a: bool) -> bool:
        return (
            nan_in_a
            or max_rel > self.max_rel
            or cosine < self.min_cosine
            or (math.isnan(cosine) and max_abs > 0)  # one side all zero, the other not
            or (self.max_abs is not None and max_abs > self.max_abs)
        )


def _compare_tensor(
    op_type: str, op_name: str, tensor: str, a: np.ndarray, b: np.ndarray, limits: _Thresholds
) -> TensorComparison:
    dtype = _dtype_text(a, b)
    shape = tuple(a.shape)
    if a.shape != b.shape and (a.size != b.size or _squeezed(a.shape) != _squeezed(b.shape)):
        reason = f"shape {_shape_text(a.shape)} vs {_shape_text(b.shape)}"
        return _not_compared(op_type, op_name, tensor, reason, shape, dtype)
    for side, array in (("A", a), ("B", b)):
        if array.dtype.kind not in _COMPARABLE_KINDS:
            return _not_compared(
                op_type, op_name, tensor, f"dtype {array.dtype} in {side} is not numeric", shape, dtype
            )
    max_abs, max_rel, cosine, nan_in_a = _metrics(a, b)
    exceeds = limits.exceeded(max_abs, max_rel, cosine, nan_in_a)
    return TensorComparison(op_type, op_name, tensor, shape, dtype, max_abs, max_rel, cosine, exceeds=exceeds)


def _compare_files(entry: _Entry, limits: _Thresholds) -> list[TensorComparison]:
    op_type, op_name, _ = entry.key
    assert entry.partner is not None
    dumps = []
    for side, path in (("A", entry.path), ("B", entry.partner.path)):
        try:
            dumps.append(read_dump(path))
        except (OSError, ValueError) as exc:
            return [_not_compared(op_type, op_name, "-", f"unreadable in {side}: {exc}")]
    dump_a, dump_b = dumps
    op_name = dump_a.op_name or op_name
    rows = []
    for kind, tensors_a, tensors_b in (
        ("input", dump_a.inputs, dump_b.inputs),
        ("output", dump_a.outputs, dump_b.outputs),
    ):
        for i in range(max(len(tensors_a), len(tensors_b))):
            tensor = f"{kind}.{i}"
            if i >= len(tensors_b):
                x = tensors_a[i]
                rows.append(_not_compared(op_type, op_name, tensor, "missing in B", tuple(x.shape), str(x.dtype)))
            elif i >= len(tensors_a):
                y = tensors_b[i]
                rows.append(_not_compared(op_type, op_name, tensor, "missing in A", tuple(y.shape), str(y.dtype)))
            else:
                rows.append(_compare_tensor(op_type, op_name, tensor, tensors_a[i], tensors_b[i], limits))
    return rows


def compare_dumps(
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    *,
    max_abs: float | None = None,
    max_rel: float = 1e-3,
    min_cosine: float = 0.99,
    progress: Callable[[int, int], None] | None = None,
) -> CompareResult:
    """Compare dump ``a`` (under test, e.g. the NPU run) with dump ``b`` (the golden, e.g. the CPU run).

    Each of ``a`` and ``b`` is a dump file or a directory tree of them (for example
    ``{dump_path}/{time}/{device}/{model}/{model_id}`` or one ``{step}`` below it). See the module docstring for
    pairing, metrics and thresholds. ``progress(done, total)`` is called after each pair of files.
    ``FileNotFoundError`` if ``a`` or ``b`` does not exist.
    """
    limits = _Thresholds(max_abs, max_rel, min_cosine)
    skipped: list[tuple[str, str]] = []
    entries_a = _collect(a, skipped)
    entries_b = _collect(b, skipped)
    if pathlib.Path(a).is_file() and pathlib.Path(b).is_file() and len(entries_a) == len(entries_b) == 1:
        entries_a[0].partner, entries_b[0].partner = entries_b[0], entries_a[0]
    _pair_by(entries_a, entries_b, lambda entry: entry.key)
    _pair_by(entries_a, entries_b, lambda entry: entry.key[:2])

    names_b = {entry.key[1] for entry in entries_b}
    names_a = {entry.key[1] for entry in entries_a}
    only_in_a = _unique(entry.key[1] for entry in entries_a if entry.key[1] not in names_b)
    only_in_b = _unique(entry.key[1] for entry in entries_b if entry.key[1] not in names_a)

    total = sum(1 for entry in entries_a if entry.partner is not None)
    done = 0
    rows: list[TensorComparison] = []
    for entry in entries_a:
        if entry.partner is None:
            rows.append(_not_compared(entry.key[0], entry.key[1], "-", "missing in B"))
            continue
        rows.extend(_compare_files(entry, limits))
        done += 1
        if progress is not None:
            progress(done, total)
    rows.extend(
        _not_compared(entry.key[0], entry.key[1], "-", "missing in A") for entry in entries_b if entry.partner is None
    )
    first = next((row for row in rows if row.exceeds), None)
    return CompareResult(rows, first, only_in_a, only_in_b, operators=total, skipped=skipped)


# --------------------------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------------------------


def write_csv(result: CompareResult, path: str | os.PathLike[str]) -> None:
    """Write ``result.rows`` as CSV with :data:`CSV_HEADER`, one row each, ``Index`` counting from 0.

    Numbers are written with ``repr`` (round-trip exact; ``nan``, ``inf``), ``Shape`` as ``(2,3)`` and
    ``Exceeds`` as ``True``/``False``; fields unknown for a row are empty.
    """
    with open(path, "w", encoding="utf-8", newline="") as f:
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
                    repr(float(row.cosine)),
                    row.exceeds,
                    row.reason,
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
    """``compared N tensors of M operators; first divergence: ...`` (or ``no tensor passes the threshold``)."""
    head = f"compared {result.compared} tensors of {result.operators} operators; "
    row = result.first_divergence
    if row is None:
        return head + "no tensor passes the threshold"
    return head + f"first divergence: {row.op_type}.{row.op_name} {row.tensor} (max rel error {row.max_rel_error:.3e})"
