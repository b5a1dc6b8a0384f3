"""``acl.media``: DVPP memory, descriptors and the image operations (JPEGD, JPEGE, PNGD, VPC), as pyACL declares them.

Arguments parse as pyACL's wrappers parse them; creators return a bare handle (0 on failure), getters the bare
value (0 for an unknown handle), everything else the code. All checks and state live in ``openacl.media``.
"""

from __future__ import annotations

from openacl.acl._args import BARE, VALUE, api
from openacl.media import descs as _descs
from openacl.media import memory as _memory

__all__ = [
    "dvpp_create_batch_pic_desc",
    "dvpp_create_channel",
    "dvpp_create_channel_desc",
    "dvpp_create_jpege_config",
    "dvpp_create_pic_desc",
    "dvpp_create_resize_config",
    "dvpp_create_roi_config",
    "dvpp_create_stream_desc",
    "dvpp_destroy_batch_pic_desc",
    "dvpp_destroy_channel",
    "dvpp_destroy_channel_desc",
    "dvpp_destroy_jpege_config",
    "dvpp_destroy_pic_desc",
    "dvpp_destroy_resize_config",
    "dvpp_destroy_roi_config",
    "dvpp_destroy_stream_desc",
    "dvpp_free",
    "dvpp_get_channel_desc_channel_id",
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
    "dvpp_malloc",
    "dvpp_set_channel_desc_mode",
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
]

_pics = _descs.pic_descs
_streams = _descs.stream_descs
_rois = _descs.roi_configs

# ----- memory -----


@api("k", VALUE)
def dvpp_malloc(size):
    return _memory.dvpp_malloc(size)


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


@api("kI")
def dvpp_set_channel_desc_mode(channel_desc, mode):
    _descs.set_channel_desc_mode(channel_desc, mode)


@api("k", BARE)
def dvpp_get_channel_desc_channel_id(channel_desc):
    return _descs.channel_descs.get(channel_desc).channel_id


# ----- pic descs -----


@api("", BARE)
def dvpp_create_pic_desc():
    return _descs.create_pic_desc()


@api("k")
def dvpp_destroy_pic_desc(pic_desc):
    _descs.destroy_pic_desc(pic_desc)


@api("kk")
def dvpp_set_pic_desc_data(pic_desc, dev_ptr):
    _pics.get(pic_desc).data = dev_ptr


@api("kI")
def dvpp_set_pic_desc_size(pic_desc, size):
    _pics.get(pic_desc).size = size


@api("ki")
def dvpp_set_pic_desc_format(pic_desc, pixel_format):
    _pics.get(pic_desc).format = pixel_format


@api("kI")
def dvpp_set_pic_desc_width(pic_desc, width):
    _pics.get(pic_desc).width = width


@api("kI")
def dvpp_set_pic_desc_height(pic_desc, height):
    _pics.get(pic_desc).height = height


@api("kI")
def dvpp_set_pic_desc_width_stride(pic_desc, width_stride):
    _pics.get(pic_desc).width_stride = width_stride


@api("kI")
def dvpp_set_pic_desc_height_stride(pic_desc, height_stride):
    _pics.get(pic_desc).height_stride = height_stride


@api("kI")
def dvpp_set_pic_desc_ret_code(pic_desc, ret_code):
    _pics.get(pic_desc).ret_code = ret_code


@api("k", BARE)
def dvpp_get_pic_desc_data(pic_desc):
    return _pics.get(pic_desc).data


@api("k", BARE)
def dvpp_get_pic_desc_size(pic_desc):
    return _pics.get(pic_desc).size


@api("k", BARE)
def dvpp_get_pic_desc_format(pic_desc):
    return _pics.get(pic_desc).format


@api("k", BARE)
def dvpp_get_pic_desc_width(pic_desc):
    return _pics.get(pic_desc).width


@api("k", BARE)
def dvpp_get_pic_desc_height(pic_desc):
    return _pics.get(pic_desc).height


