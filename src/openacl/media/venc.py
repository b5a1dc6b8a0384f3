"""VENC: NV12/NV21 pictures encoded to H.264 / H.265 Annex-B with PyAV (libx264 / libx265), through callbacks (§9).

``venc_create_channel`` subscribes the channel desc's thread id to the channel's stream (``video_channel.py``) and
opens the encoder. ``venc_send_frame`` copies the input picture at the call, encodes it on the calling thread, and
the frame's callback ``fn(input_pic_desc, output_stream_desc, user_data)`` runs on the subscribed thread, in send
order. The output stream desc is the system's: made for the callback, pointing at device memory that holds the
frame's Annex-B payload (``size`` bytes, ``format`` the entype, ``timestamp`` the frame's index, ``ret_code`` 0),
and destroyed with its memory once the callback returns, so the callback copies what it keeps and never destroys
it. The first payload carries the parameter sets, and so does every key frame, so the concatenated payloads are
a valid stream.

Decisions where CANN is silent:
- Zero-latency encoding (no B-frames, no lookahead), so each picture's payload is ready when its send returns;
  GOP = ``key_frame_interval`` (default 16, what the sample sets), no scene-cut key frames;
  ``venc_set_frame_config_force_i_frame`` makes that frame an IDR, and the
  interval counts again from it. Preset ``veryfast``. H.264 profile follows the
  entype (1 baseline, 2 main, 3 high); 0 is H.265 main.
- Rate control: ``max_bit_rate`` (kbit/s) set → that average bit rate (``rc_mode`` 2, CBR, also caps the rate at
  it); unset → constant quality (CRF 23 for H.264, 28 for H.265). ``src_rate`` (default 30) is the frame rate.
- Input: the channel's ``pic_format`` (NV12 or NV21; the input desc's own format is ignored, as on DVPP),
  ``width_stride`` from the desc if set, else ``align16(width)``; height stride from the desc if set, else the
  height. The input desc's size must lie in ``[w*h*3/2, w*h*3)`` (ACL's host check), the picture inside it.
- EOS (``venc_set_frame_config_eos(cfg, 1)``, picture desc 0 allowed): flushes the encoder, waits for every
  callback, no callback of its own; a fresh encoder takes frames after it. ``venc_destroy_channel`` does the same
  and unsubscribes. A payload above ``buf_size`` (default 8 MiB) gets ``ret_code`` ``RET_BUFFER_FULL``
  (0xA005800F) and size 0; a frame the encoder could not take gets ``RET_ENCODE_ERROR`` (1).
- Picture size: 128..1920 a side on the 310 rules, 128..4096 on the 310P rules, both even.
- Output memory: without ``buf_addr`` each payload is put in device memory of its own, freed after its callback;
  with ``buf_addr`` (and ``buf_size``) every payload is written there, so it is valid until the next callback.
  ``venc_create_channel`` refuses (100000) a ``buf_addr`` whose ``buf_size`` bytes are not writable memory (read-only
  host memory, a range past its allocation); a buffer freed after that fails each frame with ``RET_BUFFER_FULL``,
  its callback still delivered: no frame loses its callback.
- The desc setters store any uint32, as ACL's do; ``venc_create_channel`` checks the values the encoder takes
  (100000): ``key_frame_interval`` and ``src_rate`` up to 2**31 - 1 (an interval of 0 makes every frame a key
  frame, a rate of 0 is 30 fps), ``max_bit_rate`` up to 2147483 kbit/s (2**31 - 1 bit/s), ``rc_mode`` 0, 1 (VBR)
  or 2 (CBR).
- ``venc_destroy_channel`` drops the desc's stored callable, as pyACL's wrapper does.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

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

RET_ENCODE_ERROR = 1
RET_BUFFER_FULL = 0xA005800F

DEFAULT_BUF_SIZE = 8 << 20
PIC_MIN = 128
_PROFILES = {
    StreamFormat.H264_BASELINE_LEVEL: "baseline",
    StreamFormat.H264_MAIN_LEVEL: "main",
    StreamFormat.H264_HIGH_LEVEL: "high",
}
RC_CBR = 2
RC_MODES = (0, 1, RC_CBR)
INT32_MAX = (1 << 31) - 1
# The uint32 settings the encoder reads as C ints (bit/s for max_bit_rate, which is in kbit/s): checked at create.
_SETTING_MAX = {"key_frame_interval": INT32_MAX, "src_rate": INT32_MAX, "max_bit_rate": INT32_MAX // 1000}


@dataclass(eq=False)
class VencChannelDesc:
    channel_id: int = 0
    thread_id: int = 0
    callback: Callable | None = None
    entype: int = StreamFormat.H265_MAIN_LEVEL
    pic_format: int = PixelFormat.YUV_SEMIPLANAR_420
    pic_width: int = 0
    pic_height: int = 0
    key_frame_interval: int = 16
    buf_addr: int = 0
    buf_size: int = DEFAULT_BUF_SIZE
    rc_mode: int = 0
    src_rate: int = 30
    max_bit_rate: int = 0
    channel: VencChannel | None = None


@dataclass(eq=False)
class VencFrameConfig:
    eos: int = 0
    force_i_frame: int = 0


channel_descs: HandleTable[VencChannelDesc] = HandleTable("venc channel desc")
frame_configs: HandleTable[VencFrameConfig] = HandleTable("venc frame config")

_lifetime = atfork.lock()


def max_side() -> int:
    return 4096 if _chip.current().name == "310P" else 1920


def _encoder(desc: VencChannelDesc) -> av.CodecContext:
    hevc = desc.entype == StreamFormat.H265_MAIN_LEVEL
    context = av.CodecContext.create("libx265" if hevc else "libx264", "w")
    context.width, context.height = desc.pic_width, desc.pic_height
    context.pix_fmt = "yuv420p"
    rate = desc.src_rate or 30
    context.framerate = rate
    context.time_base = Fraction(1, rate)
    interval = max(desc.key_frame_interval, 1)
    context.gop_size = interval
    options = {"preset": "veryfast", "tune": "zerolatency", "forced-idr": "1"}
    if desc.max_bit_rate:
        context.bit_rate = desc.max_bit_rate * 1000
        if desc.rc_mode == RC_CBR:
            options["maxrate"] = options["bufsize"] = str(context.bit_rate)
    else:
        options["crf"] = "28" if hevc else "23"
    if hevc:
        options["x265-params"] = f"keyint={interval}:min-keyint={interval}:scenecut=0:repeat-headers=1:log-level=error"
    else:
        options["profile"] = _PROFILES[desc.entype]
        options["x264-params"] = f"keyint={interval}:min-keyint={interval}:scenecut=0"
    context.options = options
    context.open()
    return context


class VencChannel(CallbackChannel):
    kind = "venc"

    def __init__(self, desc: VencChannelDesc) -> None:
        self.settings = dataclasses.replace(desc, callback=None, channel=None)  # taken at create, as ACL does
        self.encoder = _encoder(self.settings)  # before the subscription: a bad setting leaves nothing behind
        super().__init__(desc.thread_id)
        self.desc = desc
        self.buf_addr, self.buf_size = desc.buf_addr, desc.buf_size
        self.spare: deque[bytes] = deque()
        self.closing = False
        self.fresh = True
        self.index = 0

    # ----- under self.lock -----

    def send(self, record: Pending, picture: av.VideoFrame | None) -> None:
        self.add(record)
        self.fresh = False
        try:
            packets = self.encoder.encode(picture)
        except (av.FFmpegError, ValueError) as exc:
            log.warning("venc channel: frame %d: %s", record.seq, exc)
            record.resolve(code=RET_ENCODE_ERROR)
            packets = []
        self.assign(packets)
        self.launch_resolved()

    def assign(self, packets: list[av.Packet]) -> None:
        """The N-th payload goes to the N-th frame sent."""
        self.spare.extend(bytes(packet) for packet in packets)
        for record in self.fifo:
            if not self.spare:
                break
            if not record.resolved:
                record.resolve(self.spare.popleft())

    def flush(self) -> None:
        if self.fresh:
            return
        try:
            self.assign(self.encoder.encode(None))
        except av.FFmpegError as exc:
            log.warning("venc channel: flushing the encoder failed: %s", exc)
        for record in self.fifo:
            if not record.resolved:
                record.resolve(code=RET_ENCODE_ERROR)
        self.spare.clear()
        self.launch_resolved()
        self.encoder = _encoder(self.settings)
        self.fresh = True

    # ----- on the subscribed thread -----

    def deliver(self, record: Pending) -> None:
        payload: bytes = record.result or b""  # type: ignore[assignment]
        record.result = None
        code = record.code
        if not code and len(payload) > self.buf_size:
            code, payload = RET_BUFFER_FULL, b""
        own = self.buf_addr == 0  # the user's output buffer (buf_addr) is used as it is, else one of ours
        addr = self.buf_addr
        if payload:
            try:
                if own:
                    addr = _memory.malloc(len(payload), 0, self.device_id)
                _memory.task_write(addr, payload, "venc output buffer")  # checked now, pinned while written
            except AclError as exc:
                log.warning("venc channel: frame %d: the output buffer cannot take it: %s", record.seq, exc)
                code, payload = RET_BUFFER_FULL, b""
        try:
            out = _descs.StreamDesc(addr if payload else 0, len(payload), self.settings.entype, record.seq, code, 0)
            handle = _descs.stream_descs.add(out)
            try:
                record.callback(record.input, handle, record.user_data)
            finally:
                if handle in _descs.stream_descs:
                    _descs.stream_descs.remove(handle)
        finally:
            if own and addr:
                _memory.free(addr)


# ----- channel descs -----


def create_channel_desc() -> int:
    return channel_descs.add(VencChannelDesc())


def destroy_channel_desc(handle: int) -> None:
    destroy_channel_desc_in(channel_descs, _lifetime, handle, "venc")


# The channel desc's settings, one set/get pair each (the callback has its own pair below; the channel id is only
# read); the sizes and the encoder's numbers are checked when the channel is created.
channel_desc_fields = Fields(
    channel_descs,
    channel_id=Field("I", access="r"),
    thread_id="K",
    entype=Field("i", check_entype),
    pic_format=Field(
        "i",
        only(
            lambda fmt: fmt in NV12_NV21,
            "venc input format {} is neither NV12 (1) nor NV21 (2)",
            AclCode.ACL_ERROR_FORMAT_NOT_MATCH,
        ),
    ),
    pic_width="I",
    pic_height="I",
    key_frame_interval="I",
    buf_addr="k",
    buf_size="I",
    rc_mode="I",
    src_rate="I",
    max_bit_rate="I",
)
frame_config_fields = Fields(frame_configs, eos="B", force_i_frame="B")


def set_callback(handle: int, callback: Callable) -> None:
    channel_descs.get(handle).callback = callback


# aclvencChannelDescParamType -> the field each typed parameter is (1 is the callback, 12 the I/P frame bit ratio).
ACL_VENC_THREAD_ID_UINT64, ACL_VENC_CALLBACK_PTR, ACL_VENC_BUF_ADDR_PTR, ACL_VENC_MAX_IP_PROP_UINT32 = 0, 1, 7, 12
PARAM_FIELDS = {
    ACL_VENC_THREAD_ID_UINT64: "thread_id",
    2: "pic_format",
    3: "entype",
    4: "pic_width",
    5: "pic_height",
    6: "key_frame_interval",
    ACL_VENC_BUF_ADDR_PTR: "buf_addr",
    8: "buf_size",
    9: "rc_mode",
    10: "src_rate",
    11: "max_bit_rate",
}


def _param_field(param_type: int) -> str:
    if param_type == ACL_VENC_MAX_IP_PROP_UINT32:
        raise AclError(AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, "the encoder has no I/P frame bit ratio to set or read")
    name = PARAM_FIELDS.get(param_type)
    if name is None:
        raise AclError(_INVALID, f"venc channel parameter type {param_type} is not one of 0..12")
    return name


def set_channel_param(handle: int, param_type: int, value: object) -> None:
    """``venc_set_channel_desc_param``: the setter of the field the type names, with that setter's checks."""
    if param_type == ACL_VENC_CALLBACK_PTR:
        set_callback(handle, value)  # type: ignore[arg-type]  # the facade checked it is callable
        return
    channel_desc_fields.set(handle, _param_field(param_type), value)  # type: ignore[arg-type]


