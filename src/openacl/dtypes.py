"""Every data-type and format table in one place: numpy, ACL (``aclDataType``), dump proto, ONNX, onnxruntime.

ACL numbers a dtype one way (``ACL_FLOAT16 = 1``), the dump header another (``DT_FLOAT16 = 2``), and ONNX a
third (``FLOAT16 = 10``). Everything that crosses from one to another goes through this module, so a
mismatch can only be wrong here.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

import numpy as np

from openacl import lazy

# ml_dtypes takes half a second to import; only bfloat16 needs it. So no table below holds bfloat16: each lookup
# that misses asks :func:`is_bfloat16` (which imports nothing), and ``BFLOAT16`` imports ml_dtypes when read.
_ml_dtypes = lazy.module("ml_dtypes")
_BF16_ONNX = 16  # ONNX TensorProto.BFLOAT16


def __getattr__(name: str) -> np.dtype:
    """``BFLOAT16``: ``bfloat16`` as a numpy dtype (ml_dtypes): ACL_BF16, the dump header's DT_BF16 and ONNX's
    BFLOAT16. Read, it imports ml_dtypes (once; then it is a plain module attribute)."""
    if name != "BFLOAT16":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()["BFLOAT16"] = dtype = np.dtype(_ml_dtypes.bfloat16)
    return dtype


def is_bfloat16(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16, without importing ml_dtypes: a dtype of that name exists only
    once something has imported it."""
    return dtype.name == "bfloat16" and lazy.loaded(_ml_dtypes) and dtype == __getattr__("BFLOAT16")


class AclDataType(enum.IntEnum):
    """``aclDataType`` from ``acl_base.h``."""

    ACL_DT_UNDEFINED = -1
    ACL_FLOAT = 0
    ACL_FLOAT16 = 1
    ACL_INT8 = 2
    ACL_INT32 = 3
    ACL_UINT8 = 4
    ACL_INT16 = 6
    ACL_UINT16 = 7
    ACL_UINT32 = 8
    ACL_INT64 = 9
    ACL_UINT64 = 10
    ACL_DOUBLE = 11
    ACL_BOOL = 12
    ACL_STRING = 13
    ACL_COMPLEX64 = 16
    ACL_COMPLEX128 = 17
    ACL_BF16 = 27


class ProtoDataType(enum.IntEnum):
    """``toolkit.dumpdata.OutputDataType``: the numbers written into dump headers (not ACL's)."""

    DT_UNDEFINED = 0
    DT_FLOAT = 1
    DT_FLOAT16 = 2
    DT_INT8 = 3
    DT_UINT8 = 4
    DT_INT16 = 5
    DT_UINT16 = 6
    DT_INT32 = 7
    DT_INT64 = 8
    DT_UINT32 = 9
    DT_UINT64 = 10
    DT_BOOL = 11
    DT_DOUBLE = 12
    DT_STRING = 13
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_BF16 = 27


class AclFormat(enum.IntEnum):
    """``aclFormat``; the common values equal the dump proto's ``OutputFormat`` numbers."""

    ACL_FORMAT_UNDEFINED = -1
    ACL_FORMAT_NCHW = 0
    ACL_FORMAT_NHWC = 1
    ACL_FORMAT_ND = 2
    ACL_FORMAT_NC1HWC0 = 3
    ACL_FORMAT_FRACTAL_Z = 4
    ACL_FORMAT_HWCN = 16
    ACL_FORMAT_NDHWC = 27
    ACL_FORMAT_FRACTAL_NZ = 29
    ACL_FORMAT_NCDHW = 30


#: Short format names as CANN prints them (stats CSV ``Format`` column, ``FORMAT_<name>`` in dump headers), by
#: format number (spec/dump_format.md section 2.2): every format openacl writes or converts.
FORMAT_NAMES: dict[int, str] = {
    0: "NCHW",
    1: "NHWC",
    2: "ND",
    3: "NC1HWC0",
    4: "FRACTAL_Z",
    12: "NC1HWC0_C04",
    14: "CHWN",
    16: "HWCN",
    27: "NDHWC",
    29: "FRACTAL_NZ",
    30: "NCDHW",
    31: "DHWCN",
    32: "NDC1HWC0",
    33: "FRACTAL_Z_3D",
}

