"""``acl.trans_tensor_desc_format``: a desc's dims in another format, by each format's rule."""

from __future__ import annotations

import pytest

import acl
from openacl.dtypes import AclFormat
from openacl.errors import AclCode
from openacl.op import format_trans

NCHW, NHWC, ND, NC1HWC0, HWCN, FRACTAL_NZ, FRACTAL_Z = 0, 1, 2, 3, 16, 29, 4
FLOAT16, FLOAT, INT8 = 1, 0, 2


def dims_of(desc: int) -> list[int]:
    return [acl.get_tensor_desc_dim_v2(desc, i)[0] for i in range(acl.get_tensor_desc_num_dims(desc))]


@pytest.mark.parametrize(
    ("dtype", "dims", "src", "dst", "expected"),
    [
        (FLOAT16, [2, 3, 4, 5], NCHW, NHWC, [2, 4, 5, 3]),
        (FLOAT16, [2, 4, 5, 3], NHWC, NCHW, [2, 3, 4, 5]),
        (FLOAT, [2, 3, 4, 5], NCHW, HWCN, [4, 5, 3, 2]),
        (FLOAT16, [1, 35, 7, 7], NCHW, NC1HWC0, [1, 3, 7, 7, 16]),
        (INT8, [1, 7, 7, 35], NHWC, NC1HWC0, [1, 2, 7, 7, 32]),
        (FLOAT16, [8, 33, 20], ND, FRACTAL_NZ, [8, 2, 3, 16, 16]),
        (FLOAT16, [-1, 3, 4, 5], NCHW, NHWC, [-1, 4, 5, 3]),
        (FLOAT16, [1, -1, 4, 4], NCHW, NC1HWC0, [1, -1, 4, 4, 16]),
        (FLOAT16, [3, 4], ND, ND, [3, 4]),
    ],
)
def test_trans_tensor_desc_format_rearranges_the_dims(dtype, dims, src, dst, expected):
    desc = acl.create_tensor_desc(dtype, dims, src)
    acl.set_tensor_desc_name(desc, "x")
    made, ret = acl.trans_tensor_desc_format(desc, dst)
    assert ret == 0 and made not in (0, desc)
    assert dims_of(made) == expected
    assert acl.get_tensor_desc_format(made) == dst and acl.get_tensor_desc_type(made) == dtype
    assert acl.get_tensor_desc_name(made) == "x"
    assert dims_of(desc) == dims  # the source is left as it was
    acl.destroy_tensor_desc(made)


def test_trans_tensor_desc_format_refuses_what_no_rule_covers(acl_log):
    assert acl.trans_tensor_desc_format(acl.create_tensor_desc(FLOAT16, [3, 4], ND), NCHW) == (
        0,
        AclCode.ACL_ERROR_FORMAT_NOT_MATCH,
    )
    assert acl.trans_tensor_desc_format(acl.create_tensor_desc(FLOAT16, [1, 2, 3], NCHW), NHWC)[1] == 100027
    assert acl.trans_tensor_desc_format(acl.create_tensor_desc(FLOAT16, [1, 2, 3, 4], NCHW), FRACTAL_Z)[1] == 100027
    assert acl.trans_tensor_desc_format(acl.create_tensor_desc(FLOAT16, [-2], ND), NHWC)[1] == 100000
    assert acl.trans_tensor_desc_format(0xBAD0, NHWC) == (0, AclCode.ACL_ERROR_INVALID_PARAM)
    with pytest.raises(TypeError):
        acl.trans_tensor_desc_format(0xBAD0, "NHWC")


def test_the_rule_on_the_floor():
    assert format_trans.trans_dims((1, 16, 2, 2), FLOAT16, AclFormat.ACL_FORMAT_NCHW, NC1HWC0) == (1, 1, 2, 2, 16)
