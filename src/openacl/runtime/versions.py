"""Version stamps: how a cached plan sees that a host object it was worked out from has changed.

Every change of a tensor desc, an op attribute or a data buffer, and its destruction, gives the object a fresh
stamp from one process-wide counter. A plan keeps the stamps it saw; equal stamps now mean the objects are as
they were, without reading (or re-checking) any of their contents. Stamps are never reused, so an object changed
and changed back still reads as changed.

Invariant: a writer changes the object's contents first and stamps it last; a reader reads the stamp first and the
contents after. A reader racing a change so either sees the new stamp, or keeps the old one and finds it stale at
its next look.
"""

from __future__ import annotations

import itertools

_counter = itertools.count(1)  # next() of a C iterator is atomic under the GIL: no two objects share a stamp


def stamp() -> int:
    """A stamp no object has had before."""
    return next(_counter)
