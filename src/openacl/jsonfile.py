"""The JSON-file rules that ``acl.init`` and ``acl.mdl.set_dump`` share.

As CANN does, a file that cannot be read is ``ACL_ERROR_INVALID_FILE``, one that is too large
``ACL_ERROR_INVALID_FILE_SIZE``, and one that is not a JSON object or nests ``{`` or ``[`` more than 10 deep
``ACL_ERROR_PARSE_FILE``. An empty file is an empty configuration.
"""

from __future__ import annotations

import os

from openacl import lazy
from openacl.errors import AclCode, AclError

json = lazy.module("json")  # loaded by the first config read, not by import acl

MAX_NESTING = 10
MAX_CONFIG_BYTES = 10 * 1024 * 1024


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
