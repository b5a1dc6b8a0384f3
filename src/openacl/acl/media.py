"""``acl.media``: DVPP memory, descriptors and the image operations (JPEGD, JPEGE, PNGD, VPC), as pyACL declares them.

Arguments parse as pyACL's wrappers parse them; creators return a bare handle (0 on failure), getters the bare
value (0 for an unknown handle), everything else the code. All checks and state live in ``openacl.media``.

The set/get pair of every desc field (``dvpp_set_pic_desc_width`` ...) is generated from the field tables of
``openacl.media`` (each field's type, range and refusal code stand there once; ``acl/_accessors.py``); ``__all__``
still names every function.
"""

from __future__ import annotations

from openacl.acl._accessors import accessors
from openacl.acl._args import (
    BARE,
    VALUE,
    VALUES,
    ArgumentRuntimeError,
    ArgumentValueError,
    FailureOf,
    api,
    convert_one,
    handle_list,
    malloc_config,
    require_callable,
)
from openacl.media import descs as _descs
from openacl.media import jpeg as _jpeg
from openacl.media import memory as _memory
from openacl.media import png as _png
from openacl.media import vdec as _vdec
from openacl.media import venc as _venc
from openacl.media import vpc as _vpc
from openacl.runtime import alloc_config as _alloc_config

