"""msprof's summaries of one profiling session: ``op_summary_*.csv`` (one row per operator execution) and
``task_time_*.csv`` (one row per task: every operator, and every other stream task), with msprof's column names.

What a CPU cannot report is written as msprof writes a value it lacks, ``N/A``: the AI Core counters
(``aicore_time(us)``, ``total_cycles``) and ``Block Dim`` (how many AI Cores ran the task). Operators run as
``AI_CPU`` tasks (the host's CPU), their task type in both files.

Each file is written to a temporary name and renamed: it is complete or absent.
"""

from __future__ import annotations

import contextlib
import csv
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openacl.runtime.prof.opdesc import OpTime

NOT_AVAILABLE = "N/A"
OP_TASK_TYPE = "AI_CPU"

OP_SUMMARY_COLUMNS = (
    "Device_id",
    "Model Name",
    "Model ID",
    "Task ID",
    "Stream ID",
    "Infer ID",
    "Op Name",
    "OP Type",
    "Task Type",
    "Task Start Time(us)",
    "Task Duration(us)",
    "Task Wait Time(us)",
    "Block Dim",
    "Input Shapes",
    "Input Data Types",
    "Input Formats",
    "Output Shapes",
    "Output Data Types",
    "Output Formats",
    "aicore_time(us)",
    "total_cycles",
)

TASK_TIME_COLUMNS = (
    "Device_id",
    "kernel_name",
    "kernel_type",
    "stream_id",
    "task_id",
    "task_time(us)",
    "task_start(us)",
    "task_stop(us)",
)

# kernel_type of the stream tasks that are not operators, by the task's name
_TASK_TYPES = {"memcpy_async": "MEMCPY_ASYNC", "memset_async": "MEMSET_ASYNC", "model_execute": "MODEL_EXECUTE"}


@dataclass(frozen=True, slots=True)
class OpRun:
    """One operator execution, with where it ran."""

    device_id: int
    model_name: str
    model_id: int
    stream_id: int
    infer_id: int
    op: OpTime


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One stream task that is not an operator (ns since the epoch)."""

    device_id: int
    name: str
    stream_id: int
    start_ns: int
    end_ns: int


def _us(ns: int) -> str:
    return f"{ns / 1000:.3f}"


def _shapes(tensors: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    return ";".join(",".join(str(d) for d in shape) for _, shape in tensors)


def _dtypes(tensors: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    return ";".join(dtype.upper() for dtype, _ in tensors)


def _formats(tensors: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    return ";".join("ND" for _ in tensors)


def op_rows(ops: Iterable[OpRun]) -> list[list[str]]:
    """Rows in start order; Task ID counts per device, Task Wait Time is the gap since the stream's last op."""
    rows = []
    task_ids: dict[int, int] = {}
    last_end: dict[tuple[int, int], int] = {}
    for run in sorted(ops, key=lambda r: r.op.start_ns):
        op = run.op
        task_id = task_ids[run.device_id] = task_ids.get(run.device_id, -1) + 1
        key = (run.device_id, run.stream_id)
        wait = max(op.start_ns - last_end[key], 0) if key in last_end else 0
        last_end[key] = op.end_ns
        rows.append(
            [
                str(run.device_id),
                run.model_name,
                str(run.model_id),
                str(task_id),
                str(run.stream_id),
                str(run.infer_id),
                op.name,
                op.op_type,
                OP_TASK_TYPE,
                _us(op.start_ns),
                _us(op.duration_ns),
                _us(wait),
                NOT_AVAILABLE,
                _shapes(op.inputs),
                _dtypes(op.inputs),
                _formats(op.inputs),
                _shapes(op.outputs),
                _dtypes(op.outputs),
                _formats(op.outputs),
                NOT_AVAILABLE,
                NOT_AVAILABLE,
            ]
        )
    return rows


def task_rows(ops: Iterable[OpRun], tasks: Iterable[TaskRun]) -> list[list[str]]:
    """Every operator (``AI_CPU``) and every other stream task, in start order."""
    items = [(r.op.start_ns, r.op.end_ns, r.device_id, r.op.name, OP_TASK_TYPE, r.stream_id) for r in ops]
    for task in tasks:
        kind = _TASK_TYPES.get(task.name.partition(":")[0], task.name.partition(":")[0].upper())
        items.append((task.start_ns, task.end_ns, task.device_id, task.name, kind, task.stream_id))
    rows = []
    task_ids: dict[int, int] = {}
    for start, end, device_id, name, kind, stream_id in sorted(items, key=lambda item: item[0]):
        task_id = task_ids[device_id] = task_ids.get(device_id, -1) + 1
        rows.append([str(device_id), name, kind, str(stream_id), str(task_id), _us(end - start), _us(start), _us(end)])
    return rows


def write_csv(path: str, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Write a CSV file atomically (a temporary file renamed over ``path``)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            writer.writerows(rows)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
