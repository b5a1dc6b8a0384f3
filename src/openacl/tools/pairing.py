"""Which dump file of A (the run under test) is compared with which of B (the golden run).

:func:`pair_dumps` finds the dump files under both roots, puts each side in execution order and links each file
of A to at most one file of B. It reads no tensor data: only file names, ``mapping.csv`` and, for the structural
step, the headers.

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
are paired; stats-mode dumps (``*.csv``) hold no tensor data and are listed in :attr:`Pairing.skipped` with the
reason, as are files whose names are not dump file names.
"""

from __future__ import annotations

import difflib
import os
import pathlib
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from openacl.dump.format import MAPPING_FILE_NAME, sanitize
from openacl.dump.reader import Names, find_dump_files, read_header
from openacl.tools.fusion_rule import FusedOp

__all__ = ["STATS_REASON", "Entry", "Pairing", "match_key", "pair_dumps"]

#: The reason :attr:`Pairing.skipped` gives for a stats-mode dump.
STATS_REASON = "stats-mode dump (CSV): holds no tensor data, only binary dumps are compared"


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
class Entry:
    """One dump file of one side; ``partner`` is the file of the other side it is compared with, if any."""

    path: pathlib.Path
    key: tuple[str, str, int]
    order: tuple[int, int, str]
    partner: Entry | None = None
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


def _collect(root: str | os.PathLike[str], skipped: list[tuple[str, str]]) -> list[Entry]:
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
        entries.append(Entry(path, (op_type, op_name, task_id), (timestamp, task_id, str(path))))
    entries.sort(key=lambda entry: entry.order)
    return entries


def _link(a: Entry, b: Entry, how: str) -> None:
    a.partner, b.partner, a.how, b.how = b, a, how, how


def _pair_by(a: list[Entry], b: list[Entry], key: Callable[[Entry], tuple]) -> None:
    """Pair the still unpaired entries of ``a`` and ``b`` with equal ``key``, k-th occurrence with k-th."""
    waiting: dict[tuple, list[Entry]] = defaultdict(list)
    for entry in b:
        if entry.partner is None:
            waiting[key(entry)].append(entry)
    for entry in a:
        if entry.partner is None:
            queue = waiting.get(key(entry))
            if queue:
                _link(entry, queue.pop(0), "name")


def _pair_by_fusion(a: list[Entry], b: list[Entry], rule: dict[str, FusedOp]) -> None:
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


def _pair_by_structure(a: list[Entry], b: list[Entry]) -> None:
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


@dataclass
class Pairing:
    """Both sides' dump files in execution order, each linked to its partner or not, and what was left out.

    ``skipped`` lists ``(path, reason)`` for files that are not compared at all (stats CSVs, names that are not
    dump file names).
    """

    a: list[Entry]
    b: list[Entry]
    skipped: list[tuple[str, str]]

    @property
    def only_in_a(self) -> list[str]:
        """The op names (as in the file names) of A that B does not have at all, in A's order."""
        names_b = {entry.key[1] for entry in self.b}
        return _unique(entry.key[1] for entry in self.a if entry.key[1] not in names_b)

    @property
    def only_in_b(self) -> list[str]:
        """The op names of B that A does not have at all, in B's order."""
        names_a = {entry.key[1] for entry in self.a}
        return _unique(entry.key[1] for entry in self.b if entry.key[1] not in names_a)


def pair_dumps(a: str | os.PathLike[str], b: str | os.PathLike[str], rule: dict[str, FusedOp] | None = None) -> Pairing:
    """Find the dump files of ``a`` and ``b`` and pair them, in the order of the module docstring.

    ``rule`` is a read fusion rule (:func:`openacl.tools.fusion_rule.read_fusion_rule`), or ``None``.
    """
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
    return Pairing(entries_a, entries_b, skipped)
