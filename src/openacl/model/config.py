"""Load configs (``aclmdlConfigHandle``) and execution configs (``aclmdlExecConfigHandle``).

A load config collects ``set_config_opt`` attributes; ``load_with_config`` checks them as CANN's
``CheckMdlConfigHandle`` does and loads through the same paths as ``load_from_file`` / ``_mem`` /
``_with_mem``. What each attribute means here:

- ``ACL_MDL_PRIORITY_INT32`` (0): must lie in the stream-priority range (0..7, as
  ``device_get_stream_priority_range`` reports); recorded on the model (``Model.priority``). onnxruntime has no
  priorities, so it orders nothing.
- ``ACL_MDL_LOAD_TYPE_SIZET`` (1): 1 file, 2 file with memory, 3 memory, 4 memory with memory, 5 and 6 with queues.
  Queue loads pass CANN's checks and then fail with ``ACL_ERROR_FEATURE_UNSUPPORTED``: openacl has no
  hardware queues to bind a model's inputs and outputs to.
- ``ACL_MDL_PATH_PTR`` (2) the model file; ``ACL_MDL_MEM_ADDR_PTR`` / ``ACL_MDL_MEM_SIZET`` (3, 4) the model bytes.
- ``ACL_MDL_WEIGHT_ADDR_PTR`` / ``_SIZET`` (5, 6) and ``ACL_MDL_WORKSPACE_ADDR_PTR`` / ``_SIZET`` (7, 8): lent
  memory, checked as ``load_from_file_with_mem`` checks it, for load types 2 and 4.
- ``ACL_MDL_INPUTQ_*`` / ``ACL_MDL_OUTPUTQ_*`` (9-12): recorded, required by the queue load types.
- ``ACL_MDL_WORKSPACE_MEM_OPTIMIZE`` (13): recorded; there is no workspace to optimise.
- ``ACL_MDL_WEIGHT_PATH_PTR`` (14): recorded; CANN refuses it for file loads (and for memory-with-memory loads).

Any other attribute is ``ACL_ERROR_INVALID_PARAM``, as CANN answers for attributes past 14. pyACL hands the C
function an 8-byte value for every attribute but the priority, so ``ACL_MDL_WITHOUT_GRAPH_INT32`` (28, an int32)
fails CANN's value-size check: also ``ACL_ERROR_INVALID_PARAM``.

An execution config takes ``ACL_MDL_STREAM_SYNC_TIMEOUT`` (0) and ``ACL_MDL_EVENT_SYNC_TIMEOUT`` (1), int32
milliseconds from -1 (wait forever) up; pyACL passes a uint32, so ``0xFFFFFFFF`` is -1 and values past 2**31 are
negative and refused. The other attributes (work memory, the reserved QoS ones) are refused as CANN's current
release does. ``execute_v2`` uses the stream timeout (``openacl.model.execute``'s callers wait that long).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.model import execute as _execute
from openacl.model import model as _model
from openacl.runtime import platform
from openacl.runtime.handles import HandleTable
from openacl.runtime.sched.stream import Stream

log = get_logger("model")

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM

# aclmdlConfigAttr
PRIORITY, LOAD_TYPE, PATH, MEM_ADDR, MEM_SIZE = 0, 1, 2, 3, 4
WEIGHT_ADDR, WEIGHT_SIZE, WORKSPACE_ADDR, WORKSPACE_SIZE = 5, 6, 7, 8
INPUTQ_NUM, INPUTQ_ADDR, OUTPUTQ_NUM, OUTPUTQ_ADDR = 9, 10, 11, 12
WORKSPACE_MEM_OPTIMIZE, WEIGHT_PATH = 13, 14
WITHOUT_GRAPH = 28
LAST_CONFIG_ATTR = WEIGHT_PATH

# ACL_MDL_LOAD_FROM_*
FROM_FILE, FROM_FILE_WITH_MEM, FROM_MEM, FROM_MEM_WITH_MEM, FROM_FILE_WITH_Q, FROM_MEM_WITH_Q = 1, 2, 3, 4, 5, 6

# aclmdlExecConfigAttr
STREAM_SYNC_TIMEOUT, EVENT_SYNC_TIMEOUT = 0, 1
INT32_MAX = (1 << 31) - 1


@dataclass
class LoadConfig:
    """One ``aclmdlConfigHandle``: the attributes set so far (``values``, by attribute number)."""

    values: dict[int, object] = field(default_factory=dict)

    def has(self, attr: int) -> bool:
        return attr in self.values

    def get(self, attr: int, default: object = 0) -> object:
        return self.values.get(attr, default)


@dataclass
class ExecConfig:
    """One ``aclmdlExecConfigHandle``; -1 is "wait forever"."""

    stream_sync_timeout_ms: int = -1
    event_sync_timeout_ms: int = -1

    @property
    def stream_timeout_s(self) -> float | None:
        return None if self.stream_sync_timeout_ms < 0 else self.stream_sync_timeout_ms / 1000


load_configs: HandleTable[LoadConfig] = HandleTable("model load config")
exec_configs: HandleTable[ExecConfig] = HandleTable("model execution config")


def create_config() -> int:
    return load_configs.add(LoadConfig())


def destroy_config(handle: int) -> None:
    load_configs.remove(handle)


def set_config_opt(handle: int, attr: int, value: object) -> None:
    """``value`` as pyACL converted it: an int32 for the priority, a str for the path, an int otherwise."""
    config = load_configs.get(handle)
    if attr == WITHOUT_GRAPH:
        raise AclError(_INVALID, "ACL_MDL_WITHOUT_GRAPH_INT32 is an int32; pyACL passes 8 bytes (valueSize check)")
    if not 0 <= attr <= LAST_CONFIG_ATTR:
        raise AclError(_INVALID, f"model load config attribute {attr} is invalid, it should be in [0, 14]")
    if attr == PRIORITY:
        lowest, highest = platform.stream_priority_range()
        if not highest <= value <= lowest:  # type: ignore[operator]
            raise AclError(_INVALID, f"model priority {value} is not in [{highest}, {lowest}]")
    elif attr == LOAD_TYPE and not FROM_FILE <= value <= FROM_MEM_WITH_Q:  # type: ignore[operator]
        raise AclError(_INVALID, f"model load type {value} is invalid, it should be in [1, 6]")
    elif attr in (MEM_ADDR, WEIGHT_PATH) and value == 0:
        raise AclError(_INVALID, f"model load config attribute {attr}: the pointer is null")
    config.values[attr] = value


def _missing(config: LoadConfig, attrs: tuple[int, ...], what: str) -> None:
    for attr in attrs:
        if not config.has(attr):
            raise AclError(_INVALID, f"load config: {what} (attribute {attr}) is not set")


def _check(config: LoadConfig) -> int:
    """CANN's ``CheckMdlConfigHandle``: the attributes each load type needs. Returns the load type."""
    _missing(config, (LOAD_TYPE,), "ACL_MDL_LOAD_TYPE_SIZET")
    load_type = int(config.get(LOAD_TYPE))  # type: ignore[arg-type]
    from_file = load_type in (FROM_FILE, FROM_FILE_WITH_MEM, FROM_FILE_WITH_Q)
    if from_file:
        _missing(config, (PATH,), "the model path (ACL_MDL_PATH_PTR)")
        if config.has(WEIGHT_PATH):
            raise AclError(_INVALID, "load config: ACL_MDL_WEIGHT_PATH_PTR is not allowed when loading from a file")
    else:
        _missing(config, (MEM_ADDR, MEM_SIZE), "the model memory (ACL_MDL_MEM_ADDR_PTR and ACL_MDL_MEM_SIZET)")
        if load_type == FROM_MEM_WITH_MEM and config.has(WEIGHT_PATH):
            raise AclError(_INVALID, "load config: ACL_MDL_WEIGHT_PATH_PTR is not allowed with FROM_MEM_WITH_MEM")
    if load_type in (FROM_FILE_WITH_Q, FROM_MEM_WITH_Q):
        _missing(config, (INPUTQ_ADDR, INPUTQ_NUM, OUTPUTQ_ADDR, OUTPUTQ_NUM), "the model's queues")
    return load_type


