"""VDEC: H.264/H.265 decode through acl.media, callbacks on the report thread in send order (spec dvpp.md §8)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import acl
from openacl.media import vdec, video_channel
from tests.media.video_clips import (
    H264_MAIN,
    H265,
    KEY_FRAME_TYPES,
    NV12,
    NV21,
    SUCCESS,
    ReportThread,
    encode_clip,
    from_device,
    nal_types,
    parameter_sets,
    reference_by_frame,
    reference_nv12,
    to_device,
)

M = acl.media
INVALID = 100000
FORMAT_NOT_MATCH = 100027
NOT_CLEARED = 148051
API_NOT_SUPPORT = 200001
REPORT_TIMEOUT = 507012


class Channel:
    """A VDEC channel as the samples build one, recording every callback."""

    def __init__(self, context: int, entype: int, out_format: int = NV12, channel_id: int = 1, **thread) -> None:
        self.thread = ReportThread(context, **thread)
        self.calls: list[dict] = []
        self.on_callback = None
        self.desc = M.vdec_create_channel_desc()
        assert M.vdec_set_channel_desc_channel_id(self.desc, channel_id) == SUCCESS
        assert M.vdec_set_channel_desc_thread_id(self.desc, self.thread.tid) == SUCCESS
        assert M.vdec_set_channel_desc_callback(self.desc, self.callback) == SUCCESS
        assert M.vdec_set_channel_desc_entype(self.desc, entype) == SUCCESS
        assert M.vdec_set_channel_desc_out_pic_format(self.desc, out_format) == SUCCESS
        assert M.vdec_create_channel(self.desc) == SUCCESS
        self.config = M.vdec_create_frame_config()
        self.input = 0

    def callback(self, input_desc, output_desc, user_data):
        call = {"input": input_desc, "output": output_desc, "user_data": user_data, "thread": threading.get_ident()}
        if output_desc:
            call.update(
                ret=M.dvpp_get_pic_desc_ret_code(output_desc),
                width=M.dvpp_get_pic_desc_width(output_desc),
                height=M.dvpp_get_pic_desc_height(output_desc),
                width_stride=M.dvpp_get_pic_desc_width_stride(output_desc),
                height_stride=M.dvpp_get_pic_desc_height_stride(output_desc),
                data=M.dvpp_get_pic_desc_data(output_desc),
                size=M.dvpp_get_pic_desc_size(output_desc),
            )
            if call["ret"] == 0:
                call["bytes"] = from_device(call["data"], call["size"])
        self.calls.append(call)
        if self.on_callback is not None:
            self.on_callback(call)

    def send(self, data: bytes, user_data: object = None, out_size: int | None = None, geometry=None, fmt=None):
        """Send one frame through one reused input buffer, as acllite's VideoCapture does."""
        if self.input == 0:
            self.input, _ = M.dvpp_malloc(1 << 20)
        assert acl.rt.memcpy(self.input, 1 << 20, acl.util.bytes_to_ptr(data), len(data), 1) == SUCCESS
        stream_desc = M.dvpp_create_stream_desc()
        M.dvpp_set_stream_desc_data(stream_desc, self.input)
        M.dvpp_set_stream_desc_size(stream_desc, len(data))
        size = out_size if out_size is not None else 200 * 130 * 2
        out = M.dvpp_create_pic_desc()
        buffer, _ = M.dvpp_malloc(size)
        M.dvpp_set_pic_desc_data(out, buffer)
        M.dvpp_set_pic_desc_size(out, size)
        if fmt is not None:
            M.dvpp_set_pic_desc_format(out, fmt)
        if geometry:
            w, h, ws, hs = geometry
            M.dvpp_set_pic_desc_width(out, w)
            M.dvpp_set_pic_desc_height(out, h)
            M.dvpp_set_pic_desc_width_stride(out, ws)
            M.dvpp_set_pic_desc_height_stride(out, hs)
        ret = M.vdec_send_frame(self.desc, stream_desc, out, self.config, user_data)
        acl.rt.memset(self.input, 1 << 20, 0xEE, len(data))  # send copied its input: the buffer is ours again
        return ret

    def eos(self) -> int:
        stream_desc = M.dvpp_create_stream_desc()
        M.dvpp_set_stream_desc_eos(stream_desc, 1)
        ret = M.vdec_send_frame(self.desc, stream_desc, 0, self.config, None)
        M.dvpp_destroy_stream_desc(stream_desc)
        return ret

    def close(self) -> int:
        ret = M.vdec_destroy_channel(self.desc)
        self.thread.close()
        return ret