__all__ = [
    "dvpp_create_batch_pic_desc",
    "dvpp_create_border_config",
    "dvpp_create_channel",
    "dvpp_create_channel_desc",
    "dvpp_create_jpege_config",
    "dvpp_create_pic_desc",
    "dvpp_create_resize_config",
    "dvpp_create_roi_config",
    "dvpp_create_stream_desc",
    "dvpp_destroy_batch_pic_desc",
    "dvpp_destroy_border_config",
    "dvpp_destroy_channel",
    "dvpp_destroy_channel_desc",
    "dvpp_destroy_jpege_config",
    "dvpp_destroy_pic_desc",
    "dvpp_destroy_resize_config",
    "dvpp_destroy_roi_config",
    "dvpp_destroy_stream_desc",
    "dvpp_free",
    "dvpp_get_border_config_border_type",
    "dvpp_get_border_config_bottom",
    "dvpp_get_border_config_left",
    "dvpp_get_border_config_right",
    "dvpp_get_border_config_top",
    "dvpp_get_border_config_value",
    "dvpp_get_channel_desc_channel_id",
    "dvpp_get_channel_desc_param",
    "dvpp_get_jpege_config_level",
    "dvpp_get_pic_desc",
    "dvpp_get_pic_desc_data",
    "dvpp_get_pic_desc_format",
    "dvpp_get_pic_desc_height",
    "dvpp_get_pic_desc_height_stride",
    "dvpp_get_pic_desc_ret_code",
    "dvpp_get_pic_desc_size",
    "dvpp_get_pic_desc_width",
    "dvpp_get_pic_desc_width_stride",
    "dvpp_get_resize_config_interpolation",
    "dvpp_get_stream_desc_data",
    "dvpp_get_stream_desc_eos",
    "dvpp_get_stream_desc_format",
    "dvpp_get_stream_desc_ret_code",
    "dvpp_get_stream_desc_size",
    "dvpp_get_stream_desc_timestamp",
    "dvpp_jpeg_decode_async",
    "dvpp_jpeg_encode_async",
    "dvpp_jpeg_get_image_info",
    "dvpp_jpeg_get_image_info_v2",
    "dvpp_jpeg_predict_dec_size",
    "dvpp_jpeg_predict_enc_size",
    "dvpp_malloc",
    "dvpp_malloc_with_cfg",
    "dvpp_png_decode_async",
    "dvpp_png_get_image_info",
    "dvpp_png_predict_dec_size",
    "dvpp_set_border_config_border_type",
    "dvpp_set_border_config_bottom",
    "dvpp_set_border_config_left",
    "dvpp_set_border_config_right",
    "dvpp_set_border_config_top",
    "dvpp_set_border_config_value",
    "dvpp_set_channel_desc_mode",
    "dvpp_set_channel_desc_param",
    "dvpp_set_jpege_config_level",
    "dvpp_set_pic_desc_data",
    "dvpp_set_pic_desc_format",
    "dvpp_set_pic_desc_height",
    "dvpp_set_pic_desc_height_stride",
    "dvpp_set_pic_desc_ret_code",
    "dvpp_set_pic_desc_size",
    "dvpp_set_pic_desc_width",
    "dvpp_set_pic_desc_width_stride",
    "dvpp_set_resize_config_interpolation",
    "dvpp_set_roi_config",
    "dvpp_set_roi_config_bottom",
    "dvpp_set_roi_config_left",
    "dvpp_set_roi_config_right",
    "dvpp_set_roi_config_top",
    "dvpp_set_stream_desc_data",
    "dvpp_set_stream_desc_eos",
    "dvpp_set_stream_desc_format",
    "dvpp_set_stream_desc_ret_code",
    "dvpp_set_stream_desc_size",
    "dvpp_set_stream_desc_timestamp",
    "dvpp_vpc_batch_crop_and_paste_async",
    "dvpp_vpc_batch_crop_async",
    "dvpp_vpc_batch_crop_resize_async",
    "dvpp_vpc_batch_crop_resize_make_border_async",
    "dvpp_vpc_batch_crop_resize_paste_async",
    "dvpp_vpc_convert_color_async",
    "dvpp_vpc_crop_and_paste_async",
    "dvpp_vpc_crop_async",
    "dvpp_vpc_crop_resize_async",
    "dvpp_vpc_crop_resize_paste_async",
    "dvpp_vpc_make_border_async",
    "dvpp_vpc_resize_async",
    "vdec_create_channel",
    "vdec_create_channel_desc",
    "vdec_create_frame_config",
    "vdec_destroy_channel",
    "vdec_destroy_channel_desc",
    "vdec_destroy_frame_config",
    "vdec_get_channel_desc_bit_depth",
    "vdec_get_channel_desc_callback",
    "vdec_get_channel_desc_channel_id",
    "vdec_get_channel_desc_entype",
    "vdec_get_channel_desc_out_mode",
    "vdec_get_channel_desc_out_pic_format",
    "vdec_get_channel_desc_out_pic_height",
    "vdec_get_channel_desc_out_pic_width",
    "vdec_get_channel_desc_param",
    "vdec_get_channel_desc_ref_frame_num",
    "vdec_get_channel_desc_thread_id",
    "vdec_send_frame",
    "vdec_send_skipped_frame",
    "vdec_set_channel_desc_bit_depth",
    "vdec_set_channel_desc_callback",
    "vdec_set_channel_desc_channel_id",
    "vdec_set_channel_desc_entype",
    "vdec_set_channel_desc_out_mode",
    "vdec_set_channel_desc_out_pic_format",
    "vdec_set_channel_desc_out_pic_height",
    "vdec_set_channel_desc_out_pic_width",
    "vdec_set_channel_desc_param",
    "vdec_set_channel_desc_ref_frame_num",
    "vdec_set_channel_desc_thread_id",
    "venc_create_channel",
    "venc_create_channel_desc",
    "venc_create_frame_config",
    "venc_destroy_channel",
    "venc_destroy_channel_desc",
    "venc_destroy_frame_config",
    "venc_get_channel_desc_buf_addr",
    "venc_get_channel_desc_buf_size",
    "venc_get_channel_desc_callback",
    "venc_get_channel_desc_channel_id",
    "venc_get_channel_desc_entype",
    "venc_get_channel_desc_key_frame_interval",
    "venc_get_channel_desc_max_bit_rate",
    "venc_get_channel_desc_param",
    "venc_get_channel_desc_pic_format",
    "venc_get_channel_desc_pic_height",
    "venc_get_channel_desc_pic_width",
    "venc_get_channel_desc_rc_mode",
    "venc_get_channel_desc_src_rate",
    "venc_get_channel_desc_thread_id",
    "venc_get_frame_config_eos",
    "venc_get_frame_config_force_i_frame",
    "venc_send_frame",
    "venc_set_channel_desc_buf_addr",
    "venc_set_channel_desc_buf_size",
    "venc_set_channel_desc_callback",
    "venc_set_channel_desc_entype",
    "venc_set_channel_desc_key_frame_interval",
    "venc_set_channel_desc_max_bit_rate",
    "venc_set_channel_desc_param",
    "venc_set_channel_desc_pic_format",
    "venc_set_channel_desc_pic_height",
    "venc_set_channel_desc_pic_width",
    "venc_set_channel_desc_rc_mode",
    "venc_set_channel_desc_src_rate",
    "venc_set_channel_desc_thread_id",
    "venc_set_frame_config_eos",
    "venc_set_frame_config_force_i_frame",
]

