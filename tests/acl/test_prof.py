"""``acl.prof`` as a profiling program uses it: sessions that write msprof's CSVs, model subscriptions read from
a pipe, the record getters, stamps and ranges, and every bad argument's code or TypeError."""

from __future__ import annotations

import csv
import json
import os
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest

import acl
from openacl import trace
from openacl.errors import AclCode
from openacl.model.model import DEMO_MODEL
from openacl.runtime.prof import session as prof_session
from tests.model_io import ModelIO, demo_input, reference

INVALID = AclCode.ACL_ERROR_INVALID_PARAM
TASK_TIME = 0x0002
ACL_API = 0x0001
AICORE_METRICS = 0x0004
AICORE_NONE = 0xFF
DEMO_OPS = [(n.name, n.op_type) for n in onnx.load(DEMO_MODEL).graph.node]


@pytest.fixture
def io(ctx):
    return ModelIO()


def _files(result: Path, pattern: str) -> list[Path]:
    return sorted(result.glob(f"PROF_*/mindstudio_profiler_output/{pattern}"))


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _profile(tmp_path: Path, body, data_type_config: int = ACL_API | TASK_TIME | AICORE_METRICS) -> Path:
    result = tmp_path / "prof"
    assert acl.prof.init(str(result)) == 0
    config = acl.prof.create_config([0], 0, 0, data_type_config)
    assert config != 0
    assert acl.prof.start(config) == 0
    body()
    assert acl.prof.stop(config) == 0
    assert acl.prof.destroy_config(config) == 0
    assert acl.prof.finalize() == 0
    return result


def test_regression_a_profiling_program_died_with_attribute_error():
    """``acl.prof`` did not exist: the first ``acl.prof.init`` raised AttributeError."""
    assert acl.prof is acl.__dict__["prof"]
    names = {name for name in dir(acl.prof) if not name.startswith("_")}
    assert set(acl.prof.__all__) <= names and len(acl.prof.__all__) == 36
    assert all(getattr(acl.prof, name).acl_name == f"acl.prof.{name}" for name in acl.prof.__all__)


# ----- sessions and msprof's summaries -----


def test_a_profiled_loop_lists_every_operator_of_every_execution(tmp_path, io):
    x = demo_input()
    outputs = []
    result = _profile(tmp_path, lambda: [outputs.append(io.run(x)) for _ in range(3)])
    (summary,) = _files(result, "op_summary_*.csv")
    rows = _rows(summary)
    assert list(rows[0]) == list(prof_session.summary.OP_SUMMARY_COLUMNS)
    assert len(rows) == 3 * len(DEMO_OPS)
    for infer in ("1", "2", "3"):
        assert [(r["Op Name"], r["OP Type"]) for r in rows if r["Infer ID"] == infer] == DEMO_OPS
    assert {r["Model ID"] for r in rows} == {str(io.model_id)}
    assert {r["Task Type"] for r in rows} == {"AI_CPU"}
    assert {r["aicore_time(us)"] for r in rows} == {r["total_cycles"] for r in rows} == {"N/A"}
    assert all(float(r["Task Duration(us)"]) >= 0 for r in rows)
    np.testing.assert_allclose(outputs[-1][0], reference(DEMO_MODEL, x)[0], rtol=1e-5, atol=1e-6)


