"""Version stamps: how a cached plan sees that a host object it was worked out from has changed.

Every change of a tensor desc, an op attribute or a data buffer, and its destruction, gives the object a fresh
stamp from one process-wide counter. A plan keeps the stamps it saw; equal stamps now mean the objects are as
they were, without reading (or re-checking) any of their contents. Stamps are never reused, so an object changed
and changed back still reads as changed.

Invariant: a writer changes the object's contents first and stamps it last; a reader reads the stamp first and the
contents after. A reader racing a change so either sees the new stamp, or keeps the old one and finds it stale at
its next look.

The epoch: after every change's stamp is set (``renew``), ``epoch`` moves on to a value it has never had. A reader
that read ``epoch`` first, then found every stamp it keeps unchanged, may skip reading them again while ``epoch`` is
still that value: no stamp was set since (each value is written once, so ``epoch`` never comes back to it, even if a
writer that was interrupted between drawing its value and writing it writes an older one later). A change whose
stamp is set but whose epoch is not yet written is still under way: the reader sees it at its next look, as above.
"""

from __future__ import annotations

import itertools

_counter = itertools.count(1)  # next() of a C iterator is atomic under the GIL: no two objects share a stamp
_epochs = itertools.count(1)

#: Moves on after each change's stamp is set (``renew``); never takes a value twice.
epoch = 0


def stamp() -> int:
    """A stamp no object has had before (for a new object: no plan can hold an object made after it)."""
    return next(_counter)


def renew(obj: object) -> None:
    """``obj``'s contents have changed (or it is destroyed): a new stamp, then a new epoch."""
    global epoch
    object.__setattr__(obj, "version", next(_counter))
    epoch = next(_epochs)
