"""``openacl check``'s bookkeeping: each kind found, at the program's own lines; off, nothing is recorded."""

from __future__ import annotations

import ctypes
import inspect
import threading
import weakref

import pytest

import acl
from openacl.media import vdec
from openacl.runtime import checker, memory
from tests.acl.test_callbacks import ReportThread
from tests.conftest import hold_stream
from tests.forking import in_child
from tests.media.helpers import nv12_pic
from tests.media.test_vdec import Channel
from tests.media.test_venc import Encoder
from tests.media.video_clips import H264_MAIN, encode_clip

THIS = __file__


def here() -> int:
    """The caller's line."""
    return inspect.currentframe().f_back.f_lineno


def site_lines(finding: checker.Finding) -> dict[str, int]:
    """The innermost frame's line of each site, where that frame is this file's."""
    return {label: frames[0][1] for label, frames in finding.sites if frames and frames[0][0] == THIS}


def only(kind: str) -> checker.Finding:
    found = [f for f in checker.findings() if f.kind == kind]
    assert len(found) == 1, checker.findings()
    return found[0]


def test_off_records_nothing(ctx):
    assert not checker.enabled
    ptr, _ = acl.rt.malloc(64, 0)
    stream, _ = acl.rt.create_stream()
    assert acl.rt.free(ptr) == 0
    assert acl.rt.free(ptr) != 0
    assert acl.rt.destroy_stream(stream) == 0
    checker.report_leaks("test")
    assert checker.findings() == [] and not checker._live and not checker._freed


def test_site_is_the_programs_own_frames(checking):
    frames = checker.site()
    assert frames[0][:2] == (THIS, here() - 1)
    assert not any("/openacl/" in file for file, _, _ in frames)


def test_overrun_names_the_access_and_the_allocation(checking, ctx, capsys):
    small, _ = acl.rt.malloc(48, 0)
    alloc_line = here() - 1
    src, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy(small, 64, src, 64, 1) == 0
    access_line = here() - 1
    finding = only("overrun")
    assert site_lines(finding) == {"access": access_line, "allocated": alloc_line}
    assert (finding.size, finding.address) == (64, small)
    assert "runs 16 bytes past the end of a 48-byte device memory allocation" in finding.what
    err = capsys.readouterr().err
    assert err.count("openacl check: overrun:") == 1 and f"{THIS}:{access_line}" in err


def test_use_after_free_names_the_free(checking, ctx):
    dev, _ = acl.rt.malloc(32, 0)
    alloc_line = here() - 1
    host, _ = acl.rt.malloc_host(32)
    assert acl.rt.free(dev) == 0
    free_line = here() - 1
    assert acl.rt.memcpy(host, 32, dev, 32, 2) != 0
    access_line = here() - 1
    finding = only("use-after-free")
    assert site_lines(finding) == {"access": access_line, "freed": free_line, "allocated": alloc_line}
    assert acl.rt.free_host(host) == 0


def test_double_free_of_memory(checking, ctx):
    dev, _ = acl.rt.malloc(32, 0)
    alloc_line = here() - 1
    assert acl.rt.free(dev) == 0
    free_line = here() - 1
    assert acl.rt.free(dev) != 0
    again_line = here() - 1
    finding = only("double-free")
    assert site_lines(finding) == {"freed again": again_line, "first freed": free_line, "allocated": alloc_line}


def test_handle_destroyed_twice_and_used_after_destroy(checking, ctx):
    stream, _ = acl.rt.create_stream()
    create_line = here() - 1
    assert acl.rt.destroy_stream(stream) == 0
    destroy_line = here() - 1
    assert acl.rt.synchronize_stream(stream) != 0
    use_line = here() - 1
    assert site_lines(only("use-after-free")) == {"access": use_line, "destroyed": destroy_line, "created": create_line}
    assert acl.rt.destroy_stream(stream) != 0
    again_line = here() - 1
    assert site_lines(only("double-free")) == {"access": again_line, "destroyed": destroy_line, "created": create_line}


def test_leaks_at_finalize_are_grouped_by_site_with_counts_and_bytes(checking):
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    for _ in range(3):
        acl.rt.malloc(100, 0)
        malloc_line = here() - 1
    host, _ = acl.rt.malloc_host(10)
    host_line = here() - 1
    acl.rt.create_stream()
    stream_line = here() - 1
    assert acl.rt.reset_device(0) == 0  # the stream and device memory: leaked, reclaimed here
    assert acl.finalize() == 0  # the host memory: still alive at finalize
    leaks = [f for f in checker.findings() if f.kind == "leak"]
    assert [(f.what, f.count, f.size) for f in leaks] == [
        ("3 device memory allocations still alive at reset_device(0)", 3, 300),
        ("1 stream still alive at reset_device(0)", 1, 0),
        ("1 host memory allocation still alive at acl.finalize", 1, 10),
    ]
    assert [site_lines(f) for f in leaks] == [
        {"allocated": malloc_line},
        {"created": stream_line},
        {"allocated": host_line},
    ]
    assert leaks[2].address == host


