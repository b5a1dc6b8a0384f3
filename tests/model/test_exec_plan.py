"""A model's execution plan (``model.plan``): a dataset pair run twice the whole way runs on a plan after,
reading and writing its buffers in place; any change behind the plan is seen, and the call goes the whole way
with its checks and codes."""

from __future__ import annotations

import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import acl
from openacl import onnxrt
from openacl.dump import format as dump_format
from openacl.dump import reader as dump_reader
from openacl.dump import sink
from openacl.errors import AclCode
from openacl.model import model as model_table
from openacl.model import plan as model_plan
from openacl.model import profiled
from openacl.model.model import DEMO_MODEL
from openacl.runtime import checker, memory
from tests.aipp_models import YUV420SP_U8, aipp_model, static_conf
from tests.dump.test_model_dump import dump_files, write_config
from tests.gear_models import batch_model
from tests.model.test_external_data import save_external_model
from tests.model.test_profiled import Collected
from tests.model_io import ModelIO, demo_input, reference

INVALID = AclCode.ACL_ERROR_INVALID_PARAM


@pytest.fixture
def io(ctx):
    return ModelIO()


def _plans(io: ModelIO):
    return model_table.get(io.model_id).plans.cache


def _execute(io: ModelIO) -> int:
    return acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0])


