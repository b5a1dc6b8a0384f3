"""Every vendor error code openacl can return, with its message, in one table.

pyACL returns plain integers (``aclError``) whose names and numbers are fixed by CANN's headers:
``acl_base_rt.h`` (ACL common codes), ``error_codes/rt_error_codes.h`` (runtime codes) and
``error_codes/ge_error_codes.h`` (GE model codes). The GE session API returns ``ge::Status`` values built by
the ``GE_ERRORNO`` bit-field formula. Keeping all of them, and their one-line messages, in this single module
means no other module spells a number or writes an error text of its own: the facade returns
``int(AclCode.X)``, the log lines and exceptions take their words from :data:`MESSAGES`, and a test checks the
numbers against the vendor headers once.

Floor 1 of the package: this module imports only the standard library.
"""

from __future__ import annotations

import enum
import logging

__all__ = [
    "MESSAGES",
    "AclCode",
    "AclError",
    "CodedError",
    "ExecutionFailed",
    "GeError",
    "GeStatus",
    "code_name",
    "ge_status_code",
    "message",
]


class AclCode(enum.IntEnum):
    """``aclError`` values with CANN's exact names (aliases share a value with the first name)."""

    # acl_base_rt.h
    ACL_SUCCESS = 0
    ACL_ERROR_NONE = 0
    ACL_RT_SUCCESS = 0
    ACL_ERROR_INVALID_EXCEPTION_INFO = -1

    ACL_ERROR_INVALID_PARAM = 100000
    ACL_ERROR_UNINITIALIZE = 100001
    ACL_ERROR_REPEAT_INITIALIZE = 100002
    ACL_ERROR_INVALID_FILE = 100003
    ACL_ERROR_WRITE_FILE = 100004
    ACL_ERROR_INVALID_FILE_SIZE = 100005
    ACL_ERROR_PARSE_FILE = 100006
    ACL_ERROR_FILE_MISSING_ATTR = 100007
    ACL_ERROR_FILE_ATTR_INVALID = 100008
    ACL_ERROR_INVALID_DUMP_CONFIG = 100009
    ACL_ERROR_INVALID_PROFILING_CONFIG = 100010
    ACL_ERROR_INVALID_MODEL_ID = 100011
    ACL_ERROR_DESERIALIZE_MODEL = 100012
    ACL_ERROR_PARSE_MODEL = 100013
    ACL_ERROR_READ_MODEL_FAILURE = 100014
    ACL_ERROR_MODEL_SIZE_INVALID = 100015
    ACL_ERROR_MODEL_MISSING_ATTR = 100016
    ACL_ERROR_MODEL_INPUT_NOT_MATCH = 100017
    ACL_ERROR_MODEL_OUTPUT_NOT_MATCH = 100018
    ACL_ERROR_MODEL_NOT_DYNAMIC = 100019
    ACL_ERROR_OP_TYPE_NOT_MATCH = 100020
    ACL_ERROR_OP_INPUT_NOT_MATCH = 100021
    ACL_ERROR_OP_OUTPUT_NOT_MATCH = 100022
    ACL_ERROR_OP_ATTR_NOT_MATCH = 100023
    ACL_ERROR_OP_NOT_FOUND = 100024
    ACL_ERROR_OP_LOAD_FAILED = 100025
    ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026
    ACL_ERROR_FORMAT_NOT_MATCH = 100027
    ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED = 100028
    ACL_ERROR_KERNEL_NOT_FOUND = 100029
    ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED = 100030
    ACL_ERROR_KERNEL_ALREADY_REGISTERED = 100031
    ACL_ERROR_INVALID_QUEUE_ID = 100032
    ACL_ERROR_REPEAT_SUBSCRIBE = 100033
    ACL_ERROR_STREAM_NOT_SUBSCRIBE = 100034
    ACL_ERROR_THREAD_NOT_SUBSCRIBE = 100035
    ACL_ERROR_WAIT_CALLBACK_TIMEOUT = 100036
    ACL_ERROR_REPEAT_FINALIZE = 100037
    ACL_ERROR_NOT_STATIC_AIPP = 100038
    ACL_ERROR_COMPILING_STUB_MODE = 100039
    ACL_ERROR_GROUP_NOT_SET = 100040
    ACL_ERROR_GROUP_NOT_CREATE = 100041
    ACL_ERROR_PROF_ALREADY_RUN = 100042
    ACL_ERROR_PROF_NOT_RUN = 100043
    ACL_ERROR_DUMP_ALREADY_RUN = 100044
    ACL_ERROR_DUMP_NOT_RUN = 100045
    ACL_ERROR_PROF_REPEAT_SUBSCRIBE = 148046
    ACL_ERROR_PROF_API_CONFLICT = 148047
    ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG = 148048
    ACL_ERROR_INVALID_OPP_PATH = 148049
    ACL_ERROR_OP_UNSUPPORTED_DYNAMIC = 148050
    ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED = 148051
    ACL_ERROR_UNSUPPORTED_JPEG = 148052
    ACL_ERROR_INVALID_BUNDLE_MODEL_ID = 148053

    ACL_ERROR_BAD_ALLOC = 200000
    ACL_ERROR_API_NOT_SUPPORT = 200001
    ACL_ERROR_INVALID_DEVICE = 200002
    ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003
    ACL_ERROR_RESOURCE_NOT_MATCH = 200004
    ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005
    ACL_ERROR_FEATURE_UNSUPPORTED = 200006
    ACL_ERROR_PROF_MODULES_UNSUPPORTED = 200007

    ACL_ERROR_STORAGE_OVER_LIMIT = 300000

    ACL_ERROR_INTERNAL_ERROR = 500000
    ACL_ERROR_FAILURE = 500001
    ACL_ERROR_GE_FAILURE = 500002
    ACL_ERROR_RT_FAILURE = 500003
    ACL_ERROR_DRV_FAILURE = 500004
    ACL_ERROR_PROFILING_FAILURE = 500005

    # error_codes/rt_error_codes.h
    ACL_ERROR_RT_PARAM_INVALID = 107000
    ACL_ERROR_RT_INVALID_DEVICEID = 107001
    ACL_ERROR_RT_CONTEXT_NULL = 107002
    ACL_ERROR_RT_STREAM_CONTEXT = 107003
    ACL_ERROR_RT_MODEL_CONTEXT = 107004
    ACL_ERROR_RT_STREAM_MODEL = 107005
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006
    ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007
    ACL_ERROR_RT_ADDR_UNALIGNED = 107008
    ACL_ERROR_RT_FILE_OPEN = 107009
    ACL_ERROR_RT_FILE_WRITE = 107010
    ACL_ERROR_RT_STREAM_SUBSCRIBE = 107011
    ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012
    ACL_ERROR_RT_GROUP_NOT_SET = 107013
    ACL_ERROR_RT_GROUP_NOT_CREATE = 107014
    ACL_ERROR_RT_STREAM_NO_CB_REG = 107015
    ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016
    ACL_ERROR_RT_INVALID_HANDLE = 107017
    ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018
    ACL_ERROR_RT_WAIT_TIMEOUT = 107019
    ACL_ERROR_RT_TASK_TIMEOUT = 107020
    ACL_ERROR_RT_SYSPARAMOPT_NOT_SET = 107021
    ACL_ERROR_RT_DEVICE_TASK_ABORT = 107022
    ACL_ERROR_RT_STREAM_ABORT = 107023
    ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024
    ACL_ERROR_RT_STREAM_UNJOINED = 107025
    ACL_ERROR_RT_MODEL_CAPTURED = 107026
    ACL_ERROR_RT_STREAM_CAPTURED = 107027
    ACL_ERROR_RT_EVENT_CAPTURED = 107028
    ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029
    ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030
    ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031
    ACL_ERROR_STREAM_CAPTURE_CONFLICT = 107032
    ACL_ERROR_STREAM_TASK_GROUP_STATUS = 107033
    ACL_ERROR_STREAM_TASK_GROUP_INTR = 107034
    ACL_ERROR_RT_TASK_ABORT_STOP = 107035
    ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED = 107036
    ACL_ERROR_RT_MODEL_RUNNING = 107037
    ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038
    ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY = 107039
    ACL_ERROR_RT_MODEL_UPDATE_FAILED = 107040
    ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC = 107041
    ACL_ERROR_RT_SYMBOL_NOT_FOUND = 107042
    ACL_ERROR_RT_INVALID_SYMBOL = 107043
    ACL_ERROR_RT_INVALID_DEVICE_FUNCTION = 107044
    ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING = 107045

    ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000
    ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
    ACL_ERROR_RT_MEMORY_FREE = 207002
    ACL_ERROR_RT_AICORE_OVER_FLOW = 207003
    ACL_ERROR_RT_NO_DEVICE = 207004
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005
    ACL_ERROR_RT_NO_PERMISSION = 207006
    ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007
    ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
    ACL_ERROR_RT_NO_NOTIFY_RESOURCE = 207009
    ACL_ERROR_RT_NO_MODEL_RESOURCE = 207010
    ACL_ERROR_RT_NO_CDQ_RESOURCE = 207011
    ACL_ERROR_RT_OVER_LIMIT = 207012
    ACL_ERROR_RT_QUEUE_EMPTY = 207013
    ACL_ERROR_RT_QUEUE_FULL = 207014
    ACL_ERROR_RT_REPEATED_INIT = 207015
    ACL_ERROR_RT_AIVEC_OVER_FLOW = 207016
    ACL_ERROR_RT_OVER_FLOW = 207017
    ACL_ERROR_RT_DEVICE_OOM = 207018
    ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP = 207019
    ACL_ERROR_RT_TIMEOUT = 207020
    ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED = 207021

    ACL_ERROR_RT_INTERNAL_ERROR = 507000
    ACL_ERROR_RT_TS_ERROR = 507001
    ACL_ERROR_RT_STREAM_TASK_FULL = 507002
    ACL_ERROR_RT_STREAM_TASK_EMPTY = 507003
    ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004
    ACL_ERROR_RT_END_OF_SEQUENCE = 507005
    ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006
    ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007
    ACL_ERROR_RT_SOC_VERSION = 507008
    ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT = 507009
    ACL_ERROR_RT_LOST_HEARTBEAT = 507010
    ACL_ERROR_RT_MODEL_EXECUTE = 507011
    ACL_ERROR_RT_REPORT_TIMEOUT = 507012
    ACL_ERROR_RT_SYS_DMA = 507013
    ACL_ERROR_RT_AICORE_TIMEOUT = 507014
    ACL_ERROR_RT_AICORE_EXCEPTION = 507015
    ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016
    ACL_ERROR_RT_AICPU_TIMEOUT = 507017
    ACL_ERROR_RT_AICPU_EXCEPTION = 507018
    ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR = 507019
    ACL_ERROR_RT_AICPU_MODEL_RSP_ERR = 507020
    ACL_ERROR_RT_PROFILING_ERROR = 507021
    ACL_ERROR_RT_IPC_ERROR = 507022
    ACL_ERROR_RT_MODEL_ABORT_NORMAL = 507023
    ACL_ERROR_RT_KERNEL_UNREGISTERING = 507024
    ACL_ERROR_RT_RINGBUFFER_NOT_INIT = 507025
    ACL_ERROR_RT_RINGBUFFER_NO_DATA = 507026
    ACL_ERROR_RT_KERNEL_LOOKUP = 507027
    ACL_ERROR_RT_KERNEL_DUPLICATE = 507028
    ACL_ERROR_RT_DEBUG_REGISTER_FAIL = 507029
    ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL = 507030
    ACL_ERROR_RT_LABEL_CONTEXT = 507031
    ACL_ERROR_RT_PROGRAM_USE_OUT = 507032
    ACL_ERROR_RT_DEV_SETUP_ERROR = 507033
    ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034
    ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035
    ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036
    ACL_ERROR_RT_CDQ_BATCH_ABNORMAL = 507037
    ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR = 507038
    ACL_ERROR_RT_DIE_SET_ERROR = 507039
    ACL_ERROR_RT_INVALID_DIEID = 507040
    ACL_ERROR_RT_DIE_MODE_NOT_SET = 507041
    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042
    ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043
    ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW = 507044
    ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW = 507045
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047
    ACL_ERROR_RT_FFTS_PLUS_TIMEOUT = 507048
    ACL_ERROR_RT_FFTS_PLUS_EXCEPTION = 507049
    ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION = 507050
    ACL_ERROR_RT_SEND_MSG = 507051
    ACL_ERROR_RT_COPY_DATA = 507052
    ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053
    ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054
    ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR = 507055
    ACL_ERROR_RT_LINK_ERROR = 507056
    ACL_ERROR_RT_SUSPECT_REMOTE_ERROR = 507057
    ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899
    ACL_ERROR_RT_AICPU_INTERNAL_ERROR = 507900
    ACL_ERROR_RT_SOCKET_CLOSE = 507901
    ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR = 507902
    ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903
    ACL_ERROR_RT_COMM_OP_RETRY_FAIL = 507904
    ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT = 507905
    ACL_ERROR_SNAPSHOT_LOCK_FAILED = 507906
    ACL_ERROR_SNAPSHOT_UNLOCK_FAILED = 507907
    ACL_ERROR_SNAPSHOT_BACKUP_FAILED = 507908
    ACL_ERROR_SNAPSHOT_RESTORE_FAILED = 507909
    ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 507910
    ACL_ERROR_HOST_MEMORY_NOT_REGISTERED = 507911
    ACL_ERROR_SNAPSHOT_CALLBACK_FAILED = 507912
    ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED = 507913
    ACL_ERROR_RT_L3_PORT_ERROR = 507914
    ACL_ERROR_RT_CCU_TIMEOUT = 507915
    ACL_ERROR_RT_CCU_EXCEPTION = 507916

    # error_codes/ge_error_codes.h
    ACL_ERROR_GE_PARAM_INVALID = 145000
    ACL_ERROR_GE_EXEC_NOT_INIT = 145001
    ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID = 145002
    ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003
    ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID = 145006
    ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID = 145007
    ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID = 145008
    ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED = 145009
    ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID = 145011
    ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID = 145012
    ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID = 145013
    ACL_ERROR_GE_AIPP_BATCH_EMPTY = 145014
    ACL_ERROR_GE_AIPP_NOT_EXIST = 145015
    ACL_ERROR_GE_AIPP_MODE_INVALID = 145016
    ACL_ERROR_GE_OP_TASK_TYPE_INVALID = 145017
    ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID = 145018
    ACL_ERROR_GE_PLGMGR_PATH_INVALID = 145019
    ACL_ERROR_GE_FORMAT_INVALID = 145020
    ACL_ERROR_GE_SHAPE_INVALID = 145021
    ACL_ERROR_GE_DATATYPE_INVALID = 145022
    ACL_ERROR_GE_MEMORY_ALLOCATION = 245000
    ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001
    ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002
    ACL_ERROR_GE_SUBHEALTHY = 345102
    ACL_ERROR_GE_USER_RAISE_EXCEPTION = 345103
    ACL_ERROR_GE_DATA_NOT_ALIGNED = 345104
    ACL_ERROR_GE_INTERNAL_ERROR = 545000
    ACL_ERROR_GE_LOAD_MODEL = 545001
    ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED = 545002
    ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED = 545003
    ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED = 545004
    ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED = 545005
    ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA = 545006
    ACL_ERROR_GE_COMMAND_HANDLE = 545007
    ACL_ERROR_GE_GET_TENSOR_INFO = 545008
    ACL_ERROR_GE_UNLOAD_MODEL = 545009
    ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT = 545601
    ACL_ERROR_GE_REDEPLOYING = 545602