def test_no_leak_for_what_the_program_released_nor_for_the_devices_own_objects(checking):
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    context, _ = acl.rt.create_context(0)
    stream, _ = acl.rt.create_stream()
    ptr, _ = acl.rt.malloc(64, 0)
    ctypes.memset(ptr, 0, 64)
    event, _ = acl.rt.create_event()
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.free(ptr) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_context(context) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
    checker.report_leaks("exit")
    assert checker.findings() == []


def test_a_finding_repeated_at_the_same_lines_is_printed_once_and_counted(checking, ctx, capsys):
    small, _ = acl.rt.malloc(8, 0)
    src, _ = acl.rt.malloc_host(16)
    for _ in range(5):
        assert acl.rt.memcpy(small, 16, src, 16, 1) == 0
    assert only("overrun").count == 5
    assert capsys.readouterr().err.count("openacl check: overrun:") == 1


def test_a_model_left_loaded_leaks_and_one_unloaded_twice_is_a_double_free(checking):
    from openacl.model.model import DEMO_MODEL

    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    kept, _ = acl.mdl.load_from_file(str(DEMO_MODEL))
    kept_line = here() - 1
    twice, _ = acl.mdl.load_from_file(str(DEMO_MODEL))
    load_line = here() - 1
    assert acl.mdl.unload(twice) == 0
    unload_line = here() - 1
    assert acl.mdl.unload(twice) != 0
    again_line = here() - 1
    assert site_lines(only("double-free")) == {"access": again_line, "destroyed": unload_line, "created": load_line}
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
    leak = only("leak")
    assert leak.what == "1 model still alive at acl.finalize" and site_lines(leak) == {"created": kept_line}
    assert kept


def test_race_a_host_read_of_a_queued_copys_output_before_any_synchronize(checking, ctx, stream):
    dev, _ = acl.rt.malloc(64, 0)
    src, _ = acl.rt.malloc_host(64)
    out, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
    queued_line = here() - 1
    assert acl.rt.memcpy(out, 64, dev, 64, 2) == 0
    access_line = here() - 1
    race = only("race")
    assert site_lines(race) == {"access": access_line, "queued": queued_line}
    assert "memcpy reads memory that memcpy_async queued on stream" in race.what
    assert acl.rt.memset(src, 64, 0, 64) == 0  # the host writes what the queued copy reads: a race too
    assert [f.what.split(" ")[1] for f in checker.findings() if f.kind == "race"] == ["reads", "writes"]


def test_no_race_once_the_host_is_ordered_after_the_task(checking, ctx, stream):
    dev, _ = acl.rt.malloc(64, 0)
    src, _ = acl.rt.malloc_host(64)
    out, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.memcpy(out, 64, dev, 64, 2) == 0
    event, _ = acl.rt.create_event()
    assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_event(event) == 0
    assert acl.util.ptr_to_bytes(dev, 64) == acl.util.ptr_to_bytes(src, 64)
    assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
    assert acl.rt.destroy_stream(stream) == 0  # waits for its tasks (a misuse, but no race after it)
    assert acl.rt.memcpy(out, 64, dev, 64, 2) == 0
    assert acl.rt.destroy_event(event) == 0
    assert [f.kind for f in checker.findings()] == ["misuse"]


def test_uninitialized_only_when_nothing_wrote_any_of_the_range(checking, ctx, stream):
    dev, _ = acl.rt.malloc(64, 0)
    alloc_line = here() - 1
    out, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy(out, 64, dev, 64, 2) == 0
    read_line = here() - 1
    finding = only("uninitialized")
    assert site_lines(finding) == {"access": read_line, "allocated": alloc_line}
    assert acl.rt.memset(dev, 64, 0, 8) == 0  # partly written: no longer reported
    assert acl.rt.memcpy(out, 64, dev, 64, 2) == 0
    other, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memcpy_async(other, 64, out, 64, 1, stream) == 0
    assert acl.rt.memcpy_async(out, 64, other, 64, 2, stream) == 0  # runs after the write queued before it
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.util.ptr_to_bytes(other, 64) == acl.util.ptr_to_bytes(out, 64)
    assert len(checker.findings()) == 1