@api("k", BARE)
def dvpp_get_pic_desc_width_stride(pic_desc):
    return _pics.get(pic_desc).width_stride


@api("k", BARE)
def dvpp_get_pic_desc_height_stride(pic_desc):
    return _pics.get(pic_desc).height_stride


@api("k", BARE)
def dvpp_get_pic_desc_ret_code(pic_desc):
    return _pics.get(pic_desc).ret_code


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


@api("kk")
def dvpp_set_stream_desc_data(stream_desc, dev_ptr):
    _streams.get(stream_desc).data = dev_ptr


@api("kI")
def dvpp_set_stream_desc_size(stream_desc, size):
    _streams.get(stream_desc).size = size


@api("ki")
def dvpp_set_stream_desc_format(stream_desc, stream_format):
    _streams.get(stream_desc).format = stream_format


@api("kK")
def dvpp_set_stream_desc_timestamp(stream_desc, timestamp):
    _streams.get(stream_desc).timestamp = timestamp


@api("kI")
def dvpp_set_stream_desc_ret_code(stream_desc, ret_code):
    _streams.get(stream_desc).ret_code = ret_code


@api("kB")
def dvpp_set_stream_desc_eos(stream_desc, eos):
    _streams.get(stream_desc).eos = eos


@api("k", BARE)
def dvpp_get_stream_desc_data(stream_desc):
    return _streams.get(stream_desc).data


@api("k", BARE)
def dvpp_get_stream_desc_size(stream_desc):
    return _streams.get(stream_desc).size


@api("k", BARE)
def dvpp_get_stream_desc_format(stream_desc):
    return _streams.get(stream_desc).format


@api("k", BARE)
def dvpp_get_stream_desc_timestamp(stream_desc):
    return _streams.get(stream_desc).timestamp


@api("k", BARE)
def dvpp_get_stream_desc_ret_code(stream_desc):
    return _streams.get(stream_desc).ret_code


@api("k", BARE)
def dvpp_get_stream_desc_eos(stream_desc):
    return _streams.get(stream_desc).eos


# ----- ROI, resize and JPEGE configs -----


@api("IIII", BARE)
def dvpp_create_roi_config(left, right, top, bottom):
    return _descs.create_roi_config(left, right, top, bottom)


@api("k")
def dvpp_destroy_roi_config(roi_config):
    _rois.remove(roi_config)


@api("kIIII")
def dvpp_set_roi_config(roi_config, left, right, top, bottom):
    _descs.set_roi_config(roi_config, left, right, top, bottom)


@api("kI")
def dvpp_set_roi_config_left(roi_config, left):
    _rois.get(roi_config).left = left


@api("kI")
def dvpp_set_roi_config_right(roi_config, right):
    _rois.get(roi_config).right = right


@api("kI")
def dvpp_set_roi_config_top(roi_config, top):
    _rois.get(roi_config).top = top


@api("kI")
def dvpp_set_roi_config_bottom(roi_config, bottom):
    _rois.get(roi_config).bottom = bottom


@api("", BARE)
def dvpp_create_resize_config():
    return _descs.create_resize_config()


@api("k")
def dvpp_destroy_resize_config(resize_config):
    _descs.resize_configs.remove(resize_config)


@api("kI")
def dvpp_set_resize_config_interpolation(resize_config, interpolation):
    _descs.set_resize_interpolation(resize_config, interpolation)


@api("k", BARE)
def dvpp_get_resize_config_interpolation(resize_config):
    return _descs.resize_configs.get(resize_config).interpolation


@api("", BARE)
def dvpp_create_jpege_config():
    return _descs.create_jpege_config()


@api("k")
def dvpp_destroy_jpege_config(jpege_config):
    _descs.jpege_configs.remove(jpege_config)


@api("kI")
def dvpp_set_jpege_config_level(jpege_config, level):
    _descs.set_jpege_level(jpege_config, level)


@api("k", BARE)
def dvpp_get_jpege_config_level(jpege_config):
    return _descs.jpege_configs.get(jpege_config).level