_GE_FIELDS = (
    ("runtime", 2, 30),
    ("type", 2, 28),
    ("level", 3, 25),
    ("sysid", 8, 17),
    ("modid", 5, 12),
    ("value", 12, 0),
)


def ge_status_code(runtime: int, type: int, level: int, sysid: int, modid: int, value: int) -> int:
    """``GE_ERRORNO``: ``runtime<<30 | type<<28 | level<<25 | sysid<<17 | modid<<12 | value``, 32 bits.

    GE's inner codes use runtime=1 (host), type=1 (error code), level=0, sysid=8 (GE) and a module id
    (COMMON=0, CLIENT=1, INIT=2, SESSION=3, GRAPH=4). Raises ``ValueError`` when a field overflows its width.
    """
    code = 0
    fields = (runtime, type, level, sysid, modid, value)
    for (name, width, shift), field in zip(_GE_FIELDS, fields, strict=True):
        if not 0 <= field < (1 << width):
            raise ValueError(f"GE status field {name}={field} does not fit in {width} bits")
        code |= field << shift
    return code


class GeStatus(enum.IntEnum):
    """``ge::Status`` values of the GE session API (``ge_api_error_codes.h``, ``ge_inner_error_codes.h``)."""

    SUCCESS = 0
    FAILED = 0xFFFFFFFF
    PARAM_INVALID = 1343225857
    INTERNAL_ERROR = 1343225860
    END_OF_SEQUENCE = 1343225863
    UNSUPPORTED = 1343225956
    GE_CLI_GE_NOT_INITIALIZED = 1343229963
    GE_SESS_INIT_FAILED = 1343238144
    GE_SESS_ALREADY_RUNNING = 1343238145
    GE_SESSION_NOT_EXIST = 1343238149
    GE_SESSION_MANAGER_NOT_INIT = 1343238150
    GE_GRAPH_ALREADY_RUNNING = 1343242241
    GE_GRAPH_GRAPH_NOT_EXIST = 1343242242
    GE_GRAPH_GRAPH_ALREADY_EXIST = 1343242243
    GE_GRAPH_PARAM_NULLPTR = 1343242248
    GE_GRAPH_GRAPH_NODE_NULL = 1343242276
    GE_GRAPH_UNSUPPORTED = 1343242281
    GE_GRAPH_OPTIONS_INVALID = 1343242291
    GE_GRAPH_NOT_BUILT = 1343242295


