"""Model dumps end to end through ``acl.mdl``: files on disk, chunks to a callback, lifecycle codes."""

from __future__ import annotations

import errno
import json
import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import acl
from openacl.dump import config as cfg_module
from openacl.dump import format as dump_format
from openacl.dump import naming, sink
from openacl.dump import reader as dump_reader
from openacl.dump import session as dump_session
from openacl.dump.record import OpRecord
from openacl.errors import AclCode
from openacl.model import model as openacl_model
from openacl.model.model import DEMO_MODEL
from openacl.tools.parse import parse_dumps
from tests.forking import in_child
from tests.model_io import ModelIO, demo_input

NAME = re.compile(r"^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.(\d+)\.(\d+)\.(\d{16})$")  # msaccucmp's pattern
OPS = [node for node in onnx.load(DEMO_MODEL).graph.node]


def intermediates(x: np.ndarray) -> dict[str, np.ndarray]:
    """onnxruntime's own values of every node output, graph optimisations and weight prepacking off (as the
    observed run computes them)."""
    model = onnx.load(DEMO_MODEL)
    known = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if name not in known:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.add_session_config_entry("session.disable_prepacking", "1")
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, {"input": x}), strict=True))


def write_config(path: Path, **dump) -> str:
    path.write_text(json.dumps({"dump": dump}))
    return str(path)


def dump_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.fixture
def inited(ctx):
    assert acl.init() == 0
    yield
    acl.finalize()


def model_dump(tmp_path: Path, runs: int = 1, **extra) -> tuple[ModelIO, list[np.ndarray]]:
    out = tmp_path / "dump"
    out.mkdir(exist_ok=True)
    cfg = write_config(tmp_path / "dump.json", dump_path=str(out), dump_list=[{"model_name": "tinynet"}], **extra)
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(cfg) == 0
    io = ModelIO()
    inputs = [demo_input(i) for i in range(runs)]
    for x in inputs:
        io.run(x)
    assert acl.mdl.finalize_dump() == 0
    return io, inputs


# ----- lifecycle codes -----


def test_lifecycle_codes(ctx, tmp_path):
    assert acl.mdl.init_dump() == AclCode.ACL_ERROR_UNINITIALIZE
    assert acl.mdl.set_dump(str(tmp_path)) == AclCode.ACL_ERROR_DUMP_NOT_RUN
    assert acl.mdl.finalize_dump() == AclCode.ACL_ERROR_DUMP_NOT_RUN
    assert acl.init() == 0
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.init_dump() == AclCode.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.mdl.set_dump(str(tmp_path / "missing.json")) == AclCode.ACL_ERROR_INVALID_FILE
    bad = write_config(tmp_path / "bad.json", dump_path=str(tmp_path), dump_list=[], dump_mode="sideways")
    assert acl.mdl.set_dump(bad) == AclCode.ACL_ERROR_INVALID_DUMP_CONFIG
    assert acl.mdl.set_dump() == AclCode.ACL_ERROR_INVALID_PARAM
    assert acl.mdl.finalize_dump() == 0
    assert acl.mdl.finalize_dump() == AclCode.ACL_ERROR_DUMP_NOT_RUN
    assert acl.finalize() == 0


def test_bad_dump_section_fails_acl_init(ctx, tmp_path, acl_log):
    cfg = write_config(tmp_path / "acl.json", dump_path=str(tmp_path), dump_list=[], dump_data="everything")
    assert acl.init(cfg) == AclCode.ACL_ERROR_INVALID_DUMP_CONFIG
    assert "dump_data" in acl_log.text
    assert acl.init() == 0  # the failed init left nothing behind
    assert acl.finalize() == 0


def test_init_dump_after_dump_configured_in_acl_init(ctx, tmp_path):
    cfg = write_config(tmp_path / "acl.json", dump_path=str(tmp_path), dump_list=[{"model_name": "tinynet"}])
    assert acl.init(cfg) == 0
    assert acl.mdl.init_dump() == AclCode.ACL_ERROR_DUMP_ALREADY_RUN
    assert acl.finalize() == 0


