"""Load configs (``load_with_config`` by every load type CANN has) and execution configs (``execute_v2``)."""

from __future__ import annotations

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.model import config
from openacl.model import model as _model
from openacl.model.model import DEMO_MODEL
from tests.model_io import ModelIO, demo_input, reference

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


def _config(**attrs) -> int:
    handle = acl.mdl.create_config_handle()
    assert handle != 0
    for attr, value in attrs.items():
        assert acl.mdl.set_config_opt(handle, getattr(config, attr), value) == 0, attr
    return handle


def _model_bytes() -> tuple[int, int]:
    data = DEMO_MODEL.read_bytes()
    ptr, ret = acl.rt.malloc_host(len(data))
    assert ret == 0
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 0) == 0
    return ptr, len(data)


def test_load_from_file_with_priority(ctx):
    handle = _config(LOAD_TYPE=config.FROM_FILE, PATH=str(DEMO_MODEL), PRIORITY=5)
    model_id, ret = acl.mdl.load_with_config(handle)
    assert ret == 0 and _model.get(model_id).priority == 5
    assert acl.mdl.destroy_config_handle(handle) == 0
    assert acl.mdl.destroy_config_handle(handle) == INVALID


def test_load_from_memory_runs_like_load_from_file(ctx):
    ptr, size = _model_bytes()
    handle = _config(LOAD_TYPE=config.FROM_MEM, MEM_ADDR=ptr, MEM_SIZE=size)
    model_id, ret = acl.mdl.load_with_config(handle)
    assert ret == 0
    assert _model.get(model_id).name == _model.load_from_memory(ptr, size).name


def test_load_with_lent_memory_checks_its_size(ctx):
    work_need, weight_need, ret = acl.mdl.query_size(str(DEMO_MODEL))
    assert ret == 0
    work, _ = acl.rt.malloc(work_need, 0)
    weight, _ = acl.rt.malloc(weight_need, 0)
    good = dict(LOAD_TYPE=config.FROM_FILE_WITH_MEM, PATH=str(DEMO_MODEL), WORKSPACE_ADDR=work)
    handle = _config(**good, WORKSPACE_SIZE=work_need, WEIGHT_ADDR=weight, WEIGHT_SIZE=weight_need)
    assert acl.mdl.load_with_config(handle)[1] == 0
    short = _config(**good, WORKSPACE_SIZE=work_need - 1)
    assert acl.mdl.load_with_config(short)[1] == INVALID
    ptr, size = _model_bytes()
    from_mem = _config(
        LOAD_TYPE=config.FROM_MEM_WITH_MEM, MEM_ADDR=ptr, MEM_SIZE=size, WEIGHT_ADDR=weight, WEIGHT_SIZE=weight_need
    )
    assert acl.mdl.load_with_config(from_mem)[1] == 0


@pytest.mark.parametrize(
    ("attrs", "code"),
    [
        ({}, INVALID),  # no load type
        ({"LOAD_TYPE": config.FROM_FILE}, INVALID),  # no path
        ({"LOAD_TYPE": config.FROM_MEM, "MEM_SIZE": 10}, INVALID),  # no address
        ({"LOAD_TYPE": config.FROM_FILE, "PATH": str(DEMO_MODEL), "WEIGHT_PATH": 64}, INVALID),
        ({"LOAD_TYPE": config.FROM_FILE, "PATH": "/no/such/model.onnx"}, AclCode.ACL_ERROR_INVALID_FILE),
        ({"LOAD_TYPE": config.FROM_FILE_WITH_Q, "PATH": str(DEMO_MODEL)}, INVALID),  # no queues
        (
            {
                "LOAD_TYPE": config.FROM_FILE_WITH_Q,
                "PATH": str(DEMO_MODEL),
                "INPUTQ_ADDR": 8,
                "INPUTQ_NUM": 1,
                "OUTPUTQ_ADDR": 8,
                "OUTPUTQ_NUM": 1,
            },
            AclCode.ACL_ERROR_FEATURE_UNSUPPORTED,
        ),
    ],
    ids=["no-type", "no-path", "no-addr", "weight-path-with-file", "missing-file", "no-queues", "queues"],
)
def test_load_with_config_checks_as_cann_does(ctx, attrs, code):
    assert acl.mdl.load_with_config(_config(**attrs)) == (0, code)