def test_task_time_lists_copies_model_executions_and_operators(tmp_path, io, stream):
    x = demo_input()

    def body():
        io.load_input(x, stream)
        assert acl.mdl.execute_async(io.model_id, io.inputs[0], io.outputs[0], stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0

    result = _profile(tmp_path, body)
    (task_time,) = _files(result, "task_time_*.csv")
    rows = _rows(task_time)
    assert list(rows[0]) == list(prof_session.summary.TASK_TIME_COLUMNS)
    kinds = [r["kernel_type"] for r in rows]
    assert kinds.count("MEMCPY_ASYNC") == 1 and kinds.count("MODEL_EXECUTE") == 1
    assert kinds.count("AI_CPU") == len(DEMO_OPS)
    starts = [float(r["task_start(us)"]) for r in rows]
    assert starts == sorted(starts)
    (summary,) = _files(result, "op_summary_*.csv")
    stream_id = next(r["stream_id"] for r in rows if r["kernel_type"] == "MODEL_EXECUTE")
    assert {r["Stream ID"] for r in _rows(summary)} == {stream_id}


def test_the_timeline_holds_every_operator(tmp_path, io):
    result = _profile(tmp_path, lambda: io.run(demo_input()))
    (timeline,) = _files(result, "msprof_*.json")
    events = json.loads(timeline.read_text())["traceEvents"]
    ops = [e["name"] for e in events if e.get("cat") == "op"]
    assert ops == [name for name, _ in DEMO_OPS]
    assert trace.recorder is None  # the window's own recorder stopped with it


def test_a_window_without_task_times_writes_no_summaries_and_runs_unprofiled(tmp_path, io):
    seen = []
    result = _profile(tmp_path, lambda: seen.append((prof_session.active, io.run(demo_input()))), ACL_API)
    assert seen[0][0] is False
    assert _files(result, "*.csv") == []
    assert len(_files(result, "msprof_*.json")) == 1


def test_operators_before_start_are_not_in_the_window(tmp_path, io):
    io.run(demo_input())
    result = _profile(tmp_path, lambda: io.run(demo_input()))
    (summary,) = _files(result, "op_summary_*.csv")
    assert {r["Infer ID"] for r in _rows(summary)} == {"2"}


def test_session_codes(tmp_path, acl_log):
    config = acl.prof.create_config([0], 0, 0, TASK_TIME)
    assert acl.prof.start(config) == AclCode.ACL_ERROR_PROF_NOT_RUN
    assert acl.prof.stop(config) == AclCode.ACL_ERROR_PROF_NOT_RUN
    assert acl.prof.finalize() == AclCode.ACL_ERROR_PROF_NOT_RUN
    assert acl.prof.init("") == INVALID
    assert acl.prof.init(str(tmp_path)) == 0
    assert acl.prof.init(str(tmp_path)) == AclCode.ACL_ERROR_REPEAT_INITIALIZE
    assert acl.prof.stop(config) == AclCode.ACL_ERROR_PROF_NOT_RUN
    assert acl.prof.start(config) == 0
    other = acl.prof.create_config([0, 1], 0, 0, TASK_TIME)
    assert acl.prof.start(other) == AclCode.ACL_ERROR_PROF_ALREADY_RUN
    assert acl.prof.destroy_config(config) == INVALID  # running
    assert acl.prof.start(0) == INVALID
    assert acl.prof.finalize() == 0  # stops the running window, writing its files
    assert len(_files(tmp_path, "op_summary_*.csv")) == 1
    assert acl.prof.destroy_config(config) == 0
    assert acl.prof.destroy_config(config) == INVALID
    assert any(r.getMessage().startswith("acl.prof.start: ACL_ERROR_PROF_ALREADY_RUN") for r in acl_log.records)


def test_init_refuses_a_path_that_cannot_be_a_directory(tmp_path):
    plain = tmp_path / "file"
    plain.write_text("")
    assert acl.prof.init(str(plain)) == INVALID
    assert acl.prof.init(str(plain / "below")) == INVALID


@pytest.mark.parametrize(
    "args",
    [([], 0, 0, TASK_TIME), ([99], 0, 0, TASK_TIME), ([0, 0], 0, 0, TASK_TIME), ([0], 256, 0, TASK_TIME),
     ([0], 0, 0x1000, TASK_TIME)],
    ids=["empty", "no-such-device", "repeated", "metrics", "events"],
)  # fmt: skip
def test_create_config_refuses_bad_values_with_0(acl_log, args):
    assert acl.prof.create_config(*args) == 0
    assert [r.getMessage().split(":")[0] for r in acl_log.records] == ["acl.prof.create_config"]


@pytest.mark.parametrize(
    ("fn", "args", "error"),
    [
        ("create_config", ((0,), 0, 0, 2), TypeError),
        ("create_config", (["0"], 0, 0, 2), TypeError),
        ("create_config", ([-1], 0, 0, 2), ValueError),
        ("create_config", ([0], 0, 0), TypeError),
        ("init", (1,), TypeError),
        ("init", (), TypeError),
        ("start", ("config",), TypeError),
        ("stop", (1.0,), TypeError),
        ("model_subscribe", (1,), TypeError),
        ("create_subscribe_config", (256, 0, 1), TypeError),
        ("get_op_num", (1,), TypeError),
        ("get_op_type", (1, 80, 0), TypeError),
        ("get_op_start", (1, 80, "0"), TypeError),
        ("set_stamp_trace_message", (1, b"m", 1), TypeError),
        ("mark_ex", (1, 0), TypeError),
        ("set_config", ("1", "x"), TypeError),
        ("range_stop", (None,), TypeError),
    ],
)
def test_unparsable_arguments_raise(fn, args, error):
    with pytest.raises(error):
        getattr(acl.prof, fn)(*args)


def test_set_config_records_known_types_only():
    assert acl.prof.set_config(1, "200MB") == 0
    assert prof_session.settings() == {1: "200MB"}
    assert acl.prof.set_config(0, "x") == INVALID
    assert acl.prof.set_config(1, "") == INVALID


# ----- model subscriptions -----


class PipeReader:
    """Reads a subscription's pipe until its write end closes, as Ascend's samples do."""

    def __init__(self, fd: int, per_read: int = 7) -> None:
        self.fd = fd
        self.chunks: list[bytes] = []
        size, ret = acl.prof.get_op_desc_size()
        assert ret == 0
        self.thread = threading.Thread(target=self._run, args=(size * per_read,))
        self.thread.start()

    def _run(self, n: int) -> None:
        while data := os.read(self.fd, n):
            self.chunks.append(data)

    def records(self) -> list[tuple]:
        found = []
        for data in self.chunks:
            ptr = acl.util.bytes_to_ptr(data)
            count, ret = acl.prof.get_op_num(ptr, len(data))
            assert ret == 0
            for i in range(count):
                name, ret = acl.prof.get_op_name(ptr, len(data), i, 4096)
                op_type, ret2 = acl.prof.get_op_type(ptr, len(data), i, 4096)
                assert ret == ret2 == 0
                found.append(
                    (
                        acl.prof.get_model_id(ptr, len(data), i),
                        name,
                        op_type,
                        acl.prof.get_op_start(ptr, len(data), i),
                        acl.prof.get_op_end(ptr, len(data), i),
                        acl.prof.get_op_duration(ptr, len(data), i),
                    )
                )
        return found


def _subscribe(model_id: int, time_info: int = 1) -> tuple[int, int, PipeReader]:
    read_fd, write_fd = os.pipe()
    config = acl.prof.create_subscribe_config(time_info, AICORE_NONE, write_fd)
    assert config != 0
    assert acl.prof.model_subscribe(model_id, config) == 0
    return config, write_fd, PipeReader(read_fd)


def test_subscribed_records_reach_the_pipe_and_it_closes_at_unsubscribe(io):
    config, _, reader = _subscribe(io.model_id)
    for _ in range(2):
        io.run(demo_input())
    assert acl.prof.model_un_subscribe(io.model_id) == 0
    reader.thread.join(10)
    assert not reader.thread.is_alive()  # EOF: the write end was closed
    os.close(reader.fd)
    records = reader.records()
    assert [(m, n, t) for m, n, t, *_ in records] == [(io.model_id, n, t) for n, t in DEMO_OPS * 2]
    for *_, start, end, duration in records:
        assert 0 < start <= end and duration == end - start
    assert acl.prof.destroy_subscribe_config(config) == 0


def test_subscribe_without_time_info_gives_names_and_zero_times(io):
    _, _, reader = _subscribe(io.model_id, time_info=0)
    io.run(demo_input())
    assert acl.prof.model_unsubscribe(io.model_id) == 0
    reader.thread.join(10)
    os.close(reader.fd)
    records = reader.records()
    assert [n for _, n, *_ in records] == [n for n, _ in DEMO_OPS]
    assert {r[3:] for r in records} == {(0, 0, 0)}


def test_subscription_codes(io):
    config, _, reader = _subscribe(io.model_id)
    assert acl.prof.model_subscribe(io.model_id, config) == AclCode.ACL_ERROR_PROF_REPEAT_SUBSCRIBE
    assert acl.prof.model_subscribe(io.model_id + 100, config) == AclCode.ACL_ERROR_INVALID_MODEL_ID
    assert acl.prof.model_subscribe(io.model_id, 0) == INVALID
    assert acl.prof.model_unsubscribe(io.model_id + 100) == INVALID
    assert acl.prof.model_unsubscribe(io.model_id) == 0
    assert acl.prof.model_unsubscribe(io.model_id) == INVALID
    reader.thread.join(10)
    os.close(reader.fd)
    assert acl.prof.destroy_subscribe_config(config) == 0
    assert acl.prof.destroy_subscribe_config(config) == INVALID


@pytest.mark.parametrize("args", [(2, AICORE_NONE, 1), (1, 256, 1), (1, AICORE_NONE, 10_000), (1, 0, -1)])
def test_create_subscribe_config_refuses_bad_values_with_0(args):
    assert acl.prof.create_subscribe_config(*args) == 0


def test_unsubscribe_never_closes_a_descriptor_reused_for_another_file(io, tmp_path):
    _, write_fd, reader = _subscribe(io.model_id)
    os.close(write_fd)  # the program closes its end itself, and the number is reused for another file
    with open(tmp_path / "other", "w") as other:
        assert other.fileno() == write_fd
        assert acl.prof.model_unsubscribe(io.model_id) == 0
        assert prof_session.writer.flush(timeout=10)
        other.write("still open")  # flushes on close: raises if the descriptor was closed under it
    reader.thread.join(10)
    os.close(reader.fd)


def test_a_full_pipe_never_blocks_execution(io):
    """Nobody reads while the model runs: executions and unsubscribe return; the records arrive later."""
    read_fd, write_fd = os.pipe()
    config = acl.prof.create_subscribe_config(1, AICORE_NONE, write_fd)
    assert acl.prof.model_subscribe(io.model_id, config) == 0
    runs = 8
    for _ in range(runs):
        io.run(demo_input())
    pipe_size = 65536
    records_needed = pipe_size // 80 + 1
    extra = -(-records_needed // len(DEMO_OPS)) - runs
    for _ in range(max(extra, 0)):
        io.run(demo_input())
    assert acl.prof.model_unsubscribe(io.model_id) == 0  # returns with the pipe full
    reader = PipeReader(read_fd)
    reader.thread.join(30)
    assert not reader.thread.is_alive()
    os.close(read_fd)
    assert len(reader.records()) == len(DEMO_OPS) * max(runs + extra, runs)


def test_reset_drops_records_a_pipe_never_took_with_one_warning(io, acl_log):
    read_fd, write_fd = os.pipe()
    config = acl.prof.create_subscribe_config(1, AICORE_NONE, write_fd)
    assert acl.prof.model_subscribe(io.model_id, config) == 0
    for _ in range(80):
        io.run(demo_input())
    assert acl.prof.model_unsubscribe(io.model_id) == 0
    from openacl import process

    process.reset(force=True)
    assert [r for r in acl_log.records if "were not written to their pipes" in r.getMessage()]
    os.close(read_fd)


# ----- the record getters -----


@pytest.fixture
def records(io) -> bytes:
    """Two executions' records, as read from the pipe."""
    _, _, reader = _subscribe(io.model_id)
    io.run(demo_input())
    assert acl.prof.model_unsubscribe(io.model_id) == 0
    reader.thread.join(10)
    os.close(reader.fd)
    return b"".join(reader.chunks)


def test_getters_read_every_field(records, io):
    ptr, n = acl.util.bytes_to_ptr(records), len(records)
    assert acl.prof.get_op_desc_size() == (80, 0)
    assert acl.prof.get_op_num(ptr, n) == (len(DEMO_OPS), 0)
    name, op_type = DEMO_OPS[0]
    assert acl.prof.get_op_name_v2(ptr, n, 0) == (name, 0)
    assert acl.prof.get_op_type_v2(ptr, n, 0) == (op_type, 0)
    assert acl.prof.get_op_name_len(ptr, n, 0) == (len(name) + 1, 0)
    assert acl.prof.get_op_type_len(ptr, n, 0) == (len(op_type) + 1, 0)
    assert acl.prof.get_op_name(ptr, n, 0, 4) == (name[:3], 0)  # a short buffer truncates, NUL included
    assert acl.prof.get_model_id(ptr, n, 0) == io.model_id


def test_getters_refuse_bad_records_indexes_and_lengths(records, acl_log):
    ptr, n = acl.util.bytes_to_ptr(records), len(records)
    count = n // 80
    assert acl.prof.get_op_num(ptr, n - 1) == (0, INVALID)
    assert acl.prof.get_op_num(ptr, 0) == (0, INVALID)
    assert acl.prof.get_op_num(0x10, 80) == (0, INVALID)
    assert acl.prof.get_op_start(ptr, n, count) == 0
    assert acl.prof.get_op_end(ptr, n, count) == 0
    assert acl.prof.get_op_duration(ptr, n, count) == 0
    assert acl.prof.get_model_id(ptr, n, count) == 0
    assert acl.prof.get_op_type(ptr, n, count, 64) == ("", INVALID)
    assert acl.prof.get_op_name(ptr, n, 0, 4097) == ("", INVALID)
    assert acl.prof.get_op_name(ptr, n, 0, 0) == ("", INVALID)
    assert acl.prof.get_op_name_v2(ptr, n, count) == (None, INVALID)
    assert acl.prof.get_op_type_len(ptr, n, count) == (0, INVALID)
    damaged = bytearray(records)
    damaged[20] ^= 0xFF
    bad = bytes(damaged)
    assert acl.prof.get_op_num(acl.util.bytes_to_ptr(bad), len(bad)) == (0, INVALID)
    assert acl.prof.get_op_start(acl.util.bytes_to_ptr(bad), len(bad), 0) == 0
    messages = [r.getMessage() for r in acl_log.records]
    assert any(m.startswith("acl.prof.get_op_num: ACL_ERROR_INVALID_PARAM") and "signature" in m for m in messages)


# ----- stamps, marks, ranges and steps -----


def test_marks_pushes_and_ranges_land_on_the_timeline(ctx, stream):
    rec = trace.start()
    stamp = acl.prof.create_stamp()
    assert stamp != 0
    assert acl.prof.set_stamp_trace_message(stamp, "warm-up", len("warm-up")) == 0
    assert acl.prof.mark(stamp) == 0
    assert acl.prof.push(stamp) == 0
    assert acl.prof.pop() == 0
    range_id, ret = acl.prof.range_start(stamp)
    assert ret == 0 and range_id > 0
    assert acl.prof.range_stop(range_id) == 0
    assert acl.prof.mark_ex("on the stream", stream) == 0
    step = acl.prof.create_step_info()
    assert acl.prof.get_step_timestamp(step, 0, stream) == 0
    assert acl.prof.get_step_timestamp(step, 1, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    trace.stop()
    names = [s.name for s in rec.spans if s.category == "msproftx"]
    assert names == ["warm-up", "warm-up", "warm-up", "on the stream", "step"]
    assert acl.prof.destroy_step_info(step) is None
    assert acl.prof.destroy_stamp(stamp) is None


def test_stamp_codes(ctx, acl_log):
    stamp = acl.prof.create_stamp()
    assert acl.prof.pop() == INVALID
    assert acl.prof.range_stop(12345) == INVALID
    assert acl.prof.set_stamp_trace_message(stamp, "abc", 5) == INVALID
    assert acl.prof.set_stamp_trace_message(stamp, "abc", 0) == INVALID
    assert acl.prof.set_stamp_trace_message(stamp, "abc", 4) == 0  # the C length may count the NUL
    assert acl.prof.mark(0) == INVALID
    assert acl.prof.push(0) == INVALID
    assert acl.prof.mark_ex("", 0) == INVALID
    step = acl.prof.create_step_info()
    assert acl.prof.get_step_timestamp(step, 2, 0) == INVALID
    assert acl.prof.get_step_timestamp(0, 0, 0) == INVALID
    assert acl.prof.destroy_stamp(stamp) is None
    assert acl.prof.destroy_stamp(stamp) is None  # void in C: the second one is logged only
    assert any(r.getMessage().startswith("acl.prof.destroy_stamp: ACL_ERROR_INVALID_PARAM") for r in acl_log.records)


# ----- process life -----


def test_acl_finalize_writes_running_windows_and_closes_subscription_pipes(tmp_path):
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    io = ModelIO()
    assert acl.prof.init(str(tmp_path)) == 0
    config = acl.prof.create_config([0], 0, 0, TASK_TIME)
    assert acl.prof.start(config) == 0
    _, _, reader = _subscribe(io.model_id)
    io.run(demo_input())
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
    reader.thread.join(10)
    assert not reader.thread.is_alive()
    os.close(reader.fd)
    assert len(reader.records()) == len(DEMO_OPS)
    (summary,) = _files(tmp_path, "op_summary_*.csv")
    assert len(_rows(summary)) == len(DEMO_OPS)
    assert acl.prof.init(str(tmp_path)) == 0  # finalize ended the session too