def channel_param(handle: int, param_type: int) -> object:
    """``venc_get_channel_desc_param``: the field the type names (the callback: None if none was set)."""
    if param_type == ACL_VENC_CALLBACK_PTR:
        return channel_descs.get(handle).callback
    return channel_desc_fields.get(handle, _param_field(param_type))


def callback_of(handle: int) -> Callable | None:
    desc = channel_descs.get(handle) if handle in channel_descs else None
    return desc.callback if desc is not None else None


# ----- channels -----


def create_channel(handle: int) -> None:
    with _lifetime:
        desc = channel_descs.get(handle)
        if desc.channel is not None:
            raise AclError(_INVALID, f"venc channel of desc {handle:#x} already exists")
        if desc.callback is None:
            raise AclError(_INVALID, "venc_create_channel needs a callback (venc_set_channel_desc_callback)")
        if desc.thread_id == 0:
            raise AclError(_INVALID, "venc_create_channel needs the callback thread id (set_channel_desc_thread_id)")
        _check_settings(desc)
        try:
            desc.channel = VencChannel(desc)
        except (av.FFmpegError, ValueError, OverflowError) as exc:
            raise AclError(_INVALID, f"venc encoder does not open with these settings: {exc}") from None
    if checker.enabled:
        checker.on_create("venc channel", handle)  # by its desc: one channel each