_BATCH_MAX = _descs.BATCH_MAX

# ----- every desc field's set/get pair (dvpp_set_pic_desc_width ...), from the field tables of openacl.media -----

for _declared in (
    ("dvpp", "channel_desc", _descs.channel_desc_fields),
    ("dvpp", "pic_desc", _descs.pic_desc_fields),
    ("dvpp", "stream_desc", _descs.stream_desc_fields),
    ("dvpp", "roi_config", _descs.roi_config_fields),
    ("dvpp", "resize_config", _descs.resize_config_fields),
    ("dvpp", "jpege_config", _descs.jpege_config_fields),
    ("dvpp", "border_config", _descs.border_config_fields),
    ("vdec", "channel_desc", _vdec.channel_desc_fields, "vdec_channel_desc"),
    ("venc", "channel_desc", _venc.channel_desc_fields, "venc_channel_desc"),
    ("venc", "frame_config", _venc.frame_config_fields, "venc_frame_config"),
):
    globals().update(accessors(__name__, *_declared))
del _declared

# ----- memory -----


@api("k", VALUE)
def dvpp_malloc(size):
    return _memory.dvpp_malloc(size)


@api("kiO", VALUE)
def dvpp_malloc_with_cfg(size, policy, cfg):
    config = _alloc_config.parse(malloc_config(cfg, "acl.media.dvpp_malloc_with_cfg"))
    return _memory.dvpp_malloc(size, policy, config.device_id)


@api("k")
def dvpp_free(dev_ptr):
    _memory.dvpp_free(dev_ptr)


# ----- channel -----


@api("", BARE)
def dvpp_create_channel_desc():
    return _descs.create_channel_desc()


@api("k")
def dvpp_create_channel(channel_desc):
    _descs.create_channel(channel_desc)


@api("k")
def dvpp_destroy_channel(channel_desc):
    _descs.destroy_channel(channel_desc)


@api("k")
def dvpp_destroy_channel_desc(channel_desc):
    _descs.destroy_channel_desc(channel_desc)


# ----- pic descs -----


@api("", BARE)
def dvpp_create_pic_desc():
    return _descs.create_pic_desc()


@api("k")
def dvpp_destroy_pic_desc(pic_desc):
    _descs.destroy_pic_desc(pic_desc)


@api("I", BARE)
def dvpp_create_batch_pic_desc(batch_size):
    return _descs.create_batch_pic_desc(batch_size)


@api("k")
def dvpp_destroy_batch_pic_desc(batch_pic_desc):
    _descs.destroy_batch_pic_desc(batch_pic_desc)


@api("kI", BARE)
def dvpp_get_pic_desc(batch_pic_desc, index):
    return _descs.batch_member(batch_pic_desc, index)


# ----- stream descs -----


@api("", BARE)
def dvpp_create_stream_desc():
    return _descs.create_stream_desc()


@api("k")
def dvpp_destroy_stream_desc(stream_desc):
    _descs.destroy_stream_desc(stream_desc)


# ----- ROI, resize and JPEGE configs -----


@api("IIII", BARE)
def dvpp_create_roi_config(left, right, top, bottom):
    return _descs.create_roi_config(left, right, top, bottom)


@api("k")
def dvpp_destroy_roi_config(roi_config):
    _descs.roi_configs.remove(roi_config)


@api("kIIII")
def dvpp_set_roi_config(roi_config, left, right, top, bottom):
    _descs.set_roi_config(roi_config, left, right, top, bottom)


@api("", BARE)
def dvpp_create_resize_config():
    return _descs.create_resize_config()


@api("k")
def dvpp_destroy_resize_config(resize_config):
    _descs.resize_configs.remove(resize_config)


@api("kik", VALUE, FailureOf(lambda args: args[0]))
def dvpp_set_channel_desc_param(channel_desc, param_type, value):
    _descs.set_channel_param(channel_desc, param_type, value)
    return channel_desc


@api("ki", VALUES, failure=(0, 0))
def dvpp_get_channel_desc_param(channel_desc, param_type):
    return _descs.channel_param(channel_desc, param_type)


@api("", BARE)
def dvpp_create_border_config():
    return _descs.create_border_config()