def load_with_config(handle: int) -> _model.Model:
    config = load_configs.get(handle)
    load_type = _check(config)
    path = str(config.get(PATH, ""))
    addr, size = int(config.get(MEM_ADDR)), int(config.get(MEM_SIZE))  # type: ignore[arg-type]
    work = int(config.get(WORKSPACE_ADDR)), int(config.get(WORKSPACE_SIZE))  # type: ignore[arg-type]
    weight = int(config.get(WEIGHT_ADDR)), int(config.get(WEIGHT_SIZE))  # type: ignore[arg-type]
    if load_type in (FROM_FILE_WITH_Q, FROM_MEM_WITH_Q):
        raise AclError(
            AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, "loading a model with queues: openacl has no hardware queues"
        )
    if load_type == FROM_FILE:
        model = _model.load_from_file(path)
    elif load_type == FROM_FILE_WITH_MEM:
        model = _model.load_from_file_with_mem(path, *work, *weight)
    elif load_type == FROM_MEM:
        model = _model.load_from_memory(addr, size)
    else:
        model = _model.load_from_mem_with_mem(addr, size, *work, *weight)
    model.priority = int(config.get(PRIORITY))  # type: ignore[attr-defined, arg-type]
    return model


# ----- execution configs -----


def create_exec_config() -> int:
    return exec_configs.add(ExecConfig())


def destroy_exec_config(handle: int) -> None:
    exec_configs.remove(handle)


def set_exec_config_opt(handle: int, attr: int, value: int) -> None:
    """``value`` is pyACL's uint32, read as CANN reads it: an int32."""
    config = exec_configs.get(handle)
    if attr not in (STREAM_SYNC_TIMEOUT, EVENT_SYNC_TIMEOUT):
        raise AclError(_INVALID, f"model execution config attribute {attr} is invalid, it should be in [0, 1]")
    timeout = value - (1 << 32) if value > INT32_MAX else value
    if timeout < -1:
        raise AclError(_INVALID, f"timeout {timeout} ms is invalid, it should be -1 (forever) or more")
    if attr == STREAM_SYNC_TIMEOUT:
        config.stream_sync_timeout_ms = timeout
    else:
        config.event_sync_timeout_ms = timeout


def get_exec_config(handle: int) -> ExecConfig:
    return exec_configs.get(handle)


def execute_v2(model: _model.Model, input_dataset: int, output_dataset: int, stream: Stream, handle: int) -> None:
    """``aclmdlExecuteV2``: synchronous, as CANN documents it ("until the result is returned"). The model runs
    as a task of ``stream``, after what the stream already holds, and the call waits for the stream, at most
    the config's ``ACL_MDL_STREAM_SYNC_TIMEOUT`` (507046 past it). A null config is ``ACL_ERROR_INVALID_PARAM``."""
    if handle == 0:
        raise AclError(_INVALID, "execute_v2: the execution config handle is null")
    config = exec_configs.get(handle)
    _execute.execute_async(model, input_dataset, output_dataset, stream)
    stream.synchronize(config.stream_timeout_s)