def _check_settings(desc: VencChannelDesc) -> None:
    """What the setters stored, checked before the encoder sees it: every value out of range is 100000."""
    side = max_side()
    for name, value in (("width", desc.pic_width), ("height", desc.pic_height)):
        if not PIC_MIN <= value <= side or value % 2:
            raise AclError(_INVALID, f"venc picture {name} {value} is not an even number in {PIC_MIN}..{side}")
    for name, most in _SETTING_MAX.items():
        value = getattr(desc, name)
        if not 0 <= value <= most:
            raise AclError(_INVALID, f"venc {name} {value} is not in 0..{most}")
    if desc.rc_mode not in RC_MODES:
        raise AclError(_INVALID, f"venc rc_mode {desc.rc_mode} is not 0, 1 (VBR) or 2 (CBR)")
    if desc.buf_addr:
        # Every payload is written there on the callback thread: memory that cannot take buf_size bytes is
        # refused now, not found out frame by frame.
        _memory.region_for(desc.buf_addr, max(desc.buf_size, 1), "venc output buffer (buf_addr)", write=True)


def _live_channel(handle: int) -> VencChannel:
    desc = channel_descs.get(handle)
    if desc.channel is None:
        raise AclError(_INVALID, f"venc channel desc {handle:#x} has no channel (venc_create_channel first)")
    return desc.channel


