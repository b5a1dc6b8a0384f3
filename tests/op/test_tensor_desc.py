"""``acl.create_tensor_desc`` and its getters and setters: exact returns, failure values, parse errors."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.op import tensor_desc

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_BF16, ACL_STRING = 0, 1, 3, 27, 13
NCHW, ND = 0, 2
UNKNOWN_RANK = (1 << 64) - 2


def test_create_and_every_getter():
    desc = acl.create_tensor_desc(ACL_FLOAT16, [600, 3000], ND)  # as Ascend's slice sample creates it
    assert desc != 0
    assert acl.get_tensor_desc_type(desc) == ACL_FLOAT16
    assert acl.get_tensor_desc_format(desc) == ND
    assert acl.get_tensor_desc_num_dims(desc) == 2
    assert acl.get_tensor_desc_element_count(desc) == 1_800_000
    assert acl.get_tensor_desc_size(desc) == 3_600_000
    assert acl.get_tensor_desc_dim(desc, 1) == 3000
    assert acl.get_tensor_desc_dim_v2(desc, 0) == (600, 0)
    assert acl.get_tensor_desc_dim_range(desc, 1, 2) == ([3000, 3000], 0)
    assert acl.get_tensor_desc_name(desc) == ""
    assert acl.destroy_tensor_desc(desc) is None


def test_scalar_dynamic_and_unknown_rank_descs():
    scalar = acl.create_tensor_desc(ACL_INT32, [], ND)
    assert (acl.get_tensor_desc_num_dims(scalar), acl.get_tensor_desc_element_count(scalar)) == (0, 1)
    assert acl.get_tensor_desc_size(scalar) == 4
    dynamic = acl.create_tensor_desc(ACL_FLOAT, [-1, 3], ND)
    assert acl.get_tensor_desc_size(dynamic) == 0 and acl.get_tensor_desc_element_count(dynamic) == 0
    assert acl.get_tensor_desc_dim_v2(dynamic, 0) == (-1, 0)
    assert acl.set_tensor_shape_range(dynamic, [[1, 8], [3, 3]]) == 0
    assert acl.get_tensor_desc_dim_range(dynamic, 0, 2) == ([1, 8], 0)
    unknown = acl.create_tensor_desc(ACL_FLOAT, [-2], ND)
    assert acl.get_tensor_desc_num_dims(unknown) == UNKNOWN_RANK


@pytest.mark.parametrize("dims", [[-3], [2, -2], [1] * 129])
def test_dims_no_shape_can_have_fail_with_handle_0(dims, acl_log):
    assert acl.create_tensor_desc(ACL_FLOAT, dims, ND) == 0
    assert any("acl.create_tensor_desc: ACL_ERROR_INVALID_PARAM(100000)" in r.getMessage() for r in acl_log.records)


@pytest.mark.parametrize("dims", [(2, 3), [2.0], "23", [2, None]])
def test_dims_must_be_a_list_of_ints(dims):
    with pytest.raises(TypeError, match=r"acl\.create_tensor_desc args parse failed"):
        acl.create_tensor_desc(ACL_FLOAT, dims, ND)


def test_data_type_size():
    assert [acl.data_type_size(t) for t in (ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_BF16)] == [4, 2, 4, 2]
    assert acl.data_type_size(9) == 8 and acl.data_type_size(12) == 1
    assert acl.data_type_size(ACL_STRING) == 0 and acl.data_type_size(-1) == 0 and acl.data_type_size(999) == 0


def test_unknown_desc_returns_each_getters_failure_value():
    stale = acl.create_tensor_desc(ACL_FLOAT, [2], ND)
    acl.destroy_tensor_desc(stale)
    assert acl.get_tensor_desc_type(stale) == -1
    assert acl.get_tensor_desc_format(stale) == -1
    assert acl.get_tensor_desc_size(stale) == 0
    assert acl.get_tensor_desc_element_count(stale) == 0
    assert acl.get_tensor_desc_num_dims(stale) == 0
    assert acl.get_tensor_desc_dim(stale, 0) == -1
    assert acl.get_tensor_desc_dim_v2(stale, 0) == (-1, INVALID)
    assert acl.get_tensor_desc_dim_range(stale, 0, 2) == (None, INVALID)
    assert acl.get_tensor_desc_name(stale) is None
    assert acl.set_tensor_format(stale, NCHW) == INVALID
    assert acl.destroy_tensor_desc(stale) is None  # logged, no crash


def test_dim_index_out_of_range_and_range_num_limits():
    desc = acl.create_tensor_desc(ACL_FLOAT, [4, 5], ND)
    assert acl.get_tensor_desc_dim_v2(desc, 2) == (-1, INVALID)
    assert acl.get_tensor_desc_dim(desc, 7) == -1
    assert acl.get_tensor_desc_dim_range(desc, 0, 4097) == (None, INVALID)
    assert acl.get_tensor_desc_dim_range(desc, 0, 1) == (None, INVALID)


def test_setters_change_what_the_getters_read():
    desc = acl.create_tensor_desc(ACL_FLOAT, [2, 3], ND)
    assert acl.set_tensor_shape(desc, [4, 5, 6]) == 0
    assert [acl.get_tensor_desc_dim(desc, i) for i in range(3)] == [4, 5, 6]
    assert acl.get_tensor_desc_size(desc) == 480
    assert acl.set_tensor_format(desc, NCHW) == 0 and acl.get_tensor_desc_format(desc) == NCHW
    assert acl.set_tensor_desc_name(desc, "input_0") is None
    assert acl.get_tensor_desc_name(desc) == "input_0"
    assert acl.set_tensor_shape(desc, [-5]) == INVALID
    assert acl.get_tensor_desc_num_dims(desc) == 3  # a refused shape leaves the desc as it was
    for call, value in (
        (acl.set_tensor_origin_format, NCHW),
        (acl.set_tensor_storage_format, 3),
        (acl.set_tensor_origin_shape, [1, 2]),
        (acl.set_tensor_storage_shape, [1, 1, 2, 2, 16]),
        (acl.set_tensor_dynamic_input, "x"),
        (acl.set_tensor_value_range, [[0.0, 1.0]]),
        (acl.set_tensor_place_ment, 1),
    ):
        assert call(desc, value) == 0
    stored = tensor_desc.get(desc)
    assert stored.storage_dims == (1, 1, 2, 2, 16) and stored.origin_format == NCHW and stored.placement == 1
    assert acl.set_tensor_place_ment(desc, 7) == INVALID


def test_set_tensor_shape_refuses_an_empty_list_as_pyacl_does():
    desc = acl.create_tensor_desc(ACL_FLOAT, [2], ND)
    with pytest.raises(ValueError, match="list is empty"):
        acl.set_tensor_shape(desc, [])


def test_shape_range_must_match_the_dims():
    desc = acl.create_tensor_desc(ACL_FLOAT, [-1, 3], ND)
    assert acl.set_tensor_shape_range(desc, [[1, 8]]) == INVALID
    assert acl.set_tensor_shape_range(desc, [[5, 2], [3, 3]]) == INVALID
    with pytest.raises(TypeError):
        acl.set_tensor_shape_range(desc, [1, 8])


def test_set_tensor_const_copies_the_bytes_at_once():
    desc = acl.create_tensor_desc(ACL_INT32, [2], ND)
    data = np.array([7, -3], np.int32).tobytes()
    assert acl.set_tensor_const(desc, acl.util.bytes_to_ptr(data), len(data)) == 0
    del data  # the ArgMaxV2 sample's const is a local that is gone before the op runs
    assert np.frombuffer(tensor_desc.get(desc).const, np.int32).tolist() == [7, -3]


def test_set_tensor_const_checks_the_pointer(acl_log):
    desc = acl.create_tensor_desc(ACL_INT32, [2], ND)
    assert acl.set_tensor_const(desc, 0, 8) == INVALID
    assert acl.set_tensor_const(desc, 0xDEAD0000, 8) == INVALID
    data = bytes(8)
    assert acl.set_tensor_const(desc, acl.util.bytes_to_ptr(data), 64) == INVALID  # past the end of the object
    assert tensor_desc.get(desc).const is None


def test_descs_need_no_init_and_survive_finalize():
    desc = acl.create_tensor_desc(ACL_FLOAT, [3], ND)
    assert acl.init() == 0 and acl.finalize() == 0
    assert acl.get_tensor_desc_size(desc) == 12


def test_create_data_buffer_0_0_is_a_real_handle():
    buffer = acl.create_data_buffer(0, 0)
    assert buffer != 0
    assert acl.get_data_buffer_addr(buffer) == 0 and acl.get_data_buffer_size_v2(buffer) == 0
    assert acl.destroy_data_buffer(buffer) == 0
