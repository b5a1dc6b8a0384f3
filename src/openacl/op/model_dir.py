"""``set_model_dir`` / ``load``: where CANN finds operators compiled offline (single-operator ``.om`` files).

openacl compiles every operator of its op table on demand, so no ``.om`` is needed and none can be read
(they hold Ascend kernels). How an operator is matched: by its type in the op table, its descs and its
attributes (``openacl.op.compiled``), whatever folder was set. ``set_model_dir`` checks that the folder exists
and lists the ``.om`` files it and up to three levels below it hold (as CANN searches), logging one warning that
names how many are ignored; ``load`` checks its memory and ignores the model the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import memory

log = get_logger("op")

MAX_DEPTH = 3  # CANN loads .om files in the folder and up to three levels below it
_INVALID = AclCode.ACL_ERROR_INVALID_PARAM
_max_queue = [0]  # aclopSetMaxOpQueueNum's value (0: not set); recorded, no queue to bound


def om_files(folder: Path) -> list[Path]:
    """The ``.om`` files in ``folder`` and up to ``MAX_DEPTH`` levels below it, sorted."""
    found = []
    base_depth = len(folder.parts)
    for root, dirs, files in os.walk(folder):
        depth = len(Path(root).parts) - base_depth
        if depth >= MAX_DEPTH:
            dirs[:] = []
        found += [Path(root) / name for name in files if name.endswith(".om")]
    return sorted(found)


def set_model_dir(path: str) -> list[Path]:
    folder = Path(path)
    try:
        is_folder = bool(path) and folder.is_dir()
    except OSError as exc:  # a name too long, a loop of links ...: no folder there either
        raise AclError(_INVALID, f"model dir {path[:80]!r}...: {exc.strerror}") from None
    if not is_folder:
        raise AclError(_INVALID, f"model dir {path!r} is not a folder")
    ignored = om_files(folder)
    if ignored:
        log.warning(
            "acl.op.set_model_dir: %d .om file(s) under %s ignored (e.g. %s); operators come from openacl's op table",
            len(ignored),
            folder,
            ignored[0].name,
        )
    return ignored


def load(addr: int, size: int) -> None:
    if size == 0:
        raise AclError(_INVALID, "an operator model of 0 bytes")
    memory.region_for(addr, size, "operator model")
    log.warning("acl.op.load: a %d-byte .om model ignored; operators come from openacl's op table", size)


def set_max_op_queue_num(count: int) -> None:
    if count == 0:
        raise AclError(_INVALID, "max op queue num must be positive")
    _max_queue[0] = count


def max_op_queue_num() -> int:
    return _max_queue[0]