#: GE's ``ge::Format`` names in number order (``FORMAT_<name>`` = index, ``graph/types.h``): ``NCHW`` = 0 ...
#: ``MAX`` = 53. GE's graph protobuf writes a tensor's format as this name (its ``layout``).
GE_FORMATS: tuple[str, ...] = tuple(
    [
        "NCHW",
        "NHWC",
        "ND",
        "NC1HWC0",
        "FRACTAL_Z",
        "NC1C0HWPAD",
        "NHWC1C0",
        "FSR_NCHW",
        "FRACTAL_DECONV",
        "C1HWNC0",
        "FRACTAL_DECONV_TRANSPOSE",
        "FRACTAL_DECONV_SP_STRIDE_TRANS",
        "NC1HWC0_C04",
        "FRACTAL_Z_C04",
        "CHWN",
        "FRACTAL_DECONV_SP_STRIDE8_TRANS",
        "HWCN",
        "NC1KHKWHWC0",
        "BN_WEIGHT",
        "FILTER_HWCK",
        "HASHTABLE_LOOKUP_LOOKUPS",
        "HASHTABLE_LOOKUP_KEYS",
        "HASHTABLE_LOOKUP_VALUE",
        "HASHTABLE_LOOKUP_OUTPUT",
        "HASHTABLE_LOOKUP_HITS",
        "C1HWNCoC0",
        "MD",
        "NDHWC",
        "FRACTAL_ZZ",
        "FRACTAL_NZ",
        "NCDHW",
        "DHWCN",
        "NDC1HWC0",
        "FRACTAL_Z_3D",
        "CN",
        "NC",
        "DHWNC",
        "FRACTAL_Z_3D_TRANSPOSE",
        "FRACTAL_ZN_LSTM",
        "FRACTAL_Z_G",
        "RESERVED",
        "ALL",
        "NULL",
        "ND_RNN_BIAS",
        "FRACTAL_ZN_RNN",
        "NYUV",
        "NYUV_A",
        "NCL",
        "FRACTAL_Z_WINO",
        "C1HWC0",
        "FRACTAL_NZ_C0_16",
        "FRACTAL_NZ_C0_32",
        "END",
        "MAX",
    ]
)

#: ``ge::DataType`` -> ``ge.proto.DataType`` (GE's graph protobuf numbers them apart) for 0..12; 13..27 are equal,
#: ``DT_UNDEFINED`` (28) is proto 0 and every type after it is one less in the protobuf.
_GE_IR_OF_GE_LOW = {0: 1, 1: 2, 2: 3, 3: 7, 4: 4, 6: 5, 7: 6, 8: 9, 9: 8, 10: 10, 11: 12, 12: 11}
_GE_OF_GE_IR_LOW = {ir: ge for ge, ir in _GE_IR_OF_GE_LOW.items()}
_GE_UNDEFINED = 28


def ge_ir_from_ge(code: int) -> int:
    """The ``ge.proto.DataType`` number (GE's graph protobuf, AIR files) of a ``ge::DataType`` number."""
    code = int(code)
    if code in _GE_IR_OF_GE_LOW:
        return _GE_IR_OF_GE_LOW[code]
    if 13 <= code < _GE_UNDEFINED:
        return code
    return 0 if code == _GE_UNDEFINED else code - 1


def ge_from_ge_ir(code: int) -> int:
    """The inverse of :func:`ge_ir_from_ge`."""
    code = int(code)
    if code in _GE_OF_GE_IR_LOW:
        return _GE_OF_GE_IR_LOW[code]
    if 13 <= code < _GE_UNDEFINED:
        return code
    return _GE_UNDEFINED if code == 0 else code + 1


_NUMPY_ACL_PROTO: list[tuple[np.dtype, AclDataType, ProtoDataType]] = [
    (np.dtype(np.float32), AclDataType.ACL_FLOAT, ProtoDataType.DT_FLOAT),
    (np.dtype(np.float16), AclDataType.ACL_FLOAT16, ProtoDataType.DT_FLOAT16),
    (np.dtype(np.int8), AclDataType.ACL_INT8, ProtoDataType.DT_INT8),
    (np.dtype(np.int32), AclDataType.ACL_INT32, ProtoDataType.DT_INT32),
    (np.dtype(np.uint8), AclDataType.ACL_UINT8, ProtoDataType.DT_UINT8),
    (np.dtype(np.int16), AclDataType.ACL_INT16, ProtoDataType.DT_INT16),
    (np.dtype(np.uint16), AclDataType.ACL_UINT16, ProtoDataType.DT_UINT16),
    (np.dtype(np.uint32), AclDataType.ACL_UINT32, ProtoDataType.DT_UINT32),
    (np.dtype(np.int64), AclDataType.ACL_INT64, ProtoDataType.DT_INT64),
    (np.dtype(np.uint64), AclDataType.ACL_UINT64, ProtoDataType.DT_UINT64),
    (np.dtype(np.float64), AclDataType.ACL_DOUBLE, ProtoDataType.DT_DOUBLE),
    (np.dtype(np.bool_), AclDataType.ACL_BOOL, ProtoDataType.DT_BOOL),
    (np.dtype(np.complex64), AclDataType.ACL_COMPLEX64, ProtoDataType.DT_COMPLEX64),
    (np.dtype(np.complex128), AclDataType.ACL_COMPLEX128, ProtoDataType.DT_COMPLEX128),
    # bfloat16 (ACL_BF16, DT_BF16) is not a row: see is_bfloat16.
]

