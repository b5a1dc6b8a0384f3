"""What :func:`openacl.tools.compare.compare_dumps` found, for people and for other tools.

:func:`write_csv` writes every row (round-trip exact numbers); :func:`render` prints a table on a rich console
with the first divergence marked, then a summary line and notes; :func:`summary` is that one line.
"""

from __future__ import annotations

import csv
import math
import os

from openacl import lazy
from openacl.atomicfile import replacing
from openacl.tools.compare import CompareResult
from openacl.tools.metrics import shape_text
from openacl.tools.pairing import STATS_REASON

rich_table = lazy.module("rich.table")
rich_text = lazy.module("rich.text")

__all__ = ["CSV_HEADER", "render", "summary", "write_csv"]

_MARKER = "<< first divergence"
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
                    "" if row.shape is None else shape_text(row.shape),
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
    Table, Text = rich_table.Table, rich_text.Text
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
                    "" if row.shape is None else shape_text(row.shape),
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