def _check_run(io: ModelIO, seed: int) -> None:
    x = demo_input(seed)
    for got, want in zip(io.run(x), reference(x=x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_pair_run_again_takes_its_plan_and_reads_each_call_s_input(io):
    _check_run(io, 0)
    assert len(_plans(io)) == 0  # one call the whole way: no plan yet
    _check_run(io, 1)
    assert len(_plans(io)) == 1
    for seed in (2, 3, 4):  # on the plan: new input bytes in the same buffers, new outputs
        _check_run(io, seed)
    assert model_table.get(io.model_id).executions == 5  # every planned run is a step (dump and profile steps)


def test_a_planned_call_checks_no_memory(io, monkeypatch):
    """The steady state looks no address up in the memory table: the generation says nothing changed."""
    _check_run(io, 0)
    _check_run(io, 1)
    finds = []
    real = memory.space.find
    monkeypatch.setattr(memory.space, "find", lambda *a: (finds.append(a), real(*a))[1])
    assert _execute(io) == 0
    assert finds == []


def test_new_datasets_for_every_call_make_no_plan(ctx):
    """acllite's way: a dataset made and destroyed around each call never repeats a pair."""
    io = ModelIO()
    for seed in range(3):
        io.inputs = io._dataset(1, acl.mdl.get_input_size_by_index)
        _check_run(io, seed)
    assert len(_plans(io)) == 0


def test_an_output_buffer_re_pointed_behind_a_plan_gets_the_outputs(io):
    _check_run(io, 0)
    _check_run(io, 1)
    ptr, size = io.outputs[1][0]
    moved, _ = acl.rt.malloc(size, 0)
    buffer = acl.mdl.get_dataset_buffer(io.outputs[0], 0)
    assert acl.update_data_buffer(buffer, moved, size) == 0
    assert acl.rt.memset(ptr, size, 0, size) == 0
    x = demo_input(2)
    io.load_input(x)
    assert _execute(io) == 0
    got = np.frombuffer(acl.util.ptr_to_bytes(moved, size), np.float32)
    np.testing.assert_allclose(got, reference(x=x)[0].ravel(), rtol=1e-5, atol=1e-6)
    assert not any(acl.util.ptr_to_bytes(ptr, size))  # the old buffer's memory is not written


def test_memory_freed_behind_a_plan_is_refused_as_the_whole_way_refuses_it(io, acl_log):
    _check_run(io, 0)
    _check_run(io, 1)
    assert acl.rt.free(io.outputs[1][0][0]) == 0
    assert _execute(io) == INVALID
    assert any("output 0 buffer" in r.getMessage() for r in acl_log.records)


def test_memory_freed_and_allocated_again_smaller_at_the_same_address_behind_a_plan(io):
    """The output's memory goes and the same address is mapped again, smaller (virtual memory makes it certain):
    the plan's checks no longer hold, and the call is refused as the whole way refuses a buffer past its memory."""
    prop = {"handleType": 0, "allocationType": 0, "memAttr": 0, "location": {"id": 0, "type": 1}, "reserve": 0}
    page, _ = acl.rt.mem_get_allocation_granularity(prop, 0)
    base, _ = acl.rt.reserve_mem_address(2 * page, 0, 0, 0)
    two, _ = acl.rt.malloc_physical(2 * page, prop, 0)
    one, _ = acl.rt.malloc_physical(page, prop, 0)
    assert acl.rt.map_mem(base, 2 * page, 0, two, 0) == 0
    assert acl.update_data_buffer(acl.mdl.get_dataset_buffer(io.outputs[0], 0), base, 2 * page) == 0
    io.outputs[1][0] = (base, io.outputs[1][0][1])  # read back as many bytes as before
    _check_run(io, 0)
    _check_run(io, 1)
    assert len(_plans(io)) == 1
    assert acl.rt.unmap_mem(base) == 0
    assert acl.rt.map_mem(base, page, 0, one, 0) == 0
    assert _execute(io) == INVALID
    assert acl.rt.unmap_mem(base) == 0
    for handle in (two, one):
        assert acl.rt.free_physical(handle) == 0
    assert acl.rt.release_mem_address(base) == 0


def test_destroyed_handles_behind_a_plan_are_refused(io):
    _check_run(io, 0)
    _check_run(io, 1)
    buffer = acl.mdl.get_dataset_buffer(io.inputs[0], 0)
    assert acl.destroy_data_buffer(buffer) == 0
    assert _execute(io) == INVALID
    assert acl.mdl.destroy_dataset(io.outputs[0]) == 0
    assert _execute(io) == INVALID


def test_a_buffer_added_behind_a_plan_is_refused(io):
    _check_run(io, 0)
    _check_run(io, 1)
    ptr, size = io.inputs[1][0]
    _, ret = acl.mdl.add_dataset_buffer(io.inputs[0], acl.create_data_buffer(ptr, size))
    assert ret == 0
    assert _execute(io) == INVALID  # the model takes one input, the dataset now holds two


def test_output_descs_after_planned_runs_and_a_desc_changed_behind_a_plan(io):
    for seed in range(3):
        _check_run(io, seed)
    desc = acl.mdl.get_dataset_tensor_desc(io.outputs[0], 0)
    dims = [acl.get_tensor_desc_dim(desc, i) for i in range(acl.get_tensor_desc_num_dims(desc))]
    assert dims == list(reference(x=demo_input())[0].shape)
    assert acl.set_tensor_shape(desc, [7]) == 0  # the program changes the dataset's own desc
    _check_run(io, 3)  # the whole way: the desc is what the model produced again
    assert acl.get_tensor_desc_num_dims(desc) == len(dims)


def test_a_plan_keeps_no_memory_alive(io):
    _check_run(io, 0)
    _check_run(io, 1)
    ptr, size = io.outputs[1][0]
    gone = weakref.ref(memory.space.find(ptr, size))
    assert acl.rt.free(ptr) == 0
    assert gone() is None
    assert len(_plans(io)) == 1


def test_outputs_over_an_input_are_not_planned(ctx, tmp_path):
    """An output buffer inside the input's memory: onnxruntime would write it while it may still read the input,
    so every call goes the whole way (the outputs are copied after the run)."""
    io = ModelIO()
    in_ptr, _ = io.inputs[1][0]
    out_size = io.outputs[1][0][1]
    for index in range(len(io.outputs[1])):
        buffer = acl.mdl.get_dataset_buffer(io.outputs[0], index)
        assert acl.update_data_buffer(buffer, in_ptr + index * out_size, out_size) == 0
    for seed in range(3):
        x = demo_input(seed)
        io.load_input(x)
        assert _execute(io) == 0
        got = np.frombuffer(acl.util.ptr_to_bytes(in_ptr, out_size), np.float32)
        np.testing.assert_allclose(got, reference(x=x)[0].ravel(), rtol=1e-5, atol=1e-6)
    assert len(_plans(io)) == 0


def test_two_threads_run_one_plan_at_once(io, ctx):
    """Each run takes its own IO binding out of the plan's pool."""
    _check_run(io, 0)
    _check_run(io, 0)
    want = reference(x=demo_input(0))

    def loop(_: int) -> set[int]:
        assert acl.rt.set_context(ctx) == 0
        return {_execute(io) for _ in range(50)}

    with ThreadPoolExecutor(2) as pool:
        assert list(pool.map(loop, range(2))) == [{0}, {0}]
    for got, expected in zip(io.read_outputs(), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_a_profiled_step_after_a_plan_goes_the_whole_way(io):
    _check_run(io, 0)
    _check_run(io, 1)
    collected = Collected(io.model_id)
    _check_run(io, 2)
    records = collected.finish()
    model = model_table.get(io.model_id)
    assert records == [profiled._node_names(model)[i] for i in range(len(model.proto.graph.node))]


def test_an_onnxruntime_without_a_c_entry_runs_plans_through_its_public_method(io, monkeypatch):
    monkeypatch.setattr(onnxrt, "bound_entry", lambda session: None)
    for seed in range(3):
        _check_run(io, seed)
    (plan,) = _plans(io)._plans.values()
    assert plan._entry is None


def _gather_model(path) -> str:
    """Gather of 4 floats at one int64 index: a data-dependent failure (an index out of range) with fixed shapes."""
    graph = helper.make_graph(
        [helper.make_node("Gather", ["data", "index"], ["y"])],
        "gather",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("index", TensorProto.INT64, [1]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return str(path)


def test_a_planned_run_onnxruntime_refuses_fails_with_the_whole_way_s_code_and_the_next_one_runs(
    ctx, tmp_path, acl_log
):
    io = ModelIO(_gather_model(tmp_path / "gather.onnx"))
    (data_ptr, _), (index_ptr, _) = io.inputs[1]
    data = np.arange(4, dtype=np.float32) * 10
    host = data.tobytes()
    acl.rt.memcpy(data_ptr, 16, acl.util.bytes_to_ptr(host), 16, 1)

    def run(index: int) -> tuple[int, float]:
        host = np.array([index], np.int64).tobytes()
        acl.rt.memcpy(index_ptr, 8, acl.util.bytes_to_ptr(host), 8, 1)
        ret = _execute(io)
        return ret, float(np.frombuffer(acl.util.ptr_to_bytes(io.outputs[1][0][0], 4), np.float32)[0])

    assert run(1) == (0, 10.0) and run(2) == (0, 20.0)
    assert len(_plans(io)) == 1
    assert run(3) == (0, 30.0)
    bad, _ = run(9)
    assert bad == AclCode.ACL_ERROR_FAILURE
    assert any(f"model {io.model_id} (gather): execution failed" in r.getMessage() for r in acl_log.records)
    assert run(0) == (0, 0.0)  # a new binding: the failed one is not pooled again


def test_gear_aipp_and_dynamic_models_are_not_planned(ctx, tmp_path):
    """Their runs read more than the buffers' addresses (a gear, AIPP parameters, a shape): the whole way."""
    paths = [
        batch_model(tmp_path / "gears.onnx"),
        aipp_model(tmp_path / "aipp.onnx", conf=static_conf(YUV420SP_U8, 6, 4, {})),
        batch_model(tmp_path / "dynamic.onnx", gears=None),
    ]
    for path in paths:
        model_id, ret = acl.mdl.load_from_file(str(path))
        assert ret == 0
        assert not model_table.get(model_id).plans.enabled
    assert model_table.get(ModelIO().model_id).plans.enabled


def test_under_openacl_check_every_call_goes_the_whole_way(io):
    """The checker orders each call's reads and writes against the streams' tasks: no call skips it."""
    checker.reset()
    checker.enable()
    try:
        for seed in range(3):
            _check_run(io, seed)
        assert len(_plans(io)) == 0
    finally:
        checker.enable(False)
        checker.reset()
        checker.take_findings()


def _spy_on_plan_runs(monkeypatch) -> list[int]:
    runs: list[int] = []
    real = model_plan.ExecPlan.run
    monkeypatch.setattr(model_plan.ExecPlan, "run", lambda self: (runs.append(1), real(self))[1])
    return runs


def test_a_dumped_step_of_a_planned_pair_runs_its_outputs_on_the_plan(ctx, tmp_path, monkeypatch):
    """A model loaded under dump settings goes the whole way (a step may be dumped), but its outputs still come
    from the pair's plan; the dumped step's files are the observed run's, as ever."""
    assert acl.init() == 0
    out = tmp_path / "dump"
    out.mkdir()
    dump_list = [{"model_name": "tinynet"}]
    config = write_config(tmp_path / "d.json", dump_path=str(out), dump_list=dump_list, dump_step="2", dump_mode="all")
    assert acl.mdl.init_dump() == 0 and acl.mdl.set_dump(config) == 0
    io = ModelIO()
    runs = _spy_on_plan_runs(monkeypatch)
    for seed in range(4):
        _check_run(io, seed)
    assert acl.mdl.finalize_dump() == 0
    acl.finalize()
    assert runs == [1, 1]  # steps 2 (dumped) and 3: the plan was made after step 1
    files = dump_files(out)
    assert {p.parent.name for p in files} == {"2"}
    # The observed run read step 2's input through the plan's bindings (``ExecPlan.feeds``).
    first = onnx.load(DEMO_MODEL).graph.node[0]
    (path,) = [p for p in files if f".{dump_format.sanitize(first.name)}." in p.name]
    np.testing.assert_array_equal(dump_reader.read_dump(path.read_bytes()).inputs[0], demo_input(2))


def test_a_callback_dump_leaves_the_pairs_plan_standing(ctx, monkeypatch):
    """A dump through a callback lends each chunk's memory to the program during the call. A loan's coming and
    going does not move the memory table's generation (``memory.AddressSpace``), so the pair is planned at its
    second call as without a dump, and its dumped steps' outputs come from the plan."""
    assert acl.init() == 0
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.dump_reg_callback(lambda chunk: 0, 0) == 0
    io = ModelIO()
    runs = _spy_on_plan_runs(monkeypatch)
    inside, release = threading.Event(), threading.Event()
    chunks = []

    def hold(chunk: dict) -> int:
        inside.set()
        release.wait(10)
        return 0

    for seed in range(4):
        # The dump thread is held in a file of its own until the step has returned, so the step's loans come
        # after it, between it and the next, whatever the machine's timing: as on a device, later.
        inside.clear()
        release.clear()
        sink.writer.submit_many([sink.OutgoingFile("/held", "held", [b"h"], 1, None, hold)])
        assert inside.wait(10)
        _check_run(io, seed)
        release.set()
        acl.mdl.dump_unreg_callback()  # every chunk delivered: the loans are over
        assert acl.mdl.dump_reg_callback(lambda chunk: chunks.append(chunk["buf_len"]) or 0, 0) == 0
    acl.mdl.dump_unreg_callback()
    assert len(_plans(io)) == 1 and runs == [1, 1]  # steps 2 and 3, dumped, on the plan made after step 1
    assert sum(chunks) > 0  # the steps were dumped
    assert acl.mdl.finalize_dump() == 0
    acl.finalize()


def test_a_pair_whose_memory_changes_between_calls_makes_no_plan(io):
    """A free between the calls moves the memory table's generation: the plan would be stale at the next call,
    and none is made."""
    for seed in range(4):
        ptr, ret = acl.rt.malloc(64, 0)
        assert ret == 0
        _check_run(io, seed)
        assert acl.rt.free(ptr) == 0
    assert len(_plans(io)) == 0


def test_no_plan_keeps_a_loan(ctx):
    """A pair whose input lies in a dump chunk's memory (read in the callback, during the loan) runs, but makes no
    plan: a loan's end does not move the generation, so a kept plan could outlive the chunk's bytes. Nor does an
    operator's call over a loan leave its plan."""
    io = ModelIO()
    size = acl.mdl.get_input_size_by_index(io.desc, 0)
    x = demo_input(0)
    part = np.zeros(max(size, sink.ChunkTarget.DIRECT_BYTES), np.uint8)
    part[: x.nbytes] = np.frombuffer(x.tobytes(), np.uint8)
    results = []

    def callback(chunk: dict) -> int:
        dataset = acl.mdl.create_dataset()
        acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(chunk["data_buf"], size))
        results.extend(acl.mdl.execute(io.model_id, dataset, io.outputs[0]) for _ in range(3))
        results.append(len(_plans(io)))
        acl.mdl.destroy_dataset(dataset)
        return 0

    target = sink.ChunkTarget()
    target.write(sink.OutgoingFile("/dump", "file", [memoryview(part)], part.nbytes, callback=callback))
    assert results == [0, 0, 0, 0]
    for got, want in zip(io.read_outputs(), reference(x=x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _tiny_model(path, outputs: list[tuple[str, list[int]]], nodes, inputs, initializers=()) -> str:
    graph = helper.make_graph(
        nodes,
        "tiny",
        [helper.make_tensor_value_info(name, dtype, dims) for name, dtype, dims in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, dims) for name, dims in outputs],
        initializer=list(initializers),
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)
    return str(path)


def _fill(io: ModelIO, index: int, data: bytes) -> None:
    ptr, size = io.inputs[1][index]
    assert acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(data), len(data), 1) == 0


def _outputs_after_execute(io: ModelIO) -> list[list[float]]:
    for ptr, size in io.outputs[1]:
        assert acl.rt.memset(ptr, size, 0, size) == 0
    assert _execute(io) == 0
    return [np.frombuffer(acl.util.ptr_to_bytes(p, n), np.float32).tolist() for p, n in io.outputs[1]]


@pytest.mark.parametrize("kind", ["an output that is the input", "two outputs of one value"])
def test_regression_an_output_bound_by_a_name_another_binding_takes_was_left_unwritten(ctx, tmp_path, kind):
    """A binding is by name: the second binding of a name replaced the first, and from the third call on one
    output buffer kept its old bytes (zeros here). Such a model now goes the whole way every call."""
    add = helper.make_node("Add", ["x", "x"], ["z"])
    x = [("x", TensorProto.FLOAT, [4])]
    outputs = [("x", [4]), ("z", [4])] if kind == "an output that is the input" else [("z", [4]), ("z", [4])]
    io = ModelIO(_tiny_model(tmp_path / "m.onnx", outputs, [add], x))
    assert not model_table.get(io.model_id).plans.enabled
    for i in range(4):
        data = np.arange(4, dtype=np.float32) * (i + 1)
        _fill(io, 0, data.tobytes())
        want = [data if name == "x" else data + data for name, _ in outputs]
        assert _outputs_after_execute(io) == [w.tolist() for w in want]


def test_regression_a_model_producing_another_shape_than_it_declares_failed_every_planned_call(ctx, tmp_path):
    """Reshape declared [1, 4], producing [2, 2]: the whole way copies the 16 bytes; a binding of the declared
    shape made onnxruntime refuse every planned run (500001). Such a pair gets no plan."""
    reshape = helper.make_node("Reshape", ["x", "s"], ["y"])
    inputs = [("x", TensorProto.FLOAT, [4]), ("s", TensorProto.INT64, [2])]
    io = ModelIO(_tiny_model(tmp_path / "m.onnx", [("y", [1, 4])], [reshape], inputs))
    _fill(io, 0, np.arange(4, dtype=np.float32).tobytes())
    _fill(io, 1, np.array([2, 2], np.int64).tobytes())
    for _ in range(4):
        assert _outputs_after_execute(io) == [[0.0, 1.0, 2.0, 3.0]]
    assert len(_plans(io)) == 0


def test_regression_a_read_only_registration_over_a_planned_output_is_refused_as_the_whole_way_refuses_it(io):
    """The table's generation did not move on an added region, so a plan kept writing into memory that a
    read-only registration now covers, where the whole way refuses it (100000). A read-only addition moves it."""
    size = io.outputs[1][0][1]
    host = np.zeros(size, np.uint8)
    ptr = memory.array_address(host)
    assert acl.update_data_buffer(acl.mdl.get_dataset_buffer(io.outputs[0], 0), ptr, size) == 0
    io.load_input(demo_input())
    assert _execute(io) == 0 and _execute(io) == 0
    assert len(_plans(io)) == 1
    frozen = host.view()
    frozen.flags.writeable = False
    assert memory.array_address(frozen) == ptr  # found first from now on
    host[:] = 0
    assert _execute(io) == INVALID
    assert not host.any()


def test_regression_the_step_counter_moved_on_a_planned_call_only_after_its_weights_check(ctx, tmp_path):
    """The whole way counts a step before it checks the weights; a planned call checked first, so a failed
    check (external weights changed since the load: 100014) counted no step, and later dump and profile step
    numbers shifted. Both ways now count every call."""
    io = ModelIO(save_external_model(tmp_path / "models"))
    _fill(io, 0, np.ones((2, 8), np.float32).tobytes())
    assert _execute(io) == 0 and _execute(io) == 0
    assert len(_plans(io)) == 1
    os.utime(tmp_path / "models" / "weights.bin", ns=(1, 1))
    assert _execute(io) == AclCode.ACL_ERROR_READ_MODEL_FAILURE
    assert _execute(io) == AclCode.ACL_ERROR_READ_MODEL_FAILURE
    assert model_table.get(io.model_id).executions == 4


def test_regression_a_loan_referenced_only_by_its_region_was_swept_during_the_callback(ctx):
    """A large part's loan held its array only through its region, so a sweep of registrations during the
    callback (the program registering its next inputs) forgot it, and the part's later chunks were unreadable.
    A loan has no owner now: only its discard ends it."""
    target = sink.ChunkTarget()
    target.limit = 65536
    part = np.random.default_rng(0).integers(0, 256, sink.ChunkTarget.DIRECT_BYTES, dtype=np.uint8)
    got = []

    def callback(chunk: dict) -> int:
        got.append(acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"]))
        if len(got) == 1:
            for i in range(memory.space._next_sweep + 1):
                acl.util.bytes_to_ptr(b"next input %06d" % i)  # dropped at once: the sweep comes
        return 0

    target.write(sink.OutgoingFile("/dump", "file", [memoryview(part)], part.nbytes, callback=callback))
    assert b"".join(got) == part.tobytes()


def test_alternating_pairs_each_get_a_plan(io):
    """Double buffering: two output datasets in turn, each pair planned at its second call."""
    other = io._dataset(len(io.outputs[1]), acl.mdl.get_output_size_by_index)
    pairs = [io.outputs, other]
    for i in range(6):
        io.outputs = pairs[i % 2]
        _check_run(io, i)
    assert len(_plans(io)) == 2


def test_a_pair_found_unplannable_is_not_worked_out_again_while_nothing_changes(ctx, monkeypatch):
    """Outputs over the input's memory: refused once, then every call goes the whole way without trying again,
    until a stamp of the pair moves."""
    io = ModelIO()
    in_ptr, _ = io.inputs[1][0]
    out_size = io.outputs[1][0][1]
    buffer = acl.mdl.get_dataset_buffer(io.outputs[0], 0)
    assert acl.update_data_buffer(buffer, in_ptr, out_size) == 0
    tries = []
    real = model_plan.make
    monkeypatch.setattr(model_plan, "make", lambda *a: (tries.append(1), real(*a))[1])
    for _ in range(5):
        io.load_input(demo_input())
        assert _execute(io) == 0
    assert tries == [1] and len(_plans(io)) == 0
    moved, _ = acl.rt.malloc(out_size, 0)
    assert acl.update_data_buffer(buffer, moved, out_size) == 0  # no longer over the input
    for _ in range(3):
        _check_run_at(io, moved)
    assert len(_plans(io)) == 1


def _check_run_at(io: ModelIO, out_ptr: int) -> None:
    x = demo_input(5)
    io.load_input(x)
    assert _execute(io) == 0
    got = np.frombuffer(acl.util.ptr_to_bytes(out_ptr, io.outputs[1][0][1]), np.float32)
    np.testing.assert_allclose(got, reference(x=x)[0].ravel(), rtol=1e-5, atol=1e-6)