def destroy_channel(handle: int) -> None:
    channel = _live_channel(handle)
    channel.refuse_inside_own_callback("venc_destroy_channel")
    with channel.lock:
        if channel.closing:
            raise AclError(_INVALID, f"venc channel of desc {handle:#x} is being destroyed")
        channel.closing = True
        channel.flush()
    try:
        channel.close()
    finally:
        with _lifetime:
            channel.desc.channel = None
            # pyACL drops the stored callable with the channel; its last reference goes after the lock
            callback, channel.desc.callback = channel.desc.callback, None
        del callback
        if checker.enabled:
            checker.on_destroy("venc channel", handle)


def _read_picture(desc: VencChannelDesc, pic: _descs.PicDesc) -> av.VideoFrame:
    width, height = desc.pic_width, desc.pic_height
    if not width * height * 3 // 2 <= pic.size < width * height * 3:
        raise AclError(
            _INVALID,
            f"venc input size {pic.size} is not in [w*h*3/2, w*h*3) = [{width * height * 3 // 2}, "
            f"{width * height * 3}) for {width}x{height}",
        )
    width_stride = pic.width_stride or align_up(width, 16)
    height_stride = pic.height_stride or height
    if width_stride < width or height_stride < height:
        raise AclError(_INVALID, f"venc input strides {width_stride}x{height_stride} are below {width}x{height}")
    need = width_stride * height_stride + width_stride * (height // 2)
    if need > pic.size:
        raise AclError(
            _INVALID,
            f"venc input of {width}x{height} with strides {width_stride}x{height_stride} needs "
            f"{need} bytes, the desc has {pic.size}",
        )
    data = _memory.read_bytes(pic.data, need)  # the copy: the caller may reuse or free its buffer
    if checker.enabled:
        _memory.host_read(pic.data, need, "venc_send_frame input")
    uv_first = desc.pic_format == PixelFormat.YUV_SEMIPLANAR_420
    return _frames.read_semiplanar(data, uv_first, width, height, width_stride, height_stride)


def send_frame(handle: int, pic_handle: int, reserve: int, config: int, user_data: object) -> None:
    channel = _live_channel(handle)
    callback = channel.desc.callback  # the callable stored now, paired with this frame (pyACL's record)
    assert callback is not None
    if reserve != 0:
        raise AclError(_INVALID, f"venc_send_frame's reserved argument must be 0, not {reserve:#x}")
    frame_config = frame_configs.get(config) if config else VencFrameConfig()
    if frame_config.eos:
        channel.refuse_inside_own_callback("venc_send_frame of the end of stream")
        with channel.lock:
            if channel.closing:
                raise AclError(_INVALID, "venc channel is being destroyed")
            channel.flush()
        if not channel.wait_callbacks():
            raise channel.stalled_error("venc_send_frame of the end of stream")
        return
    if not pic_handle:
        raise AclError(_INVALID, "venc_send_frame needs an input pic desc (or a frame config with eos set)")
    picture = _read_picture(channel.settings, _descs.pic_descs.get(pic_handle))
    if frame_config.force_i_frame:
        picture.pict_type = av.video.frame.PictureType.I
    record = Pending(callback, pic_handle, 0, user_data)
    with channel.lock:
        if channel.closing:
            raise AclError(_INVALID, "venc channel is being destroyed")
        picture.pts = channel.index
        channel.index += 1
        channel.send(record, picture)


# ----- frame configs -----


def create_frame_config() -> int:
    return frame_configs.add(VencFrameConfig())


def destroy_frame_config(handle: int) -> None:
    frame_configs.remove(handle)