_A = AclCode
_G = GeStatus

_ACL_MESSAGES: dict[AclCode, str] = {
    _A.ACL_SUCCESS: "success",
    _A.ACL_ERROR_INVALID_EXCEPTION_INFO: "invalid exception info",
    _A.ACL_ERROR_INVALID_PARAM: "invalid parameter",
    _A.ACL_ERROR_UNINITIALIZE: "ACL is not initialized (call acl.init first)",
    _A.ACL_ERROR_REPEAT_INITIALIZE: "ACL is already initialized",
    _A.ACL_ERROR_INVALID_FILE: "invalid file",
    _A.ACL_ERROR_WRITE_FILE: "failed to write file",
    _A.ACL_ERROR_INVALID_FILE_SIZE: "invalid file size",
    _A.ACL_ERROR_PARSE_FILE: "failed to parse file",
    _A.ACL_ERROR_FILE_MISSING_ATTR: "file is missing an attribute",
    _A.ACL_ERROR_FILE_ATTR_INVALID: "invalid file attribute",
    _A.ACL_ERROR_INVALID_DUMP_CONFIG: "invalid dump configuration",
    _A.ACL_ERROR_INVALID_PROFILING_CONFIG: "invalid profiling configuration",
    _A.ACL_ERROR_INVALID_MODEL_ID: "invalid model id",
    _A.ACL_ERROR_DESERIALIZE_MODEL: "failed to deserialize model",
    _A.ACL_ERROR_PARSE_MODEL: "failed to parse model",
    _A.ACL_ERROR_READ_MODEL_FAILURE: "failed to read model",
    _A.ACL_ERROR_MODEL_SIZE_INVALID: "invalid model size",
    _A.ACL_ERROR_MODEL_MISSING_ATTR: "model is missing an attribute",
    _A.ACL_ERROR_MODEL_INPUT_NOT_MATCH: "model input does not match",
    _A.ACL_ERROR_MODEL_OUTPUT_NOT_MATCH: "model output does not match",
    _A.ACL_ERROR_MODEL_NOT_DYNAMIC: "model is not dynamic",
    _A.ACL_ERROR_OP_TYPE_NOT_MATCH: "operator type does not match",
    _A.ACL_ERROR_OP_INPUT_NOT_MATCH: "operator input does not match",
    _A.ACL_ERROR_OP_OUTPUT_NOT_MATCH: "operator output does not match",
    _A.ACL_ERROR_OP_ATTR_NOT_MATCH: "operator attribute does not match",
    _A.ACL_ERROR_OP_NOT_FOUND: "operator not found",
    _A.ACL_ERROR_OP_LOAD_FAILED: "failed to load operator",
    _A.ACL_ERROR_UNSUPPORTED_DATA_TYPE: "unsupported data type",
    _A.ACL_ERROR_FORMAT_NOT_MATCH: "format does not match",
    _A.ACL_ERROR_BIN_SELECTOR_NOT_REGISTERED: "binary selector is not registered",
    _A.ACL_ERROR_KERNEL_NOT_FOUND: "kernel not found",
    _A.ACL_ERROR_BIN_SELECTOR_ALREADY_REGISTERED: "binary selector is already registered",
    _A.ACL_ERROR_KERNEL_ALREADY_REGISTERED: "kernel is already registered",
    _A.ACL_ERROR_INVALID_QUEUE_ID: "invalid queue id",
    _A.ACL_ERROR_REPEAT_SUBSCRIBE: "repeated subscription (same stream subscribed twice)",
    _A.ACL_ERROR_STREAM_NOT_SUBSCRIBE: "stream is not subscribed",
    _A.ACL_ERROR_THREAD_NOT_SUBSCRIBE: "thread is not subscribed",
    _A.ACL_ERROR_WAIT_CALLBACK_TIMEOUT: "wait for callback timed out",
    _A.ACL_ERROR_REPEAT_FINALIZE: "ACL is already finalized",
    _A.ACL_ERROR_NOT_STATIC_AIPP: "AIPP configuration is not static",
    _A.ACL_ERROR_COMPILING_STUB_MODE: "library loaded in compiling stub mode",
    _A.ACL_ERROR_GROUP_NOT_SET: "group is not set",
    _A.ACL_ERROR_GROUP_NOT_CREATE: "group is not created",
    _A.ACL_ERROR_PROF_ALREADY_RUN: "profiling is already running",
    _A.ACL_ERROR_PROF_NOT_RUN: "profiling is not running",
    _A.ACL_ERROR_DUMP_ALREADY_RUN: "dump is already running",
    _A.ACL_ERROR_DUMP_NOT_RUN: "dump is not running",
    _A.ACL_ERROR_PROF_REPEAT_SUBSCRIBE: "profiling subscription repeated",
    _A.ACL_ERROR_PROF_API_CONFLICT: "conflicting profiling APIs used",
    _A.ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG: "invalid max operator queue number configuration",
    _A.ACL_ERROR_INVALID_OPP_PATH: "invalid operator package path",
    _A.ACL_ERROR_OP_UNSUPPORTED_DYNAMIC: "operator does not support dynamic shape",
    _A.ACL_ERROR_RELATIVE_RESOURCE_NOT_CLEARED: "related resources are not released",
    _A.ACL_ERROR_UNSUPPORTED_JPEG: "unsupported JPEG image",
    _A.ACL_ERROR_INVALID_BUNDLE_MODEL_ID: "invalid bundle model id",
    _A.ACL_ERROR_BAD_ALLOC: "memory allocation failed",
    _A.ACL_ERROR_API_NOT_SUPPORT: "API not supported",
    _A.ACL_ERROR_INVALID_DEVICE: "invalid device",
    _A.ACL_ERROR_MEMORY_ADDRESS_UNALIGNED: "memory address not aligned",
    _A.ACL_ERROR_RESOURCE_NOT_MATCH: "resources do not match",
    _A.ACL_ERROR_INVALID_RESOURCE_HANDLE: "invalid resource handle",
    _A.ACL_ERROR_FEATURE_UNSUPPORTED: "feature not supported",
    _A.ACL_ERROR_PROF_MODULES_UNSUPPORTED: "profiling modules not supported",
    _A.ACL_ERROR_STORAGE_OVER_LIMIT: "storage over limit",
    _A.ACL_ERROR_INTERNAL_ERROR: "internal error",
    _A.ACL_ERROR_FAILURE: "failure",
    _A.ACL_ERROR_GE_FAILURE: "GE failure",
    _A.ACL_ERROR_RT_FAILURE: "runtime failure",
    _A.ACL_ERROR_DRV_FAILURE: "driver failure",
    _A.ACL_ERROR_PROFILING_FAILURE: "profiling failure",
    # runtime
    _A.ACL_ERROR_RT_PARAM_INVALID: "param invalid",
    _A.ACL_ERROR_RT_INVALID_DEVICEID: "invalid device id",
    _A.ACL_ERROR_RT_CONTEXT_NULL: "current context null",
    _A.ACL_ERROR_RT_STREAM_CONTEXT: "stream not in current context",
    _A.ACL_ERROR_RT_MODEL_CONTEXT: "model not in current context",
    _A.ACL_ERROR_RT_STREAM_MODEL: "stream not in model",
    _A.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID: "event timestamp invalid",
    _A.ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: "event timestamp reversal",
    _A.ACL_ERROR_RT_ADDR_UNALIGNED: "address not aligned",
    _A.ACL_ERROR_RT_FILE_OPEN: "failed to open file",
    _A.ACL_ERROR_RT_FILE_WRITE: "failed to write file",
    _A.ACL_ERROR_RT_STREAM_SUBSCRIBE: "stream not subscribed or subscribed twice",
    _A.ACL_ERROR_RT_THREAD_SUBSCRIBE: "thread not subscribed or subscribed twice",
    _A.ACL_ERROR_RT_GROUP_NOT_SET: "group not set",
    _A.ACL_ERROR_RT_GROUP_NOT_CREATE: "group not created",
    _A.ACL_ERROR_RT_STREAM_NO_CB_REG: "callback's stream not registered to a thread",
    _A.ACL_ERROR_RT_INVALID_MEMORY_TYPE: "invalid memory type",
    _A.ACL_ERROR_RT_INVALID_HANDLE: "invalid handle",
    _A.ACL_ERROR_RT_INVALID_MALLOC_TYPE: "invalid malloc type",
    _A.ACL_ERROR_RT_WAIT_TIMEOUT: "wait timeout",
    _A.ACL_ERROR_RT_TASK_TIMEOUT: "task timeout",
    _A.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET: "system parameter option not set",
    _A.ACL_ERROR_RT_DEVICE_TASK_ABORT: "device task aborting",
    _A.ACL_ERROR_RT_STREAM_ABORT: "stream aborting",
    _A.ACL_ERROR_RT_CAPTURE_DEPENDENCY: "capture dependency failure",
    _A.ACL_ERROR_RT_STREAM_UNJOINED: "invalid capture model (stream not joined)",
    _A.ACL_ERROR_RT_MODEL_CAPTURED: "model is captured",
    _A.ACL_ERROR_RT_STREAM_CAPTURED: "stream is captured",
    _A.ACL_ERROR_RT_EVENT_CAPTURED: "event is captured",
    _A.ACL_ERROR_RT_STREAM_NOT_CAPTURED: "stream is not in capture status",
    _A.ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT: "operation not supported while the stream is captured",
    _A.ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT: "disallowed implicit dependency on the default stream",
    _A.ACL_ERROR_STREAM_CAPTURE_CONFLICT: "interdependent streams cannot begin capture together",
    _A.ACL_ERROR_STREAM_TASK_GROUP_STATUS: "task group status error",
    _A.ACL_ERROR_STREAM_TASK_GROUP_INTR: "task group interrupted",
    _A.ACL_ERROR_RT_TASK_ABORT_STOP: "device task abort stopped before post-processing",
    _A.ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED: "the capture was not begun on this stream",
    _A.ACL_ERROR_RT_MODEL_RUNNING: "model is still running",
    _A.ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD: "capture ended on a different thread than it began",
    _A.ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY: "input array capacity insufficient",
    _A.ACL_ERROR_RT_MODEL_UPDATE_FAILED: "model update failed",
    _A.ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC: "operation would block while the stream is captured",
    _A.ACL_ERROR_RT_SYMBOL_NOT_FOUND: "symbol not found",
    _A.ACL_ERROR_RT_INVALID_SYMBOL: "invalid device symbol",
    _A.ACL_ERROR_RT_INVALID_DEVICE_FUNCTION: "invalid device function",
    _A.ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING: "a sub ACL graph is still capturing",
    _A.ACL_ERROR_RT_FEATURE_NOT_SUPPORT: "feature not supported",
    _A.ACL_ERROR_RT_MEMORY_ALLOCATION: "out of memory",
    _A.ACL_ERROR_RT_MEMORY_FREE: "memory free error",
    _A.ACL_ERROR_RT_AICORE_OVER_FLOW: "AI Core overflow",
    _A.ACL_ERROR_RT_NO_DEVICE: "no device",
    _A.ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: "resource allocation failed",
    _A.ACL_ERROR_RT_NO_PERMISSION: "no permission",
    _A.ACL_ERROR_RT_NO_EVENT_RESOURCE: "no event resource",
    _A.ACL_ERROR_RT_NO_STREAM_RESOURCE: "no stream resource",
    _A.ACL_ERROR_RT_NO_NOTIFY_RESOURCE: "no notify resource",
    _A.ACL_ERROR_RT_NO_MODEL_RESOURCE: "no model resource",
    _A.ACL_ERROR_RT_NO_CDQ_RESOURCE: "no CDQ resource",
    _A.ACL_ERROR_RT_OVER_LIMIT: "over limit",
    _A.ACL_ERROR_RT_QUEUE_EMPTY: "queue is empty",
    _A.ACL_ERROR_RT_QUEUE_FULL: "queue is full",
    _A.ACL_ERROR_RT_REPEATED_INIT: "repeated initialization",
    _A.ACL_ERROR_RT_AIVEC_OVER_FLOW: "AI Vector overflow",
    _A.ACL_ERROR_RT_OVER_FLOW: "overflow",
    _A.ACL_ERROR_RT_DEVICE_OOM: "device out of memory",
    _A.ACL_ERROR_RT_FEATURE_NOT_SUPPORT_UPDATE_OP: "updating this operator is not supported",
    _A.ACL_ERROR_RT_TIMEOUT: "driver timeout",
    _A.ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED: "link type not supported",
    _A.ACL_ERROR_RT_INTERNAL_ERROR: "runtime internal error",
    _A.ACL_ERROR_RT_TS_ERROR: "task scheduler internal error",
    _A.ACL_ERROR_RT_STREAM_TASK_FULL: "stream task queue full",
    _A.ACL_ERROR_RT_STREAM_TASK_EMPTY: "stream task queue empty",
    _A.ACL_ERROR_RT_STREAM_NOT_COMPLETE: "stream not complete",
    _A.ACL_ERROR_RT_END_OF_SEQUENCE: "end of sequence",
    _A.ACL_ERROR_RT_EVENT_NOT_COMPLETE: "event not complete",
    _A.ACL_ERROR_RT_CONTEXT_RELEASE_ERROR: "context release error",
    _A.ACL_ERROR_RT_SOC_VERSION: "SoC version error",
    _A.ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT: "task type not supported",
    _A.ACL_ERROR_RT_LOST_HEARTBEAT: "task scheduler lost heartbeat",
    _A.ACL_ERROR_RT_MODEL_EXECUTE: "model execute failed",
    _A.ACL_ERROR_RT_REPORT_TIMEOUT: "report timeout",
    _A.ACL_ERROR_RT_SYS_DMA: "system DMA error",
    _A.ACL_ERROR_RT_AICORE_TIMEOUT: "AI Core timeout",
    _A.ACL_ERROR_RT_AICORE_EXCEPTION: "AI Core exception",
    _A.ACL_ERROR_RT_AICORE_TRAP_EXCEPTION: "AI Core trap exception",
    _A.ACL_ERROR_RT_AICPU_TIMEOUT: "AI CPU timeout",
    _A.ACL_ERROR_RT_AICPU_EXCEPTION: "AI CPU exception",
    _A.ACL_ERROR_RT_AICPU_DATADUMP_RSP_ERR: "AI CPU data dump response error",
    _A.ACL_ERROR_RT_AICPU_MODEL_RSP_ERR: "AI CPU model operation response error",
    _A.ACL_ERROR_RT_PROFILING_ERROR: "profiling error",
    _A.ACL_ERROR_RT_IPC_ERROR: "IPC error",
    _A.ACL_ERROR_RT_MODEL_ABORT_NORMAL: "model aborted normally",
    _A.ACL_ERROR_RT_KERNEL_UNREGISTERING: "kernel unregistering",
    _A.ACL_ERROR_RT_RINGBUFFER_NOT_INIT: "ring buffer not initialized",
    _A.ACL_ERROR_RT_RINGBUFFER_NO_DATA: "ring buffer has no data",
    _A.ACL_ERROR_RT_KERNEL_LOOKUP: "kernel lookup error",
    _A.ACL_ERROR_RT_KERNEL_DUPLICATE: "kernel registered twice",
    _A.ACL_ERROR_RT_DEBUG_REGISTER_FAIL: "debug register failed",
    _A.ACL_ERROR_RT_DEBUG_UNREGISTER_FAIL: "debug unregister failed",
    _A.ACL_ERROR_RT_LABEL_CONTEXT: "label not in current context",
    _A.ACL_ERROR_RT_PROGRAM_USE_OUT: "program register number used up",
    _A.ACL_ERROR_RT_DEV_SETUP_ERROR: "device setup error",
    _A.ACL_ERROR_RT_VECTOR_CORE_TIMEOUT: "vector core timeout",
    _A.ACL_ERROR_RT_VECTOR_CORE_EXCEPTION: "vector core exception",
    _A.ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION: "vector core trap exception",
    _A.ACL_ERROR_RT_CDQ_BATCH_ABNORMAL: "CDQ batch allocation abnormal",
    _A.ACL_ERROR_RT_DIE_MODE_CHANGE_ERROR: "cannot change die mode",
    _A.ACL_ERROR_RT_DIE_SET_ERROR: "cannot set die in single-die mode",
    _A.ACL_ERROR_RT_INVALID_DIEID: "invalid die id",
    _A.ACL_ERROR_RT_DIE_MODE_NOT_SET: "die mode not set",
    _A.ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW: "AI Core trap read overflow",
    _A.ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW: "AI Core trap write overflow",
    _A.ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW: "vector core trap read overflow",
    _A.ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW: "vector core trap write overflow",
    _A.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT: "stream synchronize timeout",
    _A.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT: "event synchronize timeout",
    _A.ACL_ERROR_RT_FFTS_PLUS_TIMEOUT: "FFTS+ timeout",
    _A.ACL_ERROR_RT_FFTS_PLUS_EXCEPTION: "FFTS+ exception",
    _A.ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION: "FFTS+ trap exception",
    _A.ACL_ERROR_RT_SEND_MSG: "HDC send message failed",
    _A.ACL_ERROR_RT_COPY_DATA: "copy data failed",
    _A.ACL_ERROR_RT_DEVICE_MEM_ERROR: "device memory error",
    _A.ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR: "HBM multi-bit ECC error",
    _A.ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR: "suspected device memory error",
    _A.ACL_ERROR_RT_LINK_ERROR: "link error",
    _A.ACL_ERROR_RT_SUSPECT_REMOTE_ERROR: "suspected remote error",
    _A.ACL_ERROR_RT_DRV_INTERNAL_ERROR: "driver internal error",
    _A.ACL_ERROR_RT_AICPU_INTERNAL_ERROR: "AI CPU internal error",
    _A.ACL_ERROR_RT_SOCKET_CLOSE: "HDC disconnected",
    _A.ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR: "AI CPU info load response error",
    _A.ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED: "capture status is invalidated",
    _A.ACL_ERROR_RT_COMM_OP_RETRY_FAIL: "HCCL operation retry failed",
    _A.ACL_ERROR_SNAPSHOT_LOCK_TIMEOUT: "snapshot lock timeout",
    _A.ACL_ERROR_SNAPSHOT_LOCK_FAILED: "snapshot lock failed",
    _A.ACL_ERROR_SNAPSHOT_UNLOCK_FAILED: "snapshot unlock failed",
    _A.ACL_ERROR_SNAPSHOT_BACKUP_FAILED: "snapshot backup failed",
    _A.ACL_ERROR_SNAPSHOT_RESTORE_FAILED: "snapshot restore failed",
    _A.ACL_ERROR_HOST_MEMORY_ALREADY_REGISTERED: "host memory range already registered",
    _A.ACL_ERROR_HOST_MEMORY_NOT_REGISTERED: "host memory has not been registered",
    _A.ACL_ERROR_SNAPSHOT_CALLBACK_FAILED: "snapshot callback function failed",
    _A.ACL_ERROR_SNAPSHOT_REGISTER_CALLBACK_FAILED: "failed to register snapshot callback function",
    _A.ACL_ERROR_RT_L3_PORT_ERROR: "L3 port error",
    _A.ACL_ERROR_RT_CCU_TIMEOUT: "CCU timeout",
    _A.ACL_ERROR_RT_CCU_EXCEPTION: "CCU exception",
    # GE model load / execute
    _A.ACL_ERROR_GE_PARAM_INVALID: "GE parameter invalid",
    _A.ACL_ERROR_GE_EXEC_NOT_INIT: "GE executor not initialized",
    _A.ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID: "invalid model path",
    _A.ACL_ERROR_GE_EXEC_MODEL_ID_INVALID: "invalid model id",
    _A.ACL_ERROR_GE_EXEC_MODEL_DATA_SIZE_INVALID: "invalid model data size",
    _A.ACL_ERROR_GE_EXEC_MODEL_ADDR_INVALID: "invalid model address",
    _A.ACL_ERROR_GE_EXEC_MODEL_QUEUE_ID_INVALID: "invalid model queue id",
    _A.ACL_ERROR_GE_EXEC_LOAD_MODEL_REPEATED: "model loaded repeatedly",
    _A.ACL_ERROR_GE_DYNAMIC_INPUT_ADDR_INVALID: "invalid dynamic input address",
    _A.ACL_ERROR_GE_DYNAMIC_INPUT_LENGTH_INVALID: "invalid dynamic input length",
    _A.ACL_ERROR_GE_DYNAMIC_BATCH_SIZE_INVALID: "invalid dynamic batch size",
    _A.ACL_ERROR_GE_AIPP_BATCH_EMPTY: "AIPP batch is empty",
    _A.ACL_ERROR_GE_AIPP_NOT_EXIST: "AIPP configuration does not exist",
    _A.ACL_ERROR_GE_AIPP_MODE_INVALID: "invalid AIPP mode",
    _A.ACL_ERROR_GE_OP_TASK_TYPE_INVALID: "invalid operator task type",
    _A.ACL_ERROR_GE_OP_KERNEL_TYPE_INVALID: "invalid operator kernel type",
    _A.ACL_ERROR_GE_PLGMGR_PATH_INVALID: "invalid plugin path",
    _A.ACL_ERROR_GE_FORMAT_INVALID: "invalid format",
    _A.ACL_ERROR_GE_SHAPE_INVALID: "invalid shape",
    _A.ACL_ERROR_GE_DATATYPE_INVALID: "invalid data type",
    _A.ACL_ERROR_GE_MEMORY_ALLOCATION: "GE memory allocation failed",
    _A.ACL_ERROR_GE_MEMORY_OPERATE_FAILED: "GE memory operation failed",
    _A.ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED: "GE device memory operation failed",
    _A.ACL_ERROR_GE_SUBHEALTHY: "device is sub-healthy",
    _A.ACL_ERROR_GE_USER_RAISE_EXCEPTION: "user raised an exception",
    _A.ACL_ERROR_GE_DATA_NOT_ALIGNED: "data not aligned",
    _A.ACL_ERROR_GE_INTERNAL_ERROR: "GE internal error",
    _A.ACL_ERROR_GE_LOAD_MODEL: "failed to load model",
    _A.ACL_ERROR_GE_EXEC_LOAD_MODEL_PARTITION_FAILED: "failed to load model partition",
    _A.ACL_ERROR_GE_EXEC_LOAD_WEIGHT_PARTITION_FAILED: "failed to load weight partition",
    _A.ACL_ERROR_GE_EXEC_LOAD_TASK_PARTITION_FAILED: "failed to load task partition",
    _A.ACL_ERROR_GE_EXEC_LOAD_KERNEL_PARTITION_FAILED: "failed to load kernel partition",
    _A.ACL_ERROR_GE_EXEC_RELEASE_MODEL_DATA: "failed to release model data",
    _A.ACL_ERROR_GE_COMMAND_HANDLE: "command handling failed",
    _A.ACL_ERROR_GE_GET_TENSOR_INFO: "failed to get tensor info",
    _A.ACL_ERROR_GE_UNLOAD_MODEL: "failed to unload model",
    _A.ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT: "model execute timeout",
    _A.ACL_ERROR_GE_REDEPLOYING: "model is redeploying",
}