@api("k")
def dvpp_destroy_border_config(border_config):
    _descs.border_configs.remove(border_config)


@api("kId")
def dvpp_set_border_config_value(border_config, index, value):
    _descs.set_border_value(border_config, index, value)


@api("kI", BARE, failure=0.0)
def dvpp_get_border_config_value(border_config, index):
    return _descs.border_value(border_config, index)


@api("", BARE)
def dvpp_create_jpege_config():
    return _descs.create_jpege_config()


@api("k")
def dvpp_destroy_jpege_config(jpege_config):
    _descs.jpege_configs.remove(jpege_config)


# ----- JPEG -----


@api("kI", VALUES, failure=(0, 0, 0))
def dvpp_jpeg_get_image_info(data, size):
    info = _jpeg.image_info(data, size)
    return info.width, info.height, info.components


@api("kI", VALUES, failure=(0, 0, 0, 0))
def dvpp_jpeg_get_image_info_v2(data, size):
    info = _jpeg.image_info(data, size)
    return info.width, info.height, info.components, info.format


@api("kIi", VALUE)
def dvpp_jpeg_predict_dec_size(data, data_size, output_pixel_format):
    return _jpeg.predict_dec_size(data, data_size, output_pixel_format)


@api("kkIkk")
def dvpp_jpeg_decode_async(channel_desc, data, size, output_desc, stream):
    _jpeg.decode_async(channel_desc, data, size, output_desc, stream)


@api("kk", VALUE)
def dvpp_jpeg_predict_enc_size(input_desc, config):
    return _jpeg.predict_enc_size(input_desc, config)


@api("kkkkkk")
def dvpp_jpeg_encode_async(channel_desc, input_desc, data, size, config, stream):
    _jpeg.encode_async(channel_desc, input_desc, data, size, config, stream)


# ----- PNG -----


@api("kI", VALUES, failure=(0, 0, 0))
def dvpp_png_get_image_info(data, data_size):
    info = _png.image_info(data, data_size)
    return info.width, info.height, info.components


@api("kIi", VALUE)
def dvpp_png_predict_dec_size(data, data_size, output_pixel_format):
    return _png.predict_dec_size(data, data_size, output_pixel_format)


@api("kkIkk")
def dvpp_png_decode_async(channel_desc, data, size, output_desc, stream):
    _png.decode_async(channel_desc, data, size, output_desc, stream)


# ----- VPC -----


@api("kkkkk")
def dvpp_vpc_resize_async(channel_desc, input_desc, output_desc, resize_config, stream):
    _vpc.crop_resize_paste(channel_desc, input_desc, output_desc, 0, 0, resize_config, stream, "resize")


@api("kkkkk")
def dvpp_vpc_crop_async(channel_desc, input_desc, output_desc, crop_area, stream):
    _vpc.crop_resize_paste(channel_desc, input_desc, output_desc, crop_area, 0, 0, stream, "crop")


@api("kkkkkk")
def dvpp_vpc_crop_resize_async(channel_desc, input_desc, output_desc, crop_area, resize_config, stream):
    _vpc.crop_resize_paste(channel_desc, input_desc, output_desc, crop_area, 0, resize_config, stream, "crop_resize")


@api("kkkkkk")
def dvpp_vpc_crop_and_paste_async(channel_desc, input_desc, output_desc, crop_area, paste_area, stream):
    _vpc.crop_resize_paste(channel_desc, input_desc, output_desc, crop_area, paste_area, 0, stream, "crop_and_paste")


@api("kkkkkkk")
def dvpp_vpc_crop_resize_paste_async(
    channel_desc, input_desc, output_desc, crop_area, paste_area, resize_config, stream
):
    _vpc.crop_resize_paste(
        channel_desc, input_desc, output_desc, crop_area, paste_area, resize_config, stream, "crop_resize_paste"
    )


def _batch_lists(qualname: str, roi_nums, crop_areas, paste_areas=None):
    """pyACL's own list checks (``ValueError``), before anything reaches DVPP."""
    nums = handle_list(roi_nums, qualname, "roi_nums")
    crops = handle_list(crop_areas, qualname, "crop_area")
    if not 1 <= len(crops) <= _BATCH_MAX:
        raise ArgumentValueError(f"number of crop areas must be between 1 and {_BATCH_MAX}")
    if any(n > _BATCH_MAX for n in nums):
        raise ArgumentValueError(f"number of roi must be between 1 and {_BATCH_MAX}")
    if paste_areas is None:
        return nums, crops, None
    pastes = handle_list(paste_areas, qualname, "paste_area")
    if len(pastes) != len(crops):
        raise ArgumentValueError("number of paste areas must equal the number of crop areas")
    return nums, crops, pastes


