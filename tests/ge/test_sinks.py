"""The ready sinks, read back with TensorBoard's own event reader and with safetensors."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.util import tensor_util

from openacl import ge
from openacl.errors import GeStatus as S
from openacl.graph_engine import sinks
from tests.forking import in_child

F32 = np.float32


def read_events(logdir) -> EventAccumulator:
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0, "images": 0, "histograms": 0})
    acc.Reload()
    return acc


# ----- TensorBoard -----


def test_tensorboardx_uses_the_native_crc32c():
    assert sinks.native_crc32c() is True


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        ("loss[:Scalar]", ("loss", "Scalar")),
        ("conv/w[:Histogram]", ("conv/w", "Histogram")),
        ("img[:Image]", ("img", "Image")),
        ("t[:Tensor]", ("t", "Tensor")),
        ("plain", ("plain", "Tensor")),
        ("odd[:Foo]", ("odd[:Foo]", "Tensor")),
    ],
)
def test_parse_summary_key(key, parsed):
    assert sinks.parse_summary_key(key) == parsed


def test_every_kind_is_written_and_read_back(tmp_path):
    image = np.linspace(0, 1, 2 * 3 * 4 * 5, dtype=F32).reshape(2, 3, 4, 5)
    with ge.TensorBoardSummaryWriter(tmp_path) as writer:
        for step in range(3):
            params = {
                "loss[:Scalar]": np.array(0.5 * step, F32),
                "w[:Histogram]": np.arange(10, dtype=F32) + step,
                "img[:Image]": image,
                "act[:Tensor]": np.arange(6, dtype=np.int32).reshape(2, 3) * step,
                "raw": np.array([True, False]),
            }
            assert writer(1, params) == S.SUCCESS
    acc = read_events(tmp_path)
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(0, 0.0), (1, 0.5), (2, 1.0)]
    assert [e.step for e in acc.Histograms("w")] == [0, 1, 2]
    assert acc.Histograms("w")[2].histogram_value.max == 11
    images = acc.Images("img")  # tensorboardX tiles an NCHW batch into one grid image
    assert len(images) == 3 and (images[0].width, images[0].height) == (2 * 5, 4)
    last = acc.Tensors("act")[-1]
    assert last.step == 2
    np.testing.assert_array_equal(tensor_util.make_ndarray(last.tensor_proto), np.arange(6).reshape(2, 3) * 2)
    np.testing.assert_array_equal(tensor_util.make_ndarray(acc.Tensors("raw")[0].tensor_proto), [True, False])


def test_a_bad_entry_is_logged_and_the_others_are_written(tmp_path, ge_log):
    with ge.TensorBoardSummaryWriter(tmp_path) as writer:
        status = writer(4, {"bad[:Scalar]": np.ones(2, F32), "good[:Scalar]": np.array(1.0, F32)})
    assert status == S.FAILED
    assert "'bad[:Scalar]' of graph 4 (step 0) not written: a Scalar summary needs one value" in ge_log.text
    assert [e.value for e in read_events(tmp_path).Scalars("good")] == [1.0]


def test_events_are_flushed_without_close(tmp_path):
    writer = ge.TensorBoardSummaryWriter(tmp_path)
    try:
        assert writer(1, {"x[:Scalar]": np.array(3.0, F32)}) == S.SUCCESS
        deadline = time.monotonic() + 10  # the writer flushes within flush_secs=1; this is only a safety net
        while not read_events(tmp_path).Tags()["scalars"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [e.value for e in read_events(tmp_path).Scalars("x")] == [3.0]
    finally:
        writer.close()


def test_as_the_summary_callback_of_a_session(tmp_path):
    assert ge.ge_initialize() == 0
    sess = ge.Session({"ge.graphRunMode": "1"})
    g = ge.Graph("g")
    x = g.data("x", index=0, shape=[], dtype="float32")
    g.summary("x2[:Scalar]", g.op("Mul", [x, x]))
    with ge.TensorBoardSummaryWriter(tmp_path) as writer:
        assert sess.register_callback_func("Summary", writer) == S.SUCCESS
        assert sess.add_graph(1, g) == S.SUCCESS
        for value in (1, 2, 3):
            assert sess.run_graph(1, [np.array(value, F32)]) == ([], S.SUCCESS)
    assert [(e.step, e.value) for e in read_events(tmp_path).Scalars("x2")] == [(0, 1.0), (1, 4.0), (2, 9.0)]


# ----- safetensors -----


def names(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_checkpoint_contents_and_metadata(tmp_path):
    writer = ge.SafetensorsCheckpointWriter(tmp_path / "ckpt")
    w = np.arange(6, dtype=F32).reshape(2, 3)
    params = {"w": w.T, "b": np.array([1.5], np.float64)}  # a non-contiguous view is written as its values
    before = time.time()
    assert writer(3, params) == S.SUCCESS
    writer.flush()
    path = tmp_path / "ckpt" / "3-0.safetensors"
    assert names(tmp_path / "ckpt") == ["3-0.safetensors"]
    loaded = load_file(path)
    np.testing.assert_array_equal(loaded["w"], w.T)
    np.testing.assert_array_equal(loaded["b"], [1.5])
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata()
    assert meta["graph_id"] == "3" and meta["step"] == "0"
    assert before <= float(meta["time"]) <= time.time()


def test_keeps_the_newest_per_graph_and_continues_the_steps(tmp_path):
    writer = ge.SafetensorsCheckpointWriter(tmp_path, keep=2)
    for step in range(4):
        assert writer(1, {"v": np.array([step], F32)}) == S.SUCCESS
    assert writer(2, {"v": np.zeros(1, F32)}) == S.SUCCESS
    writer.flush()
    assert names(tmp_path) == ["1-2.safetensors", "1-3.safetensors", "2-0.safetensors"]
    with ge.SafetensorsCheckpointWriter(tmp_path, keep=2) as again:
        assert again(1, {"v": np.array([9], F32)}) == S.SUCCESS
    assert names(tmp_path) == ["1-3.safetensors", "1-4.safetensors", "2-0.safetensors"]
    assert [p.name for p in again.checkpoints(1)] == ["1-3.safetensors", "1-4.safetensors"]


def test_writes_are_fsynced_file_then_directory(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(sinks.os, "fsync", fsync)
    writer = ge.SafetensorsCheckpointWriter(tmp_path)
    assert writer(1, {"v": np.zeros(1, F32)}) == S.SUCCESS
    writer.flush()
    assert len(synced) == 2
    assert synced[0].startswith(str(tmp_path / ".1-0.safetensors.")) and synced[0].endswith(".tmp")
    assert synced[1] == str(tmp_path)


@pytest.mark.parametrize("broken", ["replace", "save_file", "fsync"])
def test_a_failed_write_leaves_the_previous_checkpoints_intact(tmp_path, monkeypatch, ge_log, broken):
    writer = ge.SafetensorsCheckpointWriter(tmp_path, keep=2)
    for step in range(2):
        assert writer(1, {"v": np.array([step], F32)}) == S.SUCCESS
    writer.flush()
    before = {name: (tmp_path / name).read_bytes() for name in names(tmp_path)}

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    target = sinks.safetensors_numpy if broken == "save_file" else sinks.os
    monkeypatch.setattr(target, broken, fail)
    staged = writer(1, {"v": np.array([2], F32)})
    writer.flush()
    assert staged == (S.FAILED if broken == "save_file" else S.SUCCESS)  # commit failures come after the call
    assert "checkpoint 1-2 not written (earlier checkpoints kept)" in ge_log.text
    assert {name: (tmp_path / name).read_bytes() for name in names(tmp_path)} == before, "no temp file, no pruning"


def test_foreground_mode_commits_inside_the_callback(tmp_path, monkeypatch):
    writer = ge.SafetensorsCheckpointWriter(tmp_path, background=False)
    assert writer(1, {"v": np.zeros(1, F32)}) == S.SUCCESS
    assert names(tmp_path) == ["1-0.safetensors"]

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sinks.os, "replace", fail)
    assert writer(1, {"v": np.zeros(1, F32)}) == S.FAILED
    assert names(tmp_path) == ["1-0.safetensors"]


def test_checkpoints_commit_in_order_off_the_callers_thread(tmp_path, monkeypatch):
    threads = []
    real_replace = os.replace

    def replace(src, dst):
        threads.append(threading.current_thread().name)
        real_replace(src, dst)

    monkeypatch.setattr(sinks.os, "replace", replace)
    with ge.SafetensorsCheckpointWriter(tmp_path, keep=10) as writer:
        for step in range(5):
            assert writer(1, {"v": np.array([step], F32)}) == S.SUCCESS
    assert threads == ["openacl-ge-checkpoint"] * 5
    assert names(tmp_path) == [f"1-{step}.safetensors" for step in range(5)]
    for step in range(5):
        assert load_file(tmp_path / f"1-{step}.safetensors")["v"][0] == step


def test_keep_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="keep must be an int >= 1"):
        ge.SafetensorsCheckpointWriter(tmp_path, keep=0)


def test_temporaries_of_a_killed_writer_are_removed_and_a_live_ones_kept(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".1-3.safetensors.{dead_pid}.0badf00d.tmp"
    live = tmp_path / f".1-4.safetensors.{os.getppid()}.0badf00d.tmp"
    other = tmp_path / ".notes.tmp"
    for path in (stale, live, other):
        path.write_bytes(b"partial")
    ge.SafetensorsCheckpointWriter(tmp_path)
    assert not stale.exists()
    assert live.exists() and other.exists()


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_forked_childs_checkpoint_flush_waited_for_the_parents_commit(tmp_path, monkeypatch):
    """The checkpoint committer's state was the parent's in a forked child: forked while the parent's committer
    thread was committing, the child counted it as running, started no thread for its own checkpoint, and its flush
    never returned. The committer is renewed at fork: the parent's commits are the parent's."""
    committing, release = threading.Event(), threading.Event()
    real_replace = os.replace

    def replace(src, dst):
        if not committing.is_set():  # the parent's first commit waits inside, on the committer thread
            committing.set()
            release.wait(60)
        real_replace(src, dst)

    monkeypatch.setattr(sinks.os, "replace", replace)
    with ge.SafetensorsCheckpointWriter(tmp_path) as writer:
        assert writer(1, {"v": np.array([0], F32)}) == S.SUCCESS
        assert committing.wait(30)

        def child() -> str:
            assert writer(1, {"v": np.array([1], F32)}) == S.SUCCESS
            writer.flush()
            return " ".join(name for name in names(tmp_path) if not name.startswith("."))  # the parent's temporary

        try:
            assert in_child(child) == "1-1.safetensors"
        finally:
            release.set()
    assert names(tmp_path) == ["1-0.safetensors", "1-1.safetensors"]


def _scalar_counts_by_dots(directory) -> dict[int, dict[str, int]]:
    """Each events file's scalar tags and how many values each has, by the dots in the file's name (a forked
    child's name has one more: its pid)."""
    tags = {}
    for path in directory.glob("events.out.tfevents.*"):
        acc = EventAccumulator(str(path), size_guidance={"scalars": 0})
        acc.Reload()
        tags[path.name.count(".")] = {tag: len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"]}
    return tags


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_forked_child_closing_its_summary_writer_stopped_the_parents(tmp_path):
    """A forked child's inherited tensorboardX writer queued into a pipe that the parent's writer thread reads: the
    child's ``close`` stopped the parent's thread, whose next events then blocked for ever once its queue was full,
    and the child's events went into the parent's file. Renewed at fork, the child writes a file of its own."""
    writer = ge.TensorBoardSummaryWriter(tmp_path, flush_secs=0.1)
    assert writer(1, {"loss[:Scalar]": F32(0)}) == S.SUCCESS

    def child() -> str:
        for step in range(3):
            assert writer(1, {"child[:Scalar]": F32(step)}) == S.SUCCESS
        writer.close()
        return "closed"

    assert in_child(child) == "closed"
    done = threading.Event()

    def parent() -> None:
        for step in range(40):  # past tensorboardX's queue of 10: blocked for ever when its thread was stopped
            writer(1, {"loss[:Scalar]": F32(step)})
        writer.close()
        done.set()

    threading.Thread(target=parent, daemon=True).start()
    if not done.wait(60):
        pytest.fail("the parent's summary writer hangs after its forked child closed the writer it inherited")
    tags = _scalar_counts_by_dots(tmp_path)
    assert tags == {4: {"loss": 41}, 5: {"child": 3}}  # the child's file name ends with its pid


GE_ONLY_FORK = """
import os, sys
import numpy as np
from openacl import ge

writer = ge.TensorBoardSummaryWriter(sys.argv[1])
writer(1, {"loss[:Scalar]": np.float32(0)})
pid = os.fork()
if pid == 0:
    writer.close()
    os._exit(0)
os.waitpid(pid, 0)
for step in range(40):
    writer(1, {"loss[:Scalar]": np.float32(step)})
writer.close()
print("parent done")
"""


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_ge_only_program_had_no_fork_hook(tmp_path):
    """``from openacl import ge`` without ``acl`` installed neither the at-fork hook nor the exit hook (only
    ``acl`` imported the process module), so a GE-only program that forked kept the parent's writer threads."""
    done = subprocess.run(
        [sys.executable, "-c", GE_ONLY_FORK, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "parent done"


CHILD_EXITS = """
import os, sys, time
import numpy as np
from openacl import ge

writer = ge.TensorBoardSummaryWriter(sys.argv[1], flush_secs=0.1)
for step in range(5):
    writer(1, {"loss[:Scalar]": np.float32(step)})
pid = os.fork()
if pid == 0:
    writer(1, {"child[:Scalar]": np.float32(1)})
    sys.exit(0)  # a normal exit: tensorboardX's exit hooks run, for the inherited writer too
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    time.sleep(0.05)
else:
    os.kill(pid, 9)
    sys.exit("the forked child hung at exit")
writer(1, {"loss[:Scalar]": np.float32(5)})
writer.close()
print("child exit status", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_a_forked_child_hung_at_exit_in_its_inherited_summary_writers_close(tmp_path):
    """tensorboardX closes its writers at exit; in a forked child the inherited one put to the parent's queue,
    whose lock the fork had copied held, and the child never exited. The inherited writer is disowned at fork:
    the child exits, and both files hold their events."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD_EXITS, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child exit status 0"
    tags = _scalar_counts_by_dots(tmp_path)
    assert tags == {4: {"loss": 6}, 5: {"child": 1}}  # the child's file name ends with its pid