def test_no_race_after_a_query_found_the_event_complete(checking, ctx, stream):
    dev, _ = acl.rt.malloc(64, 0)
    src, _ = acl.rt.malloc_host(64)
    event, _ = acl.rt.create_event()
    assert acl.rt.memset(src, 64, 7, 64) == 0
    assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
    assert acl.rt.record_event(event, stream) == 0
    while acl.rt.query_event_status(event) != (1, 0):  # ACL_EVENT_RECORDED_STATUS_COMPLETE: the host polls
        threading.Event().wait(0.001)
    assert acl.util.ptr_to_bytes(dev, 64) == b"\x07" * 64
    assert acl.rt.destroy_event(event) == 0
    assert checker.findings() == []


def test_misuse_destroying_a_stream_the_host_never_waited_for(checking, ctx):
    src, _ = acl.rt.malloc_host(64)
    dev, _ = acl.rt.malloc(64, 0)
    for synchronize in (True, False):
        stream, _ = acl.rt.create_stream()
        assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
        queued_line = here() - 1
        if synchronize:
            assert acl.rt.synchronize_stream(stream) == 0
        assert acl.rt.destroy_stream(stream) == 0
        destroy_line = here() - 1
    assert site_lines(only("misuse")) == {"access": destroy_line, "queued": queued_line}


def two_streams() -> tuple[int, int]:
    return acl.rt.create_stream()[0], acl.rt.create_stream()[0]


def test_race_between_two_streams_names_both_enqueues_even_when_they_ran_in_order(checking, ctx):
    first, second = two_streams()
    dev, _ = acl.rt.malloc(64, 0)
    out, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset_async(dev, 64, 5, 64, first) == 0
    written_line = here() - 1
    while ctypes.string_at(dev, 64) != b"\x05" * 64:  # the write is done, but nothing the checker sees orders it
        threading.Event().wait(0.001)
    assert acl.rt.memcpy_async(out, 64, dev, 64, 2, second) == 0
    read_line = here() - 1
    race = only("race")
    assert site_lines(race) == {"access": read_line, "queued": written_line}
    assert "memcpy_async queued on stream" in race.what and "reads memory that memset_async queued on" in race.what
    assert (race.size, race.address) == (64, dev)
    for s in (first, second):
        assert acl.rt.synchronize_stream(s) == 0
        assert acl.rt.destroy_stream(s) == 0


def test_two_streams_ordered_by_an_event_or_the_host_do_not_race(checking, ctx):
    first, second = two_streams()
    dev, _ = acl.rt.malloc(64, 0)
    out, _ = acl.rt.malloc_host(64)
    event, _ = acl.rt.create_event()
    assert acl.rt.memset_async(dev, 64, 1, 64, first) == 0
    assert acl.rt.record_event(event, first) == 0
    assert acl.rt.stream_wait_event(second, event) == 0
    assert acl.rt.memcpy_async(out, 64, dev, 64, 2, second) == 0  # after the write: the event orders them
    assert acl.rt.synchronize_stream(second) == 0
    assert acl.util.ptr_to_bytes(dev, 64) == b"\x01" * 64  # the host is ordered after the first stream through it
    assert acl.rt.memset_async(dev, 64, 2, 64, first) == 0
    assert acl.rt.synchronize_stream(first) == 0  # the host orders the first stream's write before what follows
    assert acl.rt.memcpy_async(out, 64, dev, 64, 2, second) == 0
    other, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy_async(other, 64, dev, 64, 2, first) == 0  # two streams reading the same bytes: fine
    for s in (first, second):
        assert acl.rt.synchronize_stream(s) == 0
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.destroy_event(event) == 0
    assert checker.findings() == []
    assert not checker._queued and not checker._host_clock  # destroyed streams leave no trace in the clocks


def test_an_event_recorded_before_the_write_does_not_order_it(checking, ctx):
    first, second = two_streams()
    dev, _ = acl.rt.malloc(64, 0)
    event, _ = acl.rt.create_event()
    assert acl.rt.record_event(event, first) == 0
    assert acl.rt.memset_async(dev, 64, 1, 64, first) == 0
    written_line = here() - 1
    assert acl.rt.stream_wait_event(second, event) == 0
    assert acl.rt.memset_async(dev, 64, 2, 64, second) == 0
    again_line = here() - 1
    race = only("race")
    assert site_lines(race) == {"access": again_line, "queued": written_line}
    assert "writes memory that memset_async queued on stream" in race.what
    assert " writes, with nothing ordering" in race.what


def test_unordered_tasks_remembered_per_stream_are_capped(checking, ctx, stream, monkeypatch):
    monkeypatch.setattr(checker, "_QUEUED_CAP", 8)
    dev, _ = acl.rt.malloc(64, 0)
    for _ in range(20):
        assert acl.rt.memset_async(dev, 64, 0, 64, stream) == 0
    assert [q.epoch for q in checker._queued[stream]] == list(range(13, 21))
    assert acl.rt.synchronize_stream(stream) == 0
    assert not checker._queued


