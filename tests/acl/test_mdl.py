"""``acl.mdl`` models, descriptions, datasets and execution, as a pyACL program uses them."""

from __future__ import annotations

import threading

import numpy as np
import onnx
import pytest

import acl
from openacl.dtypes import AclDataType, AclFormat
from openacl.errors import AclCode
from openacl.model.model import DEMO_MODEL
from tests.model_io import ModelIO, demo_input, reference

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
INPUT_BYTES = 1 * 3 * 64 * 64 * 4


@pytest.fixture
def io(ctx):
    return ModelIO()


# ----- loading -----


def test_load_from_file_returns_small_increasing_ids(ctx):
    first, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
    assert ret == 0 and first >= 1
    second, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
    assert ret == 0 and second == first + 1
    assert acl.mdl.unload(first) == 0
    assert acl.mdl.unload(first) == AclCode.ACL_ERROR_INVALID_MODEL_ID
    third, _ = acl.mdl.load_from_file(str(DEMO_MODEL))
    assert third not in (first, second)  # ids are never reused


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda d: str(d / "missing.onnx"), AclCode.ACL_ERROR_INVALID_FILE),
        (lambda d: str(d), AclCode.ACL_ERROR_INVALID_FILE),
        (lambda d: _write(d / "empty.onnx", b""), AclCode.ACL_ERROR_MODEL_SIZE_INVALID),
        (lambda d: _write(d / "junk.onnx", b"\xff\x00 not a model" * 10), AclCode.ACL_ERROR_PARSE_MODEL),
        (lambda d: _write(d / "model.om", b"IMOD" + bytes(200)), AclCode.ACL_ERROR_PARSE_MODEL),
    ],
    ids=["missing", "directory", "empty", "junk", "om-file"],
)
def test_load_from_file_bad_files_return_codes(tmp_path, acl_log, make, code):
    model_id, ret = acl.mdl.load_from_file(make(tmp_path))
    assert (model_id, ret) == (0, code)
    assert any(r.getMessage().startswith(f"acl.mdl.load_from_file: {AclCode(code).name}") for r in acl_log.records)


def test_load_a_model_onnxruntime_rejects(tmp_path):
    model = onnx.load(DEMO_MODEL)
    model.graph.node[0].op_type = "NoSuchOperator"
    path = _write(tmp_path / "broken.onnx", model.SerializeToString())
    assert acl.mdl.load_from_file(path) == (0, AclCode.ACL_ERROR_PARSE_MODEL)