def nv12_of(call: dict) -> tuple[np.ndarray, np.ndarray]:
    w, h, ws, hs = call["width"], call["height"], call["width_stride"], call["height_stride"]
    data = np.frombuffer(call["bytes"], np.uint8)
    luma = data[: ws * hs].reshape(hs, ws)[:h, :w]
    chroma = data[ws * hs : ws * hs + ws * hs // 2].reshape(hs // 2, ws)[: h // 2, :w]
    return luma, chroma


@pytest.mark.parametrize(
    ("codec", "decoder", "entype", "options"),
    [
        ("libx264", "h264", H264_MAIN, {}),  # x264's default: B-frames, so the decoder reorders
        ("libx264", "h264", 1, {"profile": "baseline"}),
        ("libx265", "hevc", H265, {}),  # x265's default: B-frames too
    ],
)
@pytest.mark.parametrize("out_format", [NV12, NV21])
def test_decodes_bit_exact_each_frame_its_own_picture_in_display_order_on_the_report_thread(
    ctx, codec, decoder, entype, options, out_format
):
    packets = encode_clip(codec, 10, 200, 130, **options)
    expected = reference_nv12(decoder, packets, nv21=out_format == NV21)  # display order
    own, order = reference_by_frame(decoder, packets)
    channel = Channel(ctx, entype, out_format)
    for index, packet in enumerate(packets):
        assert channel.send(packet, user_data=("frame", index)) == SUCCESS
    assert channel.close() == SUCCESS
    assert [c["user_data"] for c in channel.calls] == [("frame", i) for i in order]  # as the pictures come out
    assert sorted(order) == list(range(len(packets)))
    assert {c["thread"] for c in channel.calls} == {channel.thread.tid}
    assert len(expected) == len(packets)
    for call, (luma, chroma) in zip(channel.calls, expected, strict=True):
        assert call["ret"] == 0
        # geometry left unset: the stream's size, align16 / align2 strides written back; the size stays the user's
        assert (call["width"], call["height"], call["width_stride"], call["height_stride"]) == (200, 130, 208, 130)
        assert call["size"] == 200 * 130 * 2
        got_luma, got_chroma = nv12_of(call)
        np.testing.assert_array_equal(got_luma, luma)
        np.testing.assert_array_equal(got_chroma, chroma)
        np.testing.assert_array_equal(got_luma, own[call["user_data"][1]][0])  # the picture of its own frame


GOP_12 = {  # an IDR every 12 frames, as cameras send
    "libx264": {"x264-params": "keyint=12:min-keyint=12:scenecut=0"},
    "libx265": {"x265-params": "log-level=error:keyint=12:min-keyint=12:scenecut=0:open-gop=0"},
}


def joined_mid_gop(packets: list[bytes], first: int, decoder: str = "h264") -> list[bytes]:
    """A receiver that joins at packet ``first`` (not a key frame): parameter sets come with its first packet."""
    assert not KEY_FRAME_TYPES[decoder] & set(nal_types(packets[first], decoder))
    return [parameter_sets(packets[0], decoder) + packets[first], *packets[first + 1 :]]


def damaged(packets: list[bytes]) -> list[bytes]:
    """Packet loss on the way: three frames, one of them a key frame, keep only the first byte of their slice.
    (A slice cut further in decodes to a partial picture whose undecoded part is whatever FFmpeg's reused buffer
    held then: no reference can be bit-exact for it.)"""
    out = list(packets)
    for index in (3, 12, 17):
        out[index] = out[index][: out[index].rindex(b"\x00\x00\x01") + 4]
    return out


@pytest.mark.parametrize(
    ("codec", "decoder", "entype", "b_frames"),
    [("libx264", "h264", H264_MAIN, "0"), ("libx264", "h264", H264_MAIN, "3"), ("libx265", "hevc", H265, "4")],
)
@pytest.mark.parametrize("damage", ["joined mid-GOP", "damaged packets", "joined and damaged"])
def test_regression_a_frame_without_a_picture_shifted_every_later_picture_to_the_wrong_callback(
    ctx, codec, decoder, entype, b_frames, damage, acl_log
):
    option = {"libx264": {"bf": b_frames}, "libx265": {}}[codec]  # x265 makes up to 4 B-frames by default
    full = encode_clip(codec, 30, 192, 128, **option, **GOP_12[codec])
    packets = {
        "joined mid-GOP": lambda: joined_mid_gop(full, 5, decoder),
        "damaged packets": lambda: damaged(full),
        "joined and damaged": lambda: joined_mid_gop(damaged(full), 7, decoder),
    }[damage]()
    own, order = reference_by_frame(decoder, packets)  # PyAV decoding the same frames one by one
    lost = sorted(set(range(len(packets))) - set(own))
    assert lost or decoder == "h264"  # frames the decoder drops (FFmpeg conceals a cut H.264 frame instead)
    assert order != sorted(order) or b_frames == "0"
    channel = Channel(ctx, entype)
    for index, packet in enumerate(packets):
        assert channel.send(packet, user_data=index) == SUCCESS
    assert channel.close() == SUCCESS
    calls = channel.calls
    assert sorted(c["user_data"] for c in calls) == list(range(len(packets)))  # none lost, none doubled
    assert [c["user_data"] for c in calls if c["ret"] == 0] == order
    assert sorted(c["user_data"] for c in calls if c["ret"] != 0) == lost
    assert {c["ret"] for c in calls if c["ret"] != 0} <= {vdec.RET_DECODE_ERROR}
    # A damaged frame decodes partly, the rest of its picture being whatever FFmpeg's reused buffer held (and so
    # do the frames that refer to it): bit-exact comparison holds for the groups of pictures no damage reached.
    clean = clean_frames(packets, set(full), decoder)
    compared = 0
    for call in calls:
        if call["ret"] == 0 and call["user_data"] in clean:
            luma, chroma = nv12_of(call)
            np.testing.assert_array_equal(luma, own[call["user_data"]][0])
            np.testing.assert_array_equal(chroma, own[call["user_data"]][1])
            compared += 1
    assert compared >= 6
    assert any("gave no picture" in r.getMessage() for r in acl_log.records) == bool(lost)


def clean_frames(packets: list[bytes], intact: set[bytes], decoder: str) -> set[int]:
    """The frames of closed groups of pictures that start with a key frame and hold no damaged packet."""
    groups: dict[int, list[int]] = {}
    group = -1  # before the first key frame
    for index, packet in enumerate(packets):
        if KEY_FRAME_TYPES[decoder] & set(nal_types(packet, decoder)):
            group += 1
        groups.setdefault(group, []).append(index)
    return {
        index
        for group, members in groups.items()
        if group >= 0 and all(packets[i] in intact for i in members)
        for index in members
    }


def test_frames_before_the_first_picture_of_an_intra_refresh_stream_fail_once_reorder_limit_pictures_came_out(ctx):
    """A camera with periodic intra refresh sends no key frame after the first: a receiver that joins gets its first
    picture (not a key frame) once a refresh has gone through, and the frames before it never come. Each gets its
    error once ``REORDER_LIMIT`` later pictures have come out before it, without waiting for the end of the stream."""
    full = encode_clip("libx264", 60, 192, 128, profile="baseline", **{"x264-params": "intra-refresh=1:keyint=20"})
    packets = joined_mid_gop(full, 3)
    own, order = reference_by_frame("h264", packets)
    first = order[0]
    assert first > 1 and sorted(own) == list(range(first, len(packets)))
    channel = Channel(ctx, 1)
    errors = threading.Event()
    channel.on_callback = lambda call: errors.set() if call["ret"] else None
    last = first + vdec.REORDER_LIMIT  # the 17th picture to come out after those frames' turn
    for index, packet in enumerate(packets[: last + 1]):
        assert channel.send(packet, user_data=index) == SUCCESS
        if index == last - 1:
            assert len(vdec.channel_descs.get(channel.desc).channel.waiting) == first  # not given up yet
    assert errors.wait(60)
    for index, packet in enumerate(packets[last + 1 :], start=last + 1):
        assert channel.send(packet, user_data=index) == SUCCESS
    assert channel.close() == SUCCESS
    calls = [(c["user_data"], c["ret"]) for c in channel.calls]
    assert calls == [
        *((i, 0) for i in range(first, last)),
        *((i, vdec.RET_DECODE_ERROR) for i in range(first)),
        *((i, 0) for i in range(last, len(packets))),
    ]


def test_regression_a_joined_stream_gave_the_frames_before_its_first_key_frame_the_later_pictures(ctx):
    """From the first IDR on, a stream joined mid-GOP decodes exactly as the whole stream does; the frames before
    it get ret code 1 as soon as the key frame comes out, not at the end of the stream."""
    full = encode_clip("libx264", 30, 192, 128, bf="3", **GOP_12["libx264"])
    whole, _ = reference_by_frame("h264", full)
    packets = joined_mid_gop(full, 5)
    channel = Channel(ctx, H264_MAIN)
    seven = threading.Event()
    channel.on_callback = lambda call: seven.set() if len(channel.calls) == 7 else None
    for index, packet in enumerate(packets[:11]):  # the IDR is frame 7; with its B-frames it comes out by 10
        assert channel.send(packet, user_data=index) == SUCCESS
    assert seven.wait(60)
    assert [(c["user_data"], c["ret"]) for c in channel.calls[:7]] == [(i, vdec.RET_DECODE_ERROR) for i in range(7)]
    for index, packet in enumerate(packets[11:], start=11):
        assert channel.send(packet, user_data=index) == SUCCESS
    assert channel.close() == SUCCESS
    for call in channel.calls[7:]:
        assert call["ret"] == 0
        np.testing.assert_array_equal(nv12_of(call)[0], whole[call["user_data"] + 5][0])


def test_all_four_geometry_fields_set_scale_the_picture_and_partial_geometry_is_refused(ctx):
    packets = encode_clip("libx264", 3, 200, 130, profile="baseline")
    channel = Channel(ctx, 1)
    assert channel.send(packets[0], geometry=(96, 64, 128, 64)) == SUCCESS
    stream_desc = M.dvpp_create_stream_desc()
    M.dvpp_set_stream_desc_data(stream_desc, channel.input)
    M.dvpp_set_stream_desc_size(stream_desc, 10)
    partial = M.dvpp_create_pic_desc()
    M.dvpp_set_pic_desc_width(partial, 96)
    assert M.vdec_send_frame(channel.desc, stream_desc, partial, channel.config, None) == INVALID
    assert channel.close() == SUCCESS
    (call,) = channel.calls
    assert call["ret"] == 0
    assert (call["width"], call["height"], call["width_stride"], call["height_stride"]) == (96, 64, 128, 64)
    luma, _ = nv12_of(call)
    assert abs(float(luma.mean()) - float(reference_nv12("h264", packets)[0][0].mean())) < 4  # same picture, smaller


def test_eos_flushes_waits_for_every_callback_makes_none_and_the_channel_goes_on(ctx):
    packets = encode_clip("libx264", 6, 192, 128)
    channel = Channel(ctx, H264_MAIN)
    for index, packet in enumerate(packets):
        assert channel.send(packet, index) == SUCCESS
    assert channel.eos() == SUCCESS
    assert sorted(c["user_data"] for c in channel.calls) == list(range(6))  # all delivered when EOS returns
    assert channel.eos() == SUCCESS  # a second EOS is a no-op
    for index, packet in enumerate(packets):  # a new stream after EOS: a fresh decoder
        assert channel.send(packet, 10 + index) == SUCCESS
    assert channel.close() == SUCCESS
    assert sorted(c["user_data"] for c in channel.calls[6:]) == list(range(10, 16))  # no extra callback
    for part_a, part_b in zip(nv12_of(channel.calls[0]), nv12_of(channel.calls[6]), strict=True):
        np.testing.assert_array_equal(part_a, part_b)


def test_destroy_while_frames_are_pending_delivers_them_all_first(ctx):
    gate = threading.Event()
    packets = encode_clip("libx264", 8, 192, 128)
    channel = Channel(ctx, H264_MAIN)
    channel.on_callback = lambda call: gate.wait() if call["user_data"] == 0 else None  # the first one is slow
    for index, packet in enumerate(packets):
        assert channel.send(packet, index) == SUCCESS
    result = []
    destroyer = threading.Thread(target=lambda: result.append(M.vdec_destroy_channel(channel.desc)))
    destroyer.start()
    destroyer.join(0.2)
    assert result == [] and len(channel.calls) == 1  # destroy waits while the first callback runs
    gate.set()
    destroyer.join()
    assert result == [SUCCESS]
    assert sorted(c["user_data"] for c in channel.calls) == list(range(8))
    assert M.vdec_destroy_channel(channel.desc) == INVALID  # destroyed already
    channel.thread.close()
    assert M.vdec_destroy_channel_desc(channel.desc) == SUCCESS


def test_a_callback_that_destroys_its_own_channel_gets_an_error_not_a_deadlock(ctx):
    packets = encode_clip("libx264", 3, 192, 128, profile="baseline")
    channel = Channel(ctx, 1)
    codes = []

    def inside(call):
        codes.append(M.vdec_destroy_channel(channel.desc))
        eos = M.dvpp_create_stream_desc()
        M.dvpp_set_stream_desc_eos(eos, 1)
        codes.append(M.vdec_send_frame(channel.desc, eos, 0, channel.config, None))

    channel.on_callback = inside
    for packet in packets:
        assert channel.send(packet) == SUCCESS
    assert channel.close() == SUCCESS  # the channel survived its callbacks' attempts
    assert codes == [API_NOT_SUPPORT, API_NOT_SUPPORT] * 3
    assert len(channel.calls) == 3


def test_corrupt_truncated_and_foreign_frames_get_a_ret_code_never_a_crash(ctx, acl_log):
    packets = encode_clip("libx264", 6, 192, 128, profile="baseline")
    garbage = bytes(np.random.default_rng(1).integers(0, 256, 3000, dtype=np.uint8))
    channel = Channel(ctx, 1)
    sends = [packets[0], garbage, b"\x00\x00\x00\x01\x65" + garbage[:50], packets[1][: len(packets[1]) // 3]]
    for index, data in enumerate(sends):
        assert channel.send(data, index) == SUCCESS
    assert channel.eos() == SUCCESS
    assert [c["user_data"] for c in channel.calls] == list(range(4))  # one callback per frame, failed or not
    codes = [c["ret"] for c in channel.calls]
    assert codes[0] == 0
    assert all(code in (0, vdec.RET_DECODE_ERROR) for code in codes)
    assert any(code != 0 for code in codes[1:])
    # an H.265 stream on an H.264 channel: no pictures, every frame reports it
    for index, data in enumerate(encode_clip("libx265", 3, 192, 128)):
        assert channel.send(data, 10 + index) == SUCCESS
    assert channel.close() == SUCCESS
    assert [c["ret"] != 0 for c in channel.calls[4:]] == [True, True, True]


def test_output_checks_become_ret_codes(ctx):
    packets = encode_clip("libx264", 3, 192, 128, profile="baseline")
    channel = Channel(ctx, 1)
    assert channel.send(packets[0], 0, out_size=192 * 128) == SUCCESS  # below 192*128*3/2
    freed = M.dvpp_create_pic_desc()
    M.dvpp_set_pic_desc_data(freed, 0x1000)  # inside no allocation (a freed buffer's address may come back)
    M.dvpp_set_pic_desc_size(freed, 192 * 128 * 2)
    stream_desc = M.dvpp_create_stream_desc()
    M.dvpp_set_stream_desc_data(stream_desc, channel.input)
    acl.rt.memcpy(channel.input, 1 << 20, acl.util.bytes_to_ptr(packets[1]), len(packets[1]), 1)
    M.dvpp_set_stream_desc_size(stream_desc, len(packets[1]))
    assert M.vdec_send_frame(channel.desc, stream_desc, freed, channel.config, 1) == SUCCESS
    assert channel.send(packets[2], 2, geometry=(192, 128, 200, 128)) == SUCCESS  # stride not 16-aligned
    assert channel.close() == SUCCESS
    assert [c["ret"] for c in channel.calls] == [vdec.RET_BUFFER_TOO_SMALL, vdec.RET_BAD_ADDRESS, vdec.RET_OUT_OF_RANGE]


def test_wrong_kind_destroyed_and_missing_descs(ctx):
    packets = encode_clip("libx264", 1, 192, 128, profile="baseline")
    channel = Channel(ctx, 1)
    data = to_device(packets[0])
    stream_desc = M.dvpp_create_stream_desc()
    M.dvpp_set_stream_desc_data(stream_desc, data)
    M.dvpp_set_stream_desc_size(stream_desc, len(packets[0]))
    out = M.dvpp_create_pic_desc()
    config = channel.config
    assert M.vdec_send_frame(channel.desc, out, out, config, None) == INVALID  # a pic desc as the input
    assert M.vdec_send_frame(channel.desc, stream_desc, stream_desc, config, None) == INVALID  # a stream desc out
    assert M.vdec_send_frame(channel.desc, stream_desc, out, stream_desc, None) == INVALID  # not a frame config
    assert M.vdec_send_frame(channel.desc, stream_desc, 0, config, None) == INVALID  # no output
    M.dvpp_set_pic_desc_format(out, 12)  # RGB888: not on the 310 rules
    assert M.vdec_send_frame(channel.desc, stream_desc, out, config, None) == FORMAT_NOT_MATCH
    assert M.vdec_destroy_channel_desc(channel.desc) == NOT_CLEARED
    assert M.venc_destroy_channel(channel.desc) == INVALID  # a vdec desc is no venc desc
    with pytest.raises(RuntimeError, match="did not set callback, failed"):
        M.vdec_send_frame(M.vdec_create_channel_desc(), stream_desc, out, config, None)
    with pytest.raises(TypeError, match="parameter must be callable"):
        M.vdec_set_channel_desc_callback(channel.desc, 5)
    with pytest.raises(TypeError, match=r"acl\.media\.vdec_send_frame args parse failed"):
        M.vdec_send_frame(channel.desc, stream_desc, out, config)
    assert channel.close() == SUCCESS
    assert channel.calls == []
    with pytest.raises(RuntimeError, match="did not set callback"):  # destroy dropped the stored callable
        M.vdec_send_frame(channel.desc, stream_desc, out, config, None)
    M.vdec_set_channel_desc_callback(channel.desc, channel.callback)
    assert M.vdec_send_frame(channel.desc, stream_desc, out, config, None) == INVALID  # no channel
    assert M.vdec_destroy_channel_desc(channel.desc) == SUCCESS
    assert M.vdec_destroy_frame_config(config) == SUCCESS
    assert M.vdec_destroy_frame_config(config) == INVALID


def test_channel_desc_defaults_setters_and_create_rules(ctx):
    desc = M.vdec_create_channel_desc()
    assert M.vdec_get_channel_desc_out_mode(desc) == 0
    assert M.vdec_get_channel_desc_entype(desc) == H265
    assert M.vdec_get_channel_desc_out_pic_format(desc) == NV12
    for name, value in [("channel_id", 7), ("out_pic_width", 640), ("out_pic_height", 480),
                        ("ref_frame_num", 4), ("bit_depth", 0), ("thread_id", 12345), ("entype", 3),
                        ("out_pic_format", NV21), ("out_mode", 1)]:  # fmt: skip
        assert getattr(M, f"vdec_set_channel_desc_{name}")(desc, value) == SUCCESS
        assert getattr(M, f"vdec_get_channel_desc_{name}")(desc) == value
    assert M.vdec_set_channel_desc_out_mode(desc, 2) == INVALID
    assert M.vdec_set_channel_desc_entype(desc, 4) == INVALID
    assert M.vdec_set_channel_desc_out_pic_format(desc, 5) == FORMAT_NOT_MATCH
    with pytest.raises(RuntimeError, match="did not set callback"):
        M.vdec_get_channel_desc_callback(desc)
    assert M.vdec_create_channel(desc) == INVALID  # no callback yet

    def fn(*args):
        return None

    assert M.vdec_set_channel_desc_callback(desc, fn) == SUCCESS
    assert M.vdec_get_channel_desc_callback(desc) is fn
    assert M.vdec_set_channel_desc_channel_id(desc, 32) == SUCCESS
    assert M.vdec_create_channel(desc) == INVALID  # 0..31 on the 310 rules
    thread = ReportThread(ctx)
    assert M.vdec_set_channel_desc_thread_id(desc, thread.tid) == SUCCESS
    assert M.vdec_set_channel_desc_channel_id(desc, 5) == SUCCESS
    assert M.vdec_create_channel(desc) == SUCCESS
    assert M.vdec_create_channel(desc) == INVALID  # exists
    other = M.vdec_create_channel_desc()
    M.vdec_set_channel_desc_callback(other, fn)
    M.vdec_set_channel_desc_thread_id(other, thread.tid)
    M.vdec_set_channel_desc_channel_id(other, 5)
    assert M.vdec_create_channel(other) == INVALID  # channel id 5 is taken
    assert M.vdec_destroy_channel(desc) == SUCCESS
    assert M.vdec_create_channel(other) == SUCCESS
    assert M.vdec_destroy_channel(other) == SUCCESS
    thread.close()


def test_skipped_frames_and_raising_callbacks(ctx, acl_log):
    packets = encode_clip("libx264", 4, 192, 128, profile="baseline")
    channel = Channel(ctx, 1)

    def raise_once(call):
        if call["user_data"] == 1:
            raise ValueError("boom")

    channel.on_callback = raise_once
    data = to_device(packets[0])
    skipped = M.dvpp_create_stream_desc()
    M.dvpp_set_stream_desc_data(skipped, data)
    M.dvpp_set_stream_desc_size(skipped, len(packets[0]))
    assert M.vdec_send_skipped_frame(channel.desc, skipped, channel.config, 0) == SUCCESS
    for index, packet in enumerate(packets[1:], start=1):
        assert channel.send(packet, index) == SUCCESS
    assert channel.close() == SUCCESS
    assert [c["user_data"] for c in channel.calls] == [0, 1, 2, 3]
    assert channel.calls[0]["output"] == 0 and channel.calls[0]["input"] == skipped
    assert all(c["ret"] == 0 for c in channel.calls[1:])
    assert any("callback raised ValueError: boom" in r.getMessage() for r in acl_log.records)


def test_a_thread_that_never_runs_process_report_holds_the_frames_and_destroy_still_returns(ctx, monkeypatch, acl_log):
    monkeypatch.setattr(video_channel, "DRAIN_PATIENCE_S", 0.3)
    hold = threading.Event()
    packets = encode_clip("libx264", 4, 192, 128, profile="baseline")
    channel = Channel(ctx, 1, hold=hold)
    for packet in packets:
        assert channel.send(packet) == SUCCESS
    assert channel.eos() == REPORT_TIMEOUT  # the frames wait for the thread; EOS does not wait forever
    assert channel.calls == []
    assert M.vdec_destroy_channel(channel.desc) == REPORT_TIMEOUT  # still destroyed: callbacks dropped, logged
    assert channel.calls == []
    assert any("dropped" in r.getMessage() for r in acl_log.records)
    hold.set()
    channel.thread.close()
    assert channel.calls == []
    assert M.vdec_destroy_channel_desc(channel.desc) == SUCCESS


def test_a_device_reset_under_a_live_channel_leaves_destroy_returning(ctx):
    packets = encode_clip("libx264", 2, 192, 128, profile="baseline")
    channel = Channel(ctx, 1)
    assert channel.send(packets[0]) == SUCCESS
    assert acl.rt.destroy_context(ctx) == SUCCESS
    assert acl.rt.reset_device(0) == SUCCESS  # tears down the channel's stream and subscription
    assert M.vdec_destroy_channel(channel.desc) == SUCCESS
    assert M.vdec_destroy_channel_desc(channel.desc) == SUCCESS
    channel.thread.close()


def test_s_vdec_trace_one_h265_frame_sent_ten_times_through_one_buffer(ctx):
    """S-VDEC: a one-frame 1280x720 H.265 file sent ten times with user_data None; ten callbacks by the time
    vdec_destroy_channel returns, each picture the size S-VDR checks (align16(w) * align2(h) * 3 / 2)."""
    (frame,) = encode_clip("libx265", 1, 1280, 720)
    expected = reference_nv12("hevc", [frame], nv21=True)[0]
    channel = Channel(ctx, H265, NV21, channel_id=10)
    size = 1280 * 720 * 3 // 2
    for _ in range(10):
        assert channel.send(frame, None, out_size=size, fmt=NV21) == SUCCESS
    assert channel.close() == SUCCESS
    assert len(channel.calls) == 10
    for call in channel.calls:
        assert call["ret"] == 0 and call["size"] == size == 1382400
        luma, chroma = nv12_of(call)
        np.testing.assert_array_equal(luma, expected[0])
        np.testing.assert_array_equal(chroma, expected[1])


def test_destroy_drops_the_stored_callback_as_pyacl_does(ctx):
    channel = Channel(ctx, 1)
    assert channel.close() == SUCCESS
    with pytest.raises(RuntimeError, match="did not set callback"):
        M.vdec_get_channel_desc_callback(channel.desc)
    assert M.vdec_create_channel(channel.desc) == INVALID  # a callback is needed again


@pytest.mark.parametrize(("out_mode", "options", "held_back"), [(1, {"tune": "zerolatency"}, 0), (0, {}, 2)])
def test_out_mode_1_delivers_each_frame_at_its_send_and_out_mode_0_lets_the_decoder_delay(
    ctx, out_mode, options, held_back
):
    packets = encode_clip("libx264", 6, 192, 128, **options)
    channel = Channel(ctx, H264_MAIN)
    M.vdec_destroy_channel(channel.desc)
    M.vdec_set_channel_desc_callback(channel.desc, channel.callback)
    assert M.vdec_set_channel_desc_out_mode(channel.desc, out_mode) == SUCCESS
    assert M.vdec_create_channel(channel.desc) == SUCCESS
    live = vdec.channel_descs.get(channel.desc).channel
    waiting = []
    for index, packet in enumerate(packets):
        assert channel.send(packet, index) == SUCCESS
        waiting.append(len(live.waiting))  # frames sent whose picture the decoder has not given yet
    assert max(waiting) == held_back
    assert channel.close() == SUCCESS
    assert sorted(c["user_data"] for c in channel.calls) == list(range(6))


def test_two_channels_served_by_one_report_thread_keep_their_own_order(ctx):
    first = Channel(ctx, H264_MAIN, channel_id=1)
    second_desc = M.vdec_create_channel_desc()
    calls = []
    M.vdec_set_channel_desc_channel_id(second_desc, 2)
    M.vdec_set_channel_desc_thread_id(second_desc, first.thread.tid)  # the same thread serves both
    M.vdec_set_channel_desc_callback(second_desc, lambda i, o, u: calls.append((u, threading.get_ident())))
    M.vdec_set_channel_desc_entype(second_desc, H265)
    assert M.vdec_create_channel(second_desc) == SUCCESS
    h264 = encode_clip("libx264", 5, 192, 128)
    h265 = encode_clip("libx265", 5, 192, 128)
    data = to_device(max(h265, key=len), 1 << 16)
    config = M.vdec_create_frame_config()
    for index, (a, b) in enumerate(zip(h264, h265, strict=True)):
        assert first.send(a, index) == SUCCESS
        acl.rt.memcpy(data, 1 << 16, acl.util.bytes_to_ptr(b), len(b), 1)
        stream_desc = M.dvpp_create_stream_desc()
        M.dvpp_set_stream_desc_data(stream_desc, data)
        M.dvpp_set_stream_desc_size(stream_desc, len(b))
        out = M.dvpp_create_pic_desc()
        buffer, _ = M.dvpp_malloc(192 * 128 * 3 // 2)
        M.dvpp_set_pic_desc_data(out, buffer)
        M.dvpp_set_pic_desc_size(out, 192 * 128 * 3 // 2)
        assert M.vdec_send_frame(second_desc, stream_desc, out, config, index) == SUCCESS
    assert M.vdec_destroy_channel(second_desc) == SUCCESS
    assert first.close() == SUCCESS
    assert [c["user_data"] for c in first.calls] == reference_by_frame("h264", h264)[1]  # each its decoder's order
    assert calls == [(i, first.thread.tid) for i in reference_by_frame("hevc", h265)[1]]


def test_a_callback_thread_that_has_exited_loses_its_frames_and_destroy_says_so(ctx, monkeypatch, acl_log):
    monkeypatch.setattr(video_channel, "DRAIN_PATIENCE_S", 60.0)  # the runtime's reaper, not patience, ends it
    tid, ret = acl.util.start_thread(lambda args: None, [])
    assert ret == SUCCESS
    assert acl.util.stop_thread(tid) == SUCCESS  # joined: the thread is gone
    desc = M.vdec_create_channel_desc()
    calls = []
    M.vdec_set_channel_desc_thread_id(desc, tid)
    M.vdec_set_channel_desc_callback(desc, lambda *args: calls.append(args))
    M.vdec_set_channel_desc_entype(desc, 1)
    assert M.vdec_create_channel(desc) == SUCCESS
    packets = encode_clip("libx264", 3, 192, 128, profile="baseline")
    data = to_device(max(packets, key=len))
    config = M.vdec_create_frame_config()
    for packet in packets:
        acl.rt.memcpy(data, len(max(packets, key=len)), acl.util.bytes_to_ptr(packet), len(packet), 1)
        stream_desc = M.dvpp_create_stream_desc()
        M.dvpp_set_stream_desc_data(stream_desc, data)
        M.dvpp_set_stream_desc_size(stream_desc, len(packet))
        out = M.dvpp_create_pic_desc()
        buffer, _ = M.dvpp_malloc(192 * 128 * 3 // 2)
        M.dvpp_set_pic_desc_data(out, buffer)
        M.dvpp_set_pic_desc_size(out, 192 * 128 * 3 // 2)
        assert M.vdec_send_frame(desc, stream_desc, out, config, None) == SUCCESS
    assert M.vdec_destroy_channel(desc) == REPORT_TIMEOUT
    assert calls == []
    assert any("has exited" in r.getMessage() for r in acl_log.records)


def send_to(desc: int, config: int, packets: list[bytes]) -> None:
    """Send each packet through one reused input buffer, each with its own output desc."""
    data = to_device(max(packets, key=len))
    for packet in packets:
        acl.rt.memcpy(data, len(max(packets, key=len)), acl.util.bytes_to_ptr(packet), len(packet), 1)
        stream_desc = M.dvpp_create_stream_desc()
        M.dvpp_set_stream_desc_data(stream_desc, data)
        M.dvpp_set_stream_desc_size(stream_desc, len(packet))
        out = M.dvpp_create_pic_desc()
        buffer, _ = M.dvpp_malloc(192 * 128 * 3 // 2)
        M.dvpp_set_pic_desc_data(out, buffer)
        M.dvpp_set_pic_desc_size(out, 192 * 128 * 3 // 2)
        assert M.vdec_send_frame(desc, stream_desc, out, config, None) == SUCCESS


def test_regression_destroy_after_the_callback_thread_exited_with_frames_in_the_reorder_delay_stuck_the_channel(
    ctx, monkeypatch, acl_log
):
    """The thread exited and was unsubscribed (a wait reaped it) while B-frames sat in the decoder: destroy's flush
    could not launch their callbacks, returned 107015 and left the channel "being destroyed" with its stream."""
    monkeypatch.setattr(video_channel, "DRAIN_PATIENCE_S", 60.0)  # the runtime's reaper, not patience, ends it
    tid, ret = acl.util.start_thread(lambda args: None, [])
    assert ret == SUCCESS
    assert acl.util.stop_thread(tid) == SUCCESS
    desc = M.vdec_create_channel_desc()
    calls = []
    M.vdec_set_channel_desc_thread_id(desc, tid)
    M.vdec_set_channel_desc_callback(desc, lambda *args: calls.append(args))
    M.vdec_set_channel_desc_entype(desc, H264_MAIN)
    assert M.vdec_create_channel(desc) == SUCCESS
    live = vdec.channel_descs.get(desc).channel
    config = M.vdec_create_frame_config()
    send_to(desc, config, encode_clip("libx264", 4, 192, 128)[:3])  # x264's B-frames: the decoder holds some back
    assert live.waiting
    assert acl.rt.synchronize_device() == SUCCESS  # reaps the exited thread: the channel's stream is unsubscribed
    assert live.stream.subscription is None
    acl_log.clear()
    assert M.vdec_destroy_channel(desc) == REPORT_TIMEOUT
    assert calls == []
    assert live.stream.destroyed  # not leaked
    dropped = [r for r in acl_log.records if "can no longer run" in r.getMessage()]
    assert len(dropped) == 1 and dropped[0].levelname == "WARNING"
    assert M.vdec_destroy_channel(desc) == INVALID  # freed: no channel left, not "being destroyed"
    assert "has no channel" in acl_log.records[-1].getMessage()
    assert M.vdec_destroy_channel_desc(desc) == SUCCESS
    assert M.vdec_destroy_frame_config(config) == SUCCESS


def test_regression_destroy_after_a_device_reset_with_frames_in_the_reorder_delay_stuck_the_channel(ctx, acl_log):
    channel = Channel(ctx, H264_MAIN)
    live = vdec.channel_descs.get(channel.desc).channel
    for packet in encode_clip("libx264", 4, 192, 128)[:3]:
        assert channel.send(packet) == SUCCESS
    assert live.waiting
    assert acl.rt.destroy_context(ctx) == SUCCESS
    assert acl.rt.reset_device(0) == SUCCESS  # tears down the channel's stream and subscription
    acl_log.clear()
    assert M.vdec_destroy_channel(channel.desc) == REPORT_TIMEOUT  # frames were sent whose callbacks never ran
    assert len([r for r in acl_log.records if "can no longer run" in r.getMessage()]) == 1
    assert M.vdec_destroy_channel(channel.desc) == INVALID  # freed
    assert M.vdec_destroy_channel_desc(channel.desc) == SUCCESS
    channel.thread.close()
