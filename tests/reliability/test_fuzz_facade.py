"""Fuzzing the facade: every ``acl.*`` entry point and the GE API, with hostile arguments and in random orders.

What holds, checked by ``fuzz_calls.call``/``ge_call`` on every call: the interpreter never crashes, no call
hangs (every test has a timeout; waits that are meant to be bounded get short timeouts), every result is a
documented code (or the documented TypeError / ValueError), nothing logs an internal error or kills a thread,
and the runtime stays usable afterwards (``health_check`` runs a stream, a callback and a model after each test).

- ``test_hostile_argument_matrix``: each parameter of each entry point, in turn, takes every value of a pool
  of hostile values (wrong types, negative and huge ints, freed, foreign and random handles and pointers,
  NaN, unicode and surrogate paths, directories, FIFOs, JSON bombs, random model bytes) while the other
  parameters hold plausible values, so each call reaches the check for that parameter.
- ``test_random_calls``: hypothesis draws batches of calls to any entry point with any arguments; the values
  calls return feed later calls.
- ``test_acl_call_sequences``: a hypothesis state machine that creates real devices, contexts, streams,
  events, memory, data buffers, datasets, models and report threads, then misuses them (destroy twice, use
  after destroy, cross-context, free the wrong kind, stop a report thread while subscribed, ...).
- ``test_ge_graph_builders`` and ``test_ge_call_sequences``: the same for ``openacl.ge``.

Things the fuzzer avoids because they wait forever by design, in CANN as here: ``process_report(-1)`` on a
subscribed thread with nothing to run, subscribing the id of a live thread that never calls
``process_report`` and then waiting for its callbacks, and ``stop_thread`` of a thread that never ends.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule, run_state_machine_as_test
from onnx import TensorProto, helper

import acl
from openacl import ge, jsonfile, process
from openacl.errors import AclCode, GeStatus
from openacl.model.model import DEMO_MODEL
from openacl.op import attr as _op_attr
from openacl.op import execute as _op_execute
from openacl.op import tensor_desc as _tensor_descs
from openacl.runtime import buffers as _buffers
from openacl.runtime import device as _device
from openacl.runtime import device as rt_device
from openacl.runtime import memory as _memory
from openacl.runtime import report
from openacl.runtime import threads as _threads
from tests.aipp_models import aipp_model
from tests.ge.test_session import step_graph
from tests.gear_models import batch_model, dims_model, hw_model
from tests.model_io import ModelIO, demo_input, reference
from tests.reliability.fuzz_calls import (
    BIG_INTS,
    BOUNDARY_INTS,
    ENTRY_POINTS,
    FLOATS,
    GE_NAMES,
    SMALL_INTS,
    STATS,
    STRINGS,
    BugWatch,
    Index,
    boom,
    call,
    code_of,
    ge_call,
    ge_well_typed,
    noop,
    ok,
    other_objects,
    quiet_numpy,
    value_of,
    violation,
)
from tests.reliability.fuzz_media import MediaObjects, undo_media

pytestmark = [
    pytest.mark.timeout(120 * max(1.0, float(os.environ.get("OPENACL_FUZZ_SCALE", "1")))),
    pytest.mark.filterwarnings("ignore:numpy_to_ptr is deprecated", "ignore:numpy_contiguous_to_ptr is deprecated"),
    pytest.mark.filterwarnings("ignore:the ndarray is not contiguous"),
]

MIN_CALLS = 20_000
FAKE_TID = 12345  # no thread has this id
NPY_FLOAT32, NPY_OBJECT = np.dtype(np.float32).num, np.dtype(object).num
THREAD_SUBSCRIBE = int(AclCode.ACL_ERROR_RT_THREAD_SUBSCRIBE)
ACL_FLOAT, ACL_FLOAT16, ACL_FORMAT_ND = 0, 1, 2
GEAR_KINDS = ("batch", "hw", "dims")
VMM_PROP = {"handleType": 0, "allocationType": 0, "memAttr": 0, "location": {"id": 0, "type": 1}, "reserve": 0}


# ``OPENACL_FUZZ_SCALE=10`` runs ten times the examples, from a random seed, to hunt for new bugs by hand.
FUZZ_SCALE = float(os.environ.get("OPENACL_FUZZ_SCALE", "1"))


def fuzz_settings(max_examples: int, **kw) -> settings:
    """Deterministic (no database, a fixed seed), no deadlines: CI sees the same calls every run."""
    return settings(
        max_examples=max(1, round(max_examples * FUZZ_SCALE)),
        derandomize=FUZZ_SCALE == 1,
        database=None,
        deadline=None,
        print_blob=FUZZ_SCALE != 1,
        suppress_health_check=list(HealthCheck),
        **kw,
    )


# ----- files: configs, models, paths -----


@dataclass
class Files:
    root: Path
    config_ok: str
    dump_config: str
    tinynet: str
    tiny: str
    configs: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    gears: dict[str, str] = field(default_factory=dict)  # "batch", "hw", "dims": a model with gears of that kind
    aipp: str = ""  # a model with a dynamic-AIPP input

    @property
    def paths(self) -> list[str]:
        return self.configs + self.models + self.others


def tiny_model_bytes() -> bytes:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Files:
    root = tmp_path_factory.mktemp("fuzz")
    dumps = root / "dumps"
    dumps.mkdir()

    def write(name: str, data: str | bytes) -> str:
        path = root / name
        path.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        return str(path)

    rng = np.random.default_rng(0)
    huge = root / "huge.json"
    with open(huge, "wb") as f:  # sparse: bigger than acl.init's 10 MB limit without writing 10 MB
        f.truncate(jsonfile.MAX_CONFIG_BYTES + 1)
    bad_layer = {"model_name": "tinynet", "layer": [1, None]}
    configs = [
        write("empty.json", ""),
        write("blank.json", " \n\t"),
        write("object.json", "{}"),
        write("sections.json", json.dumps({"x": {"y": [1, 2, {"z": None}]}, "log": "debug"})),
        write("bomb_object.json", '{"a":' * 100_000 + "1" + "}" * 100_000),
        write("bomb_array.json", "[" * 500_000),
        write("bomb_mixed.json", '{"a":[' * 50_000),
        write("deep10.json", '{"a":' * 10 + "1" + "}" * 10),
        write("deep11.json", '{"a":' * 11 + "1" + "}" * 11),
        write("string_bomb.json", json.dumps({"s": "[" * 100_000})),
        write("array.json", "[1, 2]"),
        write("scalar.json", "7"),
        write("broken.json", '{"a": '),
        write("not_utf8.json", b'{"a": "\xff\xfe"}'),
        write("bom.json", "\ufeff{}"),
        write("nan.json", '{"a": NaN, "b": -Infinity, "c": 1e999999}'),
        write("long_int.json", '{"a": ' + "9" * 10_000 + "}"),
        write("dup.json", '{"a": 1, "a": {"b": 2}}'),
        write("nul.json", '{"a\\u0000b": "\\ud800"}'),
        str(huge),
        write("dump_not_object.json", json.dumps({"dump": 5})),
        write("dump_bad_path.json", json.dumps({"dump": {"dump_path": 5, "dump_list": []}})),
        write("dump_bad_list.json", json.dumps({"dump": {"dump_path": str(dumps), "dump_list": "x"}})),
        write("dump_bad_mode.json", json.dumps({"dump": {"dump_path": str(dumps), "dump_mode": "sideways"}})),
        write("dump_missing_dir.json", json.dumps({"dump": {"dump_path": str(root / "nope" / "x"), "dump_list": []}})),
        write("dump_bad_layer.json", json.dumps({"dump": {"dump_path": str(dumps), "dump_list": [bad_layer]}})),
        write("конфиг-中文-é 🙂.json", "{}"),
    ]
    config_ok = configs[2]
    dump_config = write(
        "dump.json", json.dumps({"dump": {"dump_path": str(dumps), "dump_list": [{"model_name": "tinynet"}]}})
    )
    configs.append(dump_config)
    tinynet_bytes = DEMO_MODEL.read_bytes()
    mutated = bytearray(tinynet_bytes)
    for k in rng.integers(0, len(mutated), 64):
        mutated[k] = int(rng.integers(0, 256))
    models = [
        str(DEMO_MODEL),
        write("tinynet-中文 é.onnx", tinynet_bytes),
        write("tiny.onnx", tiny_model_bytes()),
        write("random.onnx", rng.bytes(4096)),
        write("random_small.onnx", rng.bytes(7)),
        write("empty.onnx", b""),
        write("truncated.onnx", tinynet_bytes[: len(tinynet_bytes) // 2]),
        write("mutated.onnx", bytes(mutated)),
        write("model.om", b"IMOD" + bytes(200)),
        write("text.onnx", "not a model at all"),
    ]
    fifo = root / "fifo"
    os.mkfifo(fifo)  # opening it would block: every reader must refuse it first
    others = [
        str(root),
        str(root / "missing.json"),
        str(root / "missing" / "deeper" / "x.onnx"),
        str(fifo),
        "/dev/null",
        "/proc/self/mem",
        "/",
        str(root / ("x" * 300)),  # name too long
    ]
    gears = {
        "batch": str(batch_model(root / "batch.onnx")),
        "hw": str(hw_model(root / "hw.onnx")),
        "dims": str(dims_model(root / "dims.onnx")),
    }
    models += gears.values()
    aipp = str(aipp_model(root / "aipp.onnx"))
    models.append(aipp)
    return Files(root, config_ok, dump_config, str(DEMO_MODEL), models[2], configs, models, others, gears, aipp)


# ----- watching and health -----


@pytest.fixture(autouse=True)
def watch(monkeypatch, request):
    """Every fuzz test: small simulated memory, bug watch on, and a healthy runtime at the end."""
    monkeypatch.setenv("OPENACL_DEVICE_MEMORY_MB", "64")  # a huge-but-allowed size must not eat the machine
    monkeypatch.setenv("OPENACL_ORT_THREADS", "1")  # hundreds of model loads: no onnxruntime pool to start
    with BugWatch() as bugs:
        yield bugs
        ge.ge_finalize()
        process.reset(force=True)
        health_check(model=True)
        ge_health_check()
        bugs.check()
    STATS.tests_done.add(request.node.name)


class Reporter:
    """A report thread body (``acl.util.start_thread(reporter, [])``): ``process_report`` until told to stop."""

    def __init__(self) -> None:
        self.stop = threading.Event()

    def __call__(self, _args: object) -> None:
        while not self.stop.is_set():
            if call(acl.rt.process_report, 5) == THREAD_SUBSCRIBE:
                self.stop.wait(0.005)  # not subscribed (yet, or any more): don't spin


_REFERENCE: dict[str, list[np.ndarray]] = {}


def health_check(*, model: bool) -> None:
    """The runtime still does real work: device, stream, memcpy both ways, a BLOCK callback, a model run."""
    process.reset(force=True)
    assert acl.rt.set_device(0) == 0
    context, ret = acl.rt.create_context(0)
    assert ret == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    dev, ret = acl.rt.malloc(256, 0)
    assert ret == 0
    host, ret = acl.rt.malloc_host(256)
    assert ret == 0
    payload = bytes(range(256))
    src = acl.util.bytes_to_ptr(payload)
    assert acl.rt.memcpy_async(dev, 256, src, 256, 1, stream) == 0
    assert acl.rt.memcpy_async(host, 256, dev, 256, 2, stream) == 0
    reporter = Reporter()
    tid, ret = acl.util.start_thread(reporter, [])
    assert ret == 0
    assert acl.rt.subscribe_report(tid, stream) == 0
    seen: list[object] = []
    assert acl.rt.launch_callback(seen.append, "ping", 1, stream) == 0
    assert acl.rt.synchronize_stream_with_timeout(stream, 10_000) == 0
    assert seen == ["ping"]
    assert acl.util.ptr_to_bytes(host, 256) == payload
    assert acl.rt.unsubscribe_report(tid, stream) == 0
    reporter.stop.set()
    assert acl.util.stop_thread(tid) == 0
    if model:
        x = demo_input(3)
        if "tinynet" not in _REFERENCE:
            _REFERENCE["tinynet"] = reference(DEMO_MODEL, x)
        outputs = ModelIO().run(x)
        for got, want in zip(outputs, _REFERENCE["tinynet"], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert acl.rt.free(dev) == 0
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.reset_device(0) == 0
    process.reset(force=True)


def ge_health_check() -> None:
    assert ge.ge_initialize({"ge.graphRunMode": "1"}) == GeStatus.SUCCESS
    session = ge.Session()
    assert session.add_graph(1, graph_add()) == GeStatus.SUCCESS
    (y,), ret = session.run_graph(1, [np.ones((2, 3), np.float32)])
    assert ret == GeStatus.SUCCESS
    np.testing.assert_array_equal(y, np.full((2, 3), 3, np.float32))
    assert ge.ge_finalize() == GeStatus.SUCCESS


# ----- a live runtime and the values derived from it -----


def fresh_bytes(n: int, seed: int = 0) -> bytes:
    """A bytes object nothing else shares (the runtime may write into it through its pointer)."""
    return own(np.random.default_rng(seed).bytes(n))


def own(data: bytes) -> bytes:
    """A private copy: ``b"" + data`` would be ``data`` itself, perhaps shared with hypothesis."""
    return bytes(bytearray(data))


class Env:
    """Live objects of every kind (plus destroyed ones), and pools of argument values built from them."""

    def __init__(self, files: Files) -> None:
        self.files = files
        self.hosts: list[int] = []
        self.learned: list[int] = []
        ok(acl.rt.set_device, 0)
        self.ctx1 = ok(acl.rt.create_context, 1)
        self.foreign_stream = ok(acl.rt.create_stream)
        self.dead_ctx = ok(acl.rt.create_context, 3)
        ok(acl.rt.destroy_context, self.dead_ctx)
        self.ctx_spare = ok(acl.rt.create_context, 2)
        self.ctx = ok(acl.rt.create_context, 0)
        self.stream = ok(acl.rt.create_stream)
        self.stream2 = ok(acl.rt.create_stream)
        self.stream3 = ok(acl.rt.create_stream)
        self.dead_stream = ok(acl.rt.create_stream)
        ok(acl.rt.destroy_stream, self.dead_stream)
        self.ev = ok(acl.rt.create_event)
        self.ev2 = ok(acl.rt.create_event)
        self.dead_ev = ok(acl.rt.create_event)
        ok(acl.rt.destroy_event, self.dead_ev)
        ok(acl.rt.record_event, self.ev, self.stream)
        self.dev = ok(acl.rt.malloc, 4096, 0)
        self.dev_spare = ok(acl.rt.malloc, 4096, 0)
        self.dead_dev = ok(acl.rt.malloc, 64, 0)
        ok(acl.rt.free, self.dead_dev)
        self.host = self.malloc_host(4096)
        self.host_spare = self.malloc_host(4096)
        self.dead_host = ok(acl.rt.malloc_host, 64)
        ok(acl.rt.free_host, self.dead_host)
        self.user = fresh_bytes(64)
        self.user_ptr = ok(acl.util.bytes_to_ptr, self.user)
        self.array = np.zeros(64, np.float32)
        self.array_ptr = ok(acl.util.numpy_to_ptr, self.array)
        self.objects = np.array([object(), "x", 3], dtype=object)
        self.objects_ptr = ok(acl.util.numpy_to_ptr, self.objects)
        self.unregistered = np.zeros(16, np.uint8)
        self.model_bytes = own(DEMO_MODEL.read_bytes())
        self.model_ptr = ok(acl.util.bytes_to_ptr, self.model_bytes)
        self.buf = ok(acl.create_data_buffer, self.dev, 4096)
        self.dead_buf = ok(acl.create_data_buffer, self.dev, 16)
        ok(acl.destroy_data_buffer, self.dead_buf)
        self.model = ok(acl.mdl.load_from_file, files.tinynet)
        self.model_spare = ok(acl.mdl.load_from_file, files.tiny)
        self.dead_model = ok(acl.mdl.load_from_file, files.tiny)
        ok(acl.mdl.unload, self.dead_model)
        self.desc = ok(acl.mdl.create_desc)
        ok(acl.mdl.get_desc, self.desc, self.model)
        self.desc_spare = ok(acl.mdl.create_desc)
        self.dead_desc = ok(acl.mdl.create_desc)
        ok(acl.mdl.destroy_desc, self.dead_desc)
        self.in_size = ok(acl.mdl.get_input_size_by_index, self.desc, 0)
        self.out_size = ok(acl.mdl.get_output_size_by_index, self.desc, 0)
        self.input_name = ok(acl.mdl.get_input_name_by_index, self.desc, 0)
        self.output_name = ok(acl.mdl.get_output_name_by_index, self.desc, 0)
        self.in_dev = ok(acl.rt.malloc, self.in_size, 0)
        self.out_dev = ok(acl.rt.malloc, self.out_size, 0)
        self.in_ds = self.dataset(self.in_dev, self.in_size)
        self.out_ds = self.dataset(self.out_dev, self.out_size)
        self.ds_spare = ok(acl.mdl.create_dataset)
        self.dead_ds = ok(acl.mdl.create_dataset)
        ok(acl.mdl.destroy_dataset, self.dead_ds)
        self.reporter = Reporter()
        self.reporter_tid = ok(acl.util.start_thread, self.reporter, [])
        ok(acl.rt.subscribe_report, self.reporter_tid, self.stream)
        self.gear_models()
        self.aipp_objects()
        self.op_objects()
        self.media = MediaObjects(self.stream, self.reporter_tid)
        self.surface_objects()
        self.handles = [
            *(self.ctx, self.ctx1, self.ctx_spare, self.dead_ctx),
            *(self.stream, self.stream2, self.stream3, self.foreign_stream, self.dead_stream),
            *(self.ev, self.ev2, self.dead_ev, self.buf, self.dead_buf),
            *(self.in_ds, self.out_ds, self.ds_spare, self.dead_ds, self.desc, self.desc_spare, self.dead_desc),
            *(self.model, self.model_spare, self.dead_model),
            *(self.gear[k][0] for k in GEAR_KINDS),
            *(self.gear[k][1] for k in GEAR_KINDS),
            *(self.gear[k][2] for k in GEAR_KINDS),
            *(self.tdesc, self.tdesc_f16, self.tdesc_set, self.tdesc_dyn, self.tdesc_spare, self.dead_tdesc),
            *(self.attr, self.attr_spare, self.dead_attr, self.op_handle, self.op_handle_spare, self.dead_op_handle),
            *(self.op_a, self.op_b, self.op_y, self.op_half),
            *self.media.handles,
            *(self.notify, self.notify_spare, self.dead_notify, self.phys, self.phys_spare),
            *(self.aipp_model, self.aipp_ds, self.aipp, self.config, self.exec_config, self.bundle),
        ]
        self.pointers = [
            *(self.dev, self.dev + 1, self.dev + 4095, self.dev + 4096, self.dev_spare, self.dead_dev),
            *(self.host, self.host + 8, self.host_spare, self.dead_host, self.in_dev, self.out_dev),
            *(self.user_ptr, self.user_ptr + 63, self.array_ptr, self.objects_ptr, self.model_ptr),
            *(_memory.address_of(self.unregistered), id(self)),
            *(self.op_mem, self.op_mem + 128, *(self.gear[k][3] for k in GEAR_KINDS)),
            *self.media.pointers,
            *(self.vrange, self.vrange + self.page, self.vrange + 2 * self.page - 1, self.registered),
        ]
        self.sizes = [4096, 4097, 4095, self.in_size, self.out_size, len(self.model_bytes)]
        self.objects_pool = other_objects()
        self.shapes = [
            (4,),
            (),
            (2, 2),
            (0,),
            (0, 2**63),
            (2**31,) * 3,
            (-1,),
            (True, 2),
            (1.5,),
            ((),),
            [4],
            (2**64,),
            (np.int64(2),),
        ]
        self.lists = self.hostile_lists()

    def gear_models(self) -> None:
        """A loaded model with gears of each kind, its description, and an input dataset whose gear buffer
        (the model's last input) has real device memory: ``self.gear[kind] = (model, desc, dataset, gear ptr)``."""
        self.gear: dict[str, tuple[int, int, int, int]] = {}
        for kind in GEAR_KINDS:
            model = ok(acl.mdl.load_from_file, self.files.gears[kind])
            desc = ok(acl.mdl.create_desc)
            ok(acl.mdl.get_desc, desc, model)
            count = ok(acl.mdl.get_num_inputs, desc)
            gear_size = ok(acl.mdl.get_input_size_by_index, desc, count - 1)
            gear_ptr = ok(acl.rt.malloc, gear_size, 0)
            dataset = ok(acl.mdl.create_dataset)
            for _ in range(count - 1):  # the data inputs: set_dynamic_* reads only the gear buffer
                ok(acl.mdl.add_dataset_buffer, dataset, ok(acl.create_data_buffer, self.dev, 4096))
            ok(acl.mdl.add_dataset_buffer, dataset, ok(acl.create_data_buffer, gear_ptr, gear_size))
            self.gear[kind] = (model, desc, dataset, gear_ptr)

    def aipp_objects(self) -> None:
        """A loaded dynamic-AIPP model, its dataset (image and AIPP data buffers), a parameter set it accepts,
        load and execution configs."""
        self.aipp_model = ok(acl.mdl.load_from_file, self.files.aipp)
        self.aipp_ds = self.dataset(self.dev, 4096)
        ok(acl.mdl.add_dataset_buffer, self.aipp_ds, ok(acl.create_data_buffer, self.dev_spare, 4096))
        self.aipp = ok(acl.mdl.create_aipp, 1)
        self.aipp_spare = ok(acl.mdl.create_aipp, 1)
        ok(acl.mdl.set_aipp_input_format, self.aipp, 3)
        ok(acl.mdl.set_aipp_src_image_size, self.aipp, 6, 4)
        self.config = ok(acl.mdl.create_config_handle)
        ok(acl.mdl.set_config_opt, self.config, 1, 1)
        ok(acl.mdl.set_config_opt, self.config, 2, self.files.tiny)
        self.config_spare = ok(acl.mdl.create_config_handle)
        self.exec_config = ok(acl.mdl.create_exec_config_handle)
        self.exec_config_spare = ok(acl.mdl.create_exec_config_handle)
        self.bundle = ok(acl.mdl.bundle_load_from_file, self.files.tiny)
        self.bundle_spare = ok(acl.mdl.bundle_load_from_file, self.files.tiny)

    def op_objects(self) -> None:
        """Tensor descs, attributes, an op handle and device buffers for a [2, 3] float32 Add (and a Cast)."""
        self.tdesc = ok(acl.create_tensor_desc, ACL_FLOAT, [2, 3], ACL_FORMAT_ND)  # the ops' desc: left alone
        self.tdesc_f16 = ok(acl.create_tensor_desc, ACL_FLOAT16, [2, 3], ACL_FORMAT_ND)
        self.tdesc_set = ok(acl.create_tensor_desc, ACL_FLOAT, [4, 5], ACL_FORMAT_ND)  # what the setters change
        self.tdesc_dyn = ok(acl.create_tensor_desc, ACL_FLOAT, [-1, 3], ACL_FORMAT_ND)
        self.tdesc_infer = ok(acl.create_tensor_desc, ACL_FLOAT, [-2], ACL_FORMAT_ND)  # infer_shape writes it
        self.tdesc_spare = ok(acl.create_tensor_desc, ACL_FLOAT, [2], ACL_FORMAT_ND)
        self.dead_tdesc = ok(acl.create_tensor_desc, ACL_FLOAT, [2], ACL_FORMAT_ND)
        ok(acl.destroy_tensor_desc, self.dead_tdesc)
        self.attr = ok(acl.op.create_attr)
        self.attr_spare = ok(acl.op.create_attr)
        self.dead_attr = ok(acl.op.create_attr)
        ok(acl.op.destroy_attr, self.dead_attr)
        self.op_mem = ok(acl.rt.malloc, 4096, 0)
        self.op_a = ok(acl.create_data_buffer, self.op_mem, 24)
        self.op_b = ok(acl.create_data_buffer, self.op_mem + 64, 24)
        self.op_y = ok(acl.create_data_buffer, self.op_mem + 128, 24)
        self.op_half = ok(acl.create_data_buffer, self.op_mem + 256, 12)
        add_descs = ([self.tdesc, self.tdesc], [self.tdesc])
        self.op_handle = ok(acl.op.create_handle, "Add", *add_descs, self.attr)
        self.op_handle_spare = ok(acl.op.create_handle, "Mul", *add_descs, 0)
        self.dead_op_handle = ok(acl.op.create_handle, "Sub", *add_descs, 0)
        ok(acl.op.destroy_handle, self.dead_op_handle)

    def hostile_lists(self) -> list:
        """Lists and dicts for the ``O`` parameters that take dims, ranges, handle lists or aclmdlIODims."""
        return [
            [0],
            [2**64],
            [2**31],
            [2**32],
            [-1],
            [-3],
            [2**63],
            [-(2**63) - 1],
            [2**62, 2**62],
            [1] * 129,
            [True, 2],
            [1.5],
            [1e308, -math.inf, math.nan],
            [2**1024],
            ["a"],
            [None],
            [self.tdesc] * 3,
            [self.dead_tdesc],
            [self.tdesc, "x"],
            [self.op_a, self.dead_buf],
            [self.op_y, self.op_y],
            [[1, 8]],
            [[5, 2]],
            [(1, 2), (3, 3)],
            [[1, 2, 3]],
            [[math.nan, 1.0]],
            [[None, object()]],
            [[2**64, -1]],
            [[]],
            {"dimCount": 5, "dims": [1, 4, 4, 1, 1]},
            {"dimCount": 0, "dims": []},
            {"dimCount": -1, "dims": []},
            {"dimCount": 2**70, "dims": [1]},
            {"dimCount": 2, "dims": [1]},
            {"dimCount": 1, "dims": ["x"]},
            {"dimCount": 129, "dims": [1] * 129},
            {"dimCount": 5, "dims": [1, 4, 4, 1, 2**64]},
            {"dimCount": 5, "dims": [1, 4, 4, 2**31, 2**63]},
            {"dimCount": 5, "dims": [1, -4, 4, -1, -1]},
            {"dimCount": "5", "dims": [1]},
            {"dims": [1]},
            {"dimCount": 1, "dims": (1,)},
        ]

    def malloc_host(self, size: int) -> int:
        ptr = ok(acl.rt.malloc_host, size)
        self.hosts.append(ptr)
        return ptr

    def dataset(self, ptr: int, size: int) -> int:
        dataset = ok(acl.mdl.create_dataset)
        ok(acl.mdl.add_dataset_buffer, dataset, ok(acl.create_data_buffer, ptr, size))
        return dataset

    def pool(self, char: str) -> list:
        """The values to try for a parameter of PyArg type ``char``."""
        if char in "kKIH":
            return self.handles + self.pointers + self.sizes + self.learned + SMALL_INTS + BIG_INTS + self.objects_pool
        if char in "iLlBbh":  # i, L/l, b, h: int32, int64, uchar, short (overflow-checked); B: a byte (truncated)
            ints = [255, 256, 2**62, 2**63 - 1, Index(3), Index(-1), Index(2**40), Index(2**70)]
            return SMALL_INTS + BIG_INTS + [100, 1000, 5000, *ints] + self.objects_pool
        if char == "s":
            return self.files.paths + STRINGS + self.objects_pool
        return self.objects_pool + self.shapes + self.lists + [self.array, self.objects, self.user] + FLOATS

    def learn(self, name: str, result: object) -> None:
        """Keep ints a call returned (new handles and pointers) for later calls; track host memory to free."""
        fn = ENTRY_POINTS[name]
        value = value_of(fn, result)
        if name == "acl.rt.malloc_host" and isinstance(value, int):
            self.hosts.append(value)
        for item in value if isinstance(value, tuple) else (value,):
            if type(item) is int and item not in self.learned and len(self.learned) < 64:
                self.learned.append(item)

    def plausible(self) -> dict[str, tuple]:
        """Arguments a correct program might pass to each entry point, here and now."""
        return {
            "acl.init": (self.files.config_ok,),
            "acl.finalize": (),
            "acl.finalize_reference": (),
            "acl.create_data_buffer": (self.dev, 4096),
            "acl.destroy_data_buffer": (self.buf,),
            "acl.get_data_buffer_addr": (self.buf,),
            "acl.get_data_buffer_size": (self.buf,),
            "acl.get_data_buffer_size_v2": (self.buf,),
            "acl.update_data_buffer": (self.buf, self.dev_spare, 4096),
            "acl.rt.set_device": (0,),
            "acl.rt.reset_device": (0,),
            "acl.rt.reset_device_force": (1,),
            "acl.rt.get_device": (),
            "acl.rt.get_device_count": (),
            "acl.rt.get_run_mode": (),
            "acl.rt.create_context": (1,),
            "acl.rt.destroy_context": (self.ctx_spare,),
            "acl.rt.set_context": (self.ctx,),
            "acl.rt.get_context": (),
            "acl.rt.create_stream": (),
            "acl.rt.create_stream_with_config": (0, 0),
            "acl.rt.destroy_stream": (self.stream2,),
            "acl.rt.destroy_stream_force": (self.stream2,),
            "acl.rt.synchronize_stream": (self.stream,),
            "acl.rt.synchronize_stream_with_timeout": (self.stream, 1000),
            "acl.rt.stream_query": (self.stream,),
            "acl.rt.stream_get_id": (self.stream,),
            "acl.rt.set_stream_failure_mode": (self.stream, 1),
            "acl.rt.synchronize_device": (),
            "acl.rt.create_event": (),
            "acl.rt.create_event_with_flag": (1,),
            "acl.rt.destroy_event": (self.ev2,),
            "acl.rt.record_event": (self.ev2, self.stream),
            "acl.rt.reset_event": (self.ev, self.stream),
            "acl.rt.query_event": (self.ev,),
            "acl.rt.query_event_status": (self.ev,),
            "acl.rt.synchronize_event": (self.ev,),
            "acl.rt.synchronize_event_with_timeout": (self.ev, 1000),
            "acl.rt.event_elapsed_time": (self.ev, self.ev),
            "acl.rt.stream_wait_event": (self.stream3, self.ev),
            "acl.rt.malloc": (4096, 0),
            "acl.rt.free": (self.dev_spare,),
            "acl.rt.malloc_host": (4096,),
            "acl.rt.free_host": (self.host_spare,),
            "acl.rt.memcpy": (self.dev, 4096, self.host, 4096, 1),
            "acl.rt.memcpy_async": (self.host, 4096, self.dev, 4096, 2, self.stream),
            "acl.rt.memset": (self.dev, 4096, 7, 4096),
            "acl.rt.memset_async": (self.dev, 4096, 7, 4096, self.stream),
            "acl.rt.subscribe_report": (FAKE_TID, self.stream3),
            "acl.rt.unsubscribe_report": (self.reporter_tid, self.stream),
            "acl.rt.launch_callback": (noop, None, 1, self.stream),
            "acl.rt.process_report": (1,),
            "acl.mdl.load_from_file": (self.files.tiny,),
            "acl.mdl.load_from_mem": (self.model_ptr, len(self.model_bytes)),
            "acl.mdl.load_from_file_with_mem": (self.files.tiny, 0, 0, 0, 0),
            "acl.mdl.unload": (self.model_spare,),
            "acl.mdl.query_size": (self.files.tiny,),
            "acl.mdl.execute": (self.model, self.in_ds, self.out_ds),
            "acl.mdl.execute_async": (self.model, self.in_ds, self.out_ds, self.stream),
            "acl.mdl.create_desc": (),
            "acl.mdl.get_desc": (self.desc_spare, self.model),
            "acl.mdl.destroy_desc": (self.desc_spare,),
            "acl.mdl.get_num_inputs": (self.desc,),
            "acl.mdl.get_num_outputs": (self.desc,),
            "acl.mdl.get_input_size_by_index": (self.desc, 0),
            "acl.mdl.get_output_size_by_index": (self.desc, 0),
            "acl.mdl.get_input_dims": (self.desc, 0),
            "acl.mdl.get_output_dims": (self.desc, 0),
            "acl.mdl.get_cur_output_dims": (self.desc, 0),
            "acl.mdl.get_input_name_by_index": (self.desc, 0),
            "acl.mdl.get_output_name_by_index": (self.desc, 0),
            "acl.mdl.get_input_data_type": (self.desc, 0),
            "acl.mdl.get_output_data_type": (self.desc, 0),
            "acl.mdl.get_input_format": (self.desc, 0),
            "acl.mdl.get_output_format": (self.desc, 0),
            "acl.mdl.get_input_index_by_name": (self.desc, self.input_name),
            "acl.mdl.get_output_index_by_name": (self.desc, self.output_name),
            "acl.mdl.create_dataset": (),
            "acl.mdl.add_dataset_buffer": (self.ds_spare, self.buf),
            "acl.mdl.get_dataset_num_buffers": (self.in_ds,),
            "acl.mdl.get_dataset_buffer": (self.in_ds, 0),
            "acl.mdl.destroy_dataset": (self.ds_spare,),
            "acl.mdl.init_dump": (),
            "acl.mdl.set_dump": (self.files.dump_config,),
            "acl.mdl.finalize_dump": (),
            "acl.mdl.dump_reg_callback": (noop, 0),
            "acl.mdl.dump_unreg_callback": (),
            "acl.app_log": (1, "a message"),
            "acl.get_soc_name": (),
            "acl.get_version": (),
            "acl.get_recent_err_msg": (),
            "acl.float16_to_float": (0x3C00,),
            "acl.float_to_float16": (1.5,),
            "acl.rt.get_mem_info": (0,),
            "acl.rt.get_last_error": (0,),
            "acl.rt.peek_at_last_error": (0,),
            "acl.rt.set_exception_info_callback": (noop,),
            "acl.rt.get_error_code_from_exception_info": (0,),
            "acl.rt.get_task_id_from_exception_info": (0,),
            "acl.rt.get_stream_id_from_exception_info": (0,),
            "acl.rt.get_thread_id_from_exception_info": (0,),
            "acl.rt.get_device_id_from_exception_info": (0,),
            "acl.rt.ctx_get_current_default_stream": (),
            "acl.rt.get_primary_ctx_state": (0,),
            "acl.rt.query_device_status": (0,),
            "acl.rt.device_get_stream_priority_range": (),
            "acl.rt.get_logic_dev_id_by_user_dev_id": (0,),
            "acl.rt.get_user_dev_id_by_logic_dev_id": (0,),
            "acl.rt.get_logic_dev_id_by_phy_dev_id": (0,),
            "acl.rt.get_phy_dev_id_by_logic_dev_id": (0,),
            "acl.rt.set_stream_overflow_switch": (self.stream, 1),
            "acl.rt.get_stream_overflow_switch": (self.stream,),
            "acl.rt.set_stream_attribute": (self.stream, 3, {"userCustomTag": 5}),
            "acl.rt.get_stream_attribute": (self.stream, 1),
            "acl.rt.synchronize_device_with_timeout": (1000,),
            "acl.rt.set_op_wait_timeout": (5,),
            "acl.rt.set_op_execute_time_out": (5,),
            "acl.rt.get_op_execute_timeout": (),
            "acl.rt.create_event_ex_with_flag": (1,),
            "acl.rt.query_event_wait_status": (self.ev,),
            "acl.rt.event_get_timestamp": (self.ev,),
            "acl.rt.get_event_id": (self.ev,),
            "acl.rt.malloc_align32": (4096, 0),
            "acl.rt.malloc_cached": (4096, 0),
            "acl.rt.mem_flush": (self.dev, 4096),
            "acl.rt.mem_invalidate": (self.dev, 4096),
            "acl.rt.pointer_get_attributes": (self.dev,),
            "acl.rt.memcpy2d": (self.dev, 64, self.host, 64, 64, 64, 1),
            "acl.rt.memcpy2d_async": (self.host, 64, self.dev, 64, 64, 64, 2, self.stream),
            "acl.util.bytes_to_ptr": (fresh_bytes(32),),
            "acl.util.numpy_to_ptr": (self.array,),
            "acl.util.numpy_contiguous_to_ptr": (self.array[::2],),
            "acl.util.ptr_to_bytes": (self.host, 16),
            "acl.util.ptr_to_numpy": (self.host, (4,), NPY_FLOAT32),
            "acl.util.start_thread": (noop, []),
            "acl.util.stop_thread": (FAKE_TID,),
            **self.plausible_tensor_descs(),
            **self.plausible_gears(),
            **self.plausible_op(),
            **self.plausible_blas(),
            **self.media.plausible(),
            **self.plausible_mdl_configs(),
            **self.plausible_surface(),
        }

    def surface_objects(self) -> None:
        """Notifies, a virtual range with one mapped and one free page, physical memory, registered host memory."""
        self.notify, self.notify_spare = ok(acl.rt.create_notify, 0), ok(acl.rt.create_notify, 0)
        self.dead_notify = ok(acl.rt.create_notify, 0)
        ok(acl.rt.destroy_notify, self.dead_notify)
        self.page = ok(acl.rt.mem_get_allocation_granularity, VMM_PROP, 0)
        self.vrange = ok(acl.rt.reserve_mem_address, 2 * self.page, 0, 0, 0)
        self.vrange_spare = ok(acl.rt.reserve_mem_address, self.page, 0, 0, 0)
        self.phys = ok(acl.rt.malloc_physical, self.page, VMM_PROP, 0)
        self.phys_spare = ok(acl.rt.malloc_physical, self.page, VMM_PROP, 0)
        ok(acl.rt.map_mem, self.vrange, self.page, 0, self.phys, 0)
        self.shareable = ok(acl.rt.mem_export_to_shareable_handle, self.phys, 0, 0)
        self.registered = self.malloc_host(4096)
        ok(acl.rt.host_register, self.registered, 4096, 0)

    def plausible_surface(self) -> dict[str, tuple]:
        """Notifies, virtual and registered memory, options, peers, aborts and reductions."""
        return {
            "acl.rt.create_notify": (0,),
            "acl.rt.destroy_notify": (self.notify_spare,),
            "acl.rt.record_notify": (self.notify, self.stream),
            "acl.rt.wait_and_reset_notify": (self.notify, self.stream, 0),
            "acl.rt.get_notify_id": (self.notify,),
            "acl.rt.notify_batch_reset": ([self.notify],),
            "acl.rt.reserve_mem_address": (self.page, 0, 0, 0),
            "acl.rt.release_mem_address": (self.vrange_spare,),
            "acl.rt.malloc_physical": (self.page, VMM_PROP, 0),
            "acl.rt.free_physical": (self.phys_spare,),
            "acl.rt.map_mem": (self.vrange + self.page, self.page, 0, self.phys, 0),
            "acl.rt.unmap_mem": (self.vrange,),
            "acl.rt.mem_get_allocation_granularity": (VMM_PROP, 1),
            "acl.rt.mem_export_to_shareable_handle": (self.phys, 0, 0),
            "acl.rt.mem_set_pid_to_shareable_handle": (self.shareable, [os.getpid()]),
            "acl.rt.mem_import_from_shareable_handle": (self.shareable, 0),
            "acl.rt.device_get_bare_tgid": (),
            "acl.rt.host_register": (self.host_spare, 4096, 0),
            "acl.rt.host_register_v2": (self.host_spare, 4096, 2),
            "acl.rt.host_unregister": (self.registered,),
            "acl.rt.host_get_device_pointer": (self.registered, 0),
            "acl.rt.malloc_with_cfg": (4096, 0, {}),
            "acl.rt.malloc_host_with_cfg": (4096, {}),
            "acl.rt.malloc_for_task_scheduler": (4096, 0, {}),
            "acl.rt.set_sys_param_opt": (0, 1),
            "acl.rt.get_sys_param_opt": (0,),
            "acl.rt.ctx_set_sys_param_opt": (1, 1),
            "acl.rt.ctx_get_sys_param_opt": (1,),
            "acl.rt.device_can_access_peer": (0, 1),
            "acl.rt.device_enable_peer_access": (1, 0),
            "acl.rt.device_disable_peer_access": (1,),
            "acl.rt.device_peer_access_status": (0, 1),
            "acl.rt.set_device_sat_mode": (1,),
            "acl.rt.get_device_sat_mode": (),
            "acl.rt.stream_abort": (self.stream3,),
            "acl.rt.device_task_abort": (1, 1000),
            "acl.rt.reduce_async": (self.dev, self.dev_spare, 64, 10, 0, self.stream, 0),
            "acl.trans_tensor_desc_format": (self.tdesc, 1),
        }

    def plausible_mdl_configs(self) -> dict[str, tuple]:
        """AIPP, load and execution configs, bundles, dataset tensor descs, op attributes."""
        a, m, ds = self.aipp, self.aipp_model, self.aipp_ds
        return {
            "acl.mdl.create_aipp": (1,),
            "acl.mdl.destroy_aipp": (self.aipp_spare,),
            "acl.mdl.get_aipp_data_size": (1,),
            "acl.mdl.set_aipp_input_format": (a, 3),
            "acl.mdl.set_aipp_csc_params": (a, 0, *(0,) * 9, *(0,) * 6),
            "acl.mdl.set_aipp_rbuv_swap_switch": (a, 0),
            "acl.mdl.set_aipp_ax_swap_switch": (a, 0),
            "acl.mdl.set_aipp_src_image_size": (a, 6, 4),
            "acl.mdl.set_aipp_scf_params": (a, 0, 6, 4, 6, 4, 0),
            "acl.mdl.set_aipp_crop_params": (a, 0, 0, 0, 6, 4, 0),
            "acl.mdl.set_aipp_padding_params": (a, 0, 0, 0, 0, 0, 0),
            "acl.mdl.set_aipp_dtc_pixel_mean": (a, 0, 0, 0, 0, 0),
            "acl.mdl.set_aipp_dtc_pixel_min": (a, 0.0, 0.0, 0.0, 0.0, 0),
            "acl.mdl.set_aipp_pixel_var_reci": (a, 1.0, 1.0, 1.0, 1.0, 0),
            "acl.mdl.set_input_aipp": (m, ds, 1, a),
            "acl.mdl.set_aipp_by_input_index": (m, ds, 0, a),
            "acl.mdl.create_config_handle": (),
            "acl.mdl.destroy_config_handle": (self.config_spare,),
            "acl.mdl.set_config_opt": (self.config, 0, 1),
            "acl.mdl.load_with_config": (self.config,),
            "acl.mdl.create_exec_config_handle": (),
            "acl.mdl.destroy_exec_config_handle": (self.exec_config_spare,),
            "acl.mdl.set_exec_config_opt": (self.exec_config, 0, 60000),
            "acl.mdl.execute_v2": (self.model, self.in_ds, self.out_ds, self.stream, self.exec_config),
            "acl.mdl.bundle_load_from_file": (self.files.tiny,),
            "acl.mdl.bundle_load_from_mem": (self.model_ptr, len(self.model_bytes)),
            "acl.mdl.bundle_unload": (self.bundle_spare,),
            "acl.mdl.bundle_get_model_id": (self.bundle, 0),
            "acl.mdl.bundle_get_model_num": (self.bundle,),
            "acl.mdl.set_dataset_tensor_desc": (self.in_ds, self.tdesc, 0),
            "acl.mdl.get_dataset_tensor_desc": (self.in_ds, 0),
            "acl.mdl.get_op_attr": (self.desc, "conv1", "_datadump_original_op_names"),
        }

    def plausible_tensor_descs(self) -> dict[str, tuple]:
        desc, target = self.tdesc, self.tdesc_set
        return {
            "acl.create_tensor_desc": (ACL_FLOAT, [2, 3], ACL_FORMAT_ND),
            "acl.destroy_tensor_desc": (self.tdesc_spare,),
            "acl.data_type_size": (ACL_FLOAT16,),
            "acl.get_tensor_desc_type": (desc,),
            "acl.get_tensor_desc_format": (desc,),
            "acl.get_tensor_desc_size": (desc,),
            "acl.get_tensor_desc_element_count": (desc,),
            "acl.get_tensor_desc_num_dims": (desc,),
            "acl.get_tensor_desc_dim": (desc, 1),
            "acl.get_tensor_desc_dim_v2": (desc, 0),
            "acl.get_tensor_desc_dim_range": (self.tdesc_dyn, 0, 2),
            "acl.get_tensor_desc_name": (desc,),
            "acl.set_tensor_desc_name": (target, "input_0"),
            "acl.set_tensor_shape": (target, [4, 5]),
            "acl.set_tensor_origin_shape": (target, [4, 5]),
            "acl.set_tensor_storage_shape": (target, [1, 1, 4, 5, 16]),
            "acl.set_tensor_format": (target, 0),
            "acl.set_tensor_origin_format": (target, 0),
            "acl.set_tensor_storage_format": (target, 3),
            "acl.set_tensor_dynamic_input": (target, "x"),
            "acl.set_tensor_shape_range": (self.tdesc_dyn, [[1, 8], [3, 3]]),
            "acl.set_tensor_value_range": (target, [[0.0, 1.0]]),
            "acl.set_tensor_const": (target, self.user_ptr, 8),
            "acl.set_tensor_place_ment": (target, 0),
        }

    def plausible_gears(self) -> dict[str, tuple]:
        (batch, batch_desc, batch_ds, _), (hw, hw_desc, hw_ds, _), (dims, dims_desc, dims_ds, _) = (
            self.gear[k] for k in GEAR_KINDS
        )
        return {
            "acl.mdl.get_dynamic_batch": (batch_desc,),
            "acl.mdl.get_dynamic_hw": (hw_desc, -1),
            "acl.mdl.get_input_dynamic_gear_count": (dims_desc, -1),
            "acl.mdl.get_input_dynamic_dims": (dims_desc, -1, 3),
            "acl.mdl.set_dynamic_batch_size": (batch, batch_ds, 1, 2),
            "acl.mdl.set_dynamic_hw_size": (hw, hw_ds, 1, 16, 12),
            "acl.mdl.set_input_dynamic_dims": (dims, dims_ds, 2, {"dimCount": 5, "dims": [1, 4, 4, 1, 1]}),
            "acl.mdl.get_input_dims_v2": (self.desc, 0),
            "acl.mdl.get_input_dims_range": (batch_desc, 0),
            "acl.mdl.get_desc_from_file": (self.desc_spare, self.files.tinynet),
            "acl.mdl.get_desc_from_mem": (self.desc_spare, self.model_ptr, len(self.model_bytes)),
            "acl.mdl.query_size_from_mem": (self.model_ptr, len(self.model_bytes)),
            "acl.mdl.load_from_mem_with_mem": (self.model_ptr, len(self.model_bytes), 0, 0, 0, 0),
            "acl.mdl.get_tensor_real_name": (self.desc, self.input_name),
            "acl.mdl.get_aipp_type": (self.model, 0),
            "acl.mdl.get_first_aipp_info": (self.model, 0),
        }

    def plausible_op(self) -> dict[str, tuple]:
        pair, one, attr = [self.tdesc, self.tdesc], [self.tdesc], self.attr
        ins, outs = [self.op_a, self.op_b], [self.op_y]
        return {
            "acl.op.create_attr": (),
            "acl.op.destroy_attr": (self.attr_spare,),
            "acl.op.set_attr_bool": (attr, "adj_x1", 1),
            "acl.op.set_attr_int": (attr, "axis", -1),
            "acl.op.set_attr_float": (attr, "alpha", 0.5),
            "acl.op.set_attr_string": (attr, "data_format", "NCHW"),
            "acl.op.set_attr_data_type": (attr, "dst_type", ACL_FLOAT16),
            "acl.op.set_attr_list_bool": (attr, "flags", [True, False]),
            "acl.op.set_attr_list_int": (attr, "axes", [0, 1]),
            "acl.op.set_attr_list_float": (attr, "scales", [0.5, 2.0]),
            "acl.op.set_attr_list_string": (attr, "names", ["a", "b"]),
            "acl.op.set_attr_list_list_int": (attr, "pads", [[1, 2], [3]]),
            "acl.op.set_attr_list_data_type": (attr, "dtypes", [ACL_FLOAT, ACL_FLOAT16]),
            "acl.op.set_model_dir": (str(self.files.root),),
            "acl.op.load": (self.user_ptr, 64),
            "acl.op.set_max_op_queue_num": (64,),
            "acl.op.execute_v2": ("Add", pair, ins, one, outs, attr, self.stream),
            "acl.op.execute": ("Sub", pair, ins, one, outs, 0, self.stream),
            "acl.op.update_params": ("Mul", pair, one, attr),
            "acl.op.infer_shape": ("Add", pair, ins, 1, [self.tdesc_infer], 0),
            "acl.op.create_handle": ("Add", pair, one, attr),
            "acl.op.create_handle_for_cast": (self.tdesc, self.tdesc_f16, 0),
            "acl.op.destroy_handle": (self.op_handle_spare,),
            "acl.op.execute_with_handle": (self.op_handle, ins, outs, self.stream),
            "acl.op.cast": (self.tdesc, self.op_a, self.tdesc_f16, self.op_half, 0, self.stream),
        }

    def plausible_blas(self) -> dict[str, tuple]:
        """2x2 GEMMs and GEMVs over one device allocation: A, B/x, C/y, alpha, beta 64 bytes apart."""
        a, b, c, alpha, beta = (self.dev + offset for offset in (0, 64, 128, 192, 256))
        # what hgemm/s8gemm take after (ta, tb, tc, m, n, k), and hgemv/s8gemv after (trans, m, n)
        rest = (alpha, a, -1, b, -1, beta, c, -1, 0, self.stream)
        return {
            "acl.blas.gemm_ex": (0, 1, 0, 2, 2, 2, alpha, a, -1, 1, b, -1, 1, beta, c, -1, 0, 0, self.stream),
            "acl.blas.create_handle_for_gemm_ex": (1, 0, 0, 2, 2, 2, 2, 2, 3, 0),
            "acl.blas.hgemm": (0, 0, 0, 2, 2, 2, *rest),
            "acl.blas.create_handle_for_hgemm": (0, 1, 0, 2, 2, 2, 0),
            "acl.blas.s8gemm": (1, 1, 0, 2, 2, 2, *rest),
            "acl.blas.create_handle_for_s8gemm": (0, 0, 0, 2, 2, 2, 1),
            "acl.blas.gemv_ex": (1, 2, 2, alpha, a, -1, 2, b, -1, 2, beta, c, -1, 3, 0, self.stream),
            "acl.blas.create_handle_for_gemv_ex": (0, 2, 2, 1, 1, 1, 0),
            "acl.blas.hgemv": (0, 2, 2, *rest),
            "acl.blas.create_handle_for_hgemv": (1, 2, 2, 0),
            "acl.blas.s8gemv": (0, 2, 2, *rest),
            "acl.blas.create_handle_for_s8gemv": (0, 2, 2, 0),
        }

    def usable(self) -> bool:
        """Whether the objects the plausible arguments name are still there (a call may have destroyed them)."""
        return (
            not process.is_initialized()
            and self.stream in rt_device.streams
            and self.stream2 in rt_device.streams
            and rt_device.streams.get(self.stream).subscription is not None
            and self.buf in _buffers.data_buffers
            and self.model in _model_table()
            and self.model_spare in _model_table()
            and all(self.gear[kind][0] in _model_table() for kind in GEAR_KINDS)
            and all(handle in _tensor_descs.tensor_descs for handle in (self.tdesc, self.tdesc_f16, self.tdesc_spare))
            and self.attr in _op_attr.attrs
            and self.attr_spare in _op_attr.attrs
            and self.op_handle in _op_execute.op_handles
            and self.op_handle_spare in _op_execute.op_handles
            and _context_is(self.ctx)
            and self.media.usable()
        )

    def close(self) -> None:
        self.reporter.stop.set()
        call(acl.util.stop_thread, self.reporter_tid)
        process.reset(force=True)
        for ptr in self.hosts:
            acl.rt.free_host(ptr)  # host memory outlives a device reset
        stop_util_threads()


def _model_table() -> dict:
    from openacl.model import model

    return model.models


def _context_is(handle: int) -> bool:
    from openacl.runtime import context

    current = context.current()
    return current is not None and current.handle == handle


def stop_util_threads(keep: set[int] = frozenset()) -> None:
    """Join every thread ``start_thread`` started that nobody stopped (all of them end on their own)."""
    for tid in list(_threads._threads):
        if tid not in keep:
            while tid in _threads._threads:
                call(acl.util.stop_thread, tid)


def live_idents() -> set[int]:
    return {t.ident for t in threading.enumerate()}


def guard(name: str, args: list, env: Env | None = None) -> list:
    """Keep a random call from waiting forever by design (see the module docstring)."""
    if name in ("acl.rt.subscribe_report", "acl.rt.unsubscribe_report") and args:
        tid = args[0]
        if type(tid) is int and (tid & (2**64 - 1)) in live_idents() and (env is None or tid != env.reporter_tid):
            args[0] = FAKE_TID
    if name == "acl.util.stop_thread" and args:
        tid = args[0]
        if type(tid) is int and env is not None and (tid & (2**64 - 1)) == env.reporter_tid:
            args[0] = FAKE_TID
    if name == "acl.rt.wait_and_reset_notify" and len(args) >= 2:
        call(acl.rt.record_notify, args[0], args[1])  # a wait no record ever ends holds its stream for ever
    return args


# ----- what to do after a call in the matrix -----


def undo(name: str, args: list, result: object) -> None:
    """Release what a successful call created, so the next call starts from the same place."""
    fn = ENTRY_POINTS[name]
    code = code_of(fn, result)
    if code not in (0, None) or isinstance(result, BaseException):
        return
    value = value_of(fn, result)
    if name == "acl.init":
        call(acl.finalize)
    elif name == "acl.rt.malloc" and value:
        call(acl.rt.free, value)
    elif name == "acl.rt.malloc_host" and value:
        call(acl.rt.free_host, value)
    elif name in ("acl.rt.create_stream", "acl.rt.create_stream_with_config") and value:
        call(acl.rt.destroy_stream, value)
    elif name in ("acl.rt.create_event", "acl.rt.create_event_with_flag") and value:
        call(acl.rt.destroy_event, value)
    elif name == "acl.create_data_buffer" and value:
        call(acl.destroy_data_buffer, value)
    elif name == "acl.mdl.create_dataset" and value:
        call(acl.mdl.destroy_dataset, value)
    elif name == "acl.mdl.create_desc" and value:
        call(acl.mdl.destroy_desc, value)
    elif name.startswith("acl.mdl.load_from") and value:
        call(acl.mdl.unload, value)
    elif name == "acl.create_tensor_desc" and value:
        call(acl.destroy_tensor_desc, value)
    elif name == "acl.mdl.create_aipp" and value:
        call(acl.mdl.destroy_aipp, value)
    elif name == "acl.mdl.create_config_handle" and value:
        call(acl.mdl.destroy_config_handle, value)
    elif name == "acl.mdl.create_exec_config_handle" and value:
        call(acl.mdl.destroy_exec_config_handle, value)
    elif name in ("acl.mdl.bundle_load_from_file", "acl.mdl.bundle_load_from_mem") and value:
        call(acl.mdl.bundle_unload, value)
    elif name == "acl.mdl.load_with_config" and value:
        call(acl.mdl.unload, value)
    elif name == "acl.op.create_attr" and value:
        call(acl.op.destroy_attr, value)
    elif (name in ("acl.op.create_handle", "acl.op.create_handle_for_cast") or "blas.create_handle" in name) and value:
        call(acl.op.destroy_handle, value)
    elif name == "acl.util.start_thread" and value:
        call(acl.util.stop_thread, value)
    elif name == "acl.mdl.init_dump":
        call(acl.mdl.finalize_dump)
    elif name == "acl.mdl.dump_reg_callback":
        call(acl.mdl.dump_unreg_callback)
    elif name == "acl.rt.subscribe_report":
        call(acl.rt.unsubscribe_report, *args)
    elif name.startswith("acl.media."):
        undo_media(name, args, value)
    else:
        undo_surface(name, args, value)


_SURFACE_DESTROY_OF = {
    "acl.rt.create_notify": acl.rt.destroy_notify,
    "acl.rt.reserve_mem_address": acl.rt.release_mem_address,
    "acl.rt.malloc_physical": acl.rt.free_physical,
    "acl.rt.mem_import_from_shareable_handle": acl.rt.free_physical,
    "acl.rt.malloc_with_cfg": acl.rt.free,
    "acl.rt.malloc_for_task_scheduler": acl.rt.free,
    "acl.rt.malloc_host_with_cfg": acl.rt.free_host,
    "acl.trans_tensor_desc_format": acl.destroy_tensor_desc,
}
_SURFACE_UNDO_BY_FIRST_ARG = {
    "acl.rt.map_mem": acl.rt.unmap_mem,
    "acl.rt.host_register": acl.rt.host_unregister,
    "acl.rt.host_register_v2": acl.rt.host_unregister,
    "acl.rt.device_enable_peer_access": acl.rt.device_disable_peer_access,
}


def undo_surface(name: str, args: list, value: object) -> None:
    """``undo`` for notifies, virtual and registered memory, configs and peers."""
    if name in _SURFACE_DESTROY_OF and value:
        call(_SURFACE_DESTROY_OF[name], value)
    elif name in _SURFACE_UNDO_BY_FIRST_ARG and args:
        call(_SURFACE_UNDO_BY_FIRST_ARG[name], args[0])


# ----- the tests -----


def test_every_entry_point_is_declared_and_has_plausible_arguments(files):
    assert len(ENTRY_POINTS) >= 90
    for name, fn in ENTRY_POINTS.items():
        assert set(fn.acl_format) <= set("kKIHisdfLlBbhO|"), (name, fn.acl_format)
        assert fn.acl_returns in ("ret", "value", "values", "bare", "raise", "code"), name
    env = Env(files)
    try:
        plausible = env.plausible()
        assert set(plausible) == set(ENTRY_POINTS), set(ENTRY_POINTS) ^ set(plausible)
        for name, args in plausible.items():  # each runs once with its plausible arguments
            call(ENTRY_POINTS[name], *args)
    finally:
        env.close()


def test_hostile_argument_matrix(files):
    """Each parameter of each entry point takes each hostile value; too few and too many arguments too."""
    for name in sorted(ENTRY_POINTS):
        fn = ENTRY_POINTS[name]
        fmt = fn.acl_format.rstrip("*").replace("|", "")
        env = Env(files)
        try:
            base = list(env.plausible()[name])
            for position, char in enumerate(fmt):
                for value in env.pool(char):
                    if not env.usable():
                        env.close()
                        env = Env(files)
                        base = list(env.plausible()[name])
                    args = guard(name, [*base[:position], value, *base[position + 1 :]], env)
                    undo(name, args, call(fn, *args))
            for args in (base[:-1], [*base, 0], [*base, None, None]):  # arity
                undo(name, args, call(fn, *args))
            if not fmt:  # no parameter to vary: extra positional arguments of every hostile kind instead
                for value in env.pool("O"):
                    call(fn, value)
        finally:
            env.close()


NAMES = sorted(ENTRY_POINTS)


def draw_args(data, fn, env: Env) -> list:
    fmt = fn.acl_format.rstrip("*")
    required = fmt.index("|") if "|" in fmt else len(fmt)
    chars = fmt.replace("|", "")
    count = data.draw(st.sampled_from([len(chars)] * 6 + [required, max(required - 1, 0), len(chars) + 1]))
    args = []
    for i in range(count):
        char = chars[i] if i < len(chars) else "O"
        kind = data.draw(st.integers(0, 9))
        if kind < 7:
            pool = env.pool(char)
            args.append(pool[data.draw(st.integers(0, len(pool) - 1))])
        elif kind == 7:
            args.append(data.draw(st.integers(-(2**70), 2**70)))
        elif kind == 8:
            args.append(data.draw(st.text(st.characters(codec=None, exclude_categories=()), max_size=12)))
        else:
            args.append(data.draw(st.sampled_from(env.handles + env.pointers)))
    return args


@fuzz_settings(max_examples=120)
@given(data=st.data())
def test_random_calls(files, data):
    """Batches of calls to any entry point with any arguments; what calls return feeds later calls."""
    env = Env(files)
    try:
        for _ in range(data.draw(st.integers(20, 60))):
            name = data.draw(st.sampled_from(NAMES))
            fn = ENTRY_POINTS[name]
            args = guard(name, draw_args(data, fn, env), env)
            env.learn(name, call(fn, *args))
    finally:
        env.close()


# ----- call sequences on real objects -----

KINDS = ("context", "stream", "event", "dev", "host", "user", "buffer", "dataset", "desc", "model")
KINDS += ("tensor_desc", "attr", "op_handle")
SEL = st.tuples(st.integers(0, 11), st.integers(0, 2**16))
DEVICE = st.sampled_from([0, 0, 0, 1, 1, 2, 7, 8, -1, 2**31 - 1, -(2**31), 2**31, "0", None, 0.0])
TIMEOUT = st.sampled_from([1, 5, 50, 1000, 2**31 - 1, -1, 0, -2, -(2**31), 2**31, 2**64, 1.5, math.nan, None, "9"])
SIZES = [0, 1, 16, 64, 4096, 4097, 49152, 2**20, 64 * 2**20, 64 * 2**20 + 1, 2**32, 2**63, 2**64 - 1, 2**64]
SIZE = st.sampled_from([*SIZES, 2**64 + 64, -1, -4096, 1.5, math.inf, None, "64"])
COUNT = st.sampled_from([0, 1, 4, 16, 63, 64, 65, 4096, 2**31, 2**64 - 1, 2**64 + 8, -1, -64, None, 2.0])
OFFSET = st.sampled_from([0, 0, 0, 1, 8, 63, 64, 4095, 4096, -1, -64, 2**40])
MEMCPY_KIND = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, -1, 2**31 - 1, 2**31, None, 1.0])
BLOCK = st.sampled_from([0, 1, 1, 2, -1, 2**31, None, True, 0.5])
FLAG = st.sampled_from([0, 0, 1, 2, 4, 8, 0x20, 0x40, 0xFF, 0x100, -1, 2**32, 2**40, None])
PRIORITY = st.sampled_from([0, 1, 7, 8, -1, 2**32 - 1, 2**32, None])
INDEX = st.sampled_from([0, 0, 1, 2, -1, 2**32, 2**64 - 1, 2**64, 2**100, None, "0", 0.0])
SHAPE = st.sampled_from([(4,), (2, 2), (), (0,), (16,), (1024,), (2**62,), (0, 2**63), (-1,), (1.5,), [4], None])
NPY = st.sampled_from([NPY_FLOAT32, 0, 1, 12, 17, NPY_OBJECT, 20, 21, 22, 23, 24, 25, 99, -1, 2**31, None])
CALLBACKS = ("noop", "boom", "sleepy", "reentrant", "sync_own", "launch_again", "append", "not_callable", "none")
ACL_DTYPE = st.sampled_from([ACL_FLOAT, ACL_FLOAT, ACL_FLOAT16, 3, 9, 12, 27, 13, -1, 999, 2**31, None])
ACL_FMT = st.sampled_from([ACL_FORMAT_ND, ACL_FORMAT_ND, 0, 1, 3, -1, 2**31 - 1, None])
DIMS_LIST = st.sampled_from(
    [[2, 3], [2, 3], [6], [], [-1, 3], [-2], [0, 3], [2**40, 2**40], [2**63 - 1], [-3], [1] * 129, (2, 3), None, [2.0]]
)
RANGES = st.sampled_from([[[1, 8], [3, 3]], [[1, 8]], [[5, 2], [3, 3]], [[0, -1], [1, 1]], [(1, 2)], [[1.5, 2]], [], 5])
OP_TYPES = st.sampled_from(["Add", "Add", "Mul", "Sub", "Relu", "Cast", "MatMul", "ReduceSumD", "NoSuchOp", ""])
TDESC_CALLS = sorted(n for n in ENTRY_POINTS if n.startswith(("acl.get_tensor_desc", "acl.set_tensor")))
ATTR_SETTERS = sorted(n for n in ENTRY_POINTS if n.startswith("acl.op.set_attr_"))
ATTR_VALUES = st.sampled_from(
    [0, 1, -1, 256, 2**63, 0.5, math.nan, "NCHW", "", [0, 1], [True], [0.5, 2], ["a"], [[1, 2], [3]], [], None]
)
DYNAMIC_DIMS = st.sampled_from(
    [
        {"dimCount": 5, "dims": [1, 4, 4, 1, 1]},
        {"dimCount": 5, "dims": [1, 2, 4, 3, 5]},
        {"dimCount": 5, "dims": [1, 9, 4, 9, 9]},
        {"dimCount": 2, "dims": [1, 4]},
        {"dimCount": 0, "dims": []},
        {"dimCount": -1, "dims": []},
        {"dimCount": 1, "dims": ["x"]},
        [1, 4, 4, 1, 1],
    ]
)


