"""Datasets' tensor descs: an input's desc fixes a dynamic-shape input's dims; every execution leaves a desc
of each output's real dims in the output dataset. Also ``get_op_attr``."""

from __future__ import annotations

import numpy as np

import acl
from openacl.dtypes import AclDataType, AclFormat
from openacl.errors import AclCode
from openacl.model import dataset as _dataset
from openacl.model.model import DEMO_MODEL
from openacl.op import tensor_desc as _tensor_desc
from tests.gear_models import batch_model
from tests.model_io import ModelIO, demo_input

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def test_set_and_get_dataset_tensor_desc():
    dataset = acl.mdl.create_dataset()
    desc = acl.create_tensor_desc(AclDataType.ACL_FLOAT, [2, 3], AclFormat.ACL_FORMAT_ND)
    assert acl.mdl.set_dataset_tensor_desc(dataset, desc, 0) == (dataset, INVALID)  # no buffer 0 yet
    acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(0, 0))
    assert acl.mdl.set_dataset_tensor_desc(dataset, desc, 0) == (dataset, 0)
    assert acl.mdl.get_dataset_tensor_desc(dataset, 0) == desc
    assert acl.mdl.get_dataset_tensor_desc(dataset, 1) == 0
    assert acl.mdl.set_dataset_tensor_desc(dataset, 12345, 0) == (dataset, INVALID)
    assert acl.mdl.destroy_dataset(dataset) == 0
    assert desc in _tensor_desc.tensor_descs  # the caller's desc is the caller's to destroy


def test_an_input_desc_fixes_a_dynamic_input_and_outputs_get_descs(ctx, tmp_path):
    model_id, ret = acl.mdl.load_from_file(str(batch_model(tmp_path / "dyn.onnx", gears=None)))  # data [-1,3,4,4]
    assert ret == 0
    size = 8 * 3 * 4 * 4 * 4
    ptr, _ = acl.rt.malloc(size, 0)
    inputs = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(inputs, acl.create_data_buffer(ptr, size))
    out_ptrs = [acl.rt.malloc(8 * 48 * 4, 0)[0], acl.rt.malloc(8 * 4, 0)[0]]
    outputs = acl.mdl.create_dataset()
    for out, nbytes in zip(out_ptrs, (8 * 48 * 4, 8 * 4), strict=True):
        acl.mdl.add_dataset_buffer(outputs, acl.create_data_buffer(out, nbytes))
    x = np.arange(2 * 48, dtype=np.float32).reshape(2, 3, 4, 4)
    host = x.tobytes()
    assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(host), len(host), 1) == 0
    desc = acl.create_tensor_desc(AclDataType.ACL_FLOAT, [2, 3, 4, 4], AclFormat.ACL_FORMAT_NCHW)
    assert acl.mdl.set_dataset_tensor_desc(inputs, desc, 0)[1] == 0
    assert acl.mdl.execute(model_id, inputs, outputs) == 0  # batch 2 from the desc, not 8 from the size
    total = acl.mdl.get_dataset_tensor_desc(outputs, 1)
    assert total != 0
    assert acl.get_tensor_desc_num_dims(total) == 1 and acl.get_tensor_desc_dim_v2(total, 0) == (2, 0)
    assert acl.get_tensor_desc_type(total) == AclDataType.ACL_FLOAT
    got = np.frombuffer(acl.util.ptr_to_bytes(out_ptrs[1], 8), np.float32)
    np.testing.assert_allclose(got, x.reshape(2, -1).sum(axis=1))
    wrong = acl.create_tensor_desc(AclDataType.ACL_FLOAT, [2, 3, 5, 4], AclFormat.ACL_FORMAT_NCHW)
    assert acl.mdl.set_dataset_tensor_desc(inputs, wrong, 0)[1] == 0
    assert acl.mdl.execute(model_id, inputs, outputs) == INVALID  # a static dim changed
    big = acl.create_tensor_desc(AclDataType.ACL_FLOAT, [9, 3, 4, 4], AclFormat.ACL_FORMAT_NCHW)
    assert acl.mdl.set_dataset_tensor_desc(inputs, big, 0)[1] == 0
    assert acl.mdl.execute(model_id, inputs, outputs) == INVALID  # more than the buffer holds
    assert acl.mdl.destroy_dataset(outputs) == 0
    assert total not in _tensor_desc.tensor_descs  # the dataset's own descs go with it


def test_static_model_outputs_get_descs_too(ctx):
    io = ModelIO()
    io.run(demo_input())
    desc = acl.mdl.get_dataset_tensor_desc(io.outputs[0], 0)
    dims, _ = acl.mdl.get_output_dims(io.desc, 0)
    assert [acl.get_tensor_desc_dim_v2(desc, i)[0] for i in range(acl.get_tensor_desc_num_dims(desc))] == dims["dims"]
    again = io.run(demo_input(1))
    assert again and acl.mdl.get_dataset_tensor_desc(io.outputs[0], 0) == desc  # updated in place
    assert len(_dataset.datasets.get(io.outputs[0]).owned_descs) == len(again)


def test_an_output_desc_of_the_same_shape_keeps_its_stamp(ctx):
    """A run that produces what the desc already says changes nothing, not even the desc's version stamp (so the
    call plans' epoch does not move with every model run)."""
    from openacl.runtime import versions

    io = ModelIO()
    io.run(demo_input())
    owned = _tensor_desc.get(acl.mdl.get_dataset_tensor_desc(io.outputs[0], 0))
    stamp, epoch = owned.version, versions.epoch
    io.run(demo_input(1))
    assert owned.version == stamp and versions.epoch == epoch


def test_get_op_attr_reports_each_node_as_its_own_original_op(ctx):
    io = ModelIO()
    import onnx

    node = onnx.load(str(DEMO_MODEL)).graph.node[0].name
    assert node
    attr = "_datadump_original_op_names"
    assert acl.mdl.get_op_attr(io.desc, node, attr) == node
    assert acl.mdl.get_op_attr(io.desc, "no such op", attr) is None
    assert acl.mdl.get_op_attr(io.desc, node, "other") is None
    assert acl.mdl.get_op_attr(12345, node, attr) is None
