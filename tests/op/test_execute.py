"""``acl.op.execute_v2`` and friends: stream order, the compiled-op cache, checks and their codes."""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from openacl.op import compiled, execute
from tests.conftest import hold_stream
from tests.op.conftest import Const, desc_for, from_device, make_attr, to_device

F32 = np.float32
INVALID = AclCode.ACL_ERROR_INVALID_PARAM
H2D, D2H = 1, 2


def logged(caplog, qualname: str, code: int) -> list[str]:
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


class AddOp:
    """A [2, 3] float Add with its device buffers, built once per test."""

    def __init__(self) -> None:
        self.a, self.b = np.arange(6, dtype=F32).reshape(2, 3), np.full((2, 3), 10, F32)
        self.desc = desc_for(self.a)
        self.pa, self.pb, self.py = to_device(self.a), to_device(self.b), to_device(np.zeros((2, 3), F32))
        self.ins = [acl.create_data_buffer(self.pa, 24), acl.create_data_buffer(self.pb, 24)]
        self.outs = [acl.create_data_buffer(self.py, 24)]
        self.attr = acl.op.create_attr()

    def run(self, stream: int, op_type: str = "Add", **overrides) -> int:
        args = {
            "in_descs": [self.desc, self.desc],
            "ins": self.ins,
            "out_descs": [self.desc],
            "outs": self.outs,
            "attr": self.attr,
        }
        args.update(overrides)
        return acl.op.execute_v2(
            op_type, args["in_descs"], args["ins"], args["out_descs"], args["outs"], args["attr"], stream
        )

    def result(self) -> np.ndarray:
        return from_device(self.py, F32, (2, 3))


@pytest.fixture
def add(stream) -> AddOp:
    compiled.cache.clear()
    return AddOp()