def _write(path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def test_load_from_file_parse_errors():
    with pytest.raises(TypeError, match=r"acl\.mdl\.load_from_file args parse failed"):
        acl.mdl.load_from_file(3)
    with pytest.raises(TypeError):
        acl.mdl.load_from_file()


def test_load_from_mem_reads_real_memory(ctx):
    data = DEMO_MODEL.read_bytes()
    ptr = acl.util.bytes_to_ptr(data)
    model_id, ret = acl.mdl.load_from_mem(ptr, len(data))
    assert ret == 0
    io = ModelIO.__new__(ModelIO)
    io.model_id = model_id
    assert acl.mdl.unload(model_id) == 0


def test_load_from_mem_bad_pointer_and_size(ctx):
    data = DEMO_MODEL.read_bytes()
    ptr = acl.util.bytes_to_ptr(data)
    assert acl.mdl.load_from_mem(0xDEAD0000, 100) == (0, INVALID)
    assert acl.mdl.load_from_mem(ptr, len(data) + 4096) == (0, INVALID)
    assert acl.mdl.load_from_mem(ptr, 0) == (0, AclCode.ACL_ERROR_MODEL_SIZE_INVALID)
    assert acl.mdl.load_from_mem(ptr, 50)[1] == AclCode.ACL_ERROR_PARSE_MODEL


def test_query_size_counts_weights_and_intermediates():
    work, weight, ret = acl.mdl.query_size(str(DEMO_MODEL))
    assert ret == 0
    model = onnx.load(DEMO_MODEL)
    expected_weights = sum(onnx.numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
    assert weight == expected_weights
    assert work >= 8 * 64 * 64 * 4  # at least the first convolution's output
    assert acl.mdl.query_size("/no/such/model.onnx") == (0, 0, AclCode.ACL_ERROR_INVALID_FILE)


def test_load_from_file_with_mem_checks_the_lent_memory(ctx):
    work, weight, _ = acl.mdl.query_size(str(DEMO_MODEL))
    work_ptr, _ = acl.rt.malloc(work, 0)
    weight_ptr, _ = acl.rt.malloc(weight, 0)
    model_id, ret = acl.mdl.load_from_file_with_mem(str(DEMO_MODEL), work_ptr, work, weight_ptr, weight)
    assert ret == 0 and model_id > 0
    assert acl.mdl.load_from_file_with_mem(str(DEMO_MODEL), work_ptr, work - 1, weight_ptr, weight) == (0, INVALID)
    assert acl.mdl.load_from_file_with_mem(str(DEMO_MODEL), 0xBAD000, work, weight_ptr, weight) == (0, INVALID)
    assert acl.mdl.load_from_file_with_mem(str(DEMO_MODEL), 0, 0, 0, 0)[1] == 0


# ----- descriptions -----


def test_description_of_the_demo_model(io):
    desc = io.desc
    assert acl.mdl.get_num_inputs(desc) == 1
    assert acl.mdl.get_num_outputs(desc) == 2
    assert acl.mdl.get_input_size_by_index(desc, 0) == INPUT_BYTES
    assert acl.mdl.get_output_size_by_index(desc, 0) == 40
    assert acl.mdl.get_input_dims(desc, 0) == ({"name": "input", "dimCount": 4, "dims": [1, 3, 64, 64]}, 0)
    assert acl.mdl.get_output_dims(desc, 1) == ({"name": "logits", "dimCount": 2, "dims": [1, 10]}, 0)
    assert acl.mdl.get_input_name_by_index(desc, 0) == "input"
    assert acl.mdl.get_output_name_by_index(desc, 0) == "probabilities"
    assert acl.mdl.get_input_data_type(desc, 0) == AclDataType.ACL_FLOAT
    assert acl.mdl.get_output_data_type(desc, 1) == AclDataType.ACL_FLOAT
    assert acl.mdl.get_input_format(desc, 0) == AclFormat.ACL_FORMAT_NCHW
    assert acl.mdl.get_output_format(desc, 0) == AclFormat.ACL_FORMAT_ND
    assert acl.mdl.get_input_index_by_name(desc, "input") == (0, 0)
    assert acl.mdl.get_output_index_by_name(desc, "logits") == (1, 0)


def test_description_bad_indexes_and_handles(io):
    desc = io.desc
    assert acl.mdl.get_input_size_by_index(desc, 1) == 0
    assert acl.mdl.get_input_dims(desc, 5) == ({}, INVALID)  # pyACL: an empty dict with a failing ret
    assert acl.mdl.get_output_name_by_index(desc, -1) == ""
    assert acl.mdl.get_input_data_type(desc, 9) == AclDataType.ACL_DT_UNDEFINED
    assert acl.mdl.get_output_format(desc, 9) == AclFormat.ACL_FORMAT_UNDEFINED
    assert acl.mdl.get_input_index_by_name(desc, "nope")[1] == INVALID
    assert acl.mdl.get_num_inputs(0x1234) == 0
    assert acl.mdl.get_desc(desc, 999_999) == AclCode.ACL_ERROR_INVALID_MODEL_ID
    assert acl.mdl.destroy_desc(desc) == 0
    assert acl.mdl.destroy_desc(desc) == INVALID


def test_description_outlives_the_model(io):
    assert acl.mdl.unload(io.model_id) == 0
    assert acl.mdl.get_num_inputs(io.desc) == 1


# ----- datasets -----


def test_dataset_lifecycle(ctx):
    ptr, _ = acl.rt.malloc(64, 0)
    buffer = acl.create_data_buffer(ptr, 64)
    dataset = acl.mdl.create_dataset()
    assert dataset != 0
    assert acl.mdl.add_dataset_buffer(dataset, buffer) == (dataset, 0)
    assert acl.mdl.get_dataset_num_buffers(dataset) == 1
    assert acl.mdl.get_dataset_buffer(dataset, 0) == buffer
    assert acl.mdl.get_dataset_buffer(dataset, 1) == 0
    assert acl.mdl.add_dataset_buffer(dataset, 0x999)[1] == INVALID
    assert acl.mdl.destroy_dataset(dataset) == 0
    assert acl.mdl.destroy_dataset(dataset) == INVALID
    assert acl.mdl.get_dataset_num_buffers(dataset) == 0


# ----- execution -----


def test_execute_matches_onnxruntime_bit_for_bit(io):
    x = demo_input()
    got = io.run(x)
    want = reference(x=x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    assert acl.mdl.get_cur_output_dims(io.desc, 0) == ({"name": "probabilities", "dimCount": 2, "dims": [1, 10]}, 0)


def test_execute_async_is_ordered_with_memcpy_and_callbacks(io, stream):
    x = demo_input(1)
    seen = []
    done = threading.Event()

    def report(_args):
        acl.rt.set_context(io_ctx)
        while not done.is_set():
            acl.rt.process_report(50)

    io_ctx, _ = acl.rt.get_context()
    tid, _ = acl.util.start_thread(report, [])
    assert acl.rt.subscribe_report(tid, stream) == 0
    io.load_input(x, stream)
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == 0

    def after(_):
        ptr, size = io.outputs[1][1]
        seen.append(np.frombuffer(acl.util.ptr_to_bytes(ptr, size), np.float32).copy())

    assert acl.rt.launch_callback(after, None, 1, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    done.set()
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    acl.util.stop_thread(tid)
    np.testing.assert_array_equal(seen[0].reshape(1, 10), reference(x=x)[1])


def test_execute_rejects_bad_datasets_before_running(io, ctx, acl_log):
    small_ptr, _ = acl.rt.malloc(16, 0)
    small = acl.mdl.create_dataset()
    acl.mdl.add_dataset_buffer(small, acl.create_data_buffer(small_ptr, 16))
    out_ptr, out_size = io.outputs[1][0]
    acl.rt.memset(out_ptr, out_size, 0x7F, out_size)
    assert acl.mdl.execute(io.model_id, small, io.outputs[0]) == INVALID
    assert "needs 49152 bytes" in acl_log.text
    assert acl.util.ptr_to_bytes(out_ptr, out_size) == b"\x7f" * out_size  # nothing ran
    empty = acl.mdl.create_dataset()
    assert acl.mdl.execute(io.model_id, empty, io.outputs[0]) == INVALID
    assert acl.mdl.execute(io.model_id, io.inputs[0], small) == INVALID
    assert acl.mdl.execute(io.model_id, 0xABC, io.outputs[0]) == INVALID
    assert acl.mdl.execute(12345, io.inputs[0], io.outputs[0]) == AclCode.ACL_ERROR_INVALID_MODEL_ID


def test_execute_after_buffer_destroyed_or_memory_freed(io):
    buffer = acl.mdl.get_dataset_buffer(io.outputs[0], 0)
    assert acl.destroy_data_buffer(buffer) == 0
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == INVALID
    io2 = ModelIO()
    in_ptr, _ = io2.inputs[1][0]
    assert acl.rt.free(in_ptr) == 0
    assert acl.mdl.execute(io2.model_id, io2.inputs[0], io2.outputs[0]) == INVALID


def test_execute_async_bad_stream(io):
    assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], 0xDEAD) != 0


def test_execute_from_many_threads(io, ctx):
    """Concurrent executions of one model each get their own answer (onnxruntime sessions are thread-safe)."""
    results = {}

    def worker(seed: int) -> None:
        acl.rt.set_context(ctx)
        mine = ModelIO()
        results[seed] = mine.run(demo_input(seed))[1]

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed, logits in results.items():
        np.testing.assert_array_equal(logits, reference(x=demo_input(seed))[1])


def test_an_om_path_is_read_from_the_onnx_model_beside_it(tmp_path, acl_log):
    """Ascend programs load the .om ATC made; the ONNX it was made from, next to it, stands in for it."""
    import shutil

    from openacl.model.model import DEMO_MODEL

    shutil.copy(DEMO_MODEL, tmp_path / "resnet50.onnx")
    (tmp_path / "resnet50.om").write_bytes(b"an NPU binary openacl cannot run")
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "resnet50.om"))
    assert ret == 0 and model_id > 0
    assert any("reading the ONNX model beside it" in r.getMessage() for r in acl_log.records)
    assert acl.mdl.unload(model_id) == 0
    (tmp_path / "resnet50.onnx").unlink()
    assert acl.mdl.load_from_file(str(tmp_path / "resnet50.om")) == (0, 100013)  # a real .om alone: refused