def test_an_operators_inputs_and_outputs_are_its_task_ranges(checking, ctx, stream):
    desc = acl.create_tensor_desc(0, [4], 2)  # float32 [4], ND
    a, _ = acl.rt.malloc(16, 0)
    b, _ = acl.rt.malloc(16, 0)
    b_line = here() - 1
    y, _ = acl.rt.malloc(16, 0)
    assert acl.rt.memset(a, 16, 0, 16) == 0
    ins = [acl.create_data_buffer(a, 16), acl.create_data_buffer(b, 16)]
    outs = [acl.create_data_buffer(y, 16)]
    attr = acl.op.create_attr()
    assert acl.op.execute_v2("Add", [desc, desc], ins, [desc], outs, attr, stream) == 0
    execute_line = here() - 1
    unset = only("uninitialized")
    assert unset.what == "operator Add input 1 reads device memory that nothing wrote"
    assert site_lines(unset) == {"access": execute_line, "allocated": b_line}
    out, _ = acl.rt.malloc_host(16)
    assert acl.rt.memcpy(out, 16, y, 16, 2) == 0  # before any synchronize: the operator's output
    read_line = here() - 1
    race = only("race")
    assert "memcpy reads memory that operator Add queued on stream" in race.what
    assert site_lines(race) == {"access": read_line, "queued": execute_line}
    assert acl.rt.synchronize_stream(stream) == 0