def test_set_config_opt_values_and_codes():
    handle = acl.mdl.create_config_handle()
    assert acl.mdl.set_config_opt(handle, config.PRIORITY, 8) == INVALID  # stream priorities are 0..7
    assert acl.mdl.set_config_opt(handle, config.PRIORITY, -1) == INVALID
    assert acl.mdl.set_config_opt(handle, config.LOAD_TYPE, 7) == INVALID
    assert acl.mdl.set_config_opt(handle, config.MEM_ADDR, 0) == INVALID
    assert acl.mdl.set_config_opt(handle, 15, 1) == INVALID
    assert acl.mdl.set_config_opt(handle, config.WITHOUT_GRAPH, 1) == INVALID  # pyACL's 8 bytes for an int32
    assert acl.mdl.set_config_opt(handle, config.WORKSPACE_MEM_OPTIMIZE, 1) == 0
    assert acl.mdl.set_config_opt(12345, config.PRIORITY, 0) == INVALID
    with pytest.raises(TypeError, match="set_config_opt args parse failed"):
        acl.mdl.set_config_opt(handle, config.PATH, 5)  # the path must be a str
    with pytest.raises(TypeError):
        acl.mdl.set_config_opt(handle, config.PRIORITY, 1 << 31)  # an int32
    with pytest.raises(TypeError):
        acl.mdl.set_config_opt(handle, config.MEM_SIZE, "ten")


# ----- execution configs and execute_v2 -----


def test_exec_config_opts():
    handle = acl.mdl.create_exec_config_handle()
    assert acl.mdl.set_exec_config_opt(handle, config.STREAM_SYNC_TIMEOUT, 0xFFFFFFFF) == 0  # -1: forever
    assert config.get_exec_config(handle).stream_sync_timeout_ms == -1
    assert acl.mdl.set_exec_config_opt(handle, config.EVENT_SYNC_TIMEOUT, 2000) == 0
    assert acl.mdl.set_exec_config_opt(handle, config.STREAM_SYNC_TIMEOUT, 0xFFFFFFFE) == INVALID  # -2
    assert acl.mdl.set_exec_config_opt(handle, 2, 64) == INVALID  # work memory: refused by current CANN
    assert acl.mdl.set_exec_config_opt(handle, 8, 0) == INVALID
    assert acl.mdl.destroy_exec_config_handle(handle) == 0
    assert acl.mdl.set_exec_config_opt(handle, 0, 1) == INVALID


def test_execute_v2_runs_on_the_stream_and_waits(ctx, stream):
    io = ModelIO()
    x = demo_input(4)
    io.load_input(x, stream)  # queued before the model: execute_v2 runs after it
    handle = acl.mdl.create_exec_config_handle()
    assert acl.mdl.set_exec_config_opt(handle, config.STREAM_SYNC_TIMEOUT, 60000) == 0
    assert acl.mdl.execute_v2(io.model_id, io.inputs[0], io.outputs[0], stream, handle) == 0
    np.testing.assert_allclose(io.read_outputs()[0], reference(x=x)[0], rtol=1e-5, atol=1e-6)
    assert acl.mdl.execute_v2(io.model_id, io.inputs[0], io.outputs[0], 0, handle) == 0  # the default stream
    assert acl.mdl.execute_v2(io.model_id, io.inputs[0], io.outputs[0], stream, 0) == INVALID
    assert acl.mdl.execute_v2(999, io.inputs[0], io.outputs[0], stream, handle) == AclCode.ACL_ERROR_INVALID_MODEL_ID
