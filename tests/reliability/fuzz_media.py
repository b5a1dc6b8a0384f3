"""The fuzzer's ``acl.media`` objects: live DVPP descriptors, configs, pictures and memory, and their arguments.

Kept apart from test_fuzz_facade.py's Env so that the DVPP part reads as one piece: ``MediaObjects`` makes a
created channel, pictures in DVPP memory (an NV12 source and destination, a JPEG and a PNG in device and host
memory), every kind of descriptor and config (plus spares the destroy calls may take and dead ones), and says
what a correct program would pass to each ``acl.media`` function.
"""

from __future__ import annotations

import numpy as np

import acl
from openacl.media import descs as _descs
from tests.media.images import jpeg_bytes, photo, png_bytes
from tests.reliability.fuzz_calls import call, ok

M = acl.media


def _to_dvpp(data: bytes) -> int:
    ptr = ok(M.dvpp_malloc, len(data))
    ok(acl.rt.memcpy, ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 1)
    return ptr


def _pic(data: int, size: int, fmt: int, w: int, h: int, ws: int, hs: int) -> int:
    desc = ok(M.dvpp_create_pic_desc)
    for name, value in (("data", data), ("size", size), ("format", fmt), ("width", w), ("height", h)):
        ok(getattr(M, f"dvpp_set_pic_desc_{name}"), desc, value)
    ok(M.dvpp_set_pic_desc_width_stride, desc, ws)
    ok(M.dvpp_set_pic_desc_height_stride, desc, hs)
    return desc