def test_execute_v2_runs_on_the_stream(add, stream):
    assert add.run(stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(add.result(), add.a + add.b)


def test_default_stream_0_and_the_deprecated_execute(add, stream):
    assert add.run(0) == 0
    assert acl.rt.synchronize_stream(0) == 0
    np.testing.assert_array_equal(add.result(), add.a + add.b)
    acl.rt.memset(add.py, 24, 0, 24)
    ret = acl.op.execute("Sub", [add.desc, add.desc], add.ins, [add.desc], add.outs, add.attr, stream)
    assert ret == 0 and acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(add.result(), add.a - add.b)


def test_the_second_call_builds_nothing(add, stream):
    for _ in range(3):
        assert add.run(stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert compiled.cache.statistics() == {"entries": 1, "builds": 1, "hits": 2}
    other = desc_for(np.zeros((3, 2), F32))  # a different signature (dims): a second build
    assert add.run(stream, in_descs=[other, other], out_descs=[other]) == 0
    assert compiled.cache.statistics()["builds"] == 2


def test_attributes_and_consts_are_part_of_the_signature(stream):
    compiled.cache.clear()
    x = np.arange(6, dtype=F32).reshape(2, 3)
    from tests.op.conftest import Runner

    runner = Runner(stream)
    runner.run("ReduceSumD", [x], [(F32, (3,))], {"axes": ("list_int", [0])})
    runner.run("ReduceSumD", [x], [(F32, (2,))], {"axes": ("list_int", [1])})
    first = runner.run("Transpose", [x, Const(np.array([1, 0], np.int32))], [(F32, (3, 2))])[0]
    runner.run("Transpose", [x, Const(np.array([1, 0], np.int32))], [(F32, (3, 2))])
    assert compiled.cache.statistics() == {"entries": 3, "builds": 3, "hits": 1}
    np.testing.assert_array_equal(first, x.T)


def test_ordered_with_memcpy_async_on_the_stream(add, stream, gate):
    """H2D copy → Add → D2H copy, all queued while the stream is held: the op reads the copied input."""
    new_a = np.full((2, 3), 100, F32).tobytes()
    host_out = bytes(24)
    hold_stream(stream, gate)
    assert acl.rt.memcpy_async(add.pa, 24, acl.util.bytes_to_ptr(new_a), 24, H2D, stream) == 0
    assert add.run(stream) == 0
    assert acl.rt.memcpy_async(acl.util.bytes_to_ptr(host_out), 24, add.py, 24, D2H, stream) == 0
    assert np.frombuffer(ctypes.string_at(add.py, 24), F32).tolist() == [0.0] * 6  # nothing ran yet
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.frombuffer(host_out, F32).tolist() == [110.0] * 6


def test_a_desc_changed_after_the_call_does_not_change_the_queued_op(add, stream, gate):
    hold_stream(stream, gate)
    assert add.run(stream) == 0
    assert acl.set_tensor_shape(add.desc, [6]) == 0
    acl.destroy_tensor_desc(add.desc)
    acl.op.destroy_attr(add.attr)
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(add.result(), add.a + add.b)


def test_unknown_op_type_is_type_not_match_with_one_log_line(add, stream, acl_log):
    assert add.run(stream, "FancyOp") == AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH
    (line,) = logged(acl_log, "acl.op.execute_v2", AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH)
    assert "'FancyOp'" in line
    assert compiled.cache.statistics()["builds"] == 0


def test_inputs_that_do_not_fit_are_input_not_match(add, stream, acl_log):
    wrong = desc_for(np.zeros((4,), F32))
    assert add.run(stream, in_descs=[add.desc, wrong]) == AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH  # [2,3] + [4]
    one = add.run(stream, in_descs=[add.desc], ins=add.ins[:1])
    assert one == AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH  # one input of two
    mixed = desc_for(np.zeros((2, 3), np.int32))
    assert add.run(stream, in_descs=[add.desc, mixed]) == AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH
    dynamic = acl.create_tensor_desc(0, [-1, 3], 2)
    assert add.run(stream, in_descs=[add.desc, dynamic]) == AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH
    bf16 = acl.create_tensor_desc(27, [2, 3], 2)
    assert add.run(stream, in_descs=[bf16, bf16]) == AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE
    assert logged(acl_log, "acl.op.execute_v2", AclCode.ACL_ERROR_OP_INPUT_NOT_MATCH)


def test_outputs_that_do_not_fit_are_output_not_match(add, stream):
    small = desc_for(np.zeros((5,), F32))
    assert add.run(stream, out_descs=[small]) == AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH
    as_int = desc_for(np.zeros((2, 3), np.int32))
    assert add.run(stream, out_descs=[as_int]) == AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH
    assert add.run(stream, out_descs=[add.desc, add.desc], outs=add.outs * 2) == AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH


def test_wrong_attribute_kind_is_attr_not_match(stream):
    from tests.op.conftest import Runner

    ret = Runner(stream).ret("MatMul", [np.ones((2, 2), F32)] * 2, [(F32, (2, 2))], {"transpose_x1": ("int", 1)})
    assert ret == AclCode.ACL_ERROR_OP_ATTR_NOT_MATCH


def test_bad_buffers_are_invalid_param_and_queue_nothing(add, stream, acl_log):
    small = acl.create_data_buffer(add.pa, 8)
    assert add.run(stream, ins=[add.ins[0], small]) == INVALID
    stale = acl.create_data_buffer(add.pa, 24)
    acl.destroy_data_buffer(stale)
    assert add.run(stream, ins=[add.ins[0], stale]) == INVALID
    host_ptr, _ = acl.rt.malloc_host(24)
    host_buffer = acl.create_data_buffer(host_ptr, 24)
    assert add.run(stream, outs=[host_buffer]) == INVALID  # device memory unless the desc's placement is host
    (line,) = [m for m in logged(acl_log, "acl.op.execute_v2", INVALID) if "host memory" in m]
    assert "placement" in line
    assert add.run(stream, ins=add.ins[:1]) == INVALID  # 2 descs, 1 buffer
    data = bytes(24)
    user_buffer = acl.create_data_buffer(acl.util.bytes_to_ptr(data), 24)  # a bytes object is not writable memory
    assert add.run(stream, outs=[user_buffer]) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    assert add.result().tolist() == [[0.0] * 3] * 2


def test_host_placement_allows_host_memory(add, stream):
    host_ptr, _ = acl.rt.malloc_host(24)
    desc = desc_for(add.a)
    assert acl.set_tensor_place_ment(desc, 1) == 0
    assert add.run(stream, out_descs=[desc], outs=[acl.create_data_buffer(host_ptr, 24)]) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert np.frombuffer(ctypes.string_at(host_ptr, 24), F32).tolist() == (add.a + add.b).reshape(-1).tolist()


def test_handle_lists_must_be_lists_of_ints(add, stream):
    with pytest.raises(TypeError, match="not list"):
        add.run(stream, ins=tuple(add.ins))
    with pytest.raises(TypeError):
        add.run(stream, ins=[add.ins[0], "x"])
    with pytest.raises(TypeError, match=r"acl\.op\.execute_v2 args parse failed"):
        acl.op.execute_v2("Add", [], [], [], [], 0)


def test_stale_attr_and_stream_and_no_context(add, stream):
    attr = acl.op.create_attr()
    acl.op.destroy_attr(attr)
    assert add.run(stream, attr=attr) == INVALID
    assert add.run(0xDEAD) == INVALID
    assert add.run(stream, attr=0) == 0  # a null attr is no attributes
    assert acl.rt.synchronize_stream(stream) == 0


def test_no_current_context_for_the_default_stream(add, stream):
    results = []
    worker = threading.Thread(target=lambda: results.append(add.run(0)))
    worker.start()
    worker.join()
    assert results == [AclCode.ACL_ERROR_RT_CONTEXT_NULL]


def test_a_failure_while_running_fails_the_stream(stream, acl_log):
    """Reshape to a shape read from device memory at run time: onnxruntime refuses it, the stream reports it."""
    x = np.zeros((2, 3), F32)
    shape = to_device(np.array([4, 4], np.int64))
    in_descs = [desc_for(x), desc_for(np.zeros(2, np.int64))]
    in_bufs = [acl.create_data_buffer(to_device(x), 24), acl.create_data_buffer(shape, 16)]
    out_desc = acl.create_tensor_desc(0, [4, 4], 2)
    out_buf = acl.create_data_buffer(to_device(np.zeros(16, F32)), 64)
    # The output shape is not known before the run, so the call itself succeeds.
    assert acl.op.execute_v2("Reshape", in_descs, in_bufs, [out_desc], [out_buf], 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) != 0
    assert any("op:Reshape failed" in r.getMessage() for r in acl_log.records)


def test_dynamic_output_desc_without_an_inferable_shape(stream):
    x = np.zeros((2, 3), F32)
    in_descs = [desc_for(x), desc_for(np.zeros(2, np.int64))]
    in_bufs = [acl.create_data_buffer(to_device(x), 24), acl.create_data_buffer(to_device(np.array([3, 2])), 16)]
    dynamic = acl.create_tensor_desc(0, [-1, -1], 2)
    out_buf = acl.create_data_buffer(to_device(np.zeros(6, F32)), 24)
    ret = acl.op.execute_v2("Reshape", in_descs, in_bufs, [dynamic], [out_buf], 0, stream)
    assert ret == AclCode.ACL_ERROR_OP_OUTPUT_NOT_MATCH


def test_dynamic_output_desc_gets_the_real_shape(add, stream):
    dynamic = acl.create_tensor_desc(0, [-1, -1], 2)
    assert add.run(stream, out_descs=[dynamic]) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert [acl.get_tensor_desc_dim(dynamic, i) for i in range(2)] == [2, 3]
    np.testing.assert_array_equal(add.result(), add.a + add.b)


# ----- handles, cast, infer_shape, update_params -----


def test_create_handle_and_execute_with_handle(add, stream):
    handle, ret = acl.op.create_handle("Mul", [add.desc, add.desc], [add.desc], add.attr)
    assert ret == 0 and handle != 0
    acl.set_tensor_shape(add.desc, [6, 1])  # the handle keeps the descs it was made with
    assert acl.op.execute_with_handle(handle, add.ins, add.outs, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(add.result(), add.a * add.b)
    assert acl.op.destroy_handle(handle) is None
    assert acl.op.execute_with_handle(handle, add.ins, add.outs, stream) == INVALID
    assert acl.op.create_handle("Nope", [add.desc], [add.desc], 0) == (0, AclCode.ACL_ERROR_OP_TYPE_NOT_MATCH)


def test_cast_and_cast_handle(stream):
    x = np.array([1.5, -2.25, 3.0], F32)
    src, dst = desc_for(x), acl.create_tensor_desc(1, [3], 2)
    src_buf = acl.create_data_buffer(to_device(x), 12)
    out = to_device(np.zeros(3, np.float16))
    dst_buf = acl.create_data_buffer(out, 6)
    assert acl.op.cast(src, src_buf, dst, dst_buf, 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(from_device(out, np.float16, (3,)), x.astype(np.float16))
    handle, ret = acl.op.create_handle_for_cast(dst, src, 1)
    assert ret == 0
    back = to_device(np.zeros(3, F32))
    assert acl.op.execute_with_handle(handle, [dst_buf], [acl.create_data_buffer(back, 12)], stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(from_device(back, F32, (3,)), x)


def test_infer_shape_writes_the_output_dims(stream):
    x, w = desc_for(np.zeros((2, 3, 4), F32)), desc_for(np.zeros((4, 5), F32))
    out = acl.create_tensor_desc(0, [-2], 2)
    assert acl.op.infer_shape("BatchMatMul", [x, w], [0, 0], 1, [out], 0) == 0
    assert [acl.get_tensor_desc_dim_v2(out, i)[0] for i in range(acl.get_tensor_desc_num_dims(out))] == [2, 3, 5]
    assert acl.op.infer_shape("BatchMatMul", [x, w], [0, 0], 2, [out], 0) == INVALID


def test_update_params_compiles_ahead(add, stream):
    assert acl.op.update_params("Add", [add.desc, add.desc], [add.desc], add.attr) == 0
    assert compiled.cache.statistics()["builds"] == 1
    assert add.run(stream) == 0
    assert compiled.cache.statistics() == {"entries": 1, "builds": 1, "hits": 1}


# ----- model dir, load, queue num -----


def test_set_model_dir_accepts_a_folder_without_om_files(tmp_path):
    assert acl.op.set_model_dir(str(tmp_path)) == 0


def test_set_model_dir_lists_and_ignores_om_files(tmp_path, acl_log):
    deep = tmp_path / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    (tmp_path / "add.om").write_bytes(b"om")
    (tmp_path / "a" / "b" / "c" / "cast.om").write_bytes(b"om")
    (deep / "too_deep.om").write_bytes(b"om")
    assert acl.op.set_model_dir(str(tmp_path)) == 0
    (line,) = [r.getMessage() for r in acl_log.records if "acl.op.set_model_dir" in r.getMessage()]
    assert line.startswith("acl.op.set_model_dir: 2 .om file(s)")


def test_set_model_dir_needs_a_folder(tmp_path):
    assert acl.op.set_model_dir(str(tmp_path / "missing")) == INVALID
    assert acl.op.set_model_dir("") == INVALID


def test_load_checks_its_memory(ctx):
    data = b"not really an om"
    assert acl.op.load(acl.util.bytes_to_ptr(data), len(data)) == 0
    assert acl.op.load(0xDEAD0000, 16) == INVALID
    assert acl.op.load(acl.util.bytes_to_ptr(data), 0) == INVALID


def test_set_max_op_queue_num():
    assert acl.op.set_max_op_queue_num(64) == 0
    assert acl.op.set_max_op_queue_num(0) == INVALID


def test_enqueue_and_the_repeat_are_the_two_ways_to_the_stream():
    """execute_v2 reaches the stream through ``enqueue`` and, for a repeated call run here, its entry only."""
    import inspect

    source = inspect.getsource(execute)
    assert source.count(".enqueue(") == 1 and source.count(".run_here_if_idle(") == 1
    assert source.count("stream.run_here(") == 1 and "stream.run_here(" in inspect.getsource(execute.repeat_entry)
    helper = inspect.getsource(execute.enqueue)
    assert ".enqueue(" in helper and ".run_here_if_idle(" in helper


def test_a_small_op_on_an_idle_stream_runs_on_the_calling_thread(add, stream, monkeypatch):
    ran_on = []
    real = compiled.CompiledOp.run_into
    monkeypatch.setattr(
        compiled.CompiledOp, "run_into", lambda self, *a: (ran_on.append(threading.current_thread()), real(self, *a))[1]
    )
    assert add.run(stream) == 0
    assert ran_on == [threading.current_thread()]
    np.testing.assert_array_equal(add.result(), add.a + add.b)  # done before execute_v2 returned
    monkeypatch.setattr(execute, "INLINE_LIMIT", 0)  # "large": always an engine thread ...
    execute.plans.clear()  # ... for the plan made next (a plan reads the limit when it is made)
    assert add.run(stream) == 0 and acl.rt.synchronize_stream(stream) == 0
    assert ran_on[1].name.startswith("openacl-engine")


def test_attr_values_unused_by_the_op_are_ignored(add, stream):
    attr = make_attr({"not_an_add_attr": ("int", 5)})
    assert add.run(stream, attr=attr) == 0
    assert acl.rt.synchronize_stream(stream) == 0


def test_in_place_output_over_an_input(add, stream):
    """y written over x1: onnxruntime gets its own output memory and the result is copied after the run."""
    assert add.run(stream, outs=[add.ins[0]]) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(from_device(add.pa, F32, (2, 3)), add.a + add.b)
    x = np.arange(6, dtype=F32).reshape(2, 3)
    ptr = to_device(x)
    buf = acl.create_data_buffer(ptr, 24)
    attr = make_attr({"perm": ("list_int", [1, 0])})
    ret = acl.op.execute_v2("TransposeD", [desc_for(x)], [buf], [desc_for(x.T)], [buf], attr, stream)
    assert ret == 0 and acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(from_device(ptr, F32, (3, 2)), x.T)


def test_memory_freed_while_the_op_is_queued_stays_alive_until_it_ran(add, stream, gate):
    hold_stream(stream, gate)
    assert add.run(stream) == 0
    out = add.py
    assert acl.rt.free(add.pa) == 0 and acl.rt.free(add.pb) == 0
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0  # read freed-but-kept bytes, no crash
    np.testing.assert_array_equal(from_device(out, F32, (2, 3)), add.a + add.b)
    assert add.run(stream) == INVALID  # freed memory is unknown to new calls


def test_empty_tensors(stream):
    from tests.op.conftest import Runner

    empty = np.zeros((0, 3), F32)
    (y,) = Runner(stream).run("Add", [empty, empty], [(F32, (0, 3))])
    assert y.shape == (0, 3)


def test_reset_drops_compiled_ops_and_handles(add, stream):
    handle, _ = acl.op.create_handle("Add", [add.desc, add.desc], [add.desc], 0)
    assert compiled.cache.statistics()["entries"] == 1
    execute.reset()
    assert compiled.cache.statistics()["entries"] == 0
    assert acl.op.execute_with_handle(handle, add.ins, add.outs, stream) == INVALID


def test_regression_ctrl_c_during_a_small_operator_interrupts_the_program(add, stream, monkeypatch):
    """A small operator runs on the calling thread: a KeyboardInterrupt there reaches the program (the first call
    and a repeat by its plan alike), and the stream reports the interrupted operator once."""
    assert add.run(stream) == 0 and acl.rt.synchronize_stream(stream) == 0

    def interrupted(*args) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(compiled.CompiledOp, "run_into", interrupted)  # onnxruntime's run, on either path
    with pytest.raises(KeyboardInterrupt):
        add.run(stream)  # a repeat, by its plan
    assert acl.rt.synchronize_stream(stream) == AclCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert acl.rt.synchronize_stream(stream) == 0
    monkeypatch.undo()
    assert add.run(stream) == 0 and acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(add.result(), add.a + add.b)
