"""``ge.graph.Tensor``: GE-PY's constructor forms and checks, get_data's numbers and the printed block."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from ge.graph import Tensor
from ge.graph.types import DataType, Format, Placement


def test_positional_form_of_the_examples():
    t = Tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 3])
    assert t.get_shape() == [2, 3] and t.shape == [2, 3]
    assert t.get_data_type() is DataType.DT_FLOAT and t.format is Format.FORMAT_ND
    assert t.get_placement() is Placement.PLACEMENT_HOST
    assert t.get_data() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    np.testing.assert_array_equal(np.asarray(t), np.arange(1, 7, dtype=np.float32).reshape(2, 3))


def test_regression_tensor_str_kept_the_trailing_spaces():
    """GE-PY's four-line block: today's GE-PY ends the first three lines with "," (releases before mid-2026
    printed ", ", which openacl kept)."""
    t = Tensor([2.0] * 6, None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 3])
    assert str(t) == (
        "\n        Tensor format is 2,\n        data_type is 0,\n        shape is [2, 3],"
        "\n        data is [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]\n        "
    )


def test_floats_have_six_decimals_like_std_to_string():
    t = Tensor([1e-7, 1.4628916, -0.5, 1e20], None, DataType.DT_FLOAT, Format.FORMAT_ND, [4])
    data = t.get_data()
    assert data[0] == 0.0 and data[1] == 1.462892 and data[2] == -0.5
    assert data[3] == float(f"{np.float32(1e20):f}")


def test_integer_types_truncate_and_print_exactly():
    t = Tensor([1.9, -2.7, 3.0], None, DataType.DT_INT64, Format.FORMAT_ND, [3])
    assert t.get_data() == [1, -2, 3] and all(type(v) is int for v in t.get_data())
    assert np.asarray(t).dtype == np.int64


def test_scalar_get_data_is_a_bare_number():
    assert Tensor([7], None, DataType.DT_INT32, Format.FORMAT_ND, []).get_data() == 7
    assert Tensor([7], None, DataType.DT_INT32, Format.FORMAT_ND, None).get_shape() == []


def test_float16_goes_through_float():
    t = Tensor([0.1, 2.5], None, DataType.DT_FLOAT16, Format.FORMAT_ND, [2])
    assert np.asarray(t).dtype == np.float16
    assert t.get_data() == [float(f"{np.float16(0.1):f}"), 2.5]


def test_bool_list_makes_a_bool_tensor_whose_data_cannot_be_read():
    t = Tensor([True, False], None, DataType.DT_BOOL, Format.FORMAT_ND, [2])
    np.testing.assert_array_equal(np.asarray(t), [True, False])
    with pytest.raises(ValueError, match="true"):
        t.get_data()


def test_type_errors():
    with pytest.raises(TypeError, match="List"):
        Tensor((1.0, 2.0), None, DataType.DT_FLOAT, Format.FORMAT_ND, [2])
    with pytest.raises(TypeError, match="Shape must be a list of integers"):
        Tensor([1.0, 2.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, (2,))
    with pytest.raises(TypeError, match="data_type"):
        Tensor([1.0], None, 0, Format.FORMAT_ND, [1])
    with pytest.raises(TypeError, match="Placement must be a Placement"):
        Tensor([1.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [1], 1)


def test_data_and_file_together_and_unsupported_types():
    with pytest.raises(RuntimeError, match="Tensor should be created either by data or by file"):
        Tensor([1.0], "x.bin", DataType.DT_FLOAT, Format.FORMAT_ND, [1])
    with pytest.raises(RuntimeError, match="DT_DOUBLE"):
        Tensor([1.0], None, DataType.DT_DOUBLE, Format.FORMAT_ND, [1])
    with pytest.raises(RuntimeError):
        Tensor([1.0], None, DataType.DT_BF16, Format.FORMAT_ND, [1])


def test_length_must_fill_the_shape():
    """openacl's check (GE-PY reads past a short list)."""
    with pytest.raises(ValueError, match="needs 6"):
        Tensor([1.0, 2.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 3])


def test_from_file(tmp_path):
    path = tmp_path / "x.bin"
    np.arange(6, dtype=np.int32).tofile(path)
    t = Tensor(None, str(path), DataType.DT_INT32, Format.FORMAT_ND, [2, 3])
    assert t.get_data() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(RuntimeError, match="needs 96 bytes"):
        Tensor(None, str(path), DataType.DT_INT32, Format.FORMAT_ND, [4, 6])
    with pytest.raises(RuntimeError):
        Tensor(None, str(tmp_path / "missing.bin"), DataType.DT_INT32, Format.FORMAT_ND, [1])


def test_empty_tensor_and_setters():
    t = Tensor()
    assert t.get_shape() == [] and t.get_data_type() is DataType.DT_FLOAT
    with pytest.raises(ValueError):
        t.get_data()
    full = Tensor([1, 2], None, DataType.DT_INT32, Format.FORMAT_ND, [2])
    assert full.set_format(Format.FORMAT_NCHW) is full and full.get_format() == 0
    assert full.set_data_type(DataType.DT_FLOAT).get_data() == [1.0, 2.0]
    with pytest.raises(TypeError):
        full.set_format(2)
    desc = full.get_tensor_desc()
    assert desc.get_shape() == [2] and desc.get_format() is Format.FORMAT_NCHW


def test_copy_is_refused():
    t = Tensor([1.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [1])
    with pytest.raises(RuntimeError):
        copy.copy(t)
    with pytest.raises(RuntimeError):
        copy.deepcopy(t)


def test_device_placement_needs_to_host():
    t = Tensor([1.0], None, DataType.DT_FLOAT, Format.FORMAT_ND, [1])
    with pytest.raises(ValueError, match="only supports device tensors"):
        t.to_host()


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**64])
def test_regression_an_int64_value_past_int64_is_a_value_error(value):
    """numpy's OverflowError escaped; a value its C type cannot hold is GE-PY's ValueError."""
    with pytest.raises(ValueError, match="out of range for int64"):
        Tensor([value], data_type=DataType.DT_INT64, shape=[1])


@pytest.mark.parametrize(
    "data_type, value",
    [
        (DataType.DT_INT8, 128),
        (DataType.DT_UINT8, -1),
        (DataType.DT_INT16, 2**15),
        (DataType.DT_UINT16, 2**16),
        (DataType.DT_INT32, 2**31),
        (DataType.DT_UINT32, 2**32),
        (DataType.DT_UINT64, 2**64),
        (DataType.DT_FLOAT, 2**1024),
    ],
    ids=lambda v: "huge" if isinstance(v, int) and abs(v) > 2**70 else None,
)
def test_regression_a_value_outside_its_data_type_is_a_value_error(data_type, value):
    with pytest.raises(ValueError, match="out of range"):
        Tensor([value], data_type=data_type, shape=[1])
    edge = {DataType.DT_UINT8: 255, DataType.DT_UINT64: 2**64 - 1, DataType.DT_FLOAT: 2**127}.get(data_type, value - 1)
    assert Tensor([edge], data_type=data_type, shape=[1]).get_data() == [edge]


def test_regression_a_negative_dim_of_a_file_tensor_is_a_value_error(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(64))
    for shape in ([-1], [-(2**63) - 1], [-2, -2]):
        with pytest.raises(ValueError, match="negative dim"):
            Tensor(file_path=str(path), data_type=DataType.DT_INT8, shape=shape)