class AclMachine(RuleBasedStateMachine):
    """Real objects, created and misused in random orders. Handles are picked from everything ever created
    (live or not, of the right kind or another), or are hostile values."""

    files: Files

    def __init__(self) -> None:
        super().__init__()
        self.known: dict[str, list[int]] = {k: [] for k in KINDS}
        self.reporters: dict[int, Reporter] = {}
        self.util_tids: list[int] = []
        self.hosts: list[int] = []
        self.keep: list[object] = []
        self.ios: list[tuple[int, int, int]] = []
        self.gear_input: dict[int, int] = {}  # model -> the index of its last input (a gear model's gear input)
        self.ops: list[tuple[int, int, int, int]] = []  # a [2, 3] float desc and three 24-byte device buffers
        self.hits: list[object] = []
        self.hostile = [*SMALL_INTS, *BIG_INTS, *other_objects()]

    # ----- picking -----

    def remember(self, kind: str, value: object) -> None:
        if type(value) is int and value and value not in self.known[kind]:
            self.known[kind].append(value)
            del self.known[kind][:-48]

    def pick(self, kind: str, sel: tuple[int, int]) -> object:
        mode, n = sel
        mine = self.known[kind]
        if mode <= 6 and mine:
            return mine[n % len(mine)]
        if mode <= 8:
            every = [h for k in KINDS for h in self.known[k]]
            if every:
                return every[n % len(every)]
        if mode == 9:
            return n  # a small int: no handle is that small
        if mode == 10:
            return 0x0AC1_0000_0000 + 16 * n  # looks like a handle; may be one of any kind
        return self.hostile[n % len(self.hostile)]

    def pick_ptr(self, sel: tuple[int, int], offset: int = 0) -> object:
        mode, n = sel
        kinds = ("dev", "host", "user")
        ptr = self.pick(kinds[n % 3], (mode, n // 3))
        return ptr + offset if type(ptr) is int and offset else ptr

    def main_subscribed(self) -> bool:
        return threading.get_ident() in report._threads

    # ----- devices and contexts -----

    @initialize()
    def start(self) -> None:
        """Something of every kind to misuse: a stream served by a report thread, an event, memory, a model."""
        ok(acl.rt.set_device, 0)
        self.remember("context", ok(acl.rt.get_context))
        stream = ok(acl.rt.create_stream)
        self.remember("stream", stream)
        self.remember("event", ok(acl.rt.create_event))
        self.remember("dev", ok(acl.rt.malloc, 4096, 0))
        host = ok(acl.rt.malloc_host, 4096)
        self.hosts.append(host)
        self.remember("host", host)
        reporter = Reporter()
        tid = ok(acl.util.start_thread, reporter, [])
        self.reporters[tid] = reporter
        ok(acl.rt.subscribe_report, tid, stream)
        model = ok(acl.mdl.load_from_file, self.files.tiny)
        self.remember("model", model)
        self.make_io((0, 0))

    @rule(dev=DEVICE, how=st.sampled_from(["set", "reset", "reset_force", "context"]))
    def device(self, dev, how):
        if how == "set":
            call(acl.rt.set_device, dev)
        elif how == "reset":
            call(acl.rt.reset_device, dev)
        elif how == "reset_force":
            call(acl.rt.reset_device_force, dev)
        else:
            self.remember("context", value_of(acl.rt.create_context, call(acl.rt.create_context, dev)))

    @rule(sel=SEL, how=st.sampled_from(["destroy", "set", "set", "get"]))
    def context(self, sel, how):
        handle = self.pick("context", sel)
        if how == "destroy":
            call(acl.rt.destroy_context, handle)
        elif how == "set":
            call(acl.rt.set_context, handle)
        else:
            call(acl.rt.get_context)
            call(acl.rt.get_device)

    @rule()
    def constants(self):
        count = ok(acl.rt.get_device_count)
        if count != _device.device_count():
            raise violation(f"get_device_count changed: {count}")
        call(acl.rt.get_run_mode)

    # ----- streams and events -----

    @rule(cfg=st.none() | st.tuples(PRIORITY, FLAG))
    def create_stream(self, cfg):
        result = call(acl.rt.create_stream) if cfg is None else call(acl.rt.create_stream_with_config, *cfg)
        self.remember("stream", value_of(acl.rt.create_stream, result))

    @rule(sel=SEL, force=st.booleans())
    def destroy_stream(self, sel, force):
        call(acl.rt.destroy_stream_force if force else acl.rt.destroy_stream, self.pick("stream", sel))

    @rule(sel=SEL, timeout=st.none() | TIMEOUT, default=st.booleans())
    def synchronize_stream(self, sel, timeout, default):
        handle = 0 if default else self.pick("stream", sel)
        if timeout is None:
            call(acl.rt.synchronize_stream, handle)
        else:
            call(acl.rt.synchronize_stream_with_timeout, handle, timeout)

    @rule(sel=SEL, mode=st.sampled_from([0, 1, 2, -1, 2**64 - 1, None]))
    def stream_misc(self, sel, mode):
        handle = self.pick("stream", sel)
        call(acl.rt.stream_query, handle)
        call(acl.rt.stream_get_id, handle)
        call(acl.rt.set_stream_failure_mode, handle, mode)

    @rule()
    def synchronize_device(self):
        call(acl.rt.synchronize_device)

    @rule(flag=st.none() | FLAG)
    def create_event(self, flag):
        result = call(acl.rt.create_event) if flag is None else call(acl.rt.create_event_with_flag, flag)
        self.remember("event", value_of(acl.rt.create_event, result))

    @rule(sel=SEL)
    def destroy_event(self, sel):
        call(acl.rt.destroy_event, self.pick("event", sel))

    @rule(ev=SEL, stream=SEL, op=st.sampled_from(["record", "record", "reset", "wait"]))
    def event_on_stream(self, ev, stream, op):
        event, handle = self.pick("event", ev), self.pick("stream", stream)
        if op == "record":
            call(acl.rt.record_event, event, handle)
        elif op == "reset":
            call(acl.rt.reset_event, event, handle)
        else:
            call(acl.rt.stream_wait_event, handle, event)

    @rule(ev=SEL, other=SEL, timeout=st.none() | TIMEOUT)
    def event_wait_and_query(self, ev, other, timeout):
        event = self.pick("event", ev)
        call(acl.rt.query_event, event)
        call(acl.rt.query_event_status, event)
        result = call(acl.rt.event_elapsed_time, event, self.pick("event", other))
        if code_of(acl.rt.event_elapsed_time, result) == 0 and math.isnan(result[0]):
            raise violation("event_elapsed_time returned NaN")
        if timeout is None:
            call(acl.rt.synchronize_event, event)
        else:
            call(acl.rt.synchronize_event_with_timeout, event, timeout)

    # ----- memory -----

    @rule(size=SIZE, policy=st.sampled_from([0, 1, 2, 3, 7, 8, -1, 2**31, None]))
    def malloc(self, size, policy):
        self.remember("dev", value_of(acl.rt.malloc, call(acl.rt.malloc, size, policy)))

    @rule(size=SIZE)
    def malloc_host(self, size):
        ptr = value_of(acl.rt.malloc_host, call(acl.rt.malloc_host, size))
        if ptr:
            self.hosts.append(ptr)
        self.remember("host", ptr)

    @rule(sel=SEL, host=st.booleans())
    def free(self, sel, host):
        ptr = self.pick_ptr(sel)
        call(acl.rt.free_host if host else acl.rt.free, ptr)

    @rule(
        dst=SEL,
        src=SEL,
        offsets=st.tuples(OFFSET, OFFSET),
        count=COUNT,
        slack=st.sampled_from([0, 0, 1, -1, 2**64]),
        kind=MEMCPY_KIND,
        stream=st.none() | SEL,
    )
    def memcpy(self, dst, src, offsets, count, slack, kind, stream):
        dst_ptr, src_ptr = self.pick_ptr(dst, offsets[0]), self.pick_ptr(src, offsets[1])
        dst_max = count + slack if type(count) is int else count
        if stream is None:
            call(acl.rt.memcpy, dst_ptr, dst_max, src_ptr, count, kind)
        else:
            call(acl.rt.memcpy_async, dst_ptr, dst_max, src_ptr, count, kind, self.pick("stream", stream))

    @rule(
        dst=SEL,
        offset=OFFSET,
        value=st.sampled_from([0, 255, 256, -1, 2**31 - 1, -(2**31), 2**40, None]),
        count=COUNT,
        stream=st.none() | SEL,
    )
    def memset(self, dst, offset, value, count, stream):
        ptr = self.pick_ptr(dst, offset)
        if stream is None:
            call(acl.rt.memset, ptr, count, value, count)
        else:
            call(acl.rt.memset_async, ptr, count, value, count, self.pick("stream", stream))

    # ----- report threads and callbacks -----

    @precondition(lambda self: len(self.reporters) < 3)
    @rule()
    def start_reporter(self):
        reporter = Reporter()
        tid = ok(acl.util.start_thread, reporter, [])
        self.reporters[tid] = reporter

    @precondition(lambda self: self.reporters)
    @rule(n=st.integers(0, 10), unsubscribe_first=st.booleans())
    def stop_reporter(self, n, unsubscribe_first):
        tid = sorted(self.reporters)[n % len(self.reporters)]
        if unsubscribe_first:
            for handle in self.known["stream"]:
                call(acl.rt.unsubscribe_report, tid, handle)
        reporter = self.reporters.pop(tid)
        reporter.stop.set()
        # Subscribed or not: callbacks only it could run are dropped later. An exited thread nobody stopped may
        # have had the same id; stop_thread joins the oldest first (and re-raises its failure), so repeat.
        while tid in _threads._threads:
            call(acl.util.stop_thread, tid)

    def pick_tid(self, n: int) -> object:
        choices = [*sorted(self.reporters), threading.get_ident(), FAKE_TID, 0, 2**64 - 1, -1, None, "1"]
        tid = choices[n % len(choices)]
        return tid

    @rule(n=st.integers(0, 20), stream=SEL, default=st.booleans())
    def subscribe(self, n, stream, default):
        handle = 0 if default else self.pick("stream", stream)
        call(acl.rt.subscribe_report, self.pick_tid(n), handle)

    @rule(n=st.integers(0, 20), stream=SEL, default=st.booleans())
    def unsubscribe(self, n, stream, default):
        handle = 0 if default else self.pick("stream", stream)
        call(acl.rt.unsubscribe_report, self.pick_tid(n), handle)

    def callback(self, name: str, stream: object) -> object:
        if name == "noop":
            return noop
        if name == "boom":
            return boom
        if name == "sleepy":
            return lambda _: time.sleep(0.001)
        if name == "append":
            return self.hits.append
        if name == "reentrant":

            def reentrant(_):
                call(acl.rt.get_device)
                ptr = value_of(acl.rt.malloc_host, call(acl.rt.malloc_host, 64))
                if ptr:
                    call(acl.rt.memset, ptr, 64, 1, 64)
                    call(acl.rt.free_host, ptr)
                call(acl.rt.process_report, 1)  # the report thread itself: nothing else is due yet

            return reentrant
        if name == "sync_own":
            return lambda _: call(acl.rt.synchronize_stream, stream)
        if name == "launch_again":
            return lambda _: call(acl.rt.launch_callback, noop, None, 0, stream)
        if name == "none":
            return None
        return "not callable"

    @rule(name=st.sampled_from(CALLBACKS), block=BLOCK, stream=SEL, default=st.booleans(), repeat=st.integers(1, 3))
    def launch_callback(self, name, block, stream, default, repeat):
        handle = 0 if default else self.pick("stream", stream)
        for _ in range(repeat):
            call(acl.rt.launch_callback, self.callback(name, handle), [1, "x"], block, handle)

    @rule(timeout=TIMEOUT)
    def process_report_here(self, timeout):
        if self.main_subscribed() and not (type(timeout) is int and 0 <= timeout <= 50):
            timeout = 1  # with nothing to run, -1 or a huge timeout waits that long, by design
        call(acl.rt.process_report, timeout)

    # ----- data buffers and datasets -----

    @rule(ptr=SEL, offset=OFFSET, size=SIZE, null=st.booleans())
    def create_data_buffer(self, ptr, offset, size, null):
        address = 0 if null else self.pick_ptr(ptr, offset)
        self.remember("buffer", call(acl.create_data_buffer, address, size))

    @rule(buf=SEL, ptr=SEL, size=SIZE)
    def update_data_buffer(self, buf, ptr, size):
        call(acl.update_data_buffer, self.pick("buffer", buf), self.pick_ptr(ptr), size)

    @rule(buf=SEL, what=st.sampled_from(["addr", "size", "size_v2", "destroy"]))
    def data_buffer(self, buf, what):
        handle = self.pick("buffer", buf)
        fn = {
            "addr": acl.get_data_buffer_addr,
            "size": acl.get_data_buffer_size,
            "size_v2": acl.get_data_buffer_size_v2,
            "destroy": acl.destroy_data_buffer,
        }[what]
        call(fn, handle)

    @rule()
    def create_dataset(self):
        self.remember("dataset", call(acl.mdl.create_dataset))

    @rule(ds=SEL, buf=SEL)
    def add_dataset_buffer(self, ds, buf):
        call(acl.mdl.add_dataset_buffer, self.pick("dataset", ds), self.pick("buffer", buf))

    @rule(ds=SEL, index=INDEX, destroy=st.booleans())
    def dataset(self, ds, index, destroy):
        handle = self.pick("dataset", ds)
        call(acl.mdl.get_dataset_num_buffers, handle)
        call(acl.mdl.get_dataset_buffer, handle, index)
        if destroy:
            call(acl.mdl.destroy_dataset, handle)

    # ----- models -----

    @precondition(lambda self: len(self.known["model"]) < 6)
    @rule(
        how=st.sampled_from(["file", "file", "mem", "with_mem", "with_mem_bad", "random_mem"]),
        path=st.integers(0, 100),
        data=st.binary(max_size=256),
    )
    def load(self, how, path, data):
        paths = self.files.models + self.files.others
        chosen = self.files.tinynet if path < 40 else self.files.tiny if path < 60 else paths[path % len(paths)]
        if how == "file":
            result = call(acl.mdl.load_from_file, chosen)
        elif how in ("mem", "random_mem"):
            raw = own(Path(chosen).read_bytes() if how == "mem" and chosen in self.files.models else data)
            self.keep.append(raw)
            ptr = ok(acl.util.bytes_to_ptr, raw)
            result = call(acl.mdl.load_from_mem, ptr, len(raw))
        else:
            work, weight = (0, 0) if how == "with_mem" else (self.pick_ptr((0, path)), 64)
            result = call(acl.mdl.load_from_file_with_mem, chosen, work, weight, work, weight)
        self.remember("model", value_of(acl.mdl.load_from_file, result))

    @rule(sel=SEL)
    def unload(self, sel):
        call(acl.mdl.unload, self.pick("model", sel))

    @rule(path=st.integers(0, 100))
    def query_size(self, path):
        paths = self.files.models + self.files.others
        call(acl.mdl.query_size, paths[path % len(paths)])

    @rule(sel=SEL, how=st.sampled_from(["create", "get", "get", "destroy"]), model=SEL)
    def desc(self, sel, how, model):
        if how == "create":
            self.remember("desc", call(acl.mdl.create_desc))
        elif how == "get":
            call(acl.mdl.get_desc, self.pick("desc", sel), self.pick("model", model))
        else:
            call(acl.mdl.destroy_desc, self.pick("desc", sel))

    @rule(
        getter=st.sampled_from([n for n in ENTRY_POINTS if n.startswith("acl.mdl.get_") and "dataset" not in n]),
        sel=SEL,
        index=INDEX,
        name=st.sampled_from(["", "x", "input", "output", "data", "ascend_mbatch_shape_data", "\udcff", None, 5]),
        count=COUNT,
    )
    def desc_get(self, getter, sel, index, name, count):
        fn = ENTRY_POINTS[getter]
        handle = self.pick("desc", sel)
        if getter == "acl.mdl.get_desc":
            call(fn, handle, self.pick("model", (0, index if type(index) is int else 0)))
        elif getter in ("acl.mdl.get_aipp_type", "acl.mdl.get_first_aipp_info"):
            call(fn, self.pick("model", sel), index)
        elif getter == "acl.mdl.get_desc_from_file":
            paths = [*self.files.models, *self.files.others]
            call(fn, handle, paths[sel[1] % len(paths)])
        elif getter == "acl.mdl.get_desc_from_mem":
            call(fn, handle, self.pick_ptr(sel), count)
        elif fn.acl_format == "ks":
            call(fn, handle, name)
        elif fn.acl_format == "k":
            call(fn, handle)
        elif fn.acl_format == "kkk":
            call(fn, handle, index, count)
        else:
            call(fn, handle, index)

    # ----- gears -----

    @precondition(lambda self: len(self.known["model"]) < 6)
    @rule(kind=st.sampled_from(GEAR_KINDS))
    def load_gear_model(self, kind):
        """A model with gears, with correctly sized datasets (its gear input last)."""
        model = value_of(acl.mdl.load_from_file, call(acl.mdl.load_from_file, self.files.gears[kind]))
        self.remember("model", model)
        if model:
            self.make_io((0, self.known["model"].index(model)))

    @rule(
        io=st.integers(0, 100),
        how=st.sampled_from(["batch", "hw", "dims"]),
        index=st.sampled_from([None, None, None, 0, 1, 2, 7, -1, 2**64, "1"]),
        batch=st.sampled_from([1, 2, 4, 8, 3, 0, -1, 2**64, None]),
        hw=st.sampled_from([(8, 8), (16, 12), (32, 32), (12, 16), (0, 0), (2**32 + 8, 8), (8, None)]),
        dims=DYNAMIC_DIMS,
    )
    def set_gear(self, io, how, index, batch, hw, dims):
        """Choose a gear in an input dataset (any model's: a static one, or one of another kind, refuses)."""
        if not self.ios:
            return
        model, inputs, _ = self.ios[io % len(self.ios)]
        where = self.gear_input.get(model, 0) if index is None else index
        if how == "batch":
            call(acl.mdl.set_dynamic_batch_size, model, inputs, where, batch)
        elif how == "hw":
            call(acl.mdl.set_dynamic_hw_size, model, inputs, where, *hw)
        else:
            call(acl.mdl.set_input_dynamic_dims, model, inputs, where, dims)

    # ----- tensor descs, attributes and operators -----

    @rule(dtype=ACL_DTYPE, dims=DIMS_LIST, fmt=ACL_FMT)
    def create_tensor_desc(self, dtype, dims, fmt):
        self.remember("tensor_desc", call(acl.create_tensor_desc, dtype, dims, fmt))

    @rule(
        what=st.sampled_from([*TDESC_CALLS, "acl.destroy_tensor_desc", "acl.data_type_size"]),
        sel=SEL,
        index=INDEX,
        dims=DIMS_LIST,
        ranges=RANGES,
        ptr=SEL,
        count=COUNT,
    )
    def tensor_desc(self, what, sel, index, dims, ranges, ptr, count):
        fn = ENTRY_POINTS[what]
        desc = self.pick("tensor_desc", sel)
        if what == "acl.data_type_size":
            call(fn, index)
        elif what == "acl.set_tensor_const":
            call(fn, desc, self.pick_ptr(ptr), count)
        elif what in ("acl.set_tensor_shape_range", "acl.set_tensor_value_range"):
            call(fn, desc, ranges)
        elif fn.acl_format == "kO":
            call(fn, desc, list(dims) if isinstance(dims, list) else dims)
        elif fn.acl_format == "ks":
            call(fn, desc, ["x", "", "input_0", "\udcff", None][sel[1] % 5])
        elif fn.acl_format in ("ki", "kk"):
            call(fn, desc, index)
        elif fn.acl_format == "kkk":
            call(fn, desc, index, count)
        else:
            call(fn, desc)

    @rule(sel=SEL, what=st.sampled_from(["create", "create", "destroy"]))
    def attr(self, sel, what):
        if what == "create":
            self.remember("attr", call(acl.op.create_attr))
        elif what == "destroy":
            call(acl.op.destroy_attr, self.pick("attr", sel))

    @rule(sel=SEL, setter=st.sampled_from(ATTR_SETTERS), name=st.sampled_from(["axis", "", "x"]), value=ATTR_VALUES)
    def set_attr(self, sel, setter, name, value):
        with quiet_numpy():
            call(ENTRY_POINTS[setter], self.pick("attr", sel), name, value)

    @rule()
    def make_op(self):
        """A [2, 3] float32 desc and three device buffers of its size: the real ingredients of an Add."""
        desc = call(acl.create_tensor_desc, ACL_FLOAT, [2, 3], ACL_FORMAT_ND)
        self.remember("tensor_desc", desc)
        buffers = []
        for _ in range(3):
            ptr = value_of(acl.rt.malloc, call(acl.rt.malloc, 24, 0))
            self.remember("dev", ptr)
            buffers.append(call(acl.create_data_buffer, ptr or 0, 24))
            self.remember("buffer", buffers[-1])
        self.ops.append((desc, *buffers))

    def op_ingredients(self, op: int, mix: tuple) -> tuple[object, object, object, object]:
        """A desc and three buffers: of a ``make_op`` (real ones), or with ``mix[2]`` any known handles."""
        if self.ops and not mix[2]:
            return self.ops[-1] if op < 50 else self.ops[op % len(self.ops)]  # the newest is likely still whole
        return self.pick("tensor_desc", mix[0]), *(self.pick("buffer", (mix[1][0], mix[1][1] + i)) for i in range(3))

    def op_attr(self, sel: tuple[int, int]) -> object:
        return 0 if sel[0] < 4 else self.pick("attr", sel)  # often none: a real Add then runs

    def op_stream(self, sel: tuple[int, int]) -> object:
        return self.known["stream"][0] if sel[0] < 4 else self.pick("stream", sel)  # often the served stream

    @rule(
        op=st.integers(0, 100),
        how=st.sampled_from(["execute_v2", "execute_v2", "execute", "update_params"]),
        op_type=OP_TYPES,
        attr=SEL,
        stream=SEL,
        mix=st.tuples(SEL, SEL, st.booleans()),
    )
    def run_op(self, op, how, op_type, attr, stream, mix):
        """An operator on real descs and buffers (or, with ``mix``, on any known handles)."""
        desc, a, b, y = self.op_ingredients(op, mix)
        attr_handle = self.op_attr(attr)
        with quiet_numpy():
            if how == "update_params":
                call(acl.op.update_params, op_type, [desc, desc], [desc], attr_handle)
            else:
                fn = ENTRY_POINTS[f"acl.op.{how}"]
                call(fn, op_type, [desc, desc], [a, b], [desc], [y], attr_handle, self.op_stream(stream))

    @rule(
        op=st.integers(0, 100),
        op_type=OP_TYPES,
        attr=SEL,
        stream=SEL,
        mix=st.tuples(SEL, SEL, st.booleans()),
        which=SEL,
    )
    def op_handle(self, op, op_type, attr, stream, mix, which):
        """create_handle, then execute_with_handle and destroy_handle of some op handle (this one or another)."""
        desc, a, b, y = self.op_ingredients(op, mix)
        attr_handle = self.op_attr(attr)
        with quiet_numpy():
            result = call(acl.op.create_handle, op_type, [desc, desc], [desc], attr_handle)
            created = value_of(acl.op.create_handle, result)
            self.remember("op_handle", created)
            handle = created if created and which[0] < 6 else self.pick("op_handle", which)
            call(acl.op.execute_with_handle, handle, [a, b], [y], self.op_stream(stream))
            if mix[2]:
                call(acl.op.destroy_handle, self.pick("op_handle", mix[0]))

    @rule(op=st.integers(0, 100), other=SEL, truncate=st.sampled_from([0, 1, 256, -1, None]), stream=SEL)
    def cast(self, op, other, truncate, stream):
        """Cast between a real desc and any known one (the same dtype, another, a destroyed desc)."""
        desc, a, _, y = self.op_ingredients(op, (other, other, False))
        target = self.pick("tensor_desc", other)
        with quiet_numpy():
            call(acl.op.cast, desc, a, target, y, truncate, self.op_stream(stream))
            result = call(acl.op.create_handle_for_cast, desc, target, truncate)
            self.remember("op_handle", value_of(acl.op.create_handle_for_cast, result))

    @rule(
        op=st.integers(0, 100),
        op_type=OP_TYPES,
        out=SEL,
        count=st.sampled_from([1, 1, 0, 2, -1, 2**31]),
        mix=st.tuples(SEL, SEL, st.booleans()),
    )
    def infer_shape(self, op, op_type, out, count, mix):
        desc, a, b, _ = self.op_ingredients(op, mix)
        with quiet_numpy():
            call(acl.op.infer_shape, op_type, [desc, desc], [a, b], count, [self.pick("tensor_desc", out)], 0)

    @rule(n=st.integers(0, 100), how=st.sampled_from(["model_dir", "load", "queue"]))
    def op_models(self, n, how):
        if how == "model_dir":
            paths = [str(self.files.root), *self.files.paths]
            call(acl.op.set_model_dir, paths[n % len(paths)])
        elif how == "load":
            call(acl.op.load, self.pick_ptr((0, n)), [16, 64, 0, 2**64 - 1][n % 4])
        else:
            call(acl.op.set_max_op_queue_num, [64, 1, 0, 2**64 - 1, -1][n % 5])

    @rule(sel=SEL)
    def make_io(self, sel):
        """Correctly sized input and output datasets for a model (when it is loaded)."""
        model = self.pick("model", sel)
        desc = call(acl.mdl.create_desc)
        if code_of(acl.mdl.get_desc, call(acl.mdl.get_desc, desc, model)) != 0:
            call(acl.mdl.destroy_desc, desc)
            return
        datasets = []
        for count, size_of in (
            (acl.mdl.get_num_inputs, acl.mdl.get_input_size_by_index),
            (acl.mdl.get_num_outputs, acl.mdl.get_output_size_by_index),
        ):
            dataset = call(acl.mdl.create_dataset)
            if count is acl.mdl.get_num_inputs:
                self.gear_input[model] = call(count, desc) - 1
            for i in range(call(count, desc)):
                size = call(size_of, desc, i) or 16
                ptr = value_of(acl.rt.malloc, call(acl.rt.malloc, size, 0))
                if not ptr:
                    continue
                self.remember("dev", ptr)
                buffer = call(acl.create_data_buffer, ptr, size)
                self.remember("buffer", buffer)
                call(acl.mdl.add_dataset_buffer, dataset, buffer)
            self.remember("dataset", dataset)
            datasets.append(dataset)
        self.remember("desc", desc)
        self.ios.append((model, datasets[0], datasets[1]))

    @rule(
        io=st.integers(0, 100),
        how=st.sampled_from(["sync", "async", "swapped", "random"]),
        stream=SEL,
        ds=st.tuples(SEL, SEL),
        model=SEL,
    )
    def execute(self, io, how, stream, ds, model):
        if self.ios and how != "random":
            model_id, inputs, outputs = self.ios[io % len(self.ios)]
        else:
            model_id = self.pick("model", model)
            inputs, outputs = self.pick("dataset", ds[0]), self.pick("dataset", ds[1])
        if how == "swapped":
            inputs, outputs = outputs, inputs
        if how == "async":
            call(acl.mdl.execute_async, model_id, inputs, outputs, self.pick("stream", stream))
        else:
            call(acl.mdl.execute, model_id, inputs, outputs)

    # ----- init, finalize and dumps -----

    @rule(n=st.integers(0, 100), none=st.booleans())
    def init(self, n, none):
        paths = self.files.configs + self.files.others
        path = self.files.config_ok if n < 30 else self.files.dump_config if n < 40 else paths[n % len(paths)]
        if none:
            call(acl.init)
        else:
            call(acl.init, path)

    @rule(reference=st.booleans())
    def finalize(self, reference):
        call(acl.finalize_reference if reference else acl.finalize)

    @rule(
        how=st.sampled_from(["init", "set", "finalize", "register", "unregister"]),
        n=st.integers(0, 100),
        flag=st.sampled_from([0, 0, 1, -1, None]),
    )
    def dump(self, how, n, flag):
        if how == "init":
            call(acl.mdl.init_dump)
        elif how == "set":
            paths = self.files.configs + self.files.others
            call(acl.mdl.set_dump, self.files.dump_config if n < 50 else paths[n % len(paths)])
        elif how == "finalize":
            call(acl.mdl.finalize_dump)
        elif how == "register":
            callbacks = [noop, boom, self.hits.append, self.dump_reentrant, "x", None]
            call(acl.mdl.dump_reg_callback, callbacks[n % len(callbacks)], flag)
        else:
            call(acl.mdl.dump_unreg_callback)

    @rule(which=st.integers(0, 5), tinynet=st.booleans(), finalize_first=st.booleans())
    def dump_a_run(self, which, tinynet, finalize_first):
        """A whole dump through a callback: init, init_dump, register, load, execute, then tear it down in
        either order (a model keeps the settings it was loaded under)."""
        call(acl.init)
        call(acl.mdl.init_dump)
        callbacks = [noop, boom, self.hits.append, self.dump_reentrant, len, self.hits.append]
        call(acl.mdl.dump_reg_callback, callbacks[which], 0)
        model = value_of(
            acl.mdl.load_from_file, call(acl.mdl.load_from_file, self.files.tinynet if tinynet else self.files.tiny)
        )
        self.remember("model", model)
        self.make_io((0, len(self.known["model"]) - 1))
        if self.ios:
            model_id, inputs, outputs = self.ios[-1]
            call(acl.mdl.execute, model_id, inputs, outputs)
        if finalize_first:
            call(acl.mdl.finalize_dump)
        call(acl.mdl.dump_unreg_callback)
        call(acl.mdl.finalize_dump)

    @staticmethod
    def dump_reentrant(chunk: object) -> None:
        """A dump callback that calls the dump API and the runtime from the dump thread."""
        call(acl.rt.get_device)
        ptr = value_of(acl.rt.malloc_host, call(acl.rt.malloc_host, 16))
        if ptr:
            call(acl.rt.free_host, ptr)
        call(acl.mdl.dump_unreg_callback)
        call(acl.mdl.finalize_dump)

    # ----- acl.util -----

    @rule(data=st.binary(max_size=64), which=st.sampled_from(["bytes", "array", "strided", "objects", "readonly"]))
    def take_pointer(self, data, which):
        if which == "bytes":
            raw = own(data)
            self.keep.append(raw)
            self.remember("user", call(acl.util.bytes_to_ptr, raw))
            return
        array = {
            "array": lambda: np.frombuffer(bytearray(data) or bytearray(1), np.uint8).copy(),
            "strided": lambda: np.arange(64, dtype=np.float32)[::3],
            "objects": lambda: np.array([object(), "x", None], dtype=object),
            "readonly": lambda: np.frombuffer(fresh_bytes(32), np.uint8),
        }[which]()
        self.keep.append(array)
        self.remember("user", call(acl.util.numpy_to_ptr, array))
        result = call(acl.util.numpy_contiguous_to_ptr, array)
        if isinstance(result, tuple):
            self.keep.append(result[1])
            self.remember("user", result[0])

    @rule(ptr=SEL, offset=OFFSET, size=COUNT)
    def ptr_to_bytes(self, ptr, offset, size):
        call(acl.util.ptr_to_bytes, self.pick_ptr(ptr, offset), size)

    @rule(ptr=SEL, shape=SHAPE, npy=NPY, touch=st.booleans())
    def ptr_to_numpy(self, ptr, shape, npy, touch):
        result = call(acl.util.ptr_to_numpy, self.pick_ptr(ptr), shape, npy)
        if touch and isinstance(result, np.ndarray) and result.size:
            with quiet_numpy():
                result.tobytes()
                if result.flags.writeable:
                    result.ravel()[0] = result.ravel()[0]

    @rule(fn=st.sampled_from(["noop", "boom", "len", "int", "not_callable"]), args=st.sampled_from([None, [], 5, "x"]))
    def start_thread(self, fn, args):
        target = {"noop": noop, "boom": boom, "len": len, "int": int, "not_callable": 5}[fn]
        tid = value_of(acl.util.start_thread, call(acl.util.start_thread, target, args))
        if tid:
            self.util_tids.append(tid)

    @rule(n=st.integers(0, 100))
    def stop_thread(self, n):
        choices = [*self.util_tids, FAKE_TID, threading.get_ident(), 0, -1, 2**64]
        tid = choices[n % len(choices)]
        if type(tid) is int and tid in self.reporters:
            return  # joining a report thread nobody told to stop waits forever, by design
        call(acl.util.stop_thread, tid)

    # ----- anything -----

    @rule(data=st.data())
    def random_call(self, data):
        name = data.draw(st.sampled_from(NAMES))
        if name in ("acl.rt.process_report", "acl.util.stop_thread", "acl.rt.subscribe_report"):
            return  # they have rules of their own that keep clear of waits forever by design
        fn = ENTRY_POINTS[name]
        chars = fn.acl_format.rstrip("*").replace("|", "")
        args = []
        for char in chars:
            choice = data.draw(st.integers(0, 3))
            if char in "kKI" and choice < 3:
                args.append(self.pick(data.draw(st.sampled_from(KINDS)), data.draw(SEL)))
            else:
                args.append(data.draw(st.sampled_from(self.hostile + STRINGS + self.files.paths)))
        call(fn, *guard(name, args))

    def teardown(self) -> None:
        for reporter in self.reporters.values():
            reporter.stop.set()
        for tid in list(self.reporters):
            call(acl.util.stop_thread, tid)
        self.reporters.clear()
        process.reset(force=True)
        for ptr in self.hosts:
            acl.rt.free_host(ptr)
        stop_util_threads()
        for thread in threading.enumerate():
            if thread.name.startswith(("acl-util-thread", "openacl-")) and thread.is_alive():
                thread.join(5)
                if thread.is_alive():
                    raise violation(f"{thread.name} still runs after teardown")
        health_check(model=False)


def test_acl_call_sequences(files):
    AclMachine.files = files
    run_state_machine_as_test(AclMachine, settings=fuzz_settings(max_examples=100, stateful_step_count=60))


# ----- GE -----

F32 = np.float32


def graph_add() -> ge.Graph:
    g = ge.Graph("add")
    x = g.data("x", index=0, shape=[2, 3], dtype="float32")
    g.set_outputs([g.op("Add", [x, g.const("two", np.full((2, 3), 2, F32))], name="y")])
    return g


def graph_checkpoint() -> ge.Graph:
    g = ge.Graph("ckpt")
    g.save([g.variable("w")], name="save")
    return g


def graph_dynamic() -> ge.Graph:
    g = ge.Graph("dyn")
    x = g.data("x", index=0, shape=[None, 3], dtype="float32")
    g.set_outputs([g.op("Relu", [x])])
    return g


def graph_broken() -> ge.Graph:
    g = ge.Graph("broken")
    g.set_outputs([g.op("Conv", [g.data("x", index=0, shape=[2, 3], dtype="float32")])])
    return g


def graph_no_value() -> ge.Graph:
    g = ge.Graph("novalue")
    g.set_outputs([g.op("Identity", [g.variable("nv")])])
    return g


def graph_other_dtype() -> ge.Graph:
    g = ge.Graph("f64")
    g.set_outputs([g.op("Identity", [g.variable("w", value=np.zeros((3, 2), np.float64))])])
    return g


def graph_custom() -> ge.Graph:
    g = ge.Graph("custom")
    g.set_outputs([g.op("Foo", [g.data("x", index=0, shape=[2, 3], dtype="float32")], domain="x.custom")])
    return g


def graph_summary_only() -> ge.Graph:
    g = ge.Graph("summary")
    g.summary("x[:Histogram]", g.data("x", index=0, shape=[2, 3], dtype="float32"))
    return g


GRAPHS = {
    "add": graph_add,
    "step": step_graph,
    "ckpt": graph_checkpoint,
    "dyn": graph_dynamic,
    "broken": graph_broken,
    "novalue": graph_no_value,
    "f64": graph_other_dtype,
    "custom": graph_custom,
    "summary": graph_summary_only,
    "empty": lambda: ge.Graph("empty"),
    "onnx": lambda: ge.Graph.from_onnx(DEMO_MODEL),
}
GE_OPTIONS = [
    None,
    {},
    {"ge.exec.deviceId": "0"},
    {"ge.graphRunMode": "1"},
    {"ge.graphRunMode": "0"},
    {"ge.graphRunMode": "x"},
    {"ge.graphRunMode": "-1"},
    {"ge.graphRunMode": "9" * 5000},
    {"ge.graphRunMode": math.nan},
    {"": "x"},
    {b"ge.graphRunMode": b"1\xff"},
    {1: 2, None: object()},
    {"\udcff": "\udcff"},
    "ge.graphRunMode=1",
    [("ge.graphRunMode", "1")],
    5,
]
GRAPH_IDS = [0, 1, 1, 2, 2, 7, -1, 2**32 - 1, 2**32, 2**64, True, 1.0, "1", None]


def ge_inputs() -> list:
    x = np.ones((2, 3), F32)
    return [
        [x],
        [x],
        [],
        [x, x],
        [x.astype(np.float64)],
        [np.full((2, 3), np.nan, F32)],
        [np.full((2, 3), np.inf, F32)],
        [x.T],
        [np.ones((5, 3), F32)],
        [np.zeros((0, 3), F32)],
        [demo_input(1)],
        [x.tolist()],
        [[[1.0, 2.0], [3.0]]],
        ["x"],
        [None],
        [object()],
        (x,),
        x,
        "x",
        5,
        None,
    ]


VARIABLE_NAMES = [[], ["w"], ["w", "w"], ["nope"], [b"w"], [b"\xff"], [1], [["w"]], ["\udcff"], "w", None, 5, ("w",)]
CALLBACK_KEYS = ["Summary", "Save", b"Summary", b"Save", "", "summary", "Other", None, 5, "\udcff", b"\xff"]


class GeMachine(RuleBasedStateMachine):
    """GE initialise/finalise, sessions, graphs, runs and callbacks in random orders with hostile arguments."""

    def __init__(self) -> None:
        super().__init__()
        self.sessions: list[ge.Session] = []
        self.graphs: list[ge.Graph] = []
        self.inputs = ge_inputs()
        self.done: list[int] = []

    def session(self, n: int) -> ge.Session | None:
        return self.sessions[n % len(self.sessions)] if self.sessions else None

    @initialize()
    def start(self) -> None:
        """GE up, a train and a prediction session, graphs added, the Summary and Save callbacks registered."""
        ge_call("ge.ge_initialize", ge.ge_initialize, {"ge.graphRunMode": "1"})
        train = ge_call("ge.Session", ge.Session)
        predict = ge_call("ge.Session", ge.Session, {"ge.graphRunMode": "0"})
        self.sessions += [train, predict]
        for gid, kind in ((1, "add"), (2, "step"), (3, "ckpt"), (7, "dyn")):
            graph = GRAPHS[kind]()
            self.graphs.append(graph)
            ge_call("Session.add_graph", train.add_graph, gid, graph)
            ge_call("Session.add_graph", predict.add_graph, gid, graph.copy())
        ge_call("Session.register_callback_func", train.register_callback_func, "Summary", noop)
        ge_call("Session.register_callback_func", train.register_callback_func, "Save", noop)

    @rule(n=st.integers(0, 100))
    def initialize(self, n):
        options = GE_OPTIONS[n % len(GE_OPTIONS)] if n >= 30 else {"ge.graphRunMode": str(n % 2)}
        ge_call("ge.ge_initialize", ge.ge_initialize, options, well_typed=ge_well_typed(options=options))
        ge_call("ge.is_initialized", ge.is_initialized)

    @rule()
    def finalize(self):
        ge_call("ge.ge_finalize", ge.ge_finalize)

    @precondition(lambda self: len(self.sessions) < 6)
    @rule(n=st.integers(0, 100))
    def new_session(self, n):
        options = GE_OPTIONS[n % len(GE_OPTIONS)] if n >= 40 else {"ge.graphRunMode": str(n % 2)}
        session = ge_call("ge.Session", ge.Session, options, well_typed=ge_well_typed(options=options))
        if isinstance(session, ge.Session):
            self.sessions.append(session)

    @rule(n=st.integers(0, 10))
    def close(self, n):
        session = self.session(n)
        if session is not None:
            ge_call("Session.close", session.close)

    @rule(n=st.integers(0, 10), gid=st.sampled_from(GRAPH_IDS), kind=st.sampled_from([*GRAPHS, "again", "not a graph"]))
    def add_graph(self, n, gid, kind):
        session = self.session(n)
        if session is None:
            return
        if kind == "again" and self.graphs:
            graph = self.graphs[gid % len(self.graphs) if type(gid) is int else 0]
        elif kind in GRAPHS:
            graph = GRAPHS[kind]()
            self.graphs.append(graph)
        else:
            graph = "not a graph"
        well_typed = ge_well_typed(graph_id=gid) and isinstance(graph, ge.Graph)
        ge_call("Session.add_graph", session.add_graph, gid, graph, None, well_typed=well_typed)

    @rule(n=st.integers(0, 10), gid=st.sampled_from(GRAPH_IDS))
    def remove_graph(self, n, gid):
        session = self.session(n)
        if session is not None:
            ge_call("Session.remove_graph", session.remove_graph, gid, well_typed=ge_well_typed(graph_id=gid))

    @rule(n=st.integers(0, 10), gid=st.sampled_from(GRAPH_IDS), i=st.integers(0, 100), how=st.integers(0, 3))
    def run_graphs(self, n, gid, i, how):
        session = self.session(n)
        if session is None:
            return
        inputs = self.inputs[i % len(self.inputs)] if i >= 20 else self.inputs[0]
        well_typed = ge_well_typed(graph_id=gid, inputs=inputs)
        with quiet_numpy():
            if how == 0:
                ge_call("Session.build_graph", session.build_graph, gid, inputs, well_typed=well_typed)
            elif how == 1:
                ge_call("Session.run_graph", session.run_graph, gid, inputs, well_typed=well_typed)
            else:
                done = [self.on_done, boom, noop, self.closer(session), "not callable"][i % 5]
                ge_call(
                    "Session.run_graph_async",
                    session.run_graph_async,
                    gid,
                    inputs,
                    done,
                    well_typed=well_typed and callable(done),
                )

    def on_done(self, code: object, outputs: object) -> None:
        if type(code) is not int or code not in {int(c) for c in GeStatus} or not isinstance(outputs, list):
            violation(f"run_graph_async done({code!r}, {type(outputs).__name__})")
        self.done.append(code)

    def closer(self, session: ge.Session):
        return lambda code, outputs: session.close()

    @rule(n=st.integers(0, 10), names=st.sampled_from(VARIABLE_NAMES))
    def get_variables(self, n, names):
        session = self.session(n)
        if session is not None:
            ge_call("Session.get_variables", session.get_variables, names, well_typed=ge_well_typed(names=names))

    @rule(n=st.integers(0, 10), key=st.sampled_from(CALLBACK_KEYS), which=st.integers(0, 5))
    def register(self, n, key, which):
        session = self.session(n)
        if session is None:
            return

        def reentrant(graph_id, params):
            ge_call("Session.get_variables", session.get_variables, ["w"])
            ge_call("Session.run_graph", session.run_graph, graph_id, [np.ones((2, 3), F32)])
            return 1

        callback = [noop, boom, reentrant, lambda g, p: p["nope"], None, 5][which]
        ge_call("Session.register_callback_func", session.register_callback_func, key, callback)

    @rule(n=st.integers(0, 10), gid=st.sampled_from(GRAPH_IDS))
    def compiled_model(self, n, gid):
        session = self.session(n)
        if session is not None:
            model = ge_call("Session.compiled_model", session.compiled_model, gid)
            if model is not None and not isinstance(model, onnx.ModelProto):
                raise violation(f"compiled_model returned {type(model).__name__}")

    def teardown(self) -> None:
        ge_call("ge.ge_finalize", ge.ge_finalize)
        for session in self.sessions:
            ge_call("Session.close", session.close)
        for thread in threading.enumerate():
            if thread.name.startswith("openacl-ge-") and thread.is_alive():
                thread.join(5)
                if thread.is_alive():
                    raise violation(f"{thread.name} still runs after GEFinalize")


def test_ge_call_sequences():
    run_state_machine_as_test(GeMachine, settings=fuzz_settings(max_examples=120, stateful_step_count=50))


BUILDERS = ("data", "const", "variable", "op", "summary", "assign", "save", "set_outputs", "node", "copy")
NODE_NAMES = ["x", "y", "w", "v", "", None, 5, "a" * 1000, "\udcff", "n:0", "Add_1"]
DIMS = [[2, 3], [None, 3], [-1], [], [2**40], [math.inf], [math.nan], ["a"], None, 5, [[1]], [-5], [1.5], [True]]
DTYPES = ["float32", np.float64, "int8", "bool", "float16", "str", object, "nonsense", None, 5, "complex128", "V8"]
VALUES = [1, 1.5, math.nan, [1.0, 2.0], [[1], [2, 3]], "s", None, 2**100, np.ones((2, 2), F32), b"x", 1j, object()]
OP_TYPES = ["Add", "Relu", "MatMul", "Identity", "NoSuchOp", "Summary", "Assign", "", None, 5, "Conv", "Concat"]
N_OUTPUTS = [1, 1, 2, 0, -1, "2", 1.5, 1024, None]
ATTRS = [{}, {"axis": 0}, {"alpha": math.nan}, {"bad": object()}, {"keepdims": 2**70}, {"x": [1, "a"]}]


@fuzz_settings(max_examples=150)
@given(data=st.data())
def test_ge_graph_builders(data):
    """Random builder calls: only ValueError/TypeError (KeyError from ``node``); then the session only ever
    answers with a status, whatever graph came out."""
    graphs = [ge.Graph("g"), ge.Graph("other")]
    tensors: list[object] = []
    for _ in range(data.draw(st.integers(1, 25))):
        what = data.draw(st.sampled_from(BUILDERS))
        graph = graphs[0] if data.draw(st.integers(0, 5)) else graphs[1]

        def any_input():
            pool = [*tensors, *NODE_NAMES, "missing"]
            return pool[data.draw(st.integers(0, len(pool) - 1))]

        inputs = [any_input() for _ in range(data.draw(st.integers(0, 3)))]
        name = data.draw(st.sampled_from(NODE_NAMES))
        args: tuple
        kwargs: dict = {}
        if what == "data":
            fn = graph.data
            args, kwargs = (
                (name,),
                {
                    "index": data.draw(st.sampled_from([0, 1, -1, True, 2**70, 1.5, "0", None])),
                    "shape": data.draw(st.sampled_from(DIMS)),
                    "dtype": data.draw(st.sampled_from(DTYPES)),
                },
            )
        elif what == "const":
            fn, args = graph.const, (name, data.draw(st.sampled_from(VALUES)))
        elif what == "variable":
            fn, args = graph.variable, (name, data.draw(st.sampled_from([None, *VALUES])))
        elif what == "op":
            fn = graph.op
            args = (data.draw(st.sampled_from(OP_TYPES)), data.draw(st.sampled_from([inputs, "x", None, [5]])))
            kwargs = {"n_outputs": data.draw(st.sampled_from(N_OUTPUTS)), **data.draw(st.sampled_from(ATTRS))}
            if data.draw(st.booleans()):
                kwargs["name"] = name
        elif what == "summary":
            fn, args = graph.summary, (name, any_input())
        elif what == "assign":
            fn, args = graph.assign, (any_input(), any_input())
        elif what == "save":
            fn, args = graph.save, (inputs,)
        elif what == "set_outputs":
            fn, args = graph.set_outputs, (data.draw(st.sampled_from([inputs, "x", None])),)
        elif what == "node":
            fn, args = graph.node, (name,)
        else:
            fn, args = graph.copy, ()
        STATS.count(f"Graph.{what}")
        try:
            with quiet_numpy():
                result = fn(*args, **kwargs)
        except (ValueError, TypeError):
            continue
        except KeyError:
            if what != "node":
                raise
            continue
        except Exception as exc:
            raise violation(f"Graph.{what}{args!r} {kwargs!r} raised {type(exc).__name__}: {exc}") from exc
        if isinstance(result, ge.Tensor):
            tensors.append(result)
        elif isinstance(result, tuple):
            tensors.extend(result)
        elif isinstance(result, ge.Graph):
            graphs.append(result)
    assert ge_call("ge.ge_initialize", ge.ge_initialize, {"ge.graphRunMode": str(data.draw(st.integers(0, 1)))}) == 0
    try:
        session = ge_call("ge.Session", ge.Session)
        for gid, graph in enumerate(graphs):
            ge_call("Session.add_graph", session.add_graph, gid, graph)
            ge_call("Session.build_graph", session.build_graph, gid)
            specs = [n.attrs for n in graph.nodes if n.type == "Data"]
            feeds = []
            for spec in sorted(specs, key=lambda a: a["index"]):
                # shape None: the first run's input decides it (GE-PY's 0-dim Data)
                shape = (1,) if spec["shape"] is None else tuple(1 if d is None else d for d in spec["shape"])
                if any(d < 0 for d in shape) or math.prod(shape) > 10_000:
                    break
                feeds.append(np.ones(shape, spec["dtype"]))
            with quiet_numpy():
                ge_call("Session.run_graph", session.run_graph, gid, feeds)
                ge_call("Session.get_variables", session.get_variables, ["w", "v"])
    finally:
        ge_call("ge.ge_finalize", ge.ge_finalize)


@pytest.mark.parametrize("index", range(8))
def test_ge_graph_from_model_files(files, index):
    """``Graph.from_onnx`` of each model file: a graph, or the file's own error (onnx.load's OSError or
    protobuf DecodeError); a graph it gives only ever gets a status from the session."""
    path = files.models[index]
    STATS.count("Graph.from_onnx")
    try:
        graph = ge.Graph.from_onnx(path)
    except (ValueError, TypeError, OSError):
        return
    except Exception as exc:
        if type(exc).__module__.startswith("google.protobuf"):
            return
        raise
    assert ge.ge_initialize() == 0
    session = ge.Session()
    ge_call("Session.add_graph", session.add_graph, 1, graph)
    ge_call("Session.run_graph", session.run_graph, 1, [demo_input()])
    ge.ge_finalize()


# ----- integer boundaries where no pool reaches: model metadata, GE-PY -----

EDGES = (*BOUNDARY_INTS, 2**63 - 1, -(2**63) - 1)


@pytest.mark.parametrize("kind", GEAR_KINDS)
def test_gear_lists_at_integer_boundaries(tmp_path, kind):
    """A model whose gear list holds each boundary value, loaded from memory and from its file: a model id or a
    documented code, never 500000; what loads also describes and unloads."""
    make = {"batch": batch_model, "hw": hw_model, "dims": dims_model}[kind]
    lists = {"batch": "1,{}", "hw": "8,8;16,{}", "dims": "2,3,5;4,1,{}"}
    assert acl.rt.set_device(0) == 0
    for value in EDGES:
        path = make(tmp_path / f"{kind}.onnx", lists[kind].format(value))
        data = path.read_bytes()
        for loaded in (
            call(acl.mdl.load_from_mem, acl.util.bytes_to_ptr(data), len(data)),
            call(acl.mdl.load_from_file, str(path)),
        ):
            if loaded[1] == 0:
                desc = ok(acl.mdl.create_desc)
                call(acl.mdl.get_desc, desc, loaded[0])
                call(acl.mdl.get_dynamic_batch, desc)
                call(acl.mdl.get_dynamic_hw, desc, -1)
                call(acl.mdl.get_input_dynamic_dims, desc, -1, 2)
                ok(acl.mdl.destroy_desc, desc)
                ok(acl.mdl.unload, loaded[0])


def _gepy_calls(value: int) -> dict[str, Callable[[], object]]:
    """Every integer argument of GE-PY's builder, literals, attributes, Tensor and Session, given ``value``."""
    from ge.es import GraphBuilder
    from ge.es.all import Cast, Split
    from ge.es.graph_builder import attr_scope
    from ge.graph import Tensor
    from ge.graph.types import DataType
    from ge.session import Session

    b = GraphBuilder("edges")
    x = b.create_input(0, data_type=DataType.DT_INT64, shape=[2])

    def scoped() -> None:
        with attr_scope({"a": value}):
            pass

    calls: dict[str, Callable[[], object]] = {
        "create_input": lambda: b.create_input(value),
        "create_input shape": lambda: b.create_input(1, shape=[value]),
        "create_inputs num": lambda: b.create_inputs(value, 5),
        "create_inputs start": lambda: b.create_inputs(1, value),
        "create_vector_int64": lambda: b.create_vector_int64([value]),
        "create_const_float": lambda: b.create_const_float(value),
        "create_variable": lambda: b.create_variable(value, "w"),
        "set_graph_output": lambda: b.set_graph_output(x, value),
        "set_graph_attr_int64": lambda: b.set_graph_attr_int64("a", value),
        "set_node_attr_int64": lambda: b.set_node_attr_int64(x, "a", value),
        "attr_scope": scoped,
        "x + value": lambda: x + value,
        "value * x": lambda: value * x,
        "x - [value]": lambda: x - [value, 1],
        "Cast dst_type": lambda: Cast(x, dst_type=value),
        "Split num_split": lambda: Split(x, b.create_const_int32(0), num_split=value, y_num=2),
        "Split y_num": lambda: Split(x, b.create_const_int32(0), num_split=2, y_num=value),
        "Tensor shape": lambda: Tensor([1], data_type=DataType.DT_INT64, shape=[value]),
        "Session.remove_graph": lambda: Session().remove_graph(value),
        "Session.add_graph": lambda: Session().add_graph(value, b.build_and_reset()),
    }
    for kind in ("int64", "int32", "uint64", "uint32"):
        calls[f"create_const_{kind}"] = lambda kind=kind: getattr(b, f"create_const_{kind}")([1, value])
        calls[f"create_scalar_{kind}"] = lambda kind=kind: getattr(b, f"create_scalar_{kind}")(value)
        calls[f"create_const_{kind} shape"] = lambda kind=kind: getattr(b, f"create_const_{kind}")(1, shape=[value])
    for data_type in (DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT32, DataType.DT_INT64, DataType.DT_FLOAT):
        calls[f"Tensor {data_type.name}"] = lambda t=data_type: Tensor([value], data_type=t, shape=[1])
    return calls


def test_gepy_integer_arguments_at_their_boundaries():
    """Each integer argument of GE-PY takes 0, -1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 and -2**63 - 1: a value,
    or GE-PY's ValueError / TypeError / GeError (a RuntimeError); never numpy's OverflowError, never a hang."""
    from ge.ge_global import GeApi

    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    try:
        for value in EDGES:
            for name, make in _gepy_calls(value).items():
                STATS.count(f"ge-py {name}")
                try:
                    with quiet_numpy():
                        make()
                except (ValueError, TypeError, RuntimeError):
                    continue
                except Exception as exc:
                    raise violation(f"GE-PY {name} with {value} raised {type(exc).__name__}: {exc}") from exc
    finally:
        GeApi.ge_finalize()


EXIT_SCRIPT = """
import threading, time
import numpy as np
import openacl
openacl.install()
import acl
from openacl import ge
from openacl.model.model import DEMO_MODEL

assert acl.init() == 0 and acl.rt.set_device(0) == 0
stream, _ = acl.rt.create_stream()
stop = threading.Event()
def serve(_):
    while not stop.is_set():
        acl.rt.process_report(5)
tid, _ = acl.util.start_thread(serve, [])
assert acl.rt.subscribe_report(tid, stream) == 0
for block in (1, 0) * 20:
    acl.rt.launch_callback(lambda _: time.sleep(0.01), None, block, stream)
dev, _ = acl.rt.malloc(1 << 20, 0)
host, _ = acl.rt.malloc_host(1 << 20)
acl.rt.memcpy_async(dev, 1 << 20, host, 1 << 20, 1, stream)
model, _ = acl.mdl.load_from_file(str(DEMO_MODEL))
assert acl.mdl.init_dump() == 0 and acl.mdl.dump_reg_callback(lambda chunk: 0, 0) == 0
assert ge.ge_initialize({"ge.graphRunMode": "1"}) == 0
session = ge.Session()
g = ge.Graph("g")
g.set_outputs([g.op("Relu", [g.data("x", index=0, shape=[2], dtype="float32")])])
session.add_graph(1, g)
for _ in range(20):
    session.run_graph_async(1, [np.ones(2, np.float32)], lambda code, outputs: time.sleep(0.01))
print("leaving with everything open", flush=True)
"""


def test_exit_with_everything_still_open(tmp_path):
    """A program that exits mid-flight (init not finalized, a report thread serving, callbacks and copies
    queued, a dump set up, GE runs queued) exits promptly and cleanly."""
    STATS.count("process exit")
    done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "leaving with everything open" in done.stdout
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


# ----- the budget -----

FUZZ_TESTS = {
    "test_every_entry_point_is_declared_and_has_plausible_arguments",
    "test_hostile_argument_matrix",
    "test_random_calls",
    "test_acl_call_sequences",
    "test_ge_call_sequences",
    "test_ge_graph_builders",
}


def test_zz_at_least_20000_calls_reached_every_entry_point():
    if not STATS.tests_done >= FUZZ_TESTS:
        pytest.skip("only meaningful after the whole module ran")
    assert STATS.total >= MIN_CALLS, STATS.total
    missing = [name for name in [*ENTRY_POINTS, *GE_NAMES] if STATS.calls[name] == 0]
    assert not missing, missing
    rare = {name: STATS.calls[name] for name in ENTRY_POINTS if STATS.calls[name] < 20}
    assert not rare, rare
    print(f"\nfuzz: {STATS.total} calls, {len(ENTRY_POINTS)} acl entry points, {len(GE_NAMES)} GE functions")