_ACL_OF_NUMPY = {np_type: acl for np_type, acl, _ in _NUMPY_ACL_PROTO}
_PROTO_OF_NUMPY = {np_type: proto for np_type, _, proto in _NUMPY_ACL_PROTO}
# ACL_BF16 has no numpy type on the way in (numpy_from_acl): it serves acl.op, whose one-node models run on
# onnxruntime's CPU kernels, which have almost no bfloat16 ones, so acl.op answers UNSUPPORTED_DATA_TYPE for it.
# Models (ONNX element types) and dumps (proto numbers) carry bfloat16 both ways.
_NUMPY_OF_ACL = {acl: np_type for np_type, acl, _ in _NUMPY_ACL_PROTO}
_NUMPY_OF_PROTO = {proto: np_type for np_type, _, proto in _NUMPY_ACL_PROTO}

#: ONNX ``TensorProto.DataType`` numbers (kept here so this module needs no onnx import).
_ONNX_OF_NUMPY: dict[np.dtype, int] = {
    np.dtype(np.float32): 1,
    np.dtype(np.uint8): 2,
    np.dtype(np.int8): 3,
    np.dtype(np.uint16): 4,
    np.dtype(np.int16): 5,
    np.dtype(np.int32): 6,
    np.dtype(np.int64): 7,
    np.dtype(np.bool_): 9,
    np.dtype(np.float16): 10,
    np.dtype(np.float64): 11,
    np.dtype(np.uint32): 12,
    np.dtype(np.uint64): 13,
    np.dtype(np.complex64): 14,
    np.dtype(np.complex128): 15,
}
_NUMPY_OF_ONNX = {onnx: np_type for np_type, onnx in _ONNX_OF_NUMPY.items()}

#: onnxruntime's type string of bfloat16 tensors: numpy arrays cannot cross its ``run`` (see ``onnxrt``).
ORT_BFLOAT16 = "tensor(bfloat16)"
#: ONNX ``TensorProto.STRING``: tensors of strings (numpy object arrays of ``str``).
ONNX_STRING = 8


def acl_from_numpy(dtype: np.dtype | type) -> AclDataType:
    """The ACL dtype of a numpy dtype; ``ACL_DT_UNDEFINED`` for one ACL has no number for."""
    dtype = np.dtype(dtype)
    code = _ACL_OF_NUMPY.get(dtype)
    if code is None:
        return AclDataType.ACL_BF16 if is_bfloat16(dtype) else AclDataType.ACL_DT_UNDEFINED
    return code


def numpy_from_acl(code: int) -> np.dtype:
    """The numpy dtype of an ACL dtype number; ``KeyError`` if numpy has none."""
    return _NUMPY_OF_ACL[AclDataType(code)]


#: GE's ``DT_STRING``: held in numpy object arrays of ``str`` (ONNX ``STRING``); GE only, ACL sizes it 0.
GE_STRING = 13
_OBJECT = np.dtype(object)


def ge_from_numpy(dtype: np.dtype | type) -> int:
    """GE's ``ge::DataType`` number of a numpy dtype; ``KeyError`` if GE-PY has none for it.

    GE's numbers (``graph/types.h``) equal ACL's for every dtype numpy holds, so the ACL table serves both; an
    object array is ``DT_STRING``.
    """
    if np.dtype(dtype) == _OBJECT:
        return GE_STRING
    code = acl_from_numpy(dtype)
    if code == AclDataType.ACL_DT_UNDEFINED:
        raise KeyError(f"numpy dtype {np.dtype(dtype)} has no GE data type")
    return int(code)


