"""Programs written like Ascend's VDEC and VENC samples (tests/conformance/programs/) run unmodified."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

import av
import numpy as np
from tests.media.video_clips import encode_clip, psnr, reference_by_frame, reference_nv12, source_frames

from openacl.model.model import DEMO_MODEL

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def run(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    env["ASCEND_PROCESS_LOG_PATH"] = os.environ["ASCEND_PROCESS_LOG_PATH"]  # the suite's log directory
    env["PYTHONPATH"] = str(ROOT / "src")
    return subprocess.run(
        [sys.executable, "-m", "openacl", "run", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env
    )


def test_vdec_classification_sample_decodes_every_frame_bit_exact_and_classifies_it(tmp_path):
    packets = encode_clip("libx264", 12, 192, 128)
    clip = tmp_path / "clip.h264"
    clip.write_bytes(b"".join(packets))
    result = run(str(PROGRAMS / "vdec_classify.py"), str(clip), str(DEMO_MODEL))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    own, order = reference_by_frame("h264", packets)
    assert order != sorted(order)  # B-frames: the pictures come out in display order, each with its own frame's index
    assert f"decoded 12 of 12 frames, order {order}" in lines
    frames = [line.split() for line in lines if line.startswith("frame ")]
    assert [int(f[1]) for f in frames] == order
    assert all(f[3] == "0" for f in frames)  # ret code
    assert [f[6] for f in frames] == [f"{zlib.crc32(own[i][0].tobytes()):08x}" for i in order]
    expected = [f"{zlib.crc32(luma.tobytes()):08x}" for luma, _ in reference_nv12("h264", packets)]
    assert [f[6] for f in frames] == expected  # the display order of the whole clip
    assert all(0 <= int(f[8]) < 10 and 0.0 < float(f[10]) <= 1.0 for f in frames)


def test_venc_sample_writes_a_stream_pyav_decodes(tmp_path):
    width, height, count = 256, 144, 20
    planar = source_frames(count, width, height, seed=5)
    nv12 = []
    for frame in planar:
        flat = frame.reshape(-1)
        quarter = width * height // 4
        chroma = np.empty((height // 2, width), np.uint8)
        chroma[:, 0::2] = flat[width * height : width * height + quarter].reshape(height // 2, width // 2)
        chroma[:, 1::2] = flat[width * height + quarter :].reshape(height // 2, width // 2)
        nv12.append(np.concatenate([frame[:height].reshape(-1), chroma.reshape(-1)]))
    source = tmp_path / "frames.nv12"
    source.write_bytes(np.concatenate(nv12).tobytes())
    out = tmp_path / "out.h264"
    result = run(str(PROGRAMS / "venc_file.py"), str(source), str(width), str(height), str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"sent {count} frames, {count} payloads written" in result.stdout
    with av.open(str(out)) as container:
        pictures = [p.to_ndarray(format="yuv420p") for p in container.decode(video=0)]
        profile = container.streams.video[0].codec_context.profile
    assert profile == "High"
    assert len(pictures) == count
    assert min(psnr(got, want) for got, want in zip(pictures, planar, strict=True)) > 32.0


def test_acllite_style_video_capture_reads_every_picture_in_order(tmp_path):
    """Three threads as in acllite: a decode thread that sends and then destroys the channel, a callback thread
    whose callback blocks on a small full queue, and the reader; every picture arrives, bit-exact, in order."""
    packets = encode_clip("libx264", 16, 320, 240)
    clip = tmp_path / "clip.h264"
    clip.write_bytes(b"".join(packets))
    result = run(str(PROGRAMS / "acllite_video.py"), str(clip))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert "stream 320x240 entype 3" in lines  # x264's default profile is High
    assert "read 16 pictures, sent 16, destroy ret 0" in lines
    display = [zlib.crc32(luma.tobytes()) for luma, _ in reference_nv12("h264", packets)]
    own, order = reference_by_frame("h264", packets)  # each picture carries its own frame's number
    assert [zlib.crc32(own[i][0].tobytes()) for i in order] == display
    expected = [f"picture {i} luma crc {crc:08x}" for i, crc in zip(order, display, strict=True)]
    assert [line for line in lines if line.startswith("picture ")] == expected  # read in display order