@api("kkkkk")
def dvpp_vpc_make_border_async(channel_desc, input_desc, output_desc, border_config, stream):
    _vpc.make_border(channel_desc, input_desc, output_desc, border_config, stream)


@api("kkOkOOkk")
def dvpp_vpc_batch_crop_resize_make_border_async(
    channel_desc, src_batch_desc, roi_nums, dst_batch_desc, crop_area, border_config, resize_config, stream
):
    qualname = "acl.media.dvpp_vpc_batch_crop_resize_make_border_async"
    nums, crops, _ = _batch_lists(qualname, roi_nums, crop_area)
    borders = handle_list(border_config, qualname, "border_config")
    if len(borders) != len(crops):
        raise ArgumentValueError("number of border configs must equal the number of crop areas")
    _vpc.batch_crop_resize_make_border(
        channel_desc, src_batch_desc, nums, dst_batch_desc, crops, borders, resize_config, stream
    )


_DST_BATCH = FailureOf(lambda args: args[3])  # a failed batch call returns the destination batch desc, as pyACL does


@api("kkOkOk", VALUE, _DST_BATCH)
def dvpp_vpc_batch_crop_async(channel_desc, src_batch_desc, roi_nums, dst_batch_desc, crop_area, stream):
    nums, crops, _ = _batch_lists("acl.media.dvpp_vpc_batch_crop_async", roi_nums, crop_area)
    return _vpc.batch(channel_desc, src_batch_desc, nums, dst_batch_desc, crops, None, 0, stream, "batch_crop")


@api("kkOkOOk", VALUE, _DST_BATCH)
def dvpp_vpc_batch_crop_and_paste_async(
    channel_desc, src_batch_desc, roi_nums, dst_batch_desc, crop_area, paste_area, stream
):
    qualname = "acl.media.dvpp_vpc_batch_crop_and_paste_async"
    nums, crops, pastes = _batch_lists(qualname, roi_nums, crop_area, paste_area)
    return _vpc.batch(
        channel_desc, src_batch_desc, nums, dst_batch_desc, crops, pastes, 0, stream, "batch_crop_and_paste"
    )


@api("kkOkOkk")
def dvpp_vpc_batch_crop_resize_async(
    channel_desc, src_batch_desc, roi_nums, dst_batch_desc, crop_area, resize_config, stream
):
    nums, crops, _ = _batch_lists("acl.media.dvpp_vpc_batch_crop_resize_async", roi_nums, crop_area)
    _vpc.batch(
        channel_desc, src_batch_desc, nums, dst_batch_desc, crops, None, resize_config, stream, "batch_crop_resize"
    )


@api("kkOkOOkk")
def dvpp_vpc_batch_crop_resize_paste_async(
    channel_desc, src_batch_desc, roi_nums, dst_batch_desc, crop_area, paste_area, resize_config, stream
):
    qualname = "acl.media.dvpp_vpc_batch_crop_resize_paste_async"
    nums, crops, pastes = _batch_lists(qualname, roi_nums, crop_area, paste_area)
    _vpc.batch(
        channel_desc,
        src_batch_desc,
        nums,
        dst_batch_desc,
        crops,
        pastes,
        resize_config,
        stream,
        "batch_crop_resize_paste",
    )


@api("kkkk")
def dvpp_vpc_convert_color_async(channel_desc, input_desc, output_desc, stream):
    _vpc.convert_color(channel_desc, input_desc, output_desc, stream)


# ===== video: VDEC and VENC (openacl.media.vdec / venc) =====


def _stored(callback):
    """pyACL's wrappers keep the callable per desc; a send or a get without one is their RuntimeError."""
    if callback is None:
        raise ArgumentRuntimeError("did not set callback, failed")
    return callback


# ----- VDEC channel desc -----


@api("", BARE)
def vdec_create_channel_desc():
    return _vdec.create_channel_desc()


@api("k")
def vdec_destroy_channel_desc(vdec_channel_desc):
    _vdec.destroy_channel_desc(vdec_channel_desc)