def test_dump_reg_callback_argument_rules():
    assert acl.mdl.dump_reg_callback(lambda chunk: 0, 1) == AclCode.ACL_ERROR_FAILURE
    assert acl.mdl.dump_reg_callback("not callable", 0) == AclCode.ACL_ERROR_FAILURE
    with pytest.raises(TypeError, match=r"acl\.mdl\.dump_reg_callback args parse failed"):
        acl.mdl.dump_reg_callback(print, "0")
    assert acl.mdl.dump_reg_callback(lambda chunk: 0, 0) == 0
    assert acl.mdl.dump_unreg_callback() is None
    assert acl.mdl.dump_unreg_callback() is None


class _DumpUser:
    """A dump callback whose ``__del__`` calls the dump API, from a helper thread it waits for at most a few
    seconds (so that a finalizer run under the dump lock fails the test instead of deadlocking it)."""

    def __init__(self, seen: list[str]) -> None:
        self.seen = seen

    def __call__(self, chunk) -> int:
        return 0

    def __del__(self) -> None:
        done: list[object] = []
        helper = threading.Thread(target=lambda: done.append(acl.mdl.dump_unreg_callback()), daemon=True)
        helper.start()
        helper.join(5)
        self.seen.append("called the dump API" if done else "stuck: the finalizer ran under the dump lock")


def test_regression_replaced_dump_callback_whose_finalizer_calls_the_dump_api_deadlocked():
    seen: list[str] = []
    assert acl.mdl.dump_reg_callback(_DumpUser(seen), 0) == 0
    assert acl.mdl.dump_reg_callback(lambda chunk: 0, 0) == 0
    assert seen == ["called the dump API"]


def test_regression_dump_reset_let_go_of_the_callback_under_the_dump_lock():
    seen: list[str] = []
    assert acl.mdl.dump_reg_callback(_DumpUser(seen), 0) == 0
    dump_session.reset()
    assert seen == ["called the dump API"]


def test_regression_the_dump_thread_let_go_of_a_delivered_file_under_its_lock(tmp_path):
    """The dump thread kept the file it had delivered until it took its lock for the next one: the file's
    callback, which the program had let go of meanwhile, went with it under the writer's lock, where its
    finalizer (user code) waited for that very lock; and the file's tensors stayed alive while the thread idled.
    A delivered file now goes before the thread takes its lock again."""
    seen: list[str] = []
    user = _DumpUser(seen)
    sink.writer.submit_many([sink.OutgoingFile("/nowhere", "first", [b"1"], 1, None, user)])
    sink.writer.flush()
    del user  # the queued file held the last reference: it goes with the file
    sink.writer.submit_many([sink.OutgoingFile(str(tmp_path), "second", [b"2"], 1)])
    sink.writer.flush()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen == ["called the dump API"]


# ----- files on disk -----


def test_disk_dump_layout_and_contents(inited, tmp_path):
    io, (x,) = model_dump(tmp_path)
    files = dump_files(tmp_path / "dump")
    assert len(files) == len(OPS)
    rel = files[0].relative_to(tmp_path / "dump").parts
    assert re.fullmatch(r"\d{14}", rel[0]) and rel[1:5] == ("0", "tinynet", str(io.model_id), "0")
    want = intermediates(x)
    by_name = {}
    for path in files:
        match = NAME.match(path.name)
        assert match, path.name
        dumped = dump_reader.read_dump(path)
        assert dumped.version == "2.0" and dumped.dump_time == int(match.group(5))
        assert dumped.inputs == []  # dump_mode defaults to output
        by_name[dumped.op_name] = (match.group(1), dumped)
    for index, node in enumerate(OPS):
        op_type, dumped = by_name[node.name]
        assert op_type == node.op_type
        for name, array in zip(node.output, dumped.outputs, strict=True):
            np.testing.assert_array_equal(array, want[name])
            assert array.dtype == want[name].dtype and array.shape == want[name].shape
        assert any(f".{index}." in p.name and dump_format.sanitize(node.name) in p.name for p in files)


