"""``ge.graph.types``: GE's enumerations with the numbers of ``graph/types.h`` (``IntEnum``: they print as numbers)."""

from __future__ import annotations

import enum

from openacl import dtypes

__all__ = ["AttrValueType", "DataType", "Format", "Placement"]


class DataType(enum.IntEnum):
    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_DUAL_SUB_INT8 = 14
    DT_DUAL_SUB_UINT8 = 15
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_RESOURCE = 23
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_UINT2 = 32
    DT_COMPLEX32 = 33
    DT_HIFLOAT8 = 34
    DT_FLOAT8_E5M2 = 35
    DT_FLOAT8_E4M3FN = 36
    DT_FLOAT8_E8M0 = 37
    DT_FLOAT6_E3M2 = 38
    DT_FLOAT6_E2M3 = 39
    DT_FLOAT4_E2M1 = 40
    DT_FLOAT4_E1M2 = 41
    DT_HIFLOAT4 = 42
    DT_MAX = 43


#: ``FORMAT_NCHW`` = 0 ... ``FORMAT_MAX`` = 53, in GE's order.
Format = enum.IntEnum("Format", [(f"FORMAT_{name}", i) for i, name in enumerate(dtypes.GE_FORMATS)], module=__name__)
Format.__qualname__ = "Format"


class Placement(enum.IntEnum):
    PLACEMENT_HOST = 0
    PLACEMENT_DEVICE = 1


class AttrValueType(enum.IntEnum):
    VT_NONE = 0
    VT_STRING = 1
    VT_FLOAT = 2
    VT_BOOL = 3
    VT_INT = 4
    VT_TENSOR_DESC = 5
    VT_TENSOR = 6
    VT_BYTES = 7
    VT_GRAPH = 8
    VT_NAMED_ATTRS = 9
    VT_LIST_LIST_INT = 10
    VT_DATA_TYPE = 11
    VT_LIST_LIST_FLOAT = 12
    VT_LIST_BASE = 1000
    VT_LIST_STRING = 1001
    VT_LIST_FLOAT = 1002
    VT_LIST_BOOL = 1003
    VT_LIST_INT = 1004
    VT_LIST_TENSOR_DESC = 1005
    VT_LIST_TENSOR = 1006
    VT_LIST_BYTES = 1007
    VT_LIST_GRAPH = 1008
    VT_LIST_NAMED_ATTRS = 1009
    VT_LIST_DATA_TYPE = 1011
