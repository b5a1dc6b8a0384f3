"""Compare two CANN dump trees operator by operator, as msaccucmp's ``compare -m NPU -g GOLDEN [-f RULE]`` does.

``compare_dumps(a, b)`` pairs the dump files of ``a`` (the run under test, usually the NPU; msaccucmp's ``-m``)
with those of ``b`` (the golden run, usually the CPU; msaccucmp's ``-g``), compares every input and output tensor
and marks the first tensor, in the execution order of ``a``, whose error passes a threshold: that is where the
run under test starts to diverge from the golden one.

Three steps, one module each:

1. :mod:`openacl.tools.pairing` finds the dump files of both sides and says which file of A is compared with
   which of B (fusion rule, structure, names).
2. This module reads each pair of files and walks their inputs and outputs; :mod:`openacl.tools.metrics` compares
   each pair of tensors (layouts, metrics, thresholds) into one :class:`~openacl.tools.metrics.TensorComparison`.
3. :mod:`openacl.tools.report` writes the result as CSV, as a table on a console, or as one summary line.
"""

from __future__ import annotations

import os
import pathlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from openacl.dump.format import sanitize
from openacl.dump.reader import DumpFile, read_dump
from openacl.tools.fusion_rule import read_fusion_rule
from openacl.tools.metrics import DEFAULT_THRESHOLDS, Judge, TensorComparison, Thresholds, compare_tensor, not_compared
from openacl.tools.pairing import Entry, pair_dumps

__all__ = ["CompareResult", "compare_dumps"]


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


def _read(path: pathlib.Path, cache: dict[pathlib.Path, DumpFile]) -> DumpFile:
    if path not in cache:
        cache[path] = read_dump(path)
    return cache[path]


def _compare_files(
    entry: Entry, judge: Judge, by_name_b: dict[str, list[Entry]], counted: list[int]
) -> list[TensorComparison]:
    op_type, op_name, _ = entry.key
    assert entry.partner is not None
    cache: dict[pathlib.Path, DumpFile] = {}
    dumps = []
    for side, path in (("A", entry.path), ("B", entry.partner.path)):
        try:
            dumps.append(_read(path, cache))
        except (OSError, ValueError) as exc:
            return [not_compared(op_type, op_name, "-", f"unreadable in {side}: {exc}")]
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
                        rows.append(not_compared(op_type, op_name, tensor, f"unreadable in B: {exc}"))
                        continue
                    target_b, target_infos = other.outputs, other.output_info
                    target_name = other.op_name or origin_name
            if i >= len(tensors_a):
                y = target_b[j]
                row = not_compared(op_type, op_name, tensor, "missing in A", tuple(y.shape), str(y.dtype))
            elif j >= len(target_b):
                x = tensors_a[i]
                row = not_compared(op_type, op_name, tensor, "missing in B", tuple(x.shape), str(x.dtype))
            else:
                info_a = infos_a[i] if i < len(infos_a) else None
                info_b = target_infos[j] if j < len(target_infos) else None
                row = compare_tensor(op_type, op_name, tensor, tensors_a[i], target_b[j], judge, info_a, info_b)
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
    ``{dump_path}/{time}/{device}/{model}/{model_id}`` or one ``{step}`` below it). Pairing is
    :mod:`openacl.tools.pairing`'s; layouts, metrics and thresholds are :mod:`openacl.tools.metrics`'s:
    ``max_abs``, ``max_rel``, ``max_rel_l2`` and ``min_cosine`` override one threshold for every dtype,
    ``thresholds`` replaces :data:`~openacl.tools.metrics.DEFAULT_THRESHOLDS`. ``fusion_rule``
    is msaccucmp's ``-f`` file (:func:`openacl.tools.fusion_rule.read_fusion_rule`; ``FusionRuleError`` if it
    cannot be read). ``progress(done, total)`` is called after each pair of files. ``FileNotFoundError`` if
    ``a`` or ``b`` does not exist.
    """
    judge = Judge(
        {"max_abs": max_abs, "max_rel": max_rel, "max_rel_l2": max_rel_l2, "min_cosine": min_cosine},
        thresholds or DEFAULT_THRESHOLDS,
    )
    rule = read_fusion_rule(fusion_rule) if fusion_rule is not None else None
    pairing = pair_dumps(a, b, rule)
    entries_a, entries_b = pairing.a, pairing.b
    by_name_b: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries_b:
        by_name_b[entry.key[1]].append(entry)

    total = sum(1 for entry in entries_a if entry.partner is not None)
    done = 0
    counted = [0]
    rows: list[TensorComparison] = []
    for entry in entries_a:
        if entry.partner is None:
            rows.append(not_compared(entry.key[0], entry.key[1], "-", "missing in B"))
            continue
        rows.extend(_compare_files(entry, judge, by_name_b, counted))
        done += 1
        if progress is not None:
            progress(done, total)
    rows.extend(
        not_compared(entry.key[0], entry.key[1], "-", "missing in A") for entry in entries_b if entry.partner is None
    )
    first = next((row for row in rows if row.exceeds), None)
    return CompareResult(
        rows,
        first,
        pairing.only_in_a,
        pairing.only_in_b,
        operators=total,
        skipped=pairing.skipped,
        bytes_read=counted[0],
    )