def test_dump_mode_all_includes_weights(inited, tmp_path):
    model_dump(tmp_path, dump_mode="all")
    conv = next(p for p in dump_files(tmp_path / "dump") if p.name.startswith("Conv._stem_conv_Conv."))
    dumped = dump_reader.read_dump(conv)
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in onnx.load(DEMO_MODEL).graph.initializer}
    assert len(dumped.inputs) == 3 and len(dumped.outputs) == 1
    np.testing.assert_array_equal(dumped.inputs[1], weights["stem.conv.weight"])


def test_layer_filter_and_dump_step(inited, tmp_path):
    out = tmp_path / "dump"
    out.mkdir()
    cfg = write_config(
        tmp_path / "d.json",
        dump_path=str(out),
        dump_list=[{"model_name": "tinynet", "layer": ["/head/Softmax", "/stem/act/Relu"]}],
        dump_step="1|3",
    )
    assert acl.mdl.init_dump() == 0 and acl.mdl.set_dump(cfg) == 0
    io = ModelIO()
    for i in range(4):
        io.run(demo_input(i))
    assert acl.mdl.finalize_dump() == 0
    files = dump_files(out)
    assert sorted({p.parent.name for p in files}) == ["1", "3"]
    assert sorted({p.name.split(".")[0] for p in files}) == ["Relu", "Softmax"]
    assert len(files) == 4


def test_model_not_listed_and_model_loaded_before_set_dump_are_not_dumped(inited, tmp_path):
    out = tmp_path / "dump"
    out.mkdir()
    early = ModelIO()  # loaded before set_dump: keeps the settings it was loaded under
    assert acl.mdl.init_dump() == 0
    cfg = write_config(tmp_path / "d.json", dump_path=str(out), dump_list=[{"model_name": "other_model"}])
    assert acl.mdl.set_dump(cfg) == 0
    ModelIO().run(demo_input())
    early.run(demo_input())
    assert acl.mdl.finalize_dump() == 0
    assert dump_files(out) == []


def test_stats_mode_writes_csv(inited, tmp_path):
    model_dump(tmp_path, dump_data="stats")
    files = dump_files(tmp_path / "dump")
    assert files and all(p.suffix == ".csv" for p in files)
    text = files[0].read_text()
    assert text.startswith("Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value")
    assert ",DT_FLOAT," in text


def test_failed_write_reports_write_file_and_leaves_no_partial_file(inited, tmp_path, monkeypatch, acl_log):
    real_write_parts = sink.write_parts
    calls = {"n": 0}

    def full_disk(out, parts):
        calls["n"] += 1
        if calls["n"] == 3:
            out.write(bytes(parts[0]))  # a partial file, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write_parts(out, parts)

    out = tmp_path / "dump"
    out.mkdir()
    cfg = write_config(tmp_path / "d.json", dump_path=str(out), dump_list=[{"model_name": "tinynet"}])
    assert acl.mdl.init_dump() == 0 and acl.mdl.set_dump(cfg) == 0
    io = ModelIO()
    io.load_input(demo_input())
    monkeypatch.setattr(sink, "write_parts", full_disk)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == AclCode.ACL_ERROR_WRITE_FILE
    assert "No space left on device" in acl_log.text
    first = dump_files(out)
    assert len(first) == len(OPS) - 1  # every other file complete; no temporary file left
    for path in first:
        dump_reader.read_dump(path)
    monkeypatch.setattr(sink, "write_parts", real_write_parts)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == 0  # the next dump works
    assert len(dump_files(out)) == 2 * len(OPS) - 1
    assert acl.mdl.finalize_dump() == 0


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("size", [10, 1 << 20])
def test_the_write_path_reports_a_real_enospc(size):
    """/dev/full fails every write with ENOSPC, as a full disk does, on both the small and the large path."""
    with pytest.raises(OSError) as caught, open("/dev/full", "wb") as full:
        sink.write_parts(full, [np.zeros(size, np.uint8).data])
    assert caught.value.errno == errno.ENOSPC


