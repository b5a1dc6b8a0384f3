"""GE's enum numbers (``graph/types.h``), printed as numbers."""

from __future__ import annotations

import pytest
from ge.graph import DumpFormat, Shape, TensorDesc
from ge.graph.types import AttrValueType, DataType, Format, Placement


def test_numbers():
    assert (DataType.DT_FLOAT, DataType.DT_INT64, DataType.DT_BOOL, DataType.DT_BF16, DataType.DT_MAX) == (
        0,
        9,
        12,
        27,
        43,
    )
    assert (Format.FORMAT_NCHW, Format.FORMAT_ND, Format.FORMAT_FRACTAL_NZ, Format.FORMAT_NCDHW, Format.FORMAT_MAX) == (
        0,
        2,
        29,
        30,
        53,
    )
    assert Format.FORMAT_C1HWNCoC0 == 25 and Format.FORMAT_FRACTAL_NZ_C0_32 == 51
    assert (Placement.PLACEMENT_HOST, Placement.PLACEMENT_DEVICE) == (0, 1)
    assert (AttrValueType.VT_LIST_INT, AttrValueType.VT_DATA_TYPE) == (1004, 11)
    assert [d.value for d in DumpFormat] == [0, 1, 2] and not isinstance(DumpFormat.kOnnx, int)
    assert f"{Format.FORMAT_ND}" == "2" and f"{DataType.DT_INT32}" == "3"


def test_shape_and_desc():
    assert Shape().get_shape_size() == 0 and Shape([2, 3]).get_shape_size() == 6
    assert Shape([2, -1]).get_shape_size() == -1 and Shape([-2]).is_unknown_shape()
    with pytest.raises(TypeError):
        Shape((2, 3))
    desc = TensorDesc(Shape([4]), Format.FORMAT_NCHW, DataType.DT_INT8)
    assert desc.set_shape([5]).get_shape() == [5] and desc.origin_shape == [4]
    assert repr(desc) == "TensorDesc(shape=[5], format=0, data_type=2)"
    with pytest.raises(TypeError):
        TensorDesc(None, 2)


def test_regression_tensor_desc_repr_named_the_enums():
    """GE-PY prints a TensorDesc's format and data type as numbers (``format=2``); openacl printed the names."""
    desc = TensorDesc(Shape([1, 2]), Format.FORMAT_ND, DataType.DT_FLOAT)
    assert repr(desc) == "TensorDesc(shape=[1, 2], format=2, data_type=0)"
