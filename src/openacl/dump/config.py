"""The ``"dump"`` JSON section of ``acl.init``'s file and of ``acl.mdl.set_dump(path)``'s file.

:func:`parse_dump_section` checks the section the way CANN's ``DumpConfigConverter`` (adump,
``dump_config_converter.cpp``) does, in the same three stages, and returns a frozen :class:`DumpConfig`:

1. **Each key on its own** (type, then value): one small validator per key, registered in
   :data:`_SECTION_KEYS` (and :data:`_ENTRY_KEYS` for the items of ``dump_list``). Every scalar must be a JSON
   string, as CANN's ``CheckDumpFieldTypes`` requires, so ``"dump_step": 5`` is refused.
2. **Keys against each other** (:func:`_check_constraints`): exception scenes and watcher mode forbid other keys,
   ``dump_path`` must exist as a readable and writable directory unless an exception scene is asked for,
   ``dump_debug: "on"`` excludes ``dump_list`` and ``dump_op_switch: "on"``, blacklists and ``opname_range``
   need ``dump_level: "op"``, ``dump_stats`` needs ``dump_data: "stats"``.
3. **What has no effect here** is logged once per parse, as a WARNING.

Any refusal raises ``AclError(ACL_ERROR_INVALID_DUMP_CONFIG, "<key>: <why>")``; ``<key>`` is the path of the
offending value as CANN spells it (``dump_list[0].layer[2]``). The facade logs it when it returns the code.

Which models, operators, steps and tensors a ``DumpConfig`` dumps is :mod:`openacl.dump.selection`'s to say.

Unknown keys are logged as a WARNING and ignored rather than refused: CANN reads only the keys it knows and
ignores the rest, so a configuration written for another CANN version keeps working; the warning catches typos.
For the same reason a value CANN accepts but that can select nothing (a blacklist entry without a name, a
``pos`` that is not ``inputN``/``outputN``) is a WARNING, not a refusal. One difference: ``dump_step``'s syntax
is checked whenever the key is present, where CANN skips it when ``dump_debug`` is ``"on"``.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openacl import jsonfile
from openacl.dump.format import DEFAULT_STATS, STATS_ITEMS
from openacl.errors import AclCode, AclError
from openacl.log import get_logger

__all__ = [
    "DEFAULT_STATS",
    "KNOWN_STATS",
    "BlacklistEntry",
    "DumpConfig",
    "ModelRule",
    "StepSet",
    "load_dump_config",
    "parse_dump_section",
]

log = get_logger("dump")

KNOWN_STATS = tuple(STATS_ITEMS)  # dump_format.md §5 order; format.py's table is the one list of items
MAX_DUMP_PATH_LENGTH = 512
MAX_STEP_ITEMS = 100
MAX_BLACKLIST_SIZE = 100

DUMP_MODES = ("input", "output", "all")
DUMP_DATA = ("tensor", "stats")
DUMP_LEVELS = ("op", "kernel", "all")
SWITCH = ("on", "off")
EXCEPTION_SCENES = ("lite_exception", "aic_err_brief_dump", "aic_err_norm_dump", "aic_err_detail_dump")
WATCHER = "watcher"
DUMP_SCENES = (*EXCEPTION_SCENES, WATCHER)
KERNEL_DATA = ("all", "printf", "tensor", "assert", "timestamp")

# Keys an exception scene / watcher mode does not allow next to it (adump CheckExceptionDumpScene / ...Watcher...).
_EXCEPTION_FORBIDS = (
    "dump_mode",
    "dump_level",
    "dump_data",
    "dump_debug",
    "dump_op_switch",
    "dump_kernel_data",
    "dump_step",
    "dump_stats",
    "dump_list",
)
_WATCHER_FORBIDS = ("dump_level", "dump_data", "dump_kernel_data", "dump_step", "dump_stats")

_STEP_BOUND = re.compile(r"[0-9]+")
_POSITION = re.compile(r"(input|output)([0-9]+)")
_IPV4_PART = re.compile(r"[0-9]{1,3}")
# Characters CANN allows in the directory part of a remote "ip:path" dump_path (acl dump.cpp IsValidDirStr).
_REMOTE_DIR = re.compile(r"[A-Za-z0-9\-=\[\];\\,./!@#$%^&*()_+{}:?]*")


def _invalid(path: str, why: str) -> AclError:
    return AclError(AclCode.ACL_ERROR_INVALID_DUMP_CONFIG, f"{path}: {why}")


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# ----- the validated configuration -----


@dataclass(frozen=True)
class BlacklistEntry:
    """One ``{"name": ..., "pos": [...]}`` item of ``optype_blacklist`` / ``opname_blacklist``.

    ``name`` is an operator type or name. ``pos`` entries ``"inputN"`` / ``"outputN"`` exclude those slots;
    ``pos`` absent or ``[]`` excludes the whole operator (``whole_op``). Positions not of that form are dropped
    with a warning, as GE does (``DumpManager::ExtractBlacklist``), and do not widen the entry to the whole op.
    """

    name: str
    inputs: frozenset[int] = frozenset()
    outputs: frozenset[int] = frozenset()
    whole_op: bool = False


@dataclass(frozen=True)
class ModelRule:
    """One ``dump_list`` entry (:mod:`openacl.dump.selection` applies it). ``model_name`` None: every model."""

    model_name: str | None = None
    layer: tuple[str, ...] = ()
    opname_blacklist: tuple[BlacklistEntry, ...] = ()
    optype_blacklist: tuple[BlacklistEntry, ...] = ()
    opname_range: tuple[tuple[str, str], ...] = ()
    watcher_nodes: tuple[str, ...] = ()  # kept as parsed; watcher mode has no effect in openacl


class StepSet:
    """The steps ``dump_step`` names: ``"0|5|10-20"``, items ``N`` or ``N-M`` (decimal digits, ``N <= M``).

    Items are kept as sorted, merged inclusive ranges; ``str()`` renders the canonical form.
    """

    __slots__ = ("_ends", "_ranges", "_starts")

    def __init__(self, ranges: Iterable[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(ranges):
            if start > end:
                raise ValueError(f"range {start}-{end} starts after it ends")
            if merged and start <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self._ranges = tuple(merged)
        self._starts = [r[0] for r in merged]
        self._ends = [r[1] for r in merged]

    @classmethod
    def parse(cls, text: str, key: str = "dump_step") -> StepSet:
        """Parse ``text``; raise ``ACL_ERROR_INVALID_DUMP_CONFIG`` naming ``key`` (and the item) when it is bad."""
        items = text.split("|")
        if len(items) > MAX_STEP_ITEMS:
            raise _invalid(key, f"has {len(items)} items, more than {MAX_STEP_ITEMS}")
        ranges = []
        for i, item in enumerate(items):
            bounds = item.split("-")
            if len(bounds) > 2 or not all(_STEP_BOUND.fullmatch(b) for b in bounds):
                raise _invalid(f"{key}[{i}]", f"{item!r} is not N or N-M in decimal digits (e.g. '0|5|10-20')")
            start, end = int(bounds[0]), int(bounds[-1])
            if start > end:
                raise _invalid(f"{key}[{i}]", f"{item!r} starts after it ends")
            ranges.append((start, end))
        return cls(ranges)

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:
        return self._ranges

    def __contains__(self, step: object) -> bool:
        if not isinstance(step, int):
            return False
        i = bisect.bisect_right(self._starts, step) - 1
        return i >= 0 and step <= self._ends[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StepSet) and self._ranges == other._ranges

    def __hash__(self) -> int:
        return hash(self._ranges)

    def __str__(self) -> str:
        return "|".join(str(a) if a == b else f"{a}-{b}" for a, b in self._ranges)

    def __repr__(self) -> str:
        return f"StepSet({str(self)!r})"


@dataclass(frozen=True)
class DumpConfig:
    """A validated ``"dump"`` section. Defaults are CANN's (§4.4): outputs, tensors, every step."""

    dump_path: str | None = None  # absolute for a local directory; an "ip:path" remote path is kept as written
    dump_list: tuple[ModelRule, ...] = ()
    dump_mode: str = "output"
    dump_data: str = "tensor"
    dump_stats: tuple[str, ...] = DEFAULT_STATS  # in KNOWN_STATS order, no repeats
    dump_step: StepSet | None = None  # None: every step
    dump_op_switch: bool = False
    dump_level: str = "all"
    dump_debug: bool = False
    dump_scene: str | None = None
    dump_kernel_data: tuple[str, ...] = ()  # () when absent

    @classmethod
    def default(cls, dump_path: str | None = None) -> DumpConfig:
        """``init_dump`` with a callback and no configuration: every operator of every model, outputs, tensors."""
        return cls(dump_path=dump_path, dump_list=(ModelRule(),))

    @property
    def model_dump_enabled(self) -> bool:
        """Whether any model is dumped: a ``dump_list`` entry or ``dump_op_switch`` on, and no exception scene,
        watcher mode or overflow dump (see :mod:`openacl.dump.selection`)."""
        if self.dump_scene is not None or self.dump_debug:
            return False
        return bool(self.dump_list) or self.dump_op_switch

    @property
    def remote_dump_path(self) -> bool:
        """``dump_path`` is CANN's ``ip:path`` form: openacl cannot write there, only a dump callback gets data."""
        return self.dump_path is not None and _remote_dir(self.dump_path) is not None