def test_async_execute_files_on_disk_at_synchronize(inited, tmp_path, stream):
    out = tmp_path / "dump"
    out.mkdir()
    cfg = write_config(tmp_path / "d.json", dump_path=str(out), dump_list=[{"model_name": "tinynet"}])
    assert acl.mdl.init_dump() == 0 and acl.mdl.set_dump(cfg) == 0
    io = ModelIO()
    for i in range(3):
        io.load_input(demo_input(i), stream)
        assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    files = dump_files(out)
    assert len(files) == 3 * len(OPS)
    assert {p.parent.name for p in files} == {"0", "1", "2"}
    assert acl.mdl.finalize_dump() == 0


def test_parse_back_equals_onnxruntime_bit_for_bit(inited, tmp_path):
    _, (x,) = model_dump(tmp_path, dump_mode="all")
    result = parse_dumps(tmp_path / "dump", tmp_path / "npy")
    assert not result.failed and len(result.parsed) == len(OPS)
    want = intermediates(x)
    names = {p.name for p in result.written}
    for path in dump_files(tmp_path / "dump"):
        op_name = dump_reader.read_dump(path).op_name
        node = next(n for n in OPS if n.name == op_name)
        for i, value in enumerate(node.output):
            npy = tmp_path / "npy" / f"{path.name}.output.{i}.npy"
            assert npy.name in names
            np.testing.assert_array_equal(np.load(npy), want[value])


# ----- callbacks -----


class Collector:
    """A dump callback that reassembles files from chunks, as msprobe's consumer does."""

    def __init__(self, fail_every: int = 0) -> None:
        self.files: dict[str, bytearray] = {}
        self.chunks: list[dict] = []
        self.threads: set[str] = set()
        self.fail_every = fail_every
        self.lock = threading.Lock()

    def __call__(self, chunk: dict) -> int:
        with self.lock:
            self.threads.add(threading.current_thread().name)
            self.chunks.append(chunk)
            if self.fail_every and len(self.chunks) % self.fail_every == 0:
                raise RuntimeError("callback failure on purpose")
            data = acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
            self.files.setdefault(chunk["file_name"], bytearray()).extend(data)
        return 0


