"""The one place a dump file's name and bytes are put together, for one operator of one execution.

A model's operators see the same tensor layouts run after run, so each planned operator keeps what never changes
(its name prefix, its header template) in an :class:`OpRecord`; :meth:`OpRecord.record` then makes the file of
one execution: its name, its parts (header and zero-copy tensor views, or the stats CSV) and which parts view
memory the program owns (``borrowed``, copied before a callback can see them: see ``sink``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import NamedTuple

import numpy as np

from openacl.dump import format as dump_format
from openacl.dump import naming


class Record(NamedTuple):
    """One dump file: its name in the step directory, its parts in order, the parts that are borrowed, and its
    size in bytes (the parts' lengths: each part is bytes or a memoryview of format ``"B"``)."""

    name: str
    parts: list[bytes | memoryview]
    borrowed: frozenset[int]
    size: int


_NONE_BORROWED: frozenset[int] = frozenset()


class OpRecord:
    """What never changes between runs for one planned operator: its slots, its name prefix, its header.

    ``inputs`` and ``outputs`` are the slot indices the dump mode selects; ``index`` is the operator's index in
    the model, the file name's task id (stable from run to run, so two dumps of one model pair up by name).
    """

    __slots__ = ("index", "inputs", "name", "outputs", "prefix", "template")

    def __init__(self, index: int, op_type: str, op_name: str, inputs: Sequence[int], outputs: Sequence[int]):
        self.index = index
        self.name = op_name
        self.inputs, self.outputs = tuple(inputs), tuple(outputs)
        self.prefix = naming.file_name_prefix(op_type, op_name, index)
        self.template: dump_format.HeaderTemplate | None = None

    def record(
        self,
        inputs: Sequence[np.ndarray | None],
        outputs: Sequence[np.ndarray | None],
        stream_id: int,
        stats: Sequence[str] | None = None,
        borrowed: Collection[int] = (),
    ) -> Record:
        """This execution's file of the operator, from its input and output arrays by slot (only the selected
        slots are read; the others may be None). ``stats``: the ``dump_stats`` items of a stats dump (a CSV
        file), None for tensors. ``borrowed``: ``id()`` of the arrays that view the program's memory."""
        inputs = [inputs[i] for i in self.inputs]
        outputs = [outputs[i] for i in self.outputs]
        stamp = naming.now_us()
        name = naming.file_name_with_prefix(self.prefix, stream_id, stamp)
        if stats is not None:
            csv = dump_format.stats_csv(inputs, outputs, stats).encode()
            return Record(name + ".csv", [csv], _NONE_BORROWED, len(csv))
        template = self.template
        if template is None or template.layout != dump_format.layout_key(inputs, outputs):
            template = self.template = dump_format.HeaderTemplate(self.name, inputs, outputs)
        parts = template.parts(inputs, outputs, stamp)
        lent = _NONE_BORROWED
        if borrowed:
            lent = frozenset(1 + i for i, array in enumerate((*inputs, *outputs)) if id(array) in borrowed)
        return Record(name, parts, lent, sum(map(len, parts)))