def numpy_from_ge(code: int) -> np.dtype:
    """The numpy dtype of a GE ``ge::DataType`` number (``object`` for DT_STRING); ``KeyError`` if numpy has none
    (BF16, ...)."""
    if code == GE_STRING:
        return _OBJECT
    try:
        return _NUMPY_OF_ACL[AclDataType(code)]
    except ValueError:
        raise KeyError(f"GE data type {code} has no numpy dtype") from None


def proto_from_numpy(dtype: np.dtype | type) -> ProtoDataType:
    """The dump-header dtype of a numpy dtype; ``DT_UNDEFINED`` (raw bytes) for anything else."""
    dtype = np.dtype(dtype)
    code = _PROTO_OF_NUMPY.get(dtype)
    if code is None:
        return ProtoDataType.DT_BF16 if is_bfloat16(dtype) else ProtoDataType.DT_UNDEFINED
    return code


def numpy_from_proto(code: int) -> np.dtype:
    """The numpy dtype msaccucmp reads a dump-header dtype as (``DT_UNDEFINED`` is raw ``int8``)."""
    if code == ProtoDataType.DT_UNDEFINED:
        return np.dtype(np.int8)
    if code == ProtoDataType.DT_BF16:
        return __getattr__("BFLOAT16")
    return _NUMPY_OF_PROTO[ProtoDataType(code)]


def proto_name(code: int) -> str:
    """``DT_FLOAT`` etc., or ``-`` for a number the table does not know (as CANN's stats CSV prints it)."""
    try:
        return ProtoDataType(code).name
    except ValueError:
        return "-"


def onnx_from_numpy(dtype: np.dtype | type) -> int:
    """The ONNX ``TensorProto`` element type of a numpy dtype (``STRING`` for an object array); ``KeyError`` if ONNX
    has none."""
    dtype = np.dtype(dtype)
    if dtype == _OBJECT:
        return ONNX_STRING
    code = _ONNX_OF_NUMPY.get(dtype)
    if code is None:
        if not is_bfloat16(dtype):
            raise KeyError(dtype)
        return _BF16_ONNX
    return code


def numpy_from_onnx(elem_type: int) -> np.dtype:
    """The numpy dtype of an ONNX element type; ``KeyError`` for one numpy cannot hold."""
    if elem_type == _BF16_ONNX:
        return __getattr__("BFLOAT16")
    return _NUMPY_OF_ONNX[elem_type]


#: Bytes per element of each ACL dtype (``aclDataTypeSize``); a dtype not listed (``ACL_STRING``, undefined) is 0.
_ACL_SIZES: dict[int, int] = {int(acl): np_type.itemsize for np_type, acl, _ in _NUMPY_ACL_PROTO}
_ACL_SIZES[int(AclDataType.ACL_BF16)] = 2


def acl_dtype_size(code: int) -> int:
    """``aclDataTypeSize``: bytes per element of an ACL dtype number, 0 for one without a fixed size."""
    return _ACL_SIZES.get(code, 0)


def is_floating(dtype: np.dtype | type) -> bool:
    """A floating-point dtype, bfloat16 included (numpy's ``issubdtype`` does not know ml_dtypes' types)."""
    dtype = np.dtype(dtype)
    return is_bfloat16(dtype) or np.issubdtype(dtype, np.floating)


def check_ints(values: Iterable[int], dtype: np.dtype | type) -> None:
    """ValueError naming the first value outside the integer ``dtype``'s range: numpy's OverflowError for such
    a literal is not what GE-PY raises for a value its C type cannot hold."""
    info = np.iinfo(dtype)
    for value in values:
        if not info.min <= value <= info.max:
            raise ValueError(f"{value} is out of range for {info.dtype.name} ({info.min}..{info.max})")


def as_floats(values: Iterable[object]) -> list[float]:
    """Each value as a float; ValueError (not Python's OverflowError) for an int too large for one."""
    try:
        return [float(value) for value in values]
    except OverflowError:
        raise ValueError("a value is out of range for a float") from None


def float16_bits_to_float(bits: int) -> float:
    """``aclFloat16ToFloat``: the IEEE half whose 16 bits are ``bits``, as a float."""
    return float(np.array(bits & 0xFFFF, np.uint16).view(np.float16))


def float_to_float16_bits(value: float) -> int:
    """``aclFloatToFloat16``: the 16 bits of ``value`` rounded to the nearest IEEE half (inf when too big)."""
    with np.errstate(over="ignore"):
        return int(np.array(value, np.float32).astype(np.float16).view(np.uint16))