def test_callback_order_a_gets_every_file_in_chunks(inited, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENACL_DUMP_CHUNK_BYTES", "5000")
    monkeypatch.chdir(tmp_path)
    collector = Collector()
    x = demo_input()
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.dump_reg_callback(collector, 0) == 0
    io = ModelIO()
    io.run(x)
    assert acl.mdl.dump_unreg_callback() is None
    assert acl.mdl.finalize_dump() == 0
    assert acl.mdl.unload(io.model_id) == 0
    assert dump_files(tmp_path) == []  # nothing on disk
    assert collector.threads == {"openacl-dump"}
    assert len(collector.files) == len(OPS)
    by_file: dict[str, list[dict]] = {}
    for chunk in collector.chunks:
        by_file.setdefault(chunk["file_name"], []).append(chunk)
        assert chunk["offset"] == -1 and chunk["flag"] == 0 and 0 < chunk["buf_len"] <= 5000
    for name, chunks in by_file.items():
        assert Path(name).is_absolute() and NAME.match(Path(name).name)
        assert [c["is_last_chunk"] for c in chunks] == [0] * (len(chunks) - 1) + [1]
    assert max(len(c) for c in by_file.values()) > 1  # the first convolution's output spans chunks
    want = intermediates(x)
    for data in collector.files.values():
        dumped = dump_reader.read_dump(bytes(data))
        node = next(n for n in OPS if n.name == dumped.op_name)
        np.testing.assert_array_equal(dumped.outputs[0], want[node.output[0]])


def test_callback_bytes_equal_the_disk_file(inited, tmp_path, monkeypatch):
    monkeypatch.setattr(naming, "now_us", lambda: 1_700_000_000_000_000)
    _, (x,) = model_dump(tmp_path)
    disk = {p.name: p.read_bytes() for p in dump_files(tmp_path / "dump")}
    collector = Collector()
    monkeypatch.setenv("OPENACL_DUMP_CHUNK_BYTES", "777")
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(str(tmp_path / "dump.json")) == 0
    assert acl.mdl.dump_reg_callback(collector, 0) == 0
    ModelIO().run(x)
    assert acl.mdl.finalize_dump() == 0
    acl.mdl.dump_unreg_callback()
    got = {Path(name).name: bytes(data) for name, data in collector.files.items()}
    assert got == disk


def test_callback_order_b_from_acl_init_two_models(ctx, tmp_path):
    cfg = write_config(tmp_path / "acl.json", dump_path=str(tmp_path), dump_list=[{"model_name": "tinynet"}])
    assert acl.init(cfg) == 0
    collector = Collector()
    assert acl.mdl.dump_reg_callback(collector, 0) == 0
    first, second = ModelIO(), ModelIO()
    first.run(demo_input(0))
    second.run(demo_input(1))
    assert acl.mdl.dump_unreg_callback() is None
    ids = {Path(name).parts[-3] for name in collector.files}
    assert ids == {str(first.model_id), str(second.model_id)}
    assert len(collector.files) == 2 * len(OPS)
    assert [p for p in dump_files(tmp_path) if p.name != "acl.json"] == []
    assert acl.mdl.unload(first.model_id) == 0 and acl.mdl.unload(second.model_id) == 0
    assert acl.finalize() == 0


def test_callback_that_raises_is_logged_and_execution_succeeds(inited, acl_log):
    collector = Collector(fail_every=2)
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.dump_reg_callback(collector, 0) == 0
    io = ModelIO()
    io.run(demo_input())
    acl.mdl.dump_unreg_callback()
    assert acl.mdl.finalize_dump() == 0
    assert len(collector.chunks) == len(OPS)
    raised = [r for r in acl_log.records if r.getMessage().startswith("dump callback raised on a chunk of")]
    assert len(raised) == len(OPS) // 2 and "callback failure on purpose" in raised[0].exc_text
    assert sink.writer.statistics()["chunks_failed"] >= len(OPS) // 2


def test_callback_may_call_acl_and_never_deadlocks_finalize_dump(inited):
    seen = []

    def callback(chunk):
        seen.append(acl.mdl.get_num_inputs(desc))  # re-entering the API from the dump thread
        acl.mdl.finalize_dump()  # even a misplaced finalize_dump does not hang

    assert acl.mdl.init_dump() == 0
    assert acl.mdl.dump_reg_callback(callback, 0) == 0
    io = ModelIO()
    desc = io.desc
    io.run(demo_input())
    acl.mdl.dump_unreg_callback()
    assert seen and seen[0] == 1


def test_init_dump_without_callback_dumps_nothing(inited, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert acl.mdl.init_dump() == 0
    ModelIO().run(demo_input())
    assert acl.mdl.finalize_dump() == 0
    assert dump_files(tmp_path) == []


def test_dump_callback_gets_this_steps_input_when_the_next_batch_is_written_at_once(inited, monkeypatch, tmp_path):
    """Regression (issue 15 item 11): model inputs are zero-copy views of the user's device memory and chunks
    are delivered after ``execute`` returns, so a program writing its next batch at once got it in this dump."""
    monkeypatch.chdir(tmp_path)
    release = threading.Event()
    files: dict[str, bytearray] = {}

    def on_chunk(chunk):
        release.wait(60)  # hold delivery until the program has overwritten its input buffer
        data = acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
        files.setdefault(chunk["file_name"], bytearray()).extend(data)

    model = [{"model_name": "tinynet"}]
    cfg = write_config(tmp_path / "dump.json", dump_path=str(tmp_path), dump_list=model, dump_mode="all")
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(cfg) == 0
    assert acl.mdl.dump_reg_callback(on_chunk, 0) == 0
    io = ModelIO()
    this_step, next_step = demo_input(0), demo_input(1)
    io.load_input(this_step)
    assert acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == 0
    io.load_input(next_step)  # right after execute returns, before any chunk is delivered
    release.set()
    assert acl.mdl.dump_unreg_callback() is None
    assert acl.mdl.finalize_dump() == 0
    first = OPS[0]
    (data,) = [d for name, d in files.items() if f".{dump_format.sanitize(first.name)}." in Path(name).name]
    dumped = dump_reader.read_dump(bytes(data))
    np.testing.assert_array_equal(dumped.inputs[0], this_step)
    want = intermediates(this_step)
    np.testing.assert_array_equal(dumped.outputs[0], want[first.output[0]])


def test_only_borrowed_parts_are_copied_for_a_callback():
    """The copy of item 11 is for borrowed parts only: the dump's own tensors still go out in place."""
    user = np.arange(8, dtype=np.float32)  # stands for the user's input buffer
    own = np.ones(sink.ChunkTarget.DIRECT_BYTES, np.uint8)  # a large output the dump owns
    got: dict[str, bytearray] = {}
    release = threading.Event()

    def on_chunk(chunk):
        release.wait(60)
        got.setdefault(chunk["file_name"], bytearray()).extend(
            acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
        )

    own_part = memoryview(own)
    parts = [b"head", memoryview(user.view(np.uint8)), own_part]
    file = sink.OutgoingFile("/nowhere", "f", parts, sum(map(len, parts)), None, on_chunk, frozenset({1}))
    sink.writer.submit_many([file])
    user[:] = -1  # the program reuses its buffer
    release.set()
    sink.writer.flush()
    assert isinstance(file.parts[1], bytes) and file.parts[2] is own_part
    assert bytes(got["/nowhere/f"]) == b"head" + np.arange(8, dtype=np.float32).tobytes() + own.tobytes()


def test_files_queued_without_a_wake_go_out_at_seal_or_flush():
    """``submit_many(wake=False)`` leaves the dump thread asleep; ``seal`` of the files' batch wakes it, and so does
    a ``flush`` that waits for them (no flush waits for a thread nobody woke)."""
    got: list[str] = []

    def on_chunk(chunk):
        if chunk["is_last_chunk"]:
            got.append(chunk["file_name"])

    sink.writer.flush()  # the thread exists and sleeps
    batch = sink.Batch()
    sealed = sink.OutgoingFile("/nowhere", "sealed", [b"x"], 1, batch, on_chunk)
    sink.writer.submit_many([sealed], wake=False)
    sink.writer.seal(batch)
    assert batch.done.wait(30) and got == ["/nowhere/sealed"]
    flushed = sink.OutgoingFile("/nowhere", "flushed", [b"y"], 1, sink.Batch(), on_chunk)
    sink.writer.submit_many([flushed], wake=False)
    sink.writer.flush()
    assert got == ["/nowhere/sealed", "/nowhere/flushed"]


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_forked_child_flush_waited_for_the_file_the_parents_dump_thread_was_writing(tmp_path):
    """The dump writer's state was the parent's in a forked child: a file the parent's dump thread was delivering at
    the fork counted as unfinished for ever there, and the child's flush after dumping its own file never returned.
    The writer is renewed at fork: the parent's files are the parent's to deliver, once."""
    in_callback, release = threading.Event(), threading.Event()
    got: list[str] = []

    def on_chunk(chunk):
        got.append(chunk["file_name"])
        in_callback.set()
        release.wait(60)

    parent = sink.OutgoingFile("/nowhere", "parent", [b"p"], 1, None, on_chunk)
    sink.writer.submit_many([parent])
    assert in_callback.wait(30)  # the parent's dump thread is inside the delivery

    def child() -> str:
        del got[:]
        release.set()  # the child's own callbacks do not wait
        sink.writer.submit_many([sink.OutgoingFile(str(tmp_path), "child", [b"c"], 1)])
        sink.writer.flush()
        return f"{got} {sorted(p.name for p in tmp_path.iterdir())}"

    try:
        assert in_child(child) == "[] ['child']"
    finally:
        release.set()
        sink.writer.flush()
    assert got == ["/nowhere/parent"]


def test_concurrent_dumped_steps_take_distinct_step_directories():
    """Regression (issue 15, structure): the dumped-step count was bumped on the model without a lock."""
    config = cfg_module.DumpConfig.default("/tmp")
    state = dump_session.ModelDump(dump_session.DumpSession(config, "test"), ops=[])
    state.ops = [OpRecord(0, "Relu", "relu", [], [0])]
    barrier = threading.Barrier(8)
    steps: list[int] = []

    def one() -> None:
        step = dump_session.DumpStep(1, "m", state, 0, None)
        barrier.wait()
        assert step.start()
        steps.append(step.step_dir)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(steps) == list(range(8)) and state.dumped_steps == 8


def test_model_holds_no_dump_state(inited, tmp_path):
    """Dump state lives in dump/session.py, keyed by model id; unloading a model drops it."""
    _, _ = model_dump(tmp_path)
    io = ModelIO()
    model = openacl_model.get(io.model_id)
    assert not hasattr(model, "dump") and not hasattr(model, "dumped_steps")
    assert acl.mdl.unload(io.model_id) == 0
    assert io.model_id not in dump_session._models


def test_regression_a_dumped_step_whose_output_buffer_is_its_input_dumped_the_written_output_as_input(inited, tmp_path):
    """A program may execute in place (the output dataset's buffer is the input's). The dumped step ran the plain
    run first, whose output overwrote the input before the observed run read it: the dump held x + 1 as the
    input and x + 2 as the output. The observed run now reads the inputs first."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["x", "one"], ["y"], name="add_one")],
        "inplace",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4])],
        [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4])],
        [onnx.numpy_helper.from_array(np.ones(4, np.float32), "one")],
    )
    path = tmp_path / "inplace.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), path)
    out = tmp_path / "dump"
    out.mkdir()
    cfg = write_config(
        tmp_path / "dump.json", dump_path=str(out), dump_list=[{"model_name": "inplace"}], dump_mode="all"
    )
    assert acl.mdl.init_dump() == 0
    assert acl.mdl.set_dump(cfg) == 0
    model_id, ret = acl.mdl.load_from_file(str(path))
    assert ret == 0
    x = np.arange(4, dtype=np.float32)
    ptr, ret = acl.rt.malloc(x.nbytes, 0)
    assert ret == 0
    host = x.tobytes()
    assert acl.rt.memcpy(ptr, x.nbytes, acl.util.bytes_to_ptr(host), x.nbytes, 1) == 0
    datasets = []
    for _ in range(2):  # input and output: one buffer
        dataset = acl.mdl.create_dataset()
        acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, x.nbytes))
        datasets.append(dataset)
    assert acl.mdl.execute(model_id, *datasets) == 0
    assert acl.mdl.finalize_dump() == 0
    np.testing.assert_array_equal(np.frombuffer(acl.util.ptr_to_bytes(ptr, x.nbytes), np.float32), x + 1)
    (file,) = dump_files(out)
    dumped = dump_reader.read_dump(file.read_bytes())
    np.testing.assert_array_equal(dumped.inputs[0], x)
    np.testing.assert_array_equal(dumped.outputs[0], x + 1)
    assert acl.mdl.unload(model_id) == 0
    assert acl.rt.free(ptr) == 0
