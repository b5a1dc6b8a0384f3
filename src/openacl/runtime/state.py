"""Process state: ``acl.init`` / ``acl.finalize`` and the configuration file.

``acl.init`` reads an optional JSON file. As CANN does, it refuses a file that cannot be read
(``ACL_ERROR_INVALID_FILE``), one that is too large (``ACL_ERROR_INVALID_FILE_SIZE``), and one that is not a
JSON object or nests ``{`` or ``[`` more than 10 deep (``ACL_ERROR_PARSE_FILE``). Sections it does not know
are kept; the ``"dump"`` section is kept for the dump configuration.

Runtime calls (devices, streams, memory) do not require ``acl.init``, as in CANN's runtime; ``finalize``
resets every device still open, after its queued work has finished.

The one place the runtime reaches sideways into its sibling rooms (``dump``, ``model``), lazily: ``acl.init``
owns the configuration, so it hands the ``"dump"`` section to the dump manager (a bad one fails ``init``), and
``finalize`` delivers every dump file and unloads the models after the devices have drained.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading

from openacl import log as _log
from openacl import trace
from openacl.errors import AclCode, AclError
from openacl.runtime import device, exceptions, timeouts

MAX_NESTING = 10
MAX_CONFIG_BYTES = 10 * 1024 * 1024

_lock = threading.RLock()
_ref_count = 0
config: dict = {}


def is_initialized() -> bool:
    return _ref_count > 0


def check_nesting(text: str, limit: int = MAX_NESTING) -> None:
    """Reject JSON whose ``{`` or ``[`` nesting exceeds ``limit`` before any parser recurses into it."""
    depth = {"{": 0, "[": 0}
    closing = {"}": "{", "]": "["}
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in depth:
            depth[ch] += 1
            if depth[ch] > limit:
                raise AclError(AclCode.ACL_ERROR_PARSE_FILE, f"JSON nests '{ch}' more than {limit} deep")
        elif ch in closing:
            depth[closing[ch]] = max(depth[closing[ch]] - 1, 0)


def read_config(path: str) -> dict:
    """Parse an ``acl.init`` / ``set_dump`` JSON file."""
    try:
        size = os.path.getsize(path)
        if not os.path.isfile(path):
            raise OSError("not a regular file")
        if size > MAX_CONFIG_BYTES:
            raise AclError(AclCode.ACL_ERROR_INVALID_FILE_SIZE, f"{path}: {size} bytes, more than {MAX_CONFIG_BYTES}")
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except (OSError, ValueError) as exc:
        raise AclError(AclCode.ACL_ERROR_INVALID_FILE, f"cannot read config file {path!r}: {exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AclError(AclCode.ACL_ERROR_PARSE_FILE, f"{path}: not UTF-8 ({exc})") from None
    if not text.strip():
        return {}
    check_nesting(text)
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise AclError(AclCode.ACL_ERROR_PARSE_FILE, f"{path}: invalid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise AclError(AclCode.ACL_ERROR_PARSE_FILE, f"{path}: the top level must be a JSON object")
    return parsed


def _release_models_and_dumps() -> None:
    """After the devices drained: every dump file delivered, dump settings dropped, models unloaded."""
    from openacl.dump import manager as dump
    from openacl.model import model

    dump.reset()
    model.unload_all()


def init(config_path: str | None = None) -> None:
    global _ref_count, config
    with _lock:
        if _ref_count > 0:
            _ref_count += 1
            raise AclError(AclCode.ACL_ERROR_REPEAT_INITIALIZE, "acl.init was already called", level=logging.WARNING)
        _log.configure()
        trace.configure_from_env()
        parsed = read_config(config_path) if config_path else {}
        from openacl.dump import manager as dump  # the dump section is checked before init succeeds

        dump.on_acl_init(parsed.get("dump"))
        config = parsed
        _ref_count = 1


def finalize() -> None:
    global _ref_count, config
    with _lock:
        if _ref_count == 0:
            raise AclError(AclCode.ACL_ERROR_REPEAT_FINALIZE, "acl.finalize without a matching acl.init")
        device.teardown_all()
        _release_models_and_dumps()
        _ref_count = 0
        config = {}
    _write_trace()


def finalize_reference() -> int:
    """Drop one ``acl.init`` reference; finalize when none is left. Returns the references left."""
    global _ref_count
    with _lock:
        if _ref_count == 0:
            raise AclError(AclCode.ACL_ERROR_REPEAT_FINALIZE, "acl.finalize_reference without acl.init")
        if _ref_count == 1:
            finalize()
            return 0
        _ref_count -= 1
        return _ref_count


def reset(force: bool = True) -> None:
    """Return the process to its starting state (tests, process exit): every device reset, tracing off.

    A trace file set up by ``OPENACL_TRACE`` or ``--trace`` is written first, with everything recorded.
    At exit the reset is forced: work still queued is dropped rather than risk waiting on a thread that
    will never serve it. Call ``acl.finalize`` to have queued work finish first.
    """
    global _ref_count, config
    with _lock:
        device.teardown_all(force)
        _release_models_and_dumps()
        exceptions.reset()
        timeouts.reset()
        _ref_count = 0
        config = {}
    _write_trace()
    trace.disable()


def _write_trace() -> None:
    """Write the trace file (``OPENACL_TRACE`` / ``--trace``) if one is set up; never raises."""
    if trace.output_path() is None:
        return
    try:
        trace.flush()
    except Exception as exc:
        _log.root.error("cannot write the trace file %s: %s", trace.output_path(), exc)


# A program traced by ``OPENACL_TRACE`` records from the start, even one that never calls ``acl.init``.
trace.configure_from_env()


@atexit.register
def _at_exit() -> None:
    try:
        reset()
    except Exception:  # never let cleanup turn a clean exit into a traceback
        _log.root.exception("cleanup at exit failed")