def test_a_dvpp_tasks_output_read_before_synchronize_races(checking, ctx, stream):
    channel = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(channel) == 0
    src, _ = nv12_pic(64, 32, fill=None)
    src_data = acl.media.dvpp_get_pic_desc_data(src)
    assert acl.rt.memset(src_data, 64 * 32 * 3 // 2, 128, 64 * 32 * 3 // 2) == 0
    dst, dst_data = nv12_pic(32, 16)
    cfg = acl.media.dvpp_create_resize_config()
    assert acl.media.dvpp_vpc_resize_async(channel, src, dst, cfg, stream) == 0
    resize_line = here() - 1
    assert acl.rt.memset(src_data, 64, 0, 64) == 0  # the host writes the input the resize will still read
    write_line = here() - 1
    out, _ = acl.rt.malloc_host(32 * 16)
    assert acl.rt.memcpy(out, 32 * 16, dst_data, 32 * 16, 2) == 0
    read_line = here() - 1
    writes, reads = [f for f in checker.findings() if f.kind == "race"]
    assert "memset writes memory that dvpp resize queued on stream" in writes.what
    assert site_lines(writes) == {"access": write_line, "queued": resize_line}
    assert "memcpy reads memory that dvpp resize queued on stream" in reads.what
    assert site_lines(reads) == {"access": read_line, "queued": resize_line}
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.media.dvpp_destroy_channel(channel) == 0


def test_venc_reads_its_input_at_the_send_a_queued_upload_races_it(checking, ctx, stream):
    encoder = Encoder(ctx, 2, 160, 128)
    size = 160 * 128 * 3 // 2
    frame, _ = acl.rt.malloc_host(size)
    assert acl.rt.memset(frame, size, 16, size) == 0
    assert acl.rt.memcpy_async(encoder.input, size, frame, size, 1, stream) == 0
    upload_line = here() - 1
    assert acl.media.venc_send_frame(encoder.desc, encoder.pic, 0, encoder.config, None) == 0
    send_line = here() - 1
    race = only("race")
    assert "venc_send_frame input reads memory that memcpy_async queued on stream" in race.what
    assert site_lines(race) == {"access": send_line, "queued": upload_line}
    assert acl.rt.synchronize_stream(stream) == 0
    assert encoder.close() == 0


def test_a_data_buffer_past_its_allocation_is_an_overrun_under_check(checking, ctx):
    y, _ = acl.rt.malloc(24, 0)
    alloc_line = here() - 1
    assert acl.create_data_buffer(y, 32) == 0  # the call fails as without check (an operator would write 32)
    create_line = here() - 1
    finding = only("overrun")
    assert (finding.size, finding.address) == (32, y)
    assert "runs 8 bytes past the end of a 24-byte device memory allocation" in finding.what
    assert site_lines(finding) == {"access": create_line, "allocated": alloc_line}


def test_a_range_past_its_allocation_without_check_is_the_error_it_was(ctx):
    assert not checker.enabled
    y, _ = acl.rt.malloc(24, 0)
    assert acl.create_data_buffer(y, 32) == 0
    assert checker.findings() == []


def test_a_vpc_output_past_its_dvpp_allocation_is_an_overrun_under_check(checking, ctx, stream):
    channel = acl.media.dvpp_create_channel_desc()
    assert acl.media.dvpp_create_channel(channel) == 0
    src, _ = nv12_pic(64, 32, fill=None)
    dst, dst_data = nv12_pic(32, 16)
    assert acl.media.dvpp_free(dst_data) == 0
    small, _ = acl.media.dvpp_malloc(32 * 16)  # the NV12 picture needs half as much again
    assert acl.media.dvpp_set_pic_desc_data(dst, small) == 0
    alloc_line = here() - 2
    cfg = acl.media.dvpp_create_resize_config()
    assert acl.media.dvpp_vpc_resize_async(channel, src, dst, cfg, stream) == 100000
    resize_line = here() - 1
    finding = only("overrun")
    assert site_lines(finding) == {"access": resize_line, "allocated": alloc_line}
    assert finding.what.startswith("output picture runs ") and "-byte dvpp memory allocation" in finding.what
    assert (finding.size, finding.address) == (32 * 16 * 3 // 2, small)
    assert acl.media.dvpp_destroy_channel(channel) == 0


def test_a_notify_orders_two_streams_even_when_its_wait_is_queued_before_the_record(checking, ctx):
    producer, consumer = two_streams()
    notify, _ = acl.rt.create_notify(0)
    src, _ = acl.rt.malloc(64, 0)
    staging, _ = acl.rt.malloc(64, 0)
    out, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset(src, 64, 3, 64) == 0
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert acl.rt.memcpy_async(out, 64, staging, 64, 3, consumer) == 0  # runs after the producer's copy
    assert acl.rt.memcpy_async(staging, 64, src, 64, 3, producer) == 0
    assert acl.rt.record_notify(notify, producer) == 0
    assert acl.rt.memcpy_async(out, 64, staging, 64, 3, consumer) == 0  # after the record: ordered after the copy
    read_line = here() - 1
    assert checker.findings() == []
    assert acl.rt.memset_async(staging, 64, 1, 64, producer) == 0  # nothing orders it after the consumer's read
    write_line = here() - 1
    assert site_lines(only("race")) == {"access": write_line, "queued": read_line}
    checker.take_findings()
    assert acl.rt.synchronize_stream(consumer) == 0
    assert acl.rt.record_notify(notify, producer) == 0  # a record queued first lets the next wait through
    assert acl.rt.wait_and_reset_notify(notify, consumer, 0) == 0
    assert acl.rt.memcpy_async(out, 64, staging, 64, 3, consumer) == 0
    for s in (producer, consumer):
        assert acl.rt.synchronize_stream(s) == 0
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.destroy_notify(notify) == 0
    assert checker.findings() == []
    assert acl.util.ptr_to_bytes(out, 64) == b"\x01" * 64


@pytest.mark.parametrize("through", ["event", "notify"])
def test_regression_a_host_ordered_after_a_task_through_another_streams_wait_was_reported_as_racing_it(
    checking, ctx, through
):
    producer, consumer = two_streams()
    dev, _ = acl.rt.malloc(64, 0)
    if through == "event":
        marker, _ = acl.rt.create_event()
        record, wait = acl.rt.record_event, lambda m, s: acl.rt.stream_wait_event(s, m)
    else:
        marker, _ = acl.rt.create_notify(0)
        record, wait = acl.rt.record_notify, lambda m, s: acl.rt.wait_and_reset_notify(m, s, 0)
    assert acl.rt.memset_async(dev, 64, 9, 64, producer) == 0
    assert record(marker, producer) == 0
    assert wait(marker, consumer) == 0
    assert acl.rt.synchronize_stream(consumer) == 0  # the consumer waited for the producer's write
    assert acl.util.ptr_to_bytes(dev, 64) == b"\x09" * 64
    assert checker.findings() == []
    for s in (producer, consumer):
        assert acl.rt.synchronize_stream(s) == 0
        assert acl.rt.destroy_stream(s) == 0


def test_reduce_and_2d_copies_are_tasks_with_ranges(checking, ctx, stream):
    dst, _ = acl.rt.malloc(64, 0)
    src, _ = acl.rt.malloc(64, 0)
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(dst, 64, 0, 64) == 0
    assert acl.rt.memset(src, 64, 0, 64) == 0
    assert acl.rt.reduce_async(dst, src, 64, 10, 0, stream, 0) == 0  # SUM of float32
    reduce_line = here() - 1
    assert acl.rt.memcpy(host, 64, dst, 64, 2) == 0
    read_line = here() - 1
    assert site_lines(only("race")) == {"access": read_line, "queued": reduce_line}
    checker.take_findings()
    assert acl.rt.memcpy2d_async(host, 16, dst, 16, 8, 4, 2, stream) == 0
    copy_line = here() - 1
    assert acl.rt.memset(host, 64, 1, 64) == 0  # rows the copy will still write
    write_line = here() - 1
    assert site_lines(only("race")) == {"access": write_line, "queued": copy_line}
    assert acl.rt.synchronize_stream(stream) == 0


def _vdec_frame() -> tuple[int, int, int, int]:
    """One 192x128 H.264 frame in DVPP memory and an NV12 picture for it: (stream desc, pic desc, its memory,
    its size)."""
    packet = encode_clip("libx264", 1, 192, 128)[0]
    data, _ = acl.media.dvpp_malloc(len(packet))
    assert acl.rt.memcpy(data, len(packet), acl.util.bytes_to_ptr(packet), len(packet), 1) == 0
    stream_desc = acl.media.dvpp_create_stream_desc()
    acl.media.dvpp_set_stream_desc_data(stream_desc, data)
    acl.media.dvpp_set_stream_desc_size(stream_desc, len(packet))
    size = 192 * 128 * 3 // 2
    out, _ = acl.media.dvpp_malloc(size)
    pic = acl.media.dvpp_create_pic_desc()
    acl.media.dvpp_set_pic_desc_data(pic, out)
    acl.media.dvpp_set_pic_desc_size(pic, size)
    return stream_desc, pic, out, size


def test_a_vdec_picture_read_before_its_callback_races_the_send(checking, ctx):
    hold = threading.Event()
    channel = Channel(ctx, H264_MAIN, hold=hold)  # its report thread delivers nothing until released
    stream_desc, pic, out, size = _vdec_frame()
    assert acl.media.vdec_send_frame(channel.desc, stream_desc, pic, channel.config, None) == 0
    send_line = here() - 1
    host, _ = acl.rt.malloc_host(size)
    assert acl.rt.memcpy(host, size, out, size, 2) == 0  # before the frame's callback: VDEC may not have written it
    read_line = here() - 1
    race = only("race")
    assert "memcpy reads memory that vdec_send_frame queued on vdec channel 1 will write" in race.what
    assert site_lines(race) == {"access": read_line, "queued": send_line}
    hold.set()
    assert channel.eos() == 0  # every callback ran: the host is ordered after the frame
    assert acl.rt.memcpy(host, size, out, size, 2) == 0
    assert channel.close() == 0
    assert len(checker.findings()) == 1 and channel.calls[0]["ret"] == 0


def test_regression_a_vdec_send_refused_by_a_destroy_leaves_nothing_queued(checking, ctx):
    """A send racing ``vdec_destroy_channel`` registered its picture's write with the checker before it found the
    channel closing: refused, it left a write that would never happen, so every later host access to that picture
    was a race (and one registered after the destroy ended was never forgotten). The refusal takes it back."""
    channel = Channel(ctx, H264_MAIN)
    stream_desc, pic, out, size = _vdec_frame()
    assert acl.rt.memset(out, size, 0, size) == 0  # written: a read of it is no uninitialized read
    live = vdec._live_channel(channel.desc)
    live.closing = True  # what a destroy on another thread has set by the time this send takes the lock
    try:
        assert acl.media.vdec_send_frame(channel.desc, stream_desc, pic, channel.config, None) != 0
    finally:
        live.closing = False
    host, _ = acl.rt.malloc_host(size)
    assert acl.rt.memcpy(host, size, out, size, 2) == 0  # nothing will write the picture: no race
    assert checker.findings() == []
    assert channel.close() == 0

    """A freed buffer's address came back as the next allocation (the allocator reuses it at once), so a read
    through the stale pointer read the new buffer: no finding at all (or an overrun of whatever host object
    landed there). Freed memory is now held in quarantine: the address is not reused, the read is a use after
    free."""
    stale, _ = acl.rt.malloc(1024, 0)
    alloc_line = here() - 1
    assert acl.rt.memset(stale, 1024, 1, 1024) == 0
    assert acl.rt.free(stale) == 0
    free_line = here() - 1
    fresh, _ = acl.rt.malloc(1024, 0)
    assert fresh != stale
    out, _ = acl.rt.malloc_host(1024)
    assert acl.rt.memcpy(out, 1024, stale, 1024, 2) != 0
    access_line = here() - 1
    assert site_lines(only("use-after-free")) == {"access": access_line, "freed": free_line, "allocated": alloc_line}
    assert acl.rt.free(stale) != 0  # and freeing it again is a double free of the stale one, not a free of fresh
    assert site_lines(only("double-free"))["first freed"] == free_line
    assert acl.rt.free(fresh) == 0 and acl.rt.free_host(out) == 0


def test_regression_quarantine_is_bounded(checking, ctx, monkeypatch):
    monkeypatch.setattr(checker, "_QUARANTINE_BYTES", 4096)
    for _ in range(8):
        ptr, _ = acl.rt.malloc(1024, 0)
        assert acl.rt.free(ptr) == 0
    assert checker._quarantined == 4096
    assert sum(1 for r in checker._freed if r.kept is not None) == 4 and len(checker._freed) == 8


def test_regression_memory_freed_under_a_queued_task_had_no_access_site(checking, ctx, stream, gate):
    """A copy queued, its source freed before the stream got there: reported only if the engine ran the copy
    after the free (timing), and then with no access site (the engine thread has no frame of the program).
    Now the free itself is the finding, naming the queued copy, whenever the stream runs it."""
    src, _ = acl.rt.malloc(256, 0)
    alloc_line = here() - 1
    dst, _ = acl.rt.malloc(256, 0)
    assert acl.rt.memset(src, 256, 3, 256) == 0
    hold_stream(stream, gate)
    assert acl.rt.memcpy_async(dst, 256, src, 256, 3, stream) == 0
    queued_line = here() - 1
    assert acl.rt.free(src) == 0
    free_line = here() - 1
    gate.set()
    assert acl.rt.synchronize_stream(stream) != 0  # the copy failed on freed memory (a device memory error)
    finding = only("use-after-free")
    assert site_lines(finding) == {"access": queued_line, "freed": free_line, "allocated": alloc_line}
    assert "memcpy_async queued on stream" in finding.what
    assert acl.rt.free(dst) == 0


def test_regression_free_after_the_host_was_ordered_is_no_finding(checking, ctx, stream):
    src, _ = acl.rt.malloc(256, 0)
    dst, _ = acl.rt.malloc(256, 0)
    assert acl.rt.memset(src, 256, 3, 256) == 0
    assert acl.rt.memcpy_async(dst, 256, src, 256, 3, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.free(src) == 0 and acl.rt.free(dst) == 0
    assert checker.findings() == []


def test_regression_block_callback_reading_an_output_raced_the_tasks_it_holds_back(checking, ctx, gate):
    """execute/copy, then a BLOCK callback reading the output, repeated: the callback was reported racing the
    next iteration's copy, which the BLOCK callback holds back until it returns. A NO_BLOCK callback does not hold
    its stream back: there the race is real."""
    thread = ReportThread(ctx)
    stream, _ = acl.rt.create_stream()
    assert acl.rt.subscribe_report(thread.tid, stream) == 0
    src, _ = acl.rt.malloc_host(64)
    dev, _ = acl.rt.malloc(64, 0)
    assert acl.rt.memset(src, 64, 5, 64) == 0
    seen = []

    def read(_):
        seen.append(acl.util.ptr_to_bytes(dev, 64))
        access_lines.append(here() - 1)

    access_lines: list[int] = []
    try:
        for block in (1, 1, 1):
            assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
            assert acl.rt.launch_callback(read, None, block, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert checker.findings() == []
        hold_stream(stream, gate)  # both NO_BLOCK rounds are queued before the first callback runs
        for block in (0, 0):
            assert acl.rt.memcpy_async(dev, 64, src, 64, 1, stream) == 0
            queued_line = here() - 1
            assert acl.rt.launch_callback(read, None, block, stream) == 0
        gate.set()
        assert acl.rt.synchronize_stream(stream) == 0
    finally:
        acl.rt.unsubscribe_report(thread.tid, stream)
        thread.close()
    assert seen == [b"\x05" * 64] * 5
    race = only("race")  # the first NO_BLOCK callback's read, racing the copy queued after it
    assert site_lines(race) == {"access": access_lines[0], "queued": queued_line}
    assert acl.rt.free(dev) == 0 and acl.rt.free_host(src) == 0 and acl.rt.destroy_stream(stream) == 0


def test_regression_host_ordered_through_stream_wait_event_was_reported_as_race(checking, ctx):
    """Stream a fills, b waits for a's event and copies the result out; the host synchronizes b only. That orders
    it after a's fill too (b could not pass the wait before it), but the read of a's output was reported as a
    race, and the free of the buffer as a use after free."""
    a, _ = acl.rt.create_stream()
    b, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    dev, _ = acl.rt.malloc(64, 0)
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset_async(dev, 64, 9, 64, a) == 0
    assert acl.rt.record_event(event, a) == 0
    # after the record, b does not wait for this one (it writes the half b does not read: no two-stream race)
    assert acl.rt.memset_async(dev + 32, 32, 8, 32, a) == 0
    queued_line = here() - 1
    assert acl.rt.stream_wait_event(b, event) == 0
    assert acl.rt.memcpy_async(host, 64, dev, 32, 2, b) == 0
    assert acl.rt.synchronize_stream(b) == 0
    assert acl.util.ptr_to_bytes(host, 32) == b"\x09" * 32
    assert checker.findings() == []
    acl.util.ptr_to_bytes(dev, 64)
    access_line = here() - 1
    assert site_lines(only("race")) == {"access": access_line, "queued": queued_line}
    assert acl.rt.synchronize_stream(a) == 0
    assert acl.rt.free(dev) == 0 and acl.rt.free_host(host) == 0
    assert len(checker.findings()) == 1
    for handle in (a, b):
        assert acl.rt.destroy_stream(handle) == 0
    assert acl.rt.destroy_event(event) == 0


def test_regression_memcpy2d_async_output_read_before_synchronize_was_no_race(checking, ctx, stream):
    """memcpy2d_async recorded no task and memcpy2d no host access: a host read of a queued 2D copy's output, and
    a 2D copy out of a queued copy's destination, were not reported."""
    dev, _ = acl.rt.malloc(8 * 128, 0)
    assert acl.rt.memset(dev, 8 * 128, 1, 8 * 128) == 0
    host, _ = acl.rt.malloc_host(8 * 128)
    assert acl.rt.memcpy2d_async(host, 128, dev, 128, 100, 8, 2, stream) == 0  # 100 of each 128-byte row
    queued_line = here() - 1
    acl.util.ptr_to_bytes(host + 100, 28)  # between two rows: no race
    assert checker.findings() == []
    acl.util.ptr_to_bytes(host + 128, 100)
    access_line = here() - 1
    assert site_lines(only("race")) == {"access": access_line, "queued": queued_line}
    assert acl.rt.synchronize_stream(stream) == 0
    checker.take_findings()
    assert acl.rt.memset_async(dev, 8 * 128, 2, 8 * 128, stream) == 0
    queued_line = here() - 1
    assert acl.rt.memcpy2d(host, 128, dev, 128, 128, 8, 2) == 0
    access_line = here() - 1
    assert site_lines(only("race")) == {"access": access_line, "queued": queued_line}
    assert acl.rt.synchronize_stream(stream) == 0


def test_regression_memcpy2d_of_memory_nothing_wrote_was_not_uninitialized(checking, ctx, stream):
    dev, _ = acl.rt.malloc(4 * 64, 0)
    alloc_line = here() - 1
    host, _ = acl.rt.malloc_host(4 * 64)
    assert acl.rt.memcpy2d(host, 64, dev, 64, 64, 4, 2) == 0
    read_line = here() - 1
    assert site_lines(only("uninitialized")) == {"access": read_line, "allocated": alloc_line}
    checker.take_findings()
    other, _ = acl.rt.malloc(4 * 64, 0)
    assert acl.rt.memcpy2d_async(host, 64, other, 64, 64, 4, 2, stream) == 0
    queued_line = here() - 1
    assert acl.rt.synchronize_stream(stream) == 0
    assert site_lines(only("uninitialized"))["access"] == queued_line


def test_regression_reduce_async_destination_read_before_synchronize_was_no_race(checking, ctx, stream):
    dst, _ = acl.rt.malloc(64, 0)
    src, _ = acl.rt.malloc(64, 0)
    for ptr in (dst, src):
        assert acl.rt.memset(ptr, 64, 0, 64) == 0
    assert acl.rt.reduce_async(dst, src, 64, 10, 3, stream, 0) == 0  # SUM of int32
    queued_line = here() - 1
    acl.util.ptr_to_bytes(dst, 64)
    access_line = here() - 1
    assert site_lines(only("race")) == {"access": access_line, "queued": queued_line}
    assert acl.rt.synchronize_stream(stream) == 0


def test_regression_a_copy_starting_before_its_allocation_was_no_finding(checking, ctx):
    """A range that starts before an allocation and runs into it (a negative offset) is refused, as it should be,
    but under check it was no finding at all: it is an overrun, with the allocation's line."""
    dev, _ = acl.rt.malloc(256, 0)
    alloc_line = here() - 1
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memcpy(dev - 16, 64, host, 64, 1) != 0
    access_line = here() - 1
    finding = only("overrun")
    assert site_lines(finding) == {"access": access_line, "allocated": alloc_line}
    assert "starts 16 bytes before the beginning of a 256-byte device memory allocation" in finding.what
    assert acl.rt.memcpy(dev + (1 << 40), 64, host, 64, 1) != 0  # nowhere near an allocation: the error alone
    assert len(checker.findings()) == 1


@pytest.mark.subprocess
def test_regression_reset_let_go_of_quarantined_memory_under_its_lock(ctx):
    """``checker.reset`` cleared its records under the checker's lock, and a freed region held in quarantine had
    its last reference there: a finalizer (user code) that asked the checker anything deadlocked the reset. In a
    forked child, so that the deadlock fails the test instead of hanging the suite."""

    def child() -> str:
        checker.enable()
        dev, _ = acl.rt.malloc(64, 0)
        finalizer = weakref.finalize(memory.space.find(dev, 1), checker.findings)  # takes the checker's lock
        assert acl.rt.free(dev) == 0
        assert finalizer.alive  # quarantined: the checker keeps the freed region
        checker.reset()
        return "let go" if not finalizer.alive else "kept"

    assert in_child(child, timeout=30) == "let go"
