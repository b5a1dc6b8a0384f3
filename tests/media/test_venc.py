"""VENC: NV12/NV21 to H.264/H.265 through acl.media, payloads handed to the report thread's callbacks (§9)."""

from __future__ import annotations

import os
import threading
import time

import av
import numpy as np
import pytest

import acl
from openacl.media import vdec, venc
from openacl.runtime import device as rt_device
from tests.forking import held, in_child
from tests.media.video_clips import (
    H264_MAIN,
    H265,
    NV12,
    NV21,
    SUCCESS,
    ReportThread,
    from_device,
    psnr,
    source_frames,
)

M = acl.media
INVALID = 100000
FORMAT_NOT_MATCH = 100027
API_NOT_SUPPORT = 200001

# x264/x265 at their default quality (CRF 23 / 28, preset veryfast) on the tests' textured gradients give
# 38-45 dB; 32 dB is the documented floor ("visually lossless-ish": any mistake in layout gives under 15 dB).
PSNR_FLOOR_DB = 32.0


class Encoder:
    """A VENC channel as S-VENC builds one; the callback copies every payload out of the system's stream desc."""

    def __init__(self, context: int, entype: int, width: int, height: int, fmt: int = NV12, interval: int = 16):
        self.thread = ReportThread(context)
        self.width, self.height, self.fmt = width, height, fmt
        self.calls: list[dict] = []
        self.on_callback = None
        self.desc = M.venc_create_channel_desc()
        assert M.venc_set_channel_desc_thread_id(self.desc, self.thread.tid) == SUCCESS
        assert M.venc_set_channel_desc_callback(self.desc, self.callback) == SUCCESS
        assert M.venc_set_channel_desc_entype(self.desc, entype) == SUCCESS
        assert M.venc_set_channel_desc_pic_format(self.desc, fmt) == SUCCESS
        assert M.venc_set_channel_desc_key_frame_interval(self.desc, interval) == SUCCESS
        assert M.venc_set_channel_desc_pic_width(self.desc, width) == SUCCESS
        assert M.venc_set_channel_desc_pic_height(self.desc, height) == SUCCESS
        assert M.venc_create_channel(self.desc) == SUCCESS
        self.config = M.venc_create_frame_config()
        self.input, _ = M.dvpp_malloc(width * height * 3 // 2)
        self.pic = M.dvpp_create_pic_desc()
        M.dvpp_set_pic_desc_data(self.pic, self.input)
        M.dvpp_set_pic_desc_size(self.pic, width * height * 3 // 2)

    def callback(self, input_desc, output_desc, user_data):
        call = {"input": input_desc, "output": output_desc, "user_data": user_data, "thread": threading.get_ident()}
        call["ret"] = M.dvpp_get_stream_desc_ret_code(output_desc)
        call["size"] = M.dvpp_get_stream_desc_size(output_desc)
        call["format"] = M.dvpp_get_stream_desc_format(output_desc)
        call["timestamp"] = M.dvpp_get_stream_desc_timestamp(output_desc)
        call["payload"] = from_device(M.dvpp_get_stream_desc_data(output_desc), call["size"]) if call["size"] else b""
        self.calls.append(call)
        if self.on_callback is not None:
            self.on_callback(call)

    def send(self, yuv420p: np.ndarray, user_data=None, force_i: int = 0) -> int:
        """Pack one yuv420p frame as the channel's NV12/NV21 into the reused input buffer and send it."""
        w, h = self.width, self.height
        flat = yuv420p.reshape(-1)
        u = flat[w * h : w * h + w * h // 4].reshape(h // 2, w // 2)
        v = flat[w * h + w * h // 4 :].reshape(h // 2, w // 2)
        chroma = np.empty((h // 2, w), np.uint8)
        chroma[:, 0::2], chroma[:, 1::2] = (u, v) if self.fmt == NV12 else (v, u)
        data = np.concatenate([yuv420p[:h].reshape(-1), chroma.reshape(-1)]).tobytes()
        assert acl.rt.memcpy(self.input, len(data), acl.util.bytes_to_ptr(data), len(data), 1) == SUCCESS
        M.venc_set_frame_config_eos(self.config, 0)
        M.venc_set_frame_config_force_i_frame(self.config, force_i)
        ret = M.venc_send_frame(self.desc, self.pic, 0, self.config, user_data)
        acl.rt.memset(self.input, len(data), 0, len(data))  # consumed at the send: overwriting changes nothing
        return ret

    def eos(self) -> int:
        M.venc_set_frame_config_eos(self.config, 1)
        return M.venc_send_frame(self.desc, 0, 0, self.config, None)

    def close(self) -> int:
        ret = M.venc_destroy_channel(self.desc)
        self.thread.close()
        return ret

    def stream(self) -> bytes:
        return b"".join(call["payload"] for call in self.calls)


def decode_all(decoder: str, stream: bytes) -> tuple[list[av.VideoFrame], list[av.Packet], av.CodecContext]:
    context = av.CodecContext.create(decoder, "r")
    packets = context.parse(stream) + context.parse(None)
    pictures = []
    for packet in packets:
        pictures += context.decode(packet)
    pictures += context.decode(None)
    return pictures, packets, context


def yuv420p_of(picture: av.VideoFrame) -> np.ndarray:
    return picture.to_ndarray(format="yuv420p")


@pytest.mark.parametrize(
    ("entype", "decoder", "profile"),
    [(1, "h264", "Constrained Baseline"), (2, "h264", "Main"), (3, "h264", "High"), (H265, "hevc", "Main")],
)
@pytest.mark.parametrize("fmt", [NV12, NV21])
def test_round_trip_through_pyav_is_above_the_psnr_floor(ctx, entype, decoder, profile, fmt):
    width, height, count = 192, 128, 10
    frames = source_frames(count, width, height, seed=3)
    encoder = Encoder(ctx, entype, width, height, fmt)
    for index, frame in enumerate(frames):
        assert encoder.send(frame, ("pic", index)) == SUCCESS
        assert len(encoder.calls) <= index + 1
    assert encoder.eos() == SUCCESS
    assert [c["user_data"] for c in encoder.calls] == [("pic", i) for i in range(count)]  # EOS: all delivered
    assert encoder.close() == SUCCESS
    assert {c["thread"] for c in encoder.calls} == {encoder.thread.tid}
    assert all(c["ret"] == 0 and c["size"] > 0 and c["format"] == entype for c in encoder.calls)
    assert [c["timestamp"] for c in encoder.calls] == list(range(count))
    assert all(c["input"] == encoder.pic for c in encoder.calls)
    pictures, _, context = decode_all(decoder, encoder.stream())
    assert len(pictures) == count
    assert context.profile == profile
    for picture, source in zip(pictures, frames, strict=True):
        assert (picture.width, picture.height) == (width, height)
        assert psnr(yuv420p_of(picture), source) > PSNR_FLOOR_DB


def test_key_frames_follow_the_interval_and_force_i_frame(ctx):
    encoder = Encoder(ctx, 2, 160, 128, interval=4)
    for index, frame in enumerate(source_frames(10, 160, 128)):
        assert encoder.send(frame, index, force_i=int(index == 6)) == SUCCESS
    assert encoder.close() == SUCCESS
    _, packets, _ = decode_all("h264", encoder.stream())
    assert [i for i, p in enumerate(packets) if p.is_keyframe] == [0, 4, 6]  # a forced IDR restarts the GOP
    first = encoder.calls[0]["payload"]
    assert first.startswith((b"\x00\x00\x00\x01\x67", b"\x00\x00\x01\x67"))  # SPS first: the stream starts here
    # each payload is one frame's access unit: every one decodes on its own decoder once the parameter sets came
    assert len(encoder.calls) == 10


def test_the_output_stream_desc_belongs_to_the_system(ctx):
    encoder = Encoder(ctx, 1, 128, 128)
    seen = []

    def destroy_it(call):
        seen.append(call["output"])
        M.dvpp_destroy_stream_desc(call["output"])  # the user must not, but it must not break anything either

    for index, frame in enumerate(source_frames(3, 128, 128)):
        encoder.on_callback = destroy_it if index == 1 else None
        assert encoder.send(frame, index) == SUCCESS
    assert encoder.close() == SUCCESS
    outputs = [c["output"] for c in encoder.calls]
    assert len(set(outputs)) == 3
    for handle in outputs:  # gone once its callback returned
        assert M.dvpp_get_stream_desc_size(handle) == 0
        assert M.dvpp_destroy_stream_desc(handle) == INVALID


def test_eos_and_destroy_inside_a_callback_are_refused_and_venc_checks_its_input(ctx):
    encoder = Encoder(ctx, 2, 128, 128)
    codes = []

    def inside(call):
        codes.append(M.venc_destroy_channel(encoder.desc))
        config = M.venc_create_frame_config()
        M.venc_set_frame_config_eos(config, 1)
        codes.append(M.venc_send_frame(encoder.desc, 0, 0, config, None))

    encoder.on_callback = inside
    frame = source_frames(1, 128, 128)[0]
    assert encoder.send(frame) == SUCCESS
    assert encoder.eos() == SUCCESS
    assert codes == [API_NOT_SUPPORT, API_NOT_SUPPORT]
    encoder.on_callback = None
    M.venc_set_frame_config_eos(encoder.config, 0)
    assert M.venc_send_frame(encoder.desc, encoder.pic, 1, encoder.config, None) == INVALID  # reserve must be 0
    assert M.venc_send_frame(encoder.desc, 0, 0, encoder.config, None) == INVALID  # no picture without eos
    small = M.dvpp_create_pic_desc()
    M.dvpp_set_pic_desc_data(small, encoder.input)
    M.dvpp_set_pic_desc_size(small, 128 * 128)  # below w*h*3/2
    assert M.venc_send_frame(encoder.desc, small, 0, encoder.config, None) == INVALID
    M.dvpp_set_pic_desc_size(small, 128 * 128 * 3)  # at w*h*3: outside [w*h*3/2, w*h*3)
    assert M.venc_send_frame(encoder.desc, small, 0, encoder.config, None) == INVALID
    assert M.venc_send_frame(encoder.desc, encoder.config, 0, encoder.config, None) == INVALID  # wrong kind
    with pytest.raises(RuntimeError, match="did not set callback, failed"):
        M.venc_send_frame(M.venc_create_channel_desc(), encoder.pic, 0, encoder.config, None)
    assert encoder.close() == SUCCESS
    assert len(encoder.calls) == 1


def test_channel_desc_settings_and_create_rules(ctx):
    desc = M.venc_create_channel_desc()
    assert M.venc_get_channel_desc_key_frame_interval(desc) == 16
    assert M.venc_get_channel_desc_pic_format(desc) == NV12
    assert M.venc_get_channel_desc_buf_size(desc) == venc.DEFAULT_BUF_SIZE
    for name, value in [("pic_width", 640), ("pic_height", 480), ("key_frame_interval", 30), ("buf_size", 1 << 20),
                        ("rc_mode", 2), ("src_rate", 25), ("max_bit_rate", 2000), ("entype", 3),
                        ("pic_format", NV21), ("thread_id", 99)]:  # fmt: skip
        assert getattr(M, f"venc_set_channel_desc_{name}")(desc, value) == SUCCESS
        assert getattr(M, f"venc_get_channel_desc_{name}")(desc) == value
    assert M.venc_set_channel_desc_pic_format(desc, 12) == FORMAT_NOT_MATCH
    assert M.venc_set_channel_desc_entype(desc, 9) == INVALID
    assert M.venc_create_channel(desc) == INVALID  # no callback
    M.venc_set_channel_desc_callback(desc, lambda *a: None)
    thread = ReportThread(ctx)
    M.venc_set_channel_desc_thread_id(desc, thread.tid)
    for width, height in [(100, 128), (2000, 128), (129, 128)]:  # below 128, above 1920 (310), odd
        M.venc_set_channel_desc_pic_width(desc, width)
        M.venc_set_channel_desc_pic_height(desc, height)
        assert M.venc_create_channel(desc) == INVALID
    M.venc_set_channel_desc_pic_width(desc, 640)
    assert M.venc_create_channel(desc) == SUCCESS  # CBR at 2000 kbit/s, high profile
    assert M.venc_destroy_channel_desc(desc) == 148051
    assert M.venc_destroy_channel(desc) == SUCCESS
    assert M.venc_destroy_channel_desc(desc) == SUCCESS
    config = M.venc_create_frame_config()
    assert (M.venc_get_frame_config_eos(config), M.venc_get_frame_config_force_i_frame(config)) == (0, 0)
    assert M.venc_set_frame_config_force_i_frame(config, 1) == SUCCESS
    assert M.venc_get_frame_config_force_i_frame(config) == 1
    assert M.venc_destroy_frame_config(config) == SUCCESS
    assert M.venc_get_frame_config_eos(config) == 0  # destroyed: the getter's 0
    thread.close()


def test_payloads_go_into_the_users_buffer_when_buf_addr_is_set_and_oversize_ones_fail(ctx):
    encoder = Encoder(ctx, 1, 128, 128)
    assert encoder.close() == SUCCESS
    with pytest.raises(RuntimeError, match="did not set callback"):  # destroy dropped the stored callable
        M.venc_get_channel_desc_callback(encoder.desc)
    encoder.thread = ReportThread(ctx)
    M.venc_set_channel_desc_thread_id(encoder.desc, encoder.thread.tid)
    M.venc_set_channel_desc_callback(encoder.desc, encoder.callback)
    buffer, _ = M.dvpp_malloc(1 << 16)
    assert M.venc_set_channel_desc_buf_addr(encoder.desc, buffer) == SUCCESS
    assert M.venc_set_channel_desc_buf_size(encoder.desc, 1 << 16) == SUCCESS
    seen = []
    encoder.on_callback = lambda call: seen.append(M.dvpp_get_stream_desc_data(call["output"]))
    frames = source_frames(3, 128, 128)
    assert M.venc_create_channel(encoder.desc) == SUCCESS
    for index, frame in enumerate(frames):
        assert encoder.send(frame, index) == SUCCESS
    assert M.venc_set_channel_desc_buf_size(encoder.desc, 8) == SUCCESS  # taken at the next create
    assert encoder.send(frames[0], 3) == SUCCESS
    assert M.venc_destroy_channel(encoder.desc) == SUCCESS
    assert seen == [buffer] * 4
    assert [c["ret"] for c in encoder.calls] == [0, 0, 0, 0]
    pictures, _, _ = decode_all("h264", encoder.stream())
    assert len(pictures) == 4
    M.venc_set_channel_desc_callback(encoder.desc, encoder.callback)
    assert M.venc_create_channel(encoder.desc) == SUCCESS
    assert encoder.send(frames[0], 4) == SUCCESS
    assert encoder.close() == SUCCESS
    assert (encoder.calls[4]["ret"], encoder.calls[4]["size"]) == (venc.RET_BUFFER_FULL, 0)


def _desc_ready_to_create(thread: ReportThread) -> int:
    desc = M.venc_create_channel_desc()
    M.venc_set_channel_desc_thread_id(desc, thread.tid)
    M.venc_set_channel_desc_callback(desc, lambda *a: None)
    M.venc_set_channel_desc_entype(desc, 1)
    M.venc_set_channel_desc_pic_width(desc, 128)
    M.venc_set_channel_desc_pic_height(desc, 128)
    return desc


BOUNDARY_VALUES = [0, -1, 2**31, 2**32, 2**63, 2**64]


@pytest.mark.parametrize("setting", ["key_frame_interval", "src_rate"])
def test_regression_venc_key_frame_interval_or_src_rate_past_int32_was_an_internal_error(ctx, setting, caplog):
    thread = ReportThread(ctx)
    desc = _desc_ready_to_create(thread)
    setter = getattr(M, f"venc_set_channel_desc_{setting}")
    for value in [2**31, 2**32 - 1, -1]:  # -1 is 2**32 - 1 for the "I" parse, as in pyACL
        caplog.clear()
        assert setter(desc, value) == SUCCESS  # the setter stores any uint32, as ACL's does
        assert M.venc_create_channel(desc) == INVALID
        assert f"venc {setting} {value & 0xFFFFFFFF} is not in 0..{2**31 - 1}" in caplog.text
        assert "Traceback" not in caplog.text
    assert setter(desc, 2**31 - 1) == SUCCESS  # the largest the encoder takes still opens
    assert M.venc_create_channel(desc) == SUCCESS
    assert M.venc_destroy_channel(desc) == SUCCESS
    assert M.venc_destroy_channel_desc(desc) == SUCCESS
    thread.close()


@pytest.mark.parametrize(
    "setting", ["key_frame_interval", "src_rate", "max_bit_rate", "rc_mode", "buf_size", "pic_width", "pic_height"]
)
def test_every_venc_integer_setting_at_the_boundaries_is_success_or_invalid_param(ctx, setting):
    thread = ReportThread(ctx)
    for value in BOUNDARY_VALUES:
        desc = _desc_ready_to_create(thread)
        assert getattr(M, f"venc_set_channel_desc_{setting}")(desc, value) == SUCCESS
        ret = M.venc_create_channel(desc)
        assert ret in (SUCCESS, INVALID), (value, ret)
        if ret == SUCCESS:
            assert M.venc_destroy_channel(desc) == SUCCESS
        assert M.venc_destroy_channel_desc(desc) == SUCCESS
    thread.close()


def test_venc_rc_mode_and_max_bit_rate_outside_what_the_encoder_takes_are_refused_at_create(ctx):
    thread = ReportThread(ctx)
    desc = _desc_ready_to_create(thread)
    M.venc_set_channel_desc_rc_mode(desc, 3)
    assert M.venc_create_channel(desc) == INVALID
    M.venc_set_channel_desc_rc_mode(desc, 2)
    M.venc_set_channel_desc_max_bit_rate(desc, (2**31 - 1) // 1000 + 1)
    assert M.venc_create_channel(desc) == INVALID
    M.venc_set_channel_desc_max_bit_rate(desc, 2000)
    assert M.venc_create_channel(desc) == SUCCESS
    assert M.venc_destroy_channel(desc) == SUCCESS
    assert M.venc_destroy_channel_desc(desc) == SUCCESS
    thread.close()


def test_regression_venc_buf_addr_in_read_only_memory_lost_every_callback(ctx, caplog):
    frozen = np.zeros(1 << 16, np.uint8)
    frozen.flags.writeable = False
    encoder = Encoder(ctx, 1, 128, 128)
    assert encoder.close() == SUCCESS
    encoder.thread = ReportThread(ctx)
    M.venc_set_channel_desc_thread_id(encoder.desc, encoder.thread.tid)
    M.venc_set_channel_desc_callback(encoder.desc, encoder.callback)
    with pytest.warns(Warning):  # numpy_to_ptr is deprecated, and the way to lend read-only memory
        frozen_ptr = acl.util.numpy_to_ptr(frozen)
    assert M.venc_set_channel_desc_buf_addr(encoder.desc, frozen_ptr) == SUCCESS
    assert M.venc_set_channel_desc_buf_size(encoder.desc, frozen.nbytes) == SUCCESS
    caplog.clear()
    assert M.venc_create_channel(encoder.desc) == INVALID  # refused before any frame is sent
    assert "read-only memory" in caplog.text
    small, _ = M.dvpp_malloc(1 << 10)
    M.venc_set_channel_desc_buf_addr(encoder.desc, small)
    assert M.venc_create_channel(encoder.desc) == INVALID  # buf_size reaches past the allocation
    M.venc_set_channel_desc_buf_size(encoder.desc, 1 << 10)
    assert M.venc_create_channel(encoder.desc) == SUCCESS
    assert M.dvpp_free(small) == SUCCESS  # freed under the channel: every frame still gets its callback
    for index, frame in enumerate(source_frames(3, 128, 128)):
        assert encoder.send(frame, index) == SUCCESS
    assert encoder.eos() == SUCCESS
    assert [(c["user_data"], c["ret"], c["size"]) for c in encoder.calls] == [
        (i, venc.RET_BUFFER_FULL, 0) for i in range(3)
    ]
    assert encoder.close() == SUCCESS


def _channel_desc(kind: str, thread_id: int, channel_id: int = 0) -> int:
    """A VENC (128x128 H.264 NV12) or VDEC (H.264 to NV12) channel desc whose callbacks ``thread_id`` serves."""
    if kind == "venc":
        desc = M.venc_create_channel_desc()
        assert M.venc_set_channel_desc_thread_id(desc, thread_id) == SUCCESS
        assert M.venc_set_channel_desc_callback(desc, lambda *frame: None) == SUCCESS
        assert M.venc_set_channel_desc_entype(desc, H264_MAIN) == SUCCESS
        assert M.venc_set_channel_desc_pic_format(desc, NV12) == SUCCESS
        assert M.venc_set_channel_desc_pic_width(desc, 128) == SUCCESS
        assert M.venc_set_channel_desc_pic_height(desc, 128) == SUCCESS
        return desc
    desc = M.vdec_create_channel_desc()
    assert M.vdec_set_channel_desc_channel_id(desc, channel_id) == SUCCESS
    assert M.vdec_set_channel_desc_thread_id(desc, thread_id) == SUCCESS
    assert M.vdec_set_channel_desc_callback(desc, lambda *frame: None) == SUCCESS
    assert M.vdec_set_channel_desc_entype(desc, H264_MAIN) == SUCCESS
    assert M.vdec_set_channel_desc_out_pic_format(desc, NV12) == SUCCESS
    return desc


@pytest.mark.subprocess
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_regression_fork_during_venc_create_channel_hung_the_child_in_its_own_create(ctx):
    """A fork while other threads were inside venc_create_channel and vdec_create_channel left the VENC and VDEC
    lifetime locks held in the child for ever: the child hung in its own create/destroy. Every lock of openacl is
    free in a forked child."""
    thread = ReportThread(ctx)
    descs = {"venc": _channel_desc("venc", thread.tid), "vdec": _channel_desc("vdec", thread.tid)}
    create = {"venc": M.venc_create_channel, "vdec": M.vdec_create_channel}
    destroy = {"venc": M.venc_destroy_channel, "vdec": M.vdec_destroy_channel}
    results: dict[str, int] = {}

    def create_in_parent(kind: str) -> None:
        acl.rt.set_context(ctx)
        results[kind] = create[kind](descs[kind])

    # Each creating thread holds its lifetime lock while it waits for the device lock, held here.
    with held([rt_device.get(0).lock]):
        creators = [threading.Thread(target=create_in_parent, args=(kind,)) for kind in descs]
        for creator in creators:
            creator.start()
        give_up = time.monotonic() + 30  # a hang guard, not a timing target
        while not (venc._lifetime.locked() and vdec._lifetime.locked()):
            if time.monotonic() > give_up or not all(c.is_alive() for c in creators):
                pytest.fail(f"the creating threads never held both lifetime locks: {results}")
            time.sleep(0.001)

        def child() -> str:
            child_thread = ReportThread(ctx)
            answers = []
            for kind in descs:
                desc = _channel_desc(kind, child_thread.tid, channel_id=1)
                answers.append(f"{kind} {create[kind](desc)} {destroy[kind](desc)}")
            child_thread.close()
            return ", ".join(answers)

        answer = in_child(child)
    for creator in creators:
        creator.join()
    assert answer == "venc 0 0, vdec 0 0"
    assert results == {"venc": SUCCESS, "vdec": SUCCESS}
    for kind, desc in descs.items():
        assert destroy[kind](desc) == SUCCESS
    thread.close()
