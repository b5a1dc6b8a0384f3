"""Video through acl.media: VDEC and VENC channels against PyAV doing the same codec work alone, side by side.

(a) VDEC: a 720p H.264 clip (made here with libx264), every frame sent through one reused DVPP input buffer into
    its own NV12 output buffer, until vdec_destroy_channel has returned, i.e. every callback has run on the report
    thread (callbacks included); vs PyAV decoding the same packets (decode + flush, no copy out). Frames per
    second.                                                                               target ratio <= 1.2
(b) VENC: 720p NV12 frames from DVPP memory, H.264 high profile, until the EOS send has returned (every payload
    handed to a callback, which copies it to the host); vs PyAV encoding the same frames (yuv420p arrays) with
    the encoder settings VENC uses (libx264 veryfast, zerolatency, GOP 16). Frames per second.  target <= 1.2

Each figure is the best of interleaved rounds; the notes give every round's spread (slowest / fastest).

Usage: python benchmarks/media_video.py [--quick] [--json]
"""

from __future__ import annotations

import sys
import threading
import time
from fractions import Fraction

import av
import numpy as np
from _common import argument_parser, interleaved, print_rows

import openacl

openacl.install()
import acl  # noqa: E402

WIDTH, HEIGHT = 1280, 720
H264_MAIN, H264_HIGH, NV12 = 2, 3, 1
H2D, D2H = 1, 2
NOT_SUBSCRIBED = 107012


