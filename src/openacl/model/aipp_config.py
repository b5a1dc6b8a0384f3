"""ATC's AIPP config text (the file ``--insert_op_conf`` names), read as ATC reads it.

The file is protobuf text of ``InsertNewOps``: one ``aipp_op { ... }`` block per AIPP'd input, each a flat list
of ``key : value`` fields (``#`` starts a comment; values are numbers, ``true``/``false``, or enum names such as
``YUV420SP_U8``, with or without quotes). Only the block structure and the field syntax are checked here; what
the fields mean is :mod:`openacl.model.aipp`'s job.
"""

from __future__ import annotations

import re

from openacl.errors import AclCode, AclError

METADATA_KEY = "insert_op_conf"  # the ONNX metadata key holding the text, named after ATC's option
LAYOUT_KEY = "input_format"  # the ONNX metadata key naming the inputs' layout, after ATC's --input_format

_PARSE = AclCode.ACL_ERROR_PARSE_MODEL
_BLOCK = re.compile(r"aipp_op\s*:?\s*\{([^{}]*)\}")
_FIELD = re.compile(r"(\w+)\s*:\s*(\"[^\"]*\"|'[^']*'|[\w.+\-]+)")


def _strip_comments(text: str) -> str:
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def blocks(text: str) -> list[dict[str, str]]:
    """Each ``aipp_op`` block's fields, values as written (quotes removed); the last of a repeated field wins."""
    body = _strip_comments(text)
    found = _BLOCK.findall(body)
    if not found:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: no 'aipp_op {{ ... }}' block")
    rest = _BLOCK.sub("", body).strip()
    if rest:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: text outside an aipp_op block: {rest[:40]!r}")
    parsed = []
    for block in found:
        fields = {key: value.strip("\"'") for key, value in _FIELD.findall(block)}
        leftover = _FIELD.sub("", block).strip()
        if leftover:
            raise AclError(_PARSE, f"metadata {METADATA_KEY}: cannot read {leftover[:40]!r} in an aipp_op block")
        parsed.append(fields)
    return parsed


def integer(fields: dict[str, str], key: str, default: int | None) -> int:
    """An integer field; ``default`` when absent (None: the field is required)."""
    if key not in fields:
        if default is None:
            raise AclError(_PARSE, f"metadata {METADATA_KEY}: {key} is required")
        return default
    try:
        return int(fields[key])
    except ValueError:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: {key}={fields[key]!r} is not an integer") from None


def number(fields: dict[str, str], key: str, default: float) -> float:
    if key not in fields:
        return default
    try:
        return float(fields[key])
    except ValueError:
        raise AclError(_PARSE, f"metadata {METADATA_KEY}: {key}={fields[key]!r} is not a number") from None


def switch(fields: dict[str, str], key: str) -> bool:
    """A bool field (``true``/``false``, or 1/0 as protobuf text also reads them); absent is false."""
    value = fields.get(key, "false").lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise AclError(_PARSE, f"metadata {METADATA_KEY}: {key}={fields[key]!r} is not true or false")