@api("kik", VALUE, FailureOf(lambda args: args[0]))
def vdec_set_channel_desc_param(vdec_channel_desc, param_type, value):
    _vdec.set_channel_param(vdec_channel_desc, param_type, value)
    return vdec_channel_desc


@api("ki", VALUES, failure=(0, 0))
def vdec_get_channel_desc_param(vdec_channel_desc, param_type):
    return _vdec.channel_param(vdec_channel_desc, param_type)


@api("kO")
def vdec_set_channel_desc_callback(vdec_channel_desc, callback):
    require_callable(callback)
    _vdec.set_callback(vdec_channel_desc, callback)


@api("k", BARE)
def vdec_get_channel_desc_callback(vdec_channel_desc):
    return _stored(_vdec.callback_of(vdec_channel_desc))


# ----- VDEC channel, frames -----


@api("k")
def vdec_create_channel(vdec_channel_desc):
    _vdec.create_channel(vdec_channel_desc)


@api("k")
def vdec_destroy_channel(vdec_channel_desc):
    _vdec.destroy_channel(vdec_channel_desc)


@api("", BARE)
def vdec_create_frame_config():
    return _vdec.create_frame_config()


@api("k")
def vdec_destroy_frame_config(vdec_frame_config):
    _vdec.destroy_frame_config(vdec_frame_config)


@api("kkkkO")
def vdec_send_frame(vdec_channel_desc, input_stream_desc, output_pic_desc, vdec_frame_config, user_data):
    _stored(_vdec.callback_of(vdec_channel_desc))
    _vdec.send_frame(vdec_channel_desc, input_stream_desc, output_pic_desc, vdec_frame_config, user_data)


@api("kkkO")
def vdec_send_skipped_frame(vdec_channel_desc, input_stream_desc, vdec_frame_config, user_data):
    _stored(_vdec.callback_of(vdec_channel_desc))
    _vdec.send_frame(vdec_channel_desc, input_stream_desc, 0, vdec_frame_config, user_data, skipped=True)


# ----- VENC channel desc -----


@api("", BARE)
def venc_create_channel_desc():
    return _venc.create_channel_desc()


@api("k")
def venc_destroy_channel_desc(venc_channel_desc):
    _venc.destroy_channel_desc(venc_channel_desc)


@api("kO")
def venc_set_channel_desc_callback(venc_channel_desc, callback):
    require_callable(callback)
    _venc.set_callback(venc_channel_desc, callback)


@api("k", BARE)
def venc_get_channel_desc_callback(venc_channel_desc):
    return _stored(_venc.callback_of(venc_channel_desc))


_VENC_PARAM_FORMATS = {_venc.ACL_VENC_THREAD_ID_UINT64: "K", _venc.ACL_VENC_BUF_ADDR_PTR: "k"}  # others: uint32


@api("kiO")
def venc_set_channel_desc_param(venc_channel_desc, param_type, value):
    qualname = "acl.media.venc_set_channel_desc_param"
    if param_type == _venc.ACL_VENC_CALLBACK_PTR:
        require_callable(value)
    else:
        value = convert_one(_VENC_PARAM_FORMATS.get(param_type, "I"), value, qualname)
    _venc.set_channel_param(venc_channel_desc, param_type, value)


@api("ki", VALUE)
def venc_get_channel_desc_param(venc_channel_desc, param_type):
    value = _venc.channel_param(venc_channel_desc, param_type)
    return _stored(value) if param_type == _venc.ACL_VENC_CALLBACK_PTR else value


# ----- VENC channel, frame config, frames -----


@api("k")
def venc_create_channel(venc_channel_desc):
    _venc.create_channel(venc_channel_desc)


@api("k")
def venc_destroy_channel(venc_channel_desc):
    _venc.destroy_channel(venc_channel_desc)


@api("", BARE)
def venc_create_frame_config():
    return _venc.create_frame_config()


@api("k")
def venc_destroy_frame_config(venc_frame_config):
    _venc.frame_configs.remove(venc_frame_config)


@api("kkkkO")
def venc_send_frame(venc_channel_desc, input_pic_desc, reserve, venc_frame_config, user_data):
    _stored(_venc.callback_of(venc_channel_desc))
    _venc.send_frame(venc_channel_desc, input_pic_desc, reserve, venc_frame_config, user_data)