def make_frames(count: int) -> list[np.ndarray]:
    """A textured picture panning 3 pixels a frame over moving gradients, as yuv420p arrays (h*3/2, w): motion
    the encoder can follow and detail it has to code, like camera footage."""
    ys, xs = np.mgrid[0:HEIGHT, 0:WIDTH]
    texture = np.random.default_rng(0).integers(0, 48, (HEIGHT, WIDTH + 3 * count)).astype(np.float64)
    frames = []
    for index in range(count):
        frame = np.empty((HEIGHT * 3 // 2, WIDTH), np.uint8)
        gradient = (xs + ys // 2 + index * 5 + 24 * np.sin((xs + 7 * index) / 17.0)) % 180 + 16
        frame[:HEIGHT] = (gradient + texture[:, 3 * index : 3 * index + WIDTH]).astype(np.uint8)
        frame[HEIGHT:] = (128 + 30 * np.sin(np.arange(WIDTH) / 23.0 + index / 5.0)).astype(np.uint8)
        frames.append(frame)
    return frames


def encode_clip(frames: list[np.ndarray]) -> list[bytes]:
    context = av.CodecContext.create("libx264", "w")
    context.width, context.height, context.pix_fmt = WIDTH, HEIGHT, "yuv420p"
    context.framerate, context.time_base = 25, Fraction(1, 25)
    context.options = {"preset": "veryfast"}
    packets = []
    for index, array in enumerate(frames):
        frame = av.VideoFrame.from_ndarray(array, format="yuv420p")
        frame.pts = index
        packets += [bytes(p) for p in context.encode(frame)]
    return packets + [bytes(p) for p in context.encode(None)]


class CallbackThread:
    def __init__(self, context: int) -> None:
        self.running = True

        def loop(args):
            acl.rt.set_context(args[0])
            while self.running:
                if acl.rt.process_report(100) == NOT_SUBSCRIBED:  # between channels: wait, not spin, so
                    time.sleep(0.01)  # that the baseline rounds run on a quiet machine

        self.tid, _ = acl.util.start_thread(loop, [context])

    def close(self) -> None:
        self.running = False
        acl.util.stop_thread(self.tid)


def vdec_run(thread: CallbackThread, packets: list[bytes], outputs: list[int]) -> float:
    done = []

    def callback(input_desc, output_desc, user_data):
        done.append(acl.media.dvpp_get_pic_desc_ret_code(output_desc))
        acl.media.dvpp_destroy_stream_desc(input_desc)
        acl.media.dvpp_destroy_pic_desc(output_desc)

    desc = acl.media.vdec_create_channel_desc()
    acl.media.vdec_set_channel_desc_channel_id(desc, 0)
    acl.media.vdec_set_channel_desc_thread_id(desc, thread.tid)
    acl.media.vdec_set_channel_desc_callback(desc, callback)
    acl.media.vdec_set_channel_desc_entype(desc, H264_MAIN)
    acl.media.vdec_set_channel_desc_out_pic_format(desc, NV12)
    input_size = max(len(p) for p in packets)
    input_buffer, _ = acl.media.dvpp_malloc(input_size)
    config = acl.media.vdec_create_frame_config()
    out_size = WIDTH * HEIGHT * 3 // 2
    start = time.perf_counter()
    assert acl.media.vdec_create_channel(desc) == 0
    for index, packet in enumerate(packets):
        acl.rt.memcpy(input_buffer, input_size, acl.util.bytes_to_ptr(packet), len(packet), H2D)
        stream_desc = acl.media.dvpp_create_stream_desc()
        acl.media.dvpp_set_stream_desc_data(stream_desc, input_buffer)
        acl.media.dvpp_set_stream_desc_size(stream_desc, len(packet))
        pic_desc = acl.media.dvpp_create_pic_desc()
        acl.media.dvpp_set_pic_desc_data(pic_desc, outputs[index])
        acl.media.dvpp_set_pic_desc_size(pic_desc, out_size)
        acl.media.dvpp_set_pic_desc_format(pic_desc, NV12)
        assert acl.media.vdec_send_frame(desc, stream_desc, pic_desc, config, index) == 0
    assert acl.media.vdec_destroy_channel(desc) == 0
    elapsed = time.perf_counter() - start
    assert done == [0] * len(packets), done[:5]
    acl.media.vdec_destroy_channel_desc(desc)
    acl.media.vdec_destroy_frame_config(config)
    acl.media.dvpp_free(input_buffer)
    return elapsed


def pyav_decode(packets: list[bytes]) -> float:
    start = time.perf_counter()
    context = av.CodecContext.create("h264", "r")
    pictures = 0
    for packet in packets:
        pictures += len(context.decode(av.Packet(packet)))
    pictures += len(context.decode(None))
    elapsed = time.perf_counter() - start
    assert pictures == len(packets)
    return elapsed


def venc_run(thread: CallbackThread, nv12: list[bytes]) -> float:
    payloads = []

    def callback(input_desc, output_desc, user_data):
        size = acl.media.dvpp_get_stream_desc_size(output_desc)
        host = bytes(size)
        acl.rt.memcpy(acl.util.bytes_to_ptr(host), size, acl.media.dvpp_get_stream_desc_data(output_desc), size, D2H)
        payloads.append(host)

    desc = acl.media.venc_create_channel_desc()
    acl.media.venc_set_channel_desc_thread_id(desc, thread.tid)
    acl.media.venc_set_channel_desc_callback(desc, callback)
    acl.media.venc_set_channel_desc_entype(desc, H264_HIGH)
    acl.media.venc_set_channel_desc_pic_format(desc, NV12)
    acl.media.venc_set_channel_desc_key_frame_interval(desc, 16)
    acl.media.venc_set_channel_desc_pic_width(desc, WIDTH)
    acl.media.venc_set_channel_desc_pic_height(desc, HEIGHT)
    size = WIDTH * HEIGHT * 3 // 2
    buffer, _ = acl.media.dvpp_malloc(size)
    pic = acl.media.dvpp_create_pic_desc()
    acl.media.dvpp_set_pic_desc_data(pic, buffer)
    acl.media.dvpp_set_pic_desc_size(pic, size)
    config = acl.media.venc_create_frame_config()
    start = time.perf_counter()
    assert acl.media.venc_create_channel(desc) == 0
    for index, frame in enumerate(nv12):
        acl.rt.memcpy(buffer, size, acl.util.bytes_to_ptr(frame), size, H2D)
        assert acl.media.venc_send_frame(desc, pic, 0, config, index) == 0
    acl.media.venc_set_frame_config_eos(config, 1)
    assert acl.media.venc_send_frame(desc, 0, 0, config, None) == 0
    elapsed = time.perf_counter() - start
    assert acl.media.venc_destroy_channel(desc) == 0
    assert len(payloads) == len(nv12)
    acl.media.venc_destroy_channel_desc(desc)
    acl.media.venc_destroy_frame_config(config)
    acl.media.dvpp_destroy_pic_desc(pic)
    acl.media.dvpp_free(buffer)
    return elapsed


def pyav_encode(frames: list[np.ndarray]) -> float:
    start = time.perf_counter()
    context = av.CodecContext.create("libx264", "w")
    context.width, context.height, context.pix_fmt = WIDTH, HEIGHT, "yuv420p"
    context.framerate, context.time_base = 30, Fraction(1, 30)
    context.gop_size = 16
    context.options = {
        "preset": "veryfast",
        "tune": "zerolatency",
        "forced-idr": "1",
        "crf": "23",
        "profile": "high",
        "x264-params": "keyint=16:min-keyint=16:scenecut=0",
    }
    packets = []
    for index, array in enumerate(frames):
        frame = av.VideoFrame.from_ndarray(array, format="yuv420p")
        frame.pts = index
        packets += [bytes(p) for p in context.encode(frame)]
    packets += [bytes(p) for p in context.encode(None)]
    elapsed = time.perf_counter() - start
    assert len(packets) == len(frames)
    return elapsed


def to_nv12(frame: np.ndarray) -> bytes:
    quarter = WIDTH * HEIGHT // 4
    flat = frame.reshape(-1)
    chroma = np.empty((HEIGHT // 2, WIDTH), np.uint8)
    chroma[:, 0::2] = flat[WIDTH * HEIGHT : WIDTH * HEIGHT + quarter].reshape(HEIGHT // 2, WIDTH // 2)
    chroma[:, 1::2] = flat[WIDTH * HEIGHT + quarter :].reshape(HEIGHT // 2, WIDTH // 2)
    return frame[:HEIGHT].tobytes() + chroma.tobytes()


def spread(times: list[float]) -> str:
    return f"{max(times) / min(times):.2f}x"


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    count, rounds = (30, 2) if args.quick else (100, 5)
    frames = make_frames(count)
    packets = encode_clip(frames)
    nv12 = [to_nv12(frame) for frame in frames]

    acl.init()
    acl.rt.set_device(0)
    context, _ = acl.rt.create_context(0)
    thread = CallbackThread(context)
    outputs = [acl.media.dvpp_malloc(WIDTH * HEIGHT * 3 // 2)[0] for _ in packets]
    rows, notes = [], []
    try:
        ours_times: list[float] = []
        base_times: list[float] = []

        def ours_vdec() -> float:
            ours_times.append(vdec_run(thread, packets, outputs))
            return ours_times[-1]

        def base_vdec() -> float:
            base_times.append(pyav_decode(packets))
            return base_times[-1]

        ours, base = interleaved(rounds, ours_vdec, base_vdec)
        rows.append((f"(a) VDEC 720p H.264, {count} frames", f"{count / ours:.1f} fps", f"{count / base:.1f} fps",
                     ours / base, "<= 1.2"))  # fmt: skip
        notes.append(f"(a) spread over {rounds} rounds: VDEC {spread(ours_times)}, PyAV {spread(base_times)}")

        enc_ours: list[float] = []
        enc_base: list[float] = []

        def ours_venc() -> float:
            enc_ours.append(venc_run(thread, nv12))
            return enc_ours[-1]

        def base_venc() -> float:
            enc_base.append(pyav_encode(frames))
            return enc_base[-1]

        ours, base = interleaved(rounds, ours_venc, base_venc)
        rows.append((f"(b) VENC 720p H.264 high, {count} frames", f"{count / ours:.1f} fps", f"{count / base:.1f} fps",
                     ours / base, "<= 1.2"))  # fmt: skip
        notes.append(f"(b) spread over {rounds} rounds: VENC {spread(enc_ours)}, PyAV {spread(enc_base)}")
    finally:
        for addr in outputs:
            acl.media.dvpp_free(addr)
        thread.close()
        acl.rt.destroy_context(context)
        acl.rt.reset_device(0)
        acl.finalize()
    notes.append(f"{threading.active_count()} threads at the end; baseline: PyAV (FFmpeg) alone, same packets/frames")
    print_rows(rows, args.json, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
