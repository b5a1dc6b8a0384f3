"""The operator record layout and the pipe writer, called directly (below the facade)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from openacl.errors import AclCode, AclError
from openacl.runtime import memory
from openacl.runtime.prof import opdesc
from openacl.runtime.prof.pipe import PipeEnd, PipeWriter


def _ops(n: int) -> list[opdesc.OpTime]:
    return [opdesc.OpTime(f"op{i}", "Conv" if i % 2 else "Relu", 1000 * i, 1000 * i + 7, 42) for i in range(n)]


def test_records_round_trip_every_field():
    data = opdesc.encode(7, 3, _ops(4))
    assert len(data) == 4 * opdesc.RECORD_SIZE == 320
    addr = memory.bytes_address(data)
    assert opdesc.op_num(addr, len(data)) == 4
    record = opdesc.record(addr, len(data), 3)
    assert (record.model_id, record.device_id, record.thread_id) == (7, 3, 42)
    assert (record.start_ns, record.end_ns, record.duration_ns) == (3000, 3007, 7)
    assert (opdesc.op_name(addr, len(data), 3), opdesc.op_type(addr, len(data), 3)) == ("op3", "Conv")


def test_the_name_table_holds_each_pair_once():
    first = opdesc.names.index("conv", "Conv")
    assert opdesc.names.index("conv", "Conv") == first
    assert opdesc.names.index("conv", "Relu") != first
    assert opdesc.names.pair(first) == ("conv", "Conv")
    with pytest.raises(AclError) as info:
        opdesc.names.pair(1 << 40)
    assert info.value.code == AclCode.ACL_ERROR_INVALID_PARAM


def test_truncation_never_splits_a_character():
    assert opdesc.truncated("ééé", 4) == "é"  # 3 bytes of room: one 2-byte character, not one and a half
    assert opdesc.string_len("ééé") == 7


def test_a_pipe_whose_reader_left_drops_its_records_with_one_warning(acl_log):
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    writer = PipeWriter(opdesc.RECORD_SIZE)
    end = PipeEnd.of(write_fd)
    assert end is not None
    writer.send(end, opdesc.encode(1, 0, _ops(3)))
    writer.send(end, opdesc.encode(1, 0, _ops(3)))
    writer.send(end, b"", close_after=True)
    assert writer.flush(timeout=10)
    warnings = [r for r in acl_log.records if "profiling pipe" in r.getMessage()]
    assert len(warnings) == 1
    assert PipeEnd.of(write_fd) is None  # closed as asked


@pytest.mark.subprocess
def test_a_forked_child_profiles_with_locks_of_its_own(tmp_path):
    program = textwrap.dedent(
        """
        import os, threading
        from openacl import process
        from openacl.runtime.prof import opdesc, session
        held = threading.Event()
        def hold():
            with opdesc.names._lock:
                held.set()
                threading.Event().wait(5)
        threading.Thread(target=hold, daemon=True).start()
        held.wait()
        parent_r, parent_w = os.pipe()
        session.subscribe(1, session.create_subscribe_config(1, 255, parent_w))
        assert session.active
        pid = os.fork()
        if pid == 0:
            if session.active or session.subscribed_models():
                os._exit(2)  # the parent's subscription came along
            r, w = os.pipe()
            end = session.PipeEnd.of(w)
            session.writer.send(end, opdesc.encode(1, 0, [opdesc.OpTime("a", "Relu", 1, 2)]), close_after=True)
            session.writer.flush(timeout=5)
            os._exit(0 if len(os.read(r, 1000)) == opdesc.RECORD_SIZE else 1)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
        """
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "child 0", result.stdout + result.stderr