# ----- stage 1: each key on its own -----


def _string(path: str, value: object) -> str:
    if not isinstance(value, str):
        raise _invalid(path, f"must be a JSON string, not {_json_type(value)}")
    return value


def _choice(path: str, value: object, allowed: Sequence[str]) -> str:
    text = _string(path, value)
    if not text:
        raise _invalid(path, "is empty")
    if text not in allowed:
        raise _invalid(path, f"{text!r} is not one of {', '.join(allowed)}")
    return text


def _strings(path: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _invalid(path, f"must be an array, not {_json_type(value)}")
    return tuple(_string(f"{path}[{i}]", item) for i, item in enumerate(value))


def _objects(path: str, value: object) -> list[dict]:
    if not isinstance(value, list):
        raise _invalid(path, f"must be an array, not {_json_type(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise _invalid(f"{path}[{i}]", f"must be an object, not {_json_type(item)}")
    return value


def _warn_unknown(path: str, obj: Mapping[str, object], known: Iterable[str]) -> None:
    for key in obj:
        if key not in known:
            where = f"{path}.{key}" if path else key
            log.warning("dump config: unknown key %r ignored (CANN ignores it too; is it misspelled?)", where)


def _dump_path(path: str, value: object) -> str:
    return _string(path, value)  # checked against the file system in stage 2, where CANN checks it


def _dump_mode(path: str, value: object) -> str:
    return _choice(path, value, DUMP_MODES)


def _dump_data(path: str, value: object) -> str:
    return _choice(path, value, DUMP_DATA)


def _dump_level(path: str, value: object) -> str:
    return _choice(path, value, DUMP_LEVELS)


def _on_off(path: str, value: object) -> bool:
    return _choice(path, value, SWITCH) == "on"


def _dump_scene(path: str, value: object) -> str:
    return _choice(path, value, DUMP_SCENES)


def _dump_kernel_data(path: str, value: object) -> tuple[str, ...]:
    items = _string(path, value).split(",")
    return tuple(_choice(path, item, KERNEL_DATA) for item in items)


def _dump_step(path: str, value: object) -> StepSet | None:
    text = _string(path, value)
    return StepSet.parse(text, path) if text else None


def _dump_stats(path: str, value: object) -> tuple[str, ...]:
    items = _strings(path, value)
    for i, item in enumerate(items):
        _choice(f"{path}[{i}]", item, KNOWN_STATS)
    return tuple(stat for stat in KNOWN_STATS if stat in items)


@dataclass
class _Entry:
    """A ``dump_list`` item as written; ``None`` marks an absent key (CANN's ``isModelName`` / ``isLayer``)."""

    model_name: str | None = None
    layer: tuple[str, ...] | None = None
    watcher_nodes: tuple[str, ...] = ()
    optype_blacklist: tuple[BlacklistEntry, ...] = ()
    opname_blacklist: tuple[BlacklistEntry, ...] = ()
    opname_range: tuple[tuple[str, str], ...] = ()


def _blacklist(path: str, value: object) -> tuple[BlacklistEntry, ...]:
    entries = []
    for i, item in enumerate(_objects(path, value)):
        where = f"{path}[{i}]"
        _warn_unknown(where, item, ("name", "pos"))
        name = _string(f"{where}.name", item["name"]) if "name" in item else ""
        pos = _strings(f"{where}.pos", item["pos"]) if "pos" in item else ()
        if not name:
            log.warning("dump config: %s has no name, so it excludes nothing", where)
        inputs: set[int] = set()
        outputs: set[int] = set()
        for p in pos:
            match = _POSITION.fullmatch(p)
            if match is None:
                log.warning("dump config: %s.pos %r is not inputN or outputN; ignored (as CANN does)", where, p)
                continue
            (inputs if match[1] == "input" else outputs).add(int(match[2]))
        entries.append(BlacklistEntry(name, frozenset(inputs), frozenset(outputs), whole_op=not pos))
    return tuple(entries)


def _opname_range(path: str, value: object) -> tuple[tuple[str, str], ...]:
    ranges = []
    for i, item in enumerate(_objects(path, value)):
        where = f"{path}[{i}]"
        _warn_unknown(where, item, ("begin", "end"))
        begin = _string(f"{where}.begin", item["begin"]) if "begin" in item else ""
        end = _string(f"{where}.end", item["end"]) if "end" in item else ""
        ranges.append((begin, end))
    return tuple(ranges)


def _set_model_name(entry: _Entry, path: str, value: object) -> None:
    entry.model_name = _string(path, value)


def _set_layer(entry: _Entry, path: str, value: object) -> None:
    entry.layer = _strings(path, value)


def _set_watcher_nodes(entry: _Entry, path: str, value: object) -> None:
    entry.watcher_nodes = _strings(path, value)


def _set_optype_blacklist(entry: _Entry, path: str, value: object) -> None:
    entry.optype_blacklist = _blacklist(path, value)


def _set_opname_blacklist(entry: _Entry, path: str, value: object) -> None:
    entry.opname_blacklist = _blacklist(path, value)


def _set_opname_range(entry: _Entry, path: str, value: object) -> None:
    entry.opname_range = _opname_range(path, value)


_ENTRY_KEYS: dict[str, Callable[[_Entry, str, object], None]] = {
    "model_name": _set_model_name,
    "layer": _set_layer,
    "watcher_nodes": _set_watcher_nodes,
    "optype_blacklist": _set_optype_blacklist,
    "opname_blacklist": _set_opname_blacklist,
    "opname_range": _set_opname_range,
}


def _dump_list(path: str, value: object) -> tuple[_Entry, ...]:
    entries = []
    for i, item in enumerate(_objects(path, value)):
        where = f"{path}[{i}]"
        _warn_unknown(where, item, _ENTRY_KEYS)
        entry = _Entry()
        for key, setter in _ENTRY_KEYS.items():
            if key in item:
                setter(entry, f"{where}.{key}", item[key])
        entries.append(entry)
    return tuple(entries)


_SECTION_KEYS: dict[str, Callable[[str, object], Any]] = {
    "dump_path": _dump_path,
    "dump_mode": _dump_mode,
    "dump_op_switch": _on_off,
    "dump_level": _dump_level,
    "dump_scene": _dump_scene,
    "dump_data": _dump_data,
    "dump_debug": _on_off,
    "dump_kernel_data": _dump_kernel_data,
    "dump_step": _dump_step,
    "dump_stats": _dump_stats,
    "dump_list": _dump_list,
}


# ----- stage 2: keys against each other -----


def _remote_dir(dump_path: str) -> str | None:
    """The directory part of CANN's ``ip:path`` form (an IPv4 address, a colon, a path), else None."""
    host, colon, rest = dump_path.partition(":")
    if not colon or not rest:
        return None
    parts = host.split(".")
    if len(parts) != 4 or not all(_IPV4_PART.fullmatch(p) and int(p) <= 255 for p in parts):
        return None
    return rest


def _checked_dump_path(raw: str | None) -> str:
    """adump ``CheckDumpPath``: present, non-empty, at most 512 characters, an existing R/W directory."""
    if raw is None:
        raise _invalid("dump_path", "is required (model, single-operator, overflow, watcher and kernel dumps)")
    if not raw:
        raise _invalid("dump_path", "is empty")
    if len(raw) > MAX_DUMP_PATH_LENGTH:
        raise _invalid("dump_path", f"is {len(raw)} characters long, more than {MAX_DUMP_PATH_LENGTH}")
    remote = _remote_dir(raw)
    if remote is not None:
        if not _REMOTE_DIR.fullmatch(remote):
            raise _invalid("dump_path", f"{remote!r} after the IP address has characters a path may not have")
        return raw
    if not os.path.exists(raw):
        raise _invalid("dump_path", f"{raw!r} does not exist")
    if not os.path.isdir(raw):
        raise _invalid("dump_path", f"{raw!r} is not a directory")
    if not os.access(raw, os.R_OK | os.W_OK):
        raise _invalid("dump_path", f"{raw!r} is not readable and writable")
    return os.path.abspath(raw)


def _cannot_with(path: str, other: str, value: str) -> AclError:
    return _invalid(path, f"cannot be set when {other} is {value!r}")


def _check_scene(section: Mapping[str, object], values: Mapping[str, Any]) -> None:
    scene = values.get("dump_scene")
    if scene is None:
        return
    if scene != WATCHER:
        for key in _EXCEPTION_FORBIDS:
            if key in section:
                raise _cannot_with(key, "dump_scene", scene)
        return
    if values.get("dump_debug"):
        raise _invalid("dump_debug", "cannot be 'on' when dump_scene is 'watcher'")
    if values.get("dump_op_switch"):
        raise _invalid("dump_op_switch", "cannot be 'on' when dump_scene is 'watcher'")
    if values.get("dump_mode", "output") != "output":
        raise _invalid("dump_mode", f"must be 'output' when dump_scene is 'watcher', not {values['dump_mode']!r}")
    for key in _WATCHER_FORBIDS:
        if key in section:
            raise _cannot_with(key, "dump_scene", WATCHER)


def _check_entry(where: str, entry: _Entry, values: Mapping[str, Any]) -> None:
    """adump ``CheckDumpListItems`` for one item."""
    scene = values.get("dump_scene")
    level = values.get("dump_level", "all")
    if not values.get("dump_op_switch"):
        if entry.model_name == "":
            raise _invalid(f"{where}.model_name", "is empty")
        if entry.layer == ():
            raise _invalid(f"{where}.layer", "is empty (leave it out to dump every operator)")
    if scene == WATCHER:
        if not entry.watcher_nodes:
            raise _invalid(f"{where}.watcher_nodes", "is required (non-empty) when dump_scene is 'watcher'")
        if entry.model_name:
            raise _cannot_with(f"{where}.model_name", "dump_scene", WATCHER)
    elif entry.watcher_nodes:
        raise _invalid(f"{where}.watcher_nodes", "can only be set when dump_scene is 'watcher'")
    for key in ("optype_blacklist", "opname_blacklist"):
        entries = getattr(entry, key)
        if len(entries) > MAX_BLACKLIST_SIZE:
            raise _invalid(f"{where}.{key}", f"has {len(entries)} entries, more than {MAX_BLACKLIST_SIZE}")
    for key in ("optype_blacklist", "opname_blacklist", "opname_range"):
        if getattr(entry, key) and level != "op":
            raise _invalid(f"{where}.{key}", f"can only be set when dump_level is 'op' (it is {level!r})")
    if entry.opname_range:
        if entry.model_name is None:
            raise _invalid(f"{where}.model_name", "is required when opname_range is set")
        if not entry.model_name:
            raise _invalid(f"{where}.model_name", "is empty")
        for i, (begin, end) in enumerate(entry.opname_range):
            if not begin or not end:
                raise _invalid(f"{where}.opname_range[{i}]", "needs a non-empty begin and end")


def _check_constraints(section: Mapping[str, object], values: dict[str, Any]) -> None:
    """adump ``CheckDumpConstraints``, in its order. Replaces ``values["dump_path"]`` by the checked path."""
    _check_scene(section, values)
    if values.get("dump_scene") not in (None, WATCHER):
        return  # exception dump: dump_path is optional and not checked (env variables may override it)
    values["dump_path"] = _checked_dump_path(values.get("dump_path"))
    if values.get("dump_debug"):
        if values.get("dump_op_switch"):
            raise _invalid("dump_op_switch", "cannot be 'on' when dump_debug is 'on'")
        if "dump_list" in section:
            raise _cannot_with("dump_list", "dump_debug", "on")
        return
    for i, entry in enumerate(values.get("dump_list", ())):
        _check_entry(f"dump_list[{i}]", entry, values)
    if "dump_stats" in section:
        if not values["dump_stats"]:
            raise _invalid("dump_stats", "is empty (leave it out for the default items)")
        if values.get("dump_data", "tensor") != "stats":
            raise _invalid("dump_stats", "can only be set when dump_data is 'stats'")


# ----- stage 3: what has no effect here -----


def _warn_no_effect(config: DumpConfig) -> None:
    reasons = []
    if config.dump_scene in EXCEPTION_SCENES:
        reasons.append(("dump_scene", f"{config.dump_scene!r} dumps operators that raise an AI Core error"))
    elif config.dump_scene == WATCHER:
        reasons.append(("dump_scene", "'watcher' looks for operators overwriting others' device memory"))
    if config.dump_debug:
        reasons.append(("dump_debug", "'on' dumps operators that overflow on an AI Core"))
    if config.dump_kernel_data:
        reasons.append(("dump_kernel_data", "Ascend C kernel debug data comes from kernels openacl does not run"))
    if config.dump_level == "kernel":
        reasons.append(("dump_level", "'kernel': openacl's operators have no separate kernels; ops are dumped"))
    if config.remote_dump_path:
        reasons.append(("dump_path", f"{config.dump_path!r} is on a remote host; only a dump callback gets data"))
    for key, why in reasons:
        log.warning("dump config: %s has no effect in openacl: %s", key, why)
    if not reasons and not config.model_dump_enabled:
        log.warning("dump config: no dump_list entry and dump_op_switch is off, so no model is dumped")


# ----- entry points -----


def parse_dump_section(section: object) -> DumpConfig:
    """Validate the value of the ``"dump"`` key and return its :class:`DumpConfig` (see the module docstring).

    An empty object is valid and dumps nothing, as in CANN. Raises ``AclError(ACL_ERROR_INVALID_DUMP_CONFIG,
    "<key>: <why>")``.
    """
    if not isinstance(section, dict):
        raise _invalid("dump", f"must be a JSON object, not {_json_type(section)}")
    _warn_unknown("", section, _SECTION_KEYS)
    if not section:
        return DumpConfig()
    values: dict[str, Any] = {}
    for key, validate in _SECTION_KEYS.items():
        if key in section:
            values[key] = validate(key, section[key])
    _check_constraints(section, values)
    rules = tuple(
        ModelRule(
            model_name=entry.model_name or None,
            layer=entry.layer or (),
            opname_blacklist=entry.opname_blacklist,
            optype_blacklist=entry.optype_blacklist,
            opname_range=entry.opname_range,
            watcher_nodes=entry.watcher_nodes,
        )
        for entry in values.pop("dump_list", ())
    )
    config = DumpConfig(dump_list=rules, **values)
    _warn_no_effect(config)
    return config


def load_dump_config(path: str) -> DumpConfig:
    """``acl.mdl.set_dump(path)``: read the file (its errors pass through) and parse its ``"dump"`` object."""
    document = jsonfile.read_config(path)
    if "dump" not in document:
        raise _invalid("dump", f'{path} has no "dump" object')
    return parse_dump_section(document["dump"])