_GE_MESSAGES: dict[GeStatus, str] = {
    _G.FAILED: "failed",
    _G.PARAM_INVALID: "parameter is invalid",
    _G.INTERNAL_ERROR: "internal error",
    _G.END_OF_SEQUENCE: "end of sequence",
    _G.UNSUPPORTED: "parameter is unsupported",
    _G.GE_CLI_GE_NOT_INITIALIZED: "GE is not yet initialized or is finalized",
    _G.GE_SESS_INIT_FAILED: "failed to initialize session",
    _G.GE_SESS_ALREADY_RUNNING: "session already running, parallel run not supported",
    _G.GE_SESSION_NOT_EXIST: "cannot find session with the given session id",
    _G.GE_SESSION_MANAGER_NOT_INIT: "session manager has not been initialized",
    _G.GE_GRAPH_ALREADY_RUNNING: "graph already running, parallel run not supported",
    _G.GE_GRAPH_GRAPH_NOT_EXIST: "graph id does not exist",
    _G.GE_GRAPH_GRAPH_ALREADY_EXIST: "graph id already exists",
    _G.GE_GRAPH_PARAM_NULLPTR: "graph parameter is null",
    _G.GE_GRAPH_GRAPH_NODE_NULL: "failed to get graph node",
    _G.GE_GRAPH_UNSUPPORTED: "unsupported feature in graph partition",
    _G.GE_GRAPH_OPTIONS_INVALID: "session options are invalid",
    _G.GE_GRAPH_NOT_BUILT: "graph is not built",
}

