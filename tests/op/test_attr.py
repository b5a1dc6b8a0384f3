"""``acl.op`` attributes: typed values, replacing, parse errors, and the kinds the op table checks."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.op import attr as op_attr

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def values(handle: int) -> dict:
    return op_attr.get(handle).values


def test_each_setter_stores_its_kind_and_value():
    attr = acl.op.create_attr()
    assert attr != 0
    assert acl.op.set_attr_bool(attr, "b", False) == 0
    assert acl.op.set_attr_int(attr, "i", -(1 << 40)) == 0
    assert acl.op.set_attr_float(attr, "f", 0.1) == 0
    assert acl.op.set_attr_string(attr, "s", "NHWC") == 0
    assert acl.op.set_attr_list_bool(attr, "lb", [True, 0]) == 0
    assert acl.op.set_attr_list_int(attr, "li", [1, -2]) == 0
    assert acl.op.set_attr_list_float(attr, "lf", [0.5, 2]) == 0
    assert acl.op.set_attr_list_string(attr, "ls", ["a", "b"]) == 0
    assert acl.op.set_attr_list_list_int(attr, "lli", [[1, 2], [3]]) == 0
    assert acl.op.set_attr_data_type(attr, "dt", 3) == (attr, 0)
    assert acl.op.set_attr_list_data_type(attr, "ldt", [0, 1]) == (attr, 0)
    assert values(attr) == {
        "b": ("bool", False),
        "i": ("int", -(1 << 40)),
        "f": ("float", float(np.float32(0.1))),  # a C float: single precision
        "s": ("string", "NHWC"),
        "lb": ("list_bool", (True, False)),
        "li": ("list_int", (1, -2)),
        "lf": ("list_float", (0.5, 2.0)),
        "ls": ("list_string", ("a", "b")),
        "lli": ("list_list_int", ((1, 2), (3,))),
        "dt": ("data_type", 3),
        "ldt": ("list_data_type", (0, 1)),
    }
    assert acl.op.destroy_attr(attr) is None


def test_setting_a_name_again_replaces_value_and_kind():
    attr = acl.op.create_attr()
    acl.op.set_attr_int(attr, "axis", 1)
    acl.op.set_attr_list_int(attr, "axis", [0])
    assert values(attr) == {"axis": ("list_int", (0,))}


def test_bool_takes_any_int_as_pyacl_B_does():
    attr = acl.op.create_attr()
    assert acl.op.set_attr_bool(attr, "t", 256 + 1) == 0  # B truncates to a byte: 1
    assert values(attr)["t"] == ("bool", True)
    assert acl.op.set_attr_bool(attr, "t", 256) == 0
    assert values(attr)["t"] == ("bool", False)


def test_numpy_arrays_are_read_with_a_warning():
    attr = acl.op.create_attr()
    with pytest.warns(Warning, match="numpy array"):
        assert acl.op.set_attr_list_int(attr, "perm", np.array([2, 0, 1])) == 0
    assert values(attr)["perm"] == ("list_int", (2, 0, 1))


@pytest.mark.parametrize(
    "setter, value",
    [
        ("set_attr_int", 1.5),
        ("set_attr_int", 1 << 63),
        ("set_attr_string", 3),
        ("set_attr_list_int", (1, 2)),
        ("set_attr_list_int", [1, "2"]),
        ("set_attr_list_string", ["a", 1]),
        ("set_attr_list_list_int", [1, 2]),
    ],
)
def test_unparsable_values_raise_type_error(setter, value):
    with pytest.raises(TypeError):
        getattr(acl.op, setter)(acl.op.create_attr(), "name", value)


def test_unknown_attr_and_empty_name_are_invalid_param():
    attr = acl.op.create_attr()
    acl.op.destroy_attr(attr)
    assert acl.op.set_attr_int(attr, "x", 1) == INVALID
    assert acl.op.set_attr_int(0, "x", 1) == INVALID
    assert acl.op.set_attr_int(acl.op.create_attr(), "", 1) == INVALID
    assert acl.op.set_attr_data_type(attr, "x", 1) == (0, INVALID)


def test_create_attr_ignores_arguments_as_pyacl_does():
    assert acl.op.create_attr(1, 2) != 0