class MediaObjects:
    def __init__(self, stream: int, reporter_tid: int) -> None:
        self.stream = stream
        self.reporter_tid = reporter_tid
        self.video_objects()
        self.channel = ok(M.dvpp_create_channel_desc)
        ok(M.dvpp_create_channel, self.channel)
        self.channel_spare = ok(M.dvpp_create_channel_desc)
        self.jpeg = jpeg_bytes(photo(64, 48))
        self.jpeg_host = acl.util.bytes_to_ptr(self.jpeg)
        self.jpeg_dev = _to_dvpp(self.jpeg)
        self.png = png_bytes(photo(40, 32))
        self.png_host = acl.util.bytes_to_ptr(self.png)
        self.png_dev = _to_dvpp(self.png)
        self.src_mem = ok(M.dvpp_malloc, 64 * 32 * 3 // 2)
        self.dst_mem = ok(M.dvpp_malloc, 32 * 16 * 3 // 2)
        self.dec_mem = ok(M.dvpp_malloc, 1 << 16)
        self.enc_mem = ok(M.dvpp_malloc, 1 << 16)
        self.dvpp_spare = ok(M.dvpp_malloc, 256)
        self.dead_dvpp = ok(M.dvpp_malloc, 64)
        ok(M.dvpp_free, self.dead_dvpp)
        self.size_holder = np.array([1 << 16], np.uint32).tobytes()
        self.size_ptr = acl.util.bytes_to_ptr(self.size_holder)
        self.src = _pic(self.src_mem, 64 * 32 * 3 // 2, 1, 64, 32, 64, 32)
        self.dst = _pic(self.dst_mem, 32 * 16 * 3 // 2, 1, 32, 16, 32, 16)
        self.dec_out = _pic(self.dec_mem, 1 << 16, 1, 0, 0, 0, 0)
        self.png_out = _pic(self.dec_mem, 1 << 16, 12, 0, 0, 0, 0)
        self.pic_set = ok(M.dvpp_create_pic_desc)  # what the setters change
        self.pic_spare = ok(M.dvpp_create_pic_desc)
        self.dead_pic = ok(M.dvpp_create_pic_desc)
        ok(M.dvpp_destroy_pic_desc, self.dead_pic)
        self.stream_desc = ok(M.dvpp_create_stream_desc)
        self.stream_desc_spare = ok(M.dvpp_create_stream_desc)
        self.crop = ok(M.dvpp_create_roi_config, 0, 31, 0, 15)
        self.paste = ok(M.dvpp_create_roi_config, 0, 31, 0, 15)
        self.roi_set = ok(M.dvpp_create_roi_config, 0, 1, 0, 1)
        self.roi_spare = ok(M.dvpp_create_roi_config, 0, 1, 0, 1)
        self.dead_roi = ok(M.dvpp_create_roi_config, 0, 1, 0, 1)
        ok(M.dvpp_destroy_roi_config, self.dead_roi)
        self.resize = ok(M.dvpp_create_resize_config)
        self.resize_spare = ok(M.dvpp_create_resize_config)
        self.jpege = ok(M.dvpp_create_jpege_config)
        self.jpege_spare = ok(M.dvpp_create_jpege_config)
        self.src_batch = ok(M.dvpp_create_batch_pic_desc, 1)
        self.dst_batch = ok(M.dvpp_create_batch_pic_desc, 1)
        self.batch_spare = ok(M.dvpp_create_batch_pic_desc, 2)
        self.border = ok(M.dvpp_create_border_config)
        self.border_spare = ok(M.dvpp_create_border_config)
        self.border_out = _pic(self.dec_mem, 1 << 16, 1, 64, 48, 64, 48)  # the 64x32 source plus 8 above and below
        for side in ("top", "bottom"):
            ok(getattr(M, f"dvpp_set_border_config_{side}"), self.border, 8)
        for batch, pic in ((self.src_batch, self.src), (self.dst_batch, self.dst)):
            member = ok(M.dvpp_get_pic_desc, batch, 0)
            for name in ("data", "size", "format", "width", "height", "width_stride", "height_stride"):
                ok(getattr(M, f"dvpp_set_pic_desc_{name}"), member, ok(getattr(M, f"dvpp_get_pic_desc_{name}"), pic))

    def video_objects(self) -> None:
        """VDEC/VENC channel descs (callback and report thread set, no channel: sends fail with a code) and spares
        the plausible create/destroy calls use."""
        self.vdec_desc, self.vdec_spare = ok(M.vdec_create_channel_desc), ok(M.vdec_create_channel_desc)
        self.venc_desc, self.venc_spare = ok(M.venc_create_channel_desc), ok(M.venc_create_channel_desc)
        for desc in (self.vdec_desc, self.vdec_spare):
            ok(M.vdec_set_channel_desc_thread_id, desc, self.reporter_tid)
            ok(M.vdec_set_channel_desc_callback, desc, _video_callback)
            ok(M.vdec_set_channel_desc_entype, desc, 3)
        for desc in (self.venc_desc, self.venc_spare):
            ok(M.venc_set_channel_desc_thread_id, desc, self.reporter_tid)
            ok(M.venc_set_channel_desc_callback, desc, _video_callback)
            ok(M.venc_set_channel_desc_pic_width, desc, 128)
            ok(M.venc_set_channel_desc_pic_height, desc, 128)
        self.vdec_frame, self.vdec_frame_spare = ok(M.vdec_create_frame_config), ok(M.vdec_create_frame_config)
        self.venc_frame, self.venc_frame_spare = ok(M.venc_create_frame_config), ok(M.venc_create_frame_config)

    def video_plausible(self) -> dict[str, tuple]:
        vd, ve = self.vdec_desc, self.venc_desc
        args: dict[str, tuple] = {
            "acl.media.vdec_create_channel_desc": (),
            "acl.media.vdec_destroy_channel_desc": (self.vdec_spare,),
            "acl.media.vdec_set_channel_desc_channel_id": (vd, 3),
            "acl.media.vdec_set_channel_desc_thread_id": (vd, self.reporter_tid),
            "acl.media.vdec_set_channel_desc_callback": (vd, _video_callback),
            "acl.media.vdec_set_channel_desc_entype": (vd, 3),
            "acl.media.vdec_set_channel_desc_out_pic_format": (vd, 1),
            "acl.media.vdec_set_channel_desc_out_pic_width": (vd, 0),
            "acl.media.vdec_set_channel_desc_out_pic_height": (vd, 0),
            "acl.media.vdec_set_channel_desc_ref_frame_num": (vd, 4),
            "acl.media.vdec_set_channel_desc_out_mode": (vd, 0),
            "acl.media.vdec_set_channel_desc_bit_depth": (vd, 0),
            "acl.media.vdec_create_channel": (self.vdec_spare,),
            "acl.media.vdec_destroy_channel": (vd,),
            "acl.media.vdec_create_frame_config": (),
            "acl.media.vdec_destroy_frame_config": (self.vdec_frame_spare,),
            "acl.media.vdec_send_frame": (vd, self.stream_desc, self.dec_out, self.vdec_frame, None),
            "acl.media.vdec_send_skipped_frame": (vd, self.stream_desc, self.vdec_frame, None),
            "acl.media.venc_create_channel_desc": (),
            "acl.media.venc_destroy_channel_desc": (self.venc_spare,),
            "acl.media.venc_set_channel_desc_thread_id": (ve, self.reporter_tid),
            "acl.media.venc_set_channel_desc_callback": (ve, _video_callback),
            "acl.media.venc_set_channel_desc_entype": (ve, 3),
            "acl.media.venc_set_channel_desc_pic_format": (ve, 1),
            "acl.media.venc_set_channel_desc_pic_width": (ve, 128),
            "acl.media.venc_set_channel_desc_pic_height": (ve, 128),
            "acl.media.venc_set_channel_desc_key_frame_interval": (ve, 16),
            "acl.media.venc_set_channel_desc_buf_addr": (ve, 0),
            "acl.media.venc_set_channel_desc_buf_size": (ve, 1 << 20),
            "acl.media.venc_set_channel_desc_rc_mode": (ve, 0),
            "acl.media.venc_set_channel_desc_src_rate": (ve, 30),
            "acl.media.venc_set_channel_desc_max_bit_rate": (ve, 1000),
            "acl.media.venc_create_channel": (self.venc_spare,),
            "acl.media.venc_destroy_channel": (ve,),
            "acl.media.venc_create_frame_config": (),
            "acl.media.venc_destroy_frame_config": (self.venc_frame_spare,),
            "acl.media.venc_set_frame_config_eos": (self.venc_frame, 0),
            "acl.media.venc_set_frame_config_force_i_frame": (self.venc_frame, 0),
            "acl.media.venc_get_frame_config_eos": (self.venc_frame,),
            "acl.media.venc_get_frame_config_force_i_frame": (self.venc_frame,),
            "acl.media.venc_send_frame": (ve, self.src, 0, self.venc_frame, None),
            "acl.media.vdec_set_channel_desc_param": (vd, 0, 0),
            "acl.media.vdec_get_channel_desc_param": (vd, 0),
            "acl.media.venc_set_channel_desc_param": (ve, 4, 128),
            "acl.media.venc_get_channel_desc_param": (ve, 4),
        }
        for name in ("channel_id", "thread_id", "callback", "entype", "out_pic_format", "out_pic_width"):
            args[f"acl.media.vdec_get_channel_desc_{name}"] = (vd,)
        for name in ("out_pic_height", "ref_frame_num", "out_mode", "bit_depth"):
            args[f"acl.media.vdec_get_channel_desc_{name}"] = (vd,)
        for name in ("channel_id", "thread_id", "callback", "entype", "pic_format", "pic_width", "pic_height"):
            args[f"acl.media.venc_get_channel_desc_{name}"] = (ve,)
        for name in ("key_frame_interval", "buf_addr", "buf_size", "rc_mode", "src_rate", "max_bit_rate"):
            args[f"acl.media.venc_get_channel_desc_{name}"] = (ve,)
        return args

    @property
    def handles(self) -> list[int]:
        return [
            *(self.channel, self.channel_spare, self.src, self.dst, self.dec_out, self.pic_set, self.dead_pic),
            *(self.stream_desc, self.crop, self.paste, self.dead_roi, self.resize, self.jpege),
            *(self.src_batch, self.dst_batch, self.border),
        ]

    @property
    def pointers(self) -> list[int]:
        return [self.jpeg_host, self.jpeg_dev, self.png_dev, self.src_mem, self.dst_mem + 16, self.dead_dvpp]

    def usable(self) -> bool:
        return (
            self.channel in _descs.channel_descs
            and _descs.channel_descs.get(self.channel).created
            and all(h in _descs.pic_descs for h in (self.src, self.dst, self.dec_out, self.png_out, self.pic_set))
            and all(h in _descs.roi_configs for h in (self.crop, self.paste, self.roi_set))
            and self.resize in _descs.resize_configs
            and self.jpege in _descs.jpege_configs
            and self.stream_desc in _descs.stream_descs
            and self.src_batch in _descs.batch_pic_descs
            and self.dst_batch in _descs.batch_pic_descs
        )

    def plausible(self) -> dict[str, tuple]:
        ch, s, src, dst = self.channel, self.stream, self.src, self.dst
        jpeg = (self.jpeg_host, len(self.jpeg))
        args: dict[str, tuple] = {
            "acl.media.dvpp_malloc": (1000,),
            "acl.media.dvpp_free": (self.dvpp_spare,),
            "acl.media.dvpp_create_channel_desc": (),
            "acl.media.dvpp_create_channel": (self.channel_spare,),
            "acl.media.dvpp_destroy_channel": (self.channel_spare,),
            "acl.media.dvpp_destroy_channel_desc": (self.channel_spare,),
            "acl.media.dvpp_set_channel_desc_mode": (self.channel_spare, 1),
            "acl.media.dvpp_get_channel_desc_channel_id": (ch,),
            "acl.media.dvpp_create_pic_desc": (),
            "acl.media.dvpp_destroy_pic_desc": (self.pic_spare,),
            "acl.media.dvpp_create_batch_pic_desc": (2,),
            "acl.media.dvpp_destroy_batch_pic_desc": (self.batch_spare,),
            "acl.media.dvpp_get_pic_desc": (self.src_batch, 0),
            "acl.media.dvpp_set_pic_desc_data": (self.pic_set, self.src_mem),
            "acl.media.dvpp_set_pic_desc_format": (self.pic_set, 2),
            "acl.media.dvpp_create_stream_desc": (),
            "acl.media.dvpp_destroy_stream_desc": (self.stream_desc_spare,),
            "acl.media.dvpp_set_stream_desc_data": (self.stream_desc, self.jpeg_dev),
            "acl.media.dvpp_set_stream_desc_format": (self.stream_desc, 1),
            "acl.media.dvpp_set_stream_desc_timestamp": (self.stream_desc, 123456),
            "acl.media.dvpp_set_stream_desc_eos": (self.stream_desc, 1),
            "acl.media.dvpp_create_roi_config": (0, 31, 0, 15),
            "acl.media.dvpp_destroy_roi_config": (self.roi_spare,),
            "acl.media.dvpp_set_roi_config": (self.roi_set, 0, 9, 0, 5),
            "acl.media.dvpp_create_resize_config": (),
            "acl.media.dvpp_destroy_resize_config": (self.resize_spare,),
            "acl.media.dvpp_set_resize_config_interpolation": (self.resize, 1),
            "acl.media.dvpp_create_jpege_config": (),
            "acl.media.dvpp_destroy_jpege_config": (self.jpege_spare,),
            "acl.media.dvpp_set_jpege_config_level": (self.jpege, 90),
            "acl.media.dvpp_jpeg_get_image_info": jpeg,
            "acl.media.dvpp_jpeg_get_image_info_v2": jpeg,
            "acl.media.dvpp_jpeg_predict_dec_size": (*jpeg, 1),
            "acl.media.dvpp_jpeg_decode_async": (ch, self.jpeg_dev, len(self.jpeg), self.dec_out, s),
            "acl.media.dvpp_jpeg_predict_enc_size": (src, self.jpege),
            "acl.media.dvpp_jpeg_encode_async": (ch, src, self.enc_mem, self.size_ptr, self.jpege, s),
            "acl.media.dvpp_png_get_image_info": (self.png_host, len(self.png)),
            "acl.media.dvpp_png_predict_dec_size": (self.png_host, len(self.png), 12),
            "acl.media.dvpp_png_decode_async": (ch, self.png_dev, len(self.png), self.png_out, s),
            "acl.media.dvpp_vpc_resize_async": (ch, src, dst, self.resize, s),
            "acl.media.dvpp_vpc_crop_async": (ch, src, dst, self.crop, s),
            "acl.media.dvpp_vpc_crop_resize_async": (ch, src, dst, self.crop, self.resize, s),
            "acl.media.dvpp_vpc_crop_and_paste_async": (ch, src, dst, self.crop, self.paste, s),
            "acl.media.dvpp_vpc_crop_resize_paste_async": (ch, src, dst, self.crop, self.paste, self.resize, s),
            "acl.media.dvpp_vpc_batch_crop_async": (ch, self.src_batch, [1], self.dst_batch, [self.crop], s),
            "acl.media.dvpp_vpc_batch_crop_and_paste_async": (
                *(ch, self.src_batch, [1], self.dst_batch, [self.crop], [self.paste], s),
            ),
            "acl.media.dvpp_vpc_batch_crop_resize_async": (
                *(ch, self.src_batch, [1], self.dst_batch, [self.crop], self.resize, s),
            ),
            "acl.media.dvpp_vpc_batch_crop_resize_paste_async": (
                *(ch, self.src_batch, [1], self.dst_batch, [self.crop], [self.paste], self.resize, s),
            ),
            "acl.media.dvpp_vpc_convert_color_async": (ch, src, dst, s),
            "acl.media.dvpp_malloc_with_cfg": (1000, 0, {}),
            "acl.media.dvpp_set_channel_desc_param": (ch, 0, 0),
            "acl.media.dvpp_get_channel_desc_param": (ch, 0),
            "acl.media.dvpp_create_border_config": (),
            "acl.media.dvpp_destroy_border_config": (self.border_spare,),
            "acl.media.dvpp_set_border_config_value": (self.border, 0, 16.0),
            "acl.media.dvpp_get_border_config_value": (self.border, 0),
            "acl.media.dvpp_set_border_config_border_type": (self.border, 1),
            "acl.media.dvpp_vpc_make_border_async": (ch, src, self.border_out, self.border, s),
            "acl.media.dvpp_vpc_batch_crop_resize_make_border_async": (
                *(ch, self.src_batch, [1], self.dst_batch, [self.crop], [self.border_spare], self.resize, s),
            ),
        }
        for side in ("top", "bottom", "left", "right"):
            args[f"acl.media.dvpp_set_border_config_{side}"] = (self.border_spare, 2)
        for name in ("border_type", "top", "bottom", "left", "right"):
            args[f"acl.media.dvpp_get_border_config_{name}"] = (self.border,)
        for name in ("size", "width", "height", "width_stride", "height_stride", "ret_code"):
            args[f"acl.media.dvpp_set_pic_desc_{name}"] = (self.pic_set, 64)
        for name in ("data", "size", "format", "width", "height", "width_stride", "height_stride", "ret_code"):
            args[f"acl.media.dvpp_get_pic_desc_{name}"] = (src,)
        for name in ("size", "ret_code"):
            args[f"acl.media.dvpp_set_stream_desc_{name}"] = (self.stream_desc, 10)
        for name in ("data", "size", "format", "timestamp", "ret_code", "eos"):
            args[f"acl.media.dvpp_get_stream_desc_{name}"] = (self.stream_desc,)
        for side in ("left", "right", "top", "bottom"):
            args[f"acl.media.dvpp_set_roi_config_{side}"] = (self.roi_set, 3)
        args["acl.media.dvpp_get_resize_config_interpolation"] = (self.resize,)
        args["acl.media.dvpp_get_jpege_config_level"] = (self.jpege,)
        args.update(self.video_plausible())
        return args


def _video_callback(*args: object) -> None:
    """A VDEC/VENC frame callback that keeps nothing."""


_DESTROY_OF = {
    "acl.media.dvpp_malloc": "dvpp_free",
    "acl.media.dvpp_malloc_with_cfg": "dvpp_free",
    "acl.media.dvpp_create_border_config": "dvpp_destroy_border_config",
    "acl.media.dvpp_create_channel_desc": "dvpp_destroy_channel_desc",
    "acl.media.dvpp_create_pic_desc": "dvpp_destroy_pic_desc",
    "acl.media.dvpp_create_batch_pic_desc": "dvpp_destroy_batch_pic_desc",
    "acl.media.dvpp_create_stream_desc": "dvpp_destroy_stream_desc",
    "acl.media.dvpp_create_roi_config": "dvpp_destroy_roi_config",
    "acl.media.dvpp_create_resize_config": "dvpp_destroy_resize_config",
    "acl.media.dvpp_create_jpege_config": "dvpp_destroy_jpege_config",
    "acl.media.vdec_create_channel_desc": "vdec_destroy_channel_desc",
    "acl.media.vdec_create_frame_config": "vdec_destroy_frame_config",
    "acl.media.venc_create_channel_desc": "venc_destroy_channel_desc",
    "acl.media.venc_create_frame_config": "venc_destroy_frame_config",
}
_CHANNEL_DESTROY_OF = {
    "acl.media.dvpp_create_channel": "dvpp_destroy_channel",
    "acl.media.vdec_create_channel": "vdec_destroy_channel",
    "acl.media.venc_create_channel": "venc_destroy_channel",
}


def undo_media(name: str, args: list, value: object) -> None:
    """Release what a successful ``acl.media`` call created (or re-make what it destroyed of the spares)."""
    if name in _DESTROY_OF and value:
        call(getattr(M, _DESTROY_OF[name]), value)
    elif name in _CHANNEL_DESTROY_OF and args:
        call(getattr(M, _CHANNEL_DESTROY_OF[name]), args[0])