MESSAGES: dict[int, str] = {int(k): v for k, v in _ACL_MESSAGES.items()}
MESSAGES.update({int(k): v for k, v in _GE_MESSAGES.items()})


def message(code: int) -> str:
    """The one-line English message for ``code`` (an ``aclError`` or ``ge::Status`` value)."""
    return MESSAGES.get(int(code), f"unknown error code {int(code)}")


def _name(code: int, *enums: type[enum.IntEnum]) -> str:
    for table in enums:
        try:
            return table(code).name
        except ValueError:
            continue
    return str(code)


def code_name(code: int) -> str:
    """CANN's name for ``code``: the AclCode name, else the GeStatus name, else the number itself."""
    return _name(int(code), AclCode, GeStatus)


class CodedError(Exception):
    """A vendor code raised inside openacl, with the one detail that explains it; a face (``acl``'s ``@api``, GE's
    session and GE-PY) turns it back into what its users get: a returned code, a ``ge::Status``, an exception.

    ``str()`` is the one-line message every face logs: ``NAME(code): message[: detail]``. ``level`` is the
    ``logging`` level a face logs it at (CANN logs some expected codes, such as a ``process_report`` timeout, at
    INFO). Subclasses say only which code table names their codes first.
    """

    _names: tuple[type[enum.IntEnum], ...] = ()  # the code tables, looked up in order (a number is its own name)

    def __init__(self, code: int, detail: str = "", *, level: int = logging.ERROR) -> None:
        self.code = int(code)
        self.detail = detail
        self.level = int(level)
        super().__init__(self.code, detail)

    def _code_name(self) -> str:
        return _name(self.code, *self._names)

    def __str__(self) -> str:
        text = f"{self._code_name()}({self.code}): {message(self.code)}"
        return text + (f": {self.detail}" if self.detail else "")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._code_name()}, {self.detail!r}, level={self.level})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.code, self.detail, self.level), self.__dict__.copy())


class AclError(CodedError):
    """An ``aclError`` code raised inside openacl; the facade turns it back into the code it returns."""

    _names = (AclCode, GeStatus)


class ExecutionFailed(AclError):
    """onnxruntime refused a model's or an operator's inputs or failed while running it (``ACL_ERROR_FAILURE``):
    the inputs are the first suspect, which a caller that chose them (``openacl dump``'s random inputs) can say."""


class GeError(CodedError):
    """A ``ge::Status`` code raised inside openacl's GE session layer."""

    _names = (GeStatus, AclCode)


def _rebuild(cls: type[CodedError], code: int, detail: str, level: int) -> CodedError:
    return cls(code, detail, level=level)
