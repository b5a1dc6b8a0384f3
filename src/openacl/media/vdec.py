"""VDEC: H.264 / H.265 Annex-B decoding on PyAV (FFmpeg), frames delivered through report-thread callbacks (§8).

``vdec_create_channel`` subscribes the thread id set on the channel desc to the channel's own stream
(``video_channel.py``). ``vdec_send_frame`` copies the input bitstream at the call (callers reuse the buffer),
and decodes it on the calling thread as one packet (DVPP takes one complete frame per send; FFmpeg's Annex-B
parser, used before, held a damaged frame's tail and joined it to the next frame's bytes); each sent frame gets
one callback ``fn(input_stream_desc, output_pic_desc, user_data)``, run by the subscribed thread.

Each frame's callback carries that frame's own picture: its packet goes to the decoder tagged with the frame's
sequence number as ``pts``, and FFmpeg hands that ``pts`` back on the picture it decodes to, whatever the
reordering (B-frames) or delay. A frame's callback is launched when its picture comes out, so callbacks run in
the decoder's output (display) order, as a player reads them. Before the callback the picture is written into the
output desc's memory as NV12/NV21 and the desc gets its geometry and ``ret_code``. A frame whose picture never
comes (a damaged packet, a frame before the first key frame of a stream joined mid-GOP) gets its callback with
``ret_code`` 1, CANN's "decoding failed" (D-VDEC-GUIDE-PY), as soon as that is known: when the decoder outputs
a key frame sent after it (nothing decoded before a key frame is output after it), when more than
``REORDER_LIMIT`` pictures of frames sent after it have come out first, or at EOS. A picture that comes after its
frame was given up on is dropped (logged), never given to another frame.

Decisions where CANN is silent (and the spec's recommendations taken):
- Output geometry: an output desc with width, height and both strides unset gets the stream's size with
  ``width_stride = align16(width)`` and ``height_stride = align2(height)`` written back; one with all four set is
  used as given (a size other than the stream's, or the channel desc's ``out_pic_width/height``, is scaled with
  FFmpeg's bilinear swscale); setting only some of them fails the send (``ACL_ERROR_INVALID_PARAM``). The desc's
  ``size`` is kept as the user set it. The format is the output desc's if it is NV12/NV21 (or RGB888/BGR888 on
  the 310P rules), the channel desc's (default NV12) if the output desc's is 0, anything else is 100027.
- Per-frame failures go into the output desc's ``ret_code``, never into a crash or a failed stream:
  ``RET_DECODE_ERROR`` (1) when FFmpeg rejected the frame's data or gave no picture for it (corrupt or truncated
  data, a stream of the other codec, frames before the first key frame),
  ``RET_UNSUPPORTED`` (0xA0058008) for a stream outside 128..4096 pixels a side or not 4:2:0,
  ``RET_OUT_OF_RANGE`` (0xA0058003) for output geometry DVPP cannot produce, ``RET_BUFFER_TOO_SMALL``
  (0xA0058013) when ``size`` is below the picture, ``RET_BAD_ADDRESS`` (0xA0058011) for memory that is not live.
- EOS (an input stream desc with eos set): flushes the decoder, delivers the remaining frames, waits for every
  callback, makes no callback of its own (§8.4; data on an EOS desc is not decoded), and starts a fresh
  decoder: the channel takes a new stream after it. A second EOS is a no-op. ``vdec_destroy_channel`` does the
  same, then unsubscribes.
- ``out_mode`` 1 (real-time) decodes with FFmpeg's low-delay flag; 0 (default) lets the decoder reorder and delay.
- A 10-bit H.265 stream is reduced to 8 bits by swscale. Channel ids are 0..31 (310 rules) or 0..255 (310P), and
  two live channels cannot share one (``ACL_ERROR_INVALID_PARAM``).
- ``vdec_send_skipped_frame`` decodes the frame and calls back with ``output_pic_desc = 0``.
- ``vdec_destroy_channel`` drops the desc's stored callable, as pyACL's wrapper does: a channel created again on
  the same desc needs ``vdec_set_channel_desc_callback`` again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from openacl import atfork, lazy
from openacl.errors import AclCode, AclError
from openacl.media import chip as _chip
from openacl.media import descs as _descs
from openacl.media import frames as _frames
from openacl.media.formats import NV12_NV21, PixelFormat, StreamFormat, align_up
from openacl.media.video_channel import CallbackChannel, Pending, check_entype, log
from openacl.media.video_channel import destroy_channel_desc as destroy_channel_desc_in
from openacl.runtime import checker
from openacl.runtime import memory as _memory
from openacl.runtime.fields import Field, Fields, only
from openacl.runtime.handles import HandleTable

av = lazy.module("av")

_INVALID = AclCode.ACL_ERROR_INVALID_PARAM

RET_DECODE_ERROR = 1  # CANN's "decoding failed", also for a frame the decoder gave no picture
RET_OUT_OF_RANGE = 0xA0058003
RET_UNSUPPORTED = 0xA0058008
RET_BAD_ADDRESS = 0xA0058011
RET_BUFFER_TOO_SMALL = 0xA0058013

STREAM_MIN, STREAM_MAX = 128, 4096
# How many pictures of frames sent later may come out before a frame's own: the frames an encoder puts between
# two anchors (16 at most in x264 and x265, and in the DPB of any H.264/H.265 level).
REORDER_LIMIT = 16
OUT_MIN_WIDTH, OUT_MIN_HEIGHT, OUT_MAX = 10, 6, 4096
_RGB = frozenset({PixelFormat.RGB_888, PixelFormat.BGR_888})


@dataclass(eq=False)
class VdecChannelDesc:
    channel_id: int = 0
    thread_id: int = 0
    callback: Callable | None = None
    entype: int = StreamFormat.H265_MAIN_LEVEL
    out_pic_format: int = PixelFormat.YUV_SEMIPLANAR_420
    out_pic_width: int = 0
    out_pic_height: int = 0
    ref_frame_num: int = 0
    out_mode: int = 0
    bit_depth: int = 0
    csc_matrix: int = 0  # ACL_VDEC_CSC_MATRIX_UINT32: BT.601 wide, the one RGB outputs are converted with
    channel: VdecChannel | None = None


class VdecFrameConfig:
    """A reserved parameter of ``vdec_send_frame``: pyACL has no setters for it."""


channel_descs: HandleTable[VdecChannelDesc] = HandleTable("vdec channel desc")
frame_configs: HandleTable[VdecFrameConfig] = HandleTable("vdec frame config")

_lifetime = atfork.lock()  # create/destroy of channels


@dataclass(frozen=True)
class _Target:
    """What the output desc asks for, read at the send."""

    av_format: str
    width: int  # 0: the stream's
    height: int
    width_stride: int  # 0: derived from the width
    height_stride: int


class _Decoder:
    """One FFmpeg decoder."""

    def __init__(self, entype: int, out_mode: int) -> None:
        name = "hevc" if entype == StreamFormat.H265_MAIN_LEVEL else "h264"
        self.context = av.CodecContext.create(name, "r")
        if out_mode == 1:
            self.context.flags |= av.codec.context.Flags.low_delay

    def decode(self, data: bytes, seq: int) -> tuple[list[av.VideoFrame], av.FFmpegError | None]:
        """Decode one sent frame as one packet tagged ``pts = seq``: the pictures that came out (this frame's or
        earlier ones'), and FFmpeg's refusal if any."""
        context = self.context
        pictures: list[av.VideoFrame] = []
        packet = av.Packet(data)  # one complete frame per send (D-VDEC-SEND): the packet is the frame
        packet.pts = seq
        try:
            pictures.extend(context.decode(packet))
        except av.FFmpegError as exc:
            return pictures, exc
        return pictures, None

    def flush(self) -> tuple[list[av.VideoFrame], av.FFmpegError | None]:
        try:
            return list(self.context.decode(None)), None
        except av.FFmpegError as exc:
            return [], exc


class _Waiting:
    """A sent frame whose picture may still come, and how many later frames' pictures came out before it."""

    __slots__ = ("overtaken", "record")

    def __init__(self, record: Pending) -> None:
        self.record = record
        self.overtaken = 0


class VdecChannel(CallbackChannel):
    kind = "vdec"

    def __init__(self, desc: VdecChannelDesc) -> None:
        super().__init__(desc.thread_id)
        self.desc = desc
        self.settings = dataclasses.replace(desc, callback=None, channel=None)  # taken at create, as ACL does
        self.entype = desc.entype
        self.out_mode = desc.out_mode
        self.decoder = _Decoder(self.entype, self.out_mode)
        # Invariant: the frames sent to the current decoder that are not resolved, by sequence number (= the pts
        # their packets carry), oldest first. A picture resolves only the entry of its own pts.
        self.waiting: dict[int, _Waiting] = {}
        self.strays = 0  # pictures whose frame was already resolved (given up on, or a second picture in a send)
        self.closing = False
        self.fresh = True  # nothing sent since the last EOS

    # ----- under self.lock -----

    def send(self, record: Pending, data: bytes) -> None:
        self.number(record)
        self.fresh = False
        self.waiting[record.seq] = _Waiting(record)
        pictures, error = self.decoder.decode(data, record.seq)
        self.assign(pictures)
        if error is not None and record.seq in self.waiting:
            self.give_up([record.seq], f"frame {record.seq}: {error}")

    def assign(self, pictures: list[av.VideoFrame]) -> None:
        """Launch each picture's own frame; before it, give up on the earlier frames it shows are lost."""
        for picture in pictures:
            seq = picture.pts
            own = self.waiting.pop(seq, None) if seq is not None else None
            if own is None:
                self.strays += 1
                continue
            lost = []
            for earlier, entry in self.waiting.items():
                if earlier > seq:
                    break
                entry.overtaken += 1
                if picture.key_frame or entry.overtaken > REORDER_LIMIT:
                    lost.append(earlier)
            if lost:
                why = "a later key frame came out" if picture.key_frame else "too many later pictures came out"
                self.give_up(lost, f"gave no picture ({why})")
            own.record.resolve(picture)
            self.launch(own.record)

    def give_up(self, seqs: list[int], why: str) -> None:
        """Frames whose picture will not come: each gets its callback with RET_DECODE_ERROR; one warning."""
        for seq in seqs:
            record = self.waiting.pop(seq).record
            record.resolve(code=RET_DECODE_ERROR)
            self.launch(record)
        self.notes.append(
            f"vdec channel {self.settings.channel_id}: {len(seqs)} frame(s) from {seqs[0]} on {why}: "
            f"ret code {RET_DECODE_ERROR}"
        )

    def flush(self) -> None:
        """End of stream: the decoder's last pictures, RET_DECODE_ERROR for frames still without one, a fresh
        decoder."""
        if self.fresh:
            return
        pictures, error = self.decoder.flush()
        if error is not None:
            self.notes.append(f"vdec channel {self.settings.channel_id}: flushing the decoder failed: {error}")
        self.assign(pictures)
        if self.waiting:
            self.give_up(list(self.waiting), "gave no picture by the end of the stream")
        if self.strays:
            self.notes.append(
                f"vdec channel {self.settings.channel_id}: {self.strays} picture(s) came after their frame had "
                "been given up on (or were a second picture of one frame) and were dropped"
            )
            self.strays = 0
        self.decoder = _Decoder(self.entype, self.out_mode)
        self.fresh = True

    # ----- on the subscribed thread -----

    def deliver(self, record: Pending) -> None:
        picture, record.result = record.result, None
        if record.output:
            target = record.target
            try:
                out = _descs.pic_descs.get(record.output)
            except AclError:
                log.warning(
                    "vdec channel %d: output pic desc %#x was destroyed before its frame was delivered",
                    self.settings.channel_id,
                    record.output,
                )
            else:
                out.ret_code = record.code if record.code else self.write_checked(picture, target, out)
        record.callback(record.input, record.output, record.user_data)

    def write_checked(self, picture: av.VideoFrame, target: _Target, out: _descs.PicDesc) -> int:
        try:
            return self.write(picture, target, out)
        except (AclError, av.FFmpegError, ValueError) as exc:  # a conversion FFmpeg refuses: the frame fails
            log.warning("vdec channel %d: writing a picture failed: %s", self.settings.channel_id, exc)
            return RET_DECODE_ERROR

    def write(self, picture: av.VideoFrame, target: _Target, out: _descs.PicDesc) -> int:
        """Write one decoded picture into the output desc; the desc's ret code."""
        if not (STREAM_MIN <= picture.width <= STREAM_MAX and STREAM_MIN <= picture.height <= STREAM_MAX):
            return RET_UNSUPPORTED
        if picture.format.name not in ("yuv420p", "yuvj420p", "yuv420p10le"):
            return RET_UNSUPPORTED
        width = target.width or self.settings.out_pic_width or picture.width & ~1
        height = target.height or self.settings.out_pic_height or picture.height & ~1
        rgb = target.av_format in ("rgb24", "bgr24")
        width_stride = target.width_stride or align_up(width, 16) * (3 if rgb else 1)
        height_stride = target.height_stride or align_up(height, 2)
        if (
            not (OUT_MIN_WIDTH <= width <= OUT_MAX and OUT_MIN_HEIGHT <= height <= OUT_MAX)
            or width % 2
            or height % 2
            or width_stride % 16
            or width_stride < width * (3 if rgb else 1)
            or height_stride % 2
            or height_stride < height
        ):
            return RET_OUT_OF_RANGE
        need = _frames.picture_bytes(target.av_format, width_stride, height_stride)
        if out.size < need:
            return RET_BUFFER_TOO_SMALL
        try:
            view = _memory.task_view(out.data, need, "vdec output")  # checked now; the view pins it
        except AclError:
            return RET_BAD_ADDRESS
        _frames.write_frame(picture, target.av_format, view, width, height, width_stride, height_stride)
        out.width, out.height, out.width_stride, out.height_stride = width, height, width_stride, height_stride
        return 0


# ----- channel descs -----


def create_channel_desc() -> int:
    return channel_descs.add(VdecChannelDesc())


def destroy_channel_desc(handle: int) -> None:
    destroy_channel_desc_in(channel_descs, _lifetime, handle, "vdec")


# The channel desc's settings, one set/get pair each (the callback has its own pair below); the channel id and the
# sizes are checked when the channel is created.
channel_desc_fields = Fields(
    channel_descs,
    channel_id="I",
    thread_id="K",
    entype=Field("i", check_entype),
    out_pic_format=Field(
        "i",
        only(
            lambda fmt: fmt in NV12_NV21 or fmt in _RGB,
            "vdec output format {} is not NV12/NV21/RGB888/BGR888",
            AclCode.ACL_ERROR_FORMAT_NOT_MATCH,
        ),
    ),
    out_pic_width="I",
    out_pic_height="I",
    ref_frame_num="I",
    out_mode=Field("I", only(lambda mode: mode in (0, 1), "vdec out mode {} is neither 0 (default) nor 1 (real time)")),
    bit_depth="I",
)


def set_channel_param(handle: int, param_type: int, value: int) -> None:
    """``vdec_set_channel_desc_param``: the CSC matrix, with DVPP's rules (``descs.check_csc_param``)."""
    desc = channel_descs.get(handle)
    _descs.check_csc_param(param_type, value)
    desc.csc_matrix = value


def channel_param(handle: int, param_type: int) -> tuple[int, int]:
    """(size of the value in bytes, the value) of the CSC matrix."""
    desc = channel_descs.get(handle)
    _descs.check_csc_param(param_type)
    return 4, desc.csc_matrix


def set_callback(handle: int, callback: Callable) -> None:
    channel_descs.get(handle).callback = callback


def callback_of(handle: int) -> Callable | None:
    """The callable stored for a desc (None for none, or for a handle that is not a vdec channel desc)."""
    desc = channel_descs.get(handle) if handle in channel_descs else None
    return desc.callback if desc is not None else None


def _max_channel_id() -> int:
    return 255 if _chip.current().name == "310P" else 31


# ----- channels -----


def create_channel(handle: int) -> None:
    with _lifetime:
        desc = channel_descs.get(handle)
        if desc.channel is not None:
            raise AclError(_INVALID, f"vdec channel of desc {handle:#x} already exists")
        if desc.callback is None:
            raise AclError(_INVALID, "vdec_create_channel needs a callback (vdec_set_channel_desc_callback)")
        if desc.thread_id == 0:
            raise AclError(_INVALID, "vdec_create_channel needs the callback thread id (set_channel_desc_thread_id)")
        if desc.channel_id > _max_channel_id():
            raise AclError(_INVALID, f"vdec channel id {desc.channel_id} is not in 0..{_max_channel_id()}")
        if any(
            d.channel is not None and d.channel.settings.channel_id == desc.channel_id for d in channel_descs.values()
        ):
            raise AclError(_INVALID, f"vdec channel id {desc.channel_id} is in use by another channel")
        desc.channel = VdecChannel(desc)
    if checker.enabled:
        checker.on_create("vdec channel", handle)  # by its desc: one channel each


def _live_channel(handle: int) -> VdecChannel:
    desc = channel_descs.get(handle)
    channel = desc.channel
    if channel is None:
        raise AclError(_INVALID, f"vdec channel desc {handle:#x} has no channel (vdec_create_channel first)")
    return channel


def destroy_channel(handle: int) -> None:
    channel = _live_channel(handle)
    channel.refuse_inside_own_callback("vdec_destroy_channel")
    with channel.lock:
        if channel.closing:
            raise AclError(_INVALID, f"vdec channel of desc {handle:#x} is being destroyed")
        channel.closing = True
    # Invariant: once closing, the channel is freed whatever happens below (no channel stays "being destroyed",
    # no stream is left behind); close() says 507012 for callbacks that never ran.
    try:
        try:
            with channel.lock:
                channel.flush()
        finally:
            channel.close()
    finally:
        if checker.enabled:
            checker.on_channel_closed(handle)
        with _lifetime:
            channel.desc.channel = None
            # pyACL drops the stored callable with the channel; its last reference goes after the lock
            callback, channel.desc.callback = channel.desc.callback, None
        del callback
        if checker.enabled:
            checker.on_destroy("vdec channel", handle)


def _frame_config(handle: int) -> None:
    if handle and handle not in frame_configs:
        raise AclError(_INVALID, f"{handle:#x} is not a vdec frame config")


def _target(channel: VdecChannel, out: _descs.PicDesc) -> _Target:
    geometry = (out.width, out.height, out.width_stride, out.height_stride)
    if any(geometry) and not all(geometry):
        raise AclError(_INVALID, f"vdec output desc sets only some of width, height, width/height stride: {geometry}")
    fmt = out.format or channel.settings.out_pic_format
    if fmt not in NV12_NV21 and not (fmt in _RGB and _chip.current().name == "310P"):
        raise AclError(
            AclCode.ACL_ERROR_FORMAT_NOT_MATCH, f"vdec cannot output pixel format {fmt} on {_chip.current().name}"
        )
    return _Target(_frames.AV_FORMATS[fmt], *geometry)


def send_frame(
    handle: int, input_handle: int, output_handle: int, config: int, user_data: object, *, skipped: bool = False
) -> None:
    channel = _live_channel(handle)
    callback = channel.desc.callback
    assert callback is not None  # create_channel requires one; the facade raises pyACL's RuntimeError first
    _frame_config(config)
    stream_desc = _descs.stream_descs.get(input_handle)
    if stream_desc.eos:
        channel.refuse_inside_own_callback("vdec_send_frame of the end of stream")
        with channel.lock:
            if channel.closing:
                raise AclError(_INVALID, "vdec channel is being destroyed")
            channel.flush()
        channel.emit()
        if not channel.wait_callbacks():
            raise channel.stalled_error("vdec_send_frame of the end of stream")
        return
    if stream_desc.size == 0:
        raise AclError(_INVALID, "vdec_send_frame of an empty frame without eos")
    data = _memory.read_bytes(stream_desc.data, stream_desc.size)  # the copy: the caller may reuse its buffer
    if checker.enabled:
        _memory.host_read(stream_desc.data, stream_desc.size, "vdec_send_frame input")
    record = Pending(callback, input_handle, 0 if skipped else output_handle, user_data)
    token = None  # the frame's registration with openacl check, taken back if the send is refused
    if not skipped:
        if not output_handle:
            raise AclError(_INVALID, "vdec_send_frame needs an output pic desc")
        out = _descs.pic_descs.get(output_handle)
        record.target = _target(channel, out)
        if checker.enabled:  # the picture is written before the frame's callback, on the channel's order
            where = f"vdec channel {channel.settings.channel_id}"
            record.callback, token = checker.on_channel_task(
                handle, where, "vdec_send_frame", [(out.data, out.size)], callback
            )
    with channel.lock:
        refused = channel.closing
        if not refused:
            channel.send(record, data)
    if refused:
        if token is not None:
            checker.on_channel_task_refused(handle, token)
        raise AclError(_INVALID, "vdec channel is being destroyed")
    channel.emit()


# ----- frame configs -----


def create_frame_config() -> int:
    return frame_configs.add(VdecFrameConfig())


def destroy_frame_config(handle: int) -> None:
    frame_configs.remove(handle)
