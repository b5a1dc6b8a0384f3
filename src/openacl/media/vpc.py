"""VPC: resize, crop, crop-and-paste, make-border, their batch forms and colour conversion, as stream tasks
(spec §6.3-§6.5).

Every form is one primitive: cut a box out of the input (the whole picture for resize), scale it with the
filter of the resize config (``resample.py``; crop and paste without a config use interpolation 0) to a box of
the output (the whole picture unless a paste area is given) and write it there in the output's format.
Output pixels outside a paste area keep what they held. Odd input and output sizes are rounded down to even.

Make-border places the (cropped, scaled) picture inside the border its border config gives and fills the border
(CONSTANT with the config's value, or REPLICATE / REFLECT / REFLECT_101 of the picture's edge): the output is
the whole picture, so the scaled size is the output's less the border. Borders of a subsampled output must be
even (a chroma sample covers two pixels).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.media import chip as _chip
from openacl.media import descs as _descs
from openacl.media import picture, resample, tasks
from openacl.media.checks import Box, Pic, check_scale, crop_box, paste_box, vpc_pic
from openacl.media.chip import ChipRules
from openacl.media.formats import ChannelMode

log = get_logger("media")


@dataclass(frozen=True)
class Job:
    src: Pic
    crop: Box
    dst: Pic
    paste: Box


def _whole(pic: Pic) -> Box:
    return Box(0, 0, pic.width, pic.height)


def _method(resize_config: int, rules: ChipRules) -> str:
    if resize_config == 0:
        return resample.FILTERS[0]
    interpolation = _descs.resize_configs.get(resize_config).interpolation
    if interpolation > rules.max_interpolation:
        raise AclError(AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, f"interpolation {interpolation} on {rules.name}")
    return resample.FILTERS[interpolation]


def _job(in_pic: int, out_pic: int, crop_roi: int, paste_roi: int, rules: ChipRules) -> Job:
    src = vpc_pic(in_pic, rules, output=False)
    dst = vpc_pic(out_pic, rules, output=True)
    crop = crop_box(crop_roi, src, rules) if crop_roi else _whole(src)
    paste = paste_box(paste_roi, dst, rules) if paste_roi else _whole(dst)
    check_scale(crop, paste, rules)
    return Job(src, crop, dst, paste)


def run_job(job: Job, method: str) -> None:
    """The device's part: read, crop, scale, write (also used by the benchmark and the tests)."""
    src, dst = job.src, job.dst
    planes = picture.read(src.buf, src.lay, src.width, src.height, src.ws, src.hs)
    planes = picture.crop(planes, job.crop.left, job.crop.top, job.crop.width, job.crop.height)
    planes = picture.scale(planes, job.paste.width, job.paste.height, picture.target_sub(dst.lay), method)
    picture.write(dst.buf, dst.lay, dst.ws, dst.hs, planes, job.paste.left, job.paste.top)


def _submit(stream_handle: int, name: str, jobs: list[Job], method: str) -> None:
    stream = tasks.stream_for(stream_handle)

    def work() -> None:
        for job in jobs:
            run_job(job, method)

    outputs, writes = [job.dst.desc for job in jobs], [job.dst.buf for job in jobs]
    tasks.submit(stream, name, work, outputs, writes=writes, reads=[job.src.buf for job in jobs])


def crop_resize_paste(
    channel: int, in_pic: int, out_pic: int, crop_roi: int, paste_roi: int, resize_config: int, stream: int, name: str
) -> None:
    """Every single-picture VPC form: a 0 ROI means the whole picture, a 0 config interpolation 0."""
    _descs.channel(channel, ChannelMode.VPC)
    rules = _chip.current()
    method = _method(resize_config, rules)
    if name == "resize" and resize_config == 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "resize config is 0")
    if name.startswith("crop") and crop_roi == 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "crop ROI config is 0")
    if "paste" in name and paste_roi == 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "paste ROI config is 0")
    job = _job(in_pic, out_pic, crop_roi, paste_roi, rules)
    _submit(stream, name, [job], method)


def batch(
    channel: int,
    src_batch: int,
    roi_nums: list[int],
    dst_batch: int,
    crop_rois: list[int],
    paste_rois: list[int] | None,
    resize_config: int,
    stream: int,
    name: str,
) -> int:
    """Crops ``roi_nums[i]`` areas from source i, in order; output j gets crop j (pasted at paste j)."""
    _descs.channel(channel, ChannelMode.VPC)
    rules = _chip.current()
    method = _method(resize_config, rules)
    sources = _descs.batch_pic_descs.get(src_batch).members
    outputs = _descs.batch_pic_descs.get(dst_batch).members
    if len(roi_nums) != len(sources):
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM, f"{len(roi_nums)} roi counts for {len(sources)} source pictures"
        )
    if sum(roi_nums) != len(crop_rois) or len(crop_rois) != len(outputs):
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM,
            f"roi counts add up to {sum(roi_nums)}, with {len(crop_rois)} crop areas and {len(outputs)} outputs",
        )
    jobs = []
    j = 0
    for source, count in zip(sources, roi_nums, strict=True):
        for _ in range(count):
            paste = paste_rois[j] if paste_rois is not None else 0
            if paste_rois is not None and paste == 0:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"paste area {j} is 0")
            if crop_rois[j] == 0:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"crop area {j} is 0")
            jobs.append(_job(source, outputs[j], crop_rois[j], paste, rules))
            j += 1
    _submit(stream, name, jobs, method)
    return dst_batch


def convert_color(channel: int, in_pic: int, out_pic: int, stream: int) -> None:
    """Format conversion at the same size; the 310 has none (``ACL_ERROR_FEATURE_UNSUPPORTED``)."""
    _descs.channel(channel, ChannelMode.VPC)
    rules = _chip.current()
    if not rules.convert_color:
        raise AclError(AclCode.ACL_ERROR_FEATURE_UNSUPPORTED, f"dvpp_vpc_convert_color_async on {rules.name}")
    job = _job(in_pic, out_pic, 0, 0, rules)
    if (job.src.width, job.src.height) != (job.dst.width, job.dst.height):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "convert color keeps the size: input and output differ")
    _submit(stream, "convert_color", [job], resample.FILTERS[0])


@dataclass(frozen=True)
class BorderJob:
    job: Job  # its paste box is where the picture goes inside the border
    border: _descs.BorderConfig  # a copy, taken when the task is queued


def _border_job(
    in_pic: int, out_pic: int, crop_roi: int, border_config: int, rules: ChipRules, *, scaled: bool
) -> BorderJob:
    if border_config == 0:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "border config is 0")
    border = copy.deepcopy(_descs.border_configs.get(border_config))
    src = vpc_pic(in_pic, rules, output=False)
    dst = vpc_pic(out_pic, rules, output=True)
    crop = crop_box(crop_roi, src, rules) if crop_roi else _whole(src)
    sx, sy = picture.target_sub(dst.lay)
    if border.left % sx or border.right % sx or border.top % sy or border.bottom % sy:
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"borders {_sides(border)} are not multiples of {sx}x{sy}")
    width, height = dst.width - border.left - border.right, dst.height - border.top - border.bottom
    inner = Box(border.left, border.top, width, height)
    if inner.width < rules.vpc_min_width or inner.height < rules.vpc_min_height:
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM,
            f"a {dst.width}x{dst.height} output less borders {_sides(border)} leaves {inner.width}x{inner.height}",
        )
    if not scaled and (inner.width, inner.height) != (crop.width, crop.height):
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM,
            f"make-border does not scale: the {dst.width}x{dst.height} output is not the {crop.width}x{crop.height}"
            f" input plus borders {_sides(border)}",
        )
    check_scale(crop, inner, rules)
    return BorderJob(Job(src, crop, dst, inner), border)


def _sides(border: _descs.BorderConfig) -> str:
    return f"top {border.top} bottom {border.bottom} left {border.left} right {border.right}"


def run_border_job(item: BorderJob, method: str) -> None:
    """The device's part of make-border: read, crop, scale, add the border, write the whole output."""
    job, border = item.job, item.border
    src, dst = job.src, job.dst
    planes = picture.read(src.buf, src.lay, src.width, src.height, src.ws, src.hs)
    planes = picture.crop(planes, job.crop.left, job.crop.top, job.crop.width, job.crop.height)
    planes = picture.scale(planes, job.paste.width, job.paste.height, picture.target_sub(dst.lay), method)
    fill = picture.border_fill(dst.lay, border.value)
    planes = picture.pad(planes, border.top, border.bottom, border.left, border.right, border.border_type, fill)
    picture.write(dst.buf, dst.lay, dst.ws, dst.hs, planes)


def _submit_border(stream_handle: int, name: str, items: list[BorderJob], method: str) -> None:
    stream = tasks.stream_for(stream_handle)

    def work() -> None:
        for item in items:
            run_border_job(item, method)

    dsts = [item.job.dst for item in items]
    reads = [item.job.src.buf for item in items]
    tasks.submit(stream, name, work, [d.desc for d in dsts], writes=[d.buf for d in dsts], reads=reads)


def make_border(channel: int, in_pic: int, out_pic: int, border_config: int, stream: int) -> None:
    """The input, unscaled, inside the config's border: the output is the input's size plus the border."""
    _descs.channel(channel, ChannelMode.VPC)
    rules = _chip.current()
    item = _border_job(in_pic, out_pic, 0, border_config, rules, scaled=False)
    _submit_border(stream, "make_border", [item], resample.FILTERS[0])


def batch_crop_resize_make_border(
    channel: int,
    src_batch: int,
    roi_nums: list[int],
    dst_batch: int,
    crop_rois: list[int],
    border_configs: list[int],
    resize_config: int,
    stream: int,
) -> int:
    """Output j: crop j of its source, scaled into output j less border j, inside border j."""
    _descs.channel(channel, ChannelMode.VPC)
    rules = _chip.current()
    method = _method(resize_config, rules)
    sources = _descs.batch_pic_descs.get(src_batch).members
    outputs = _descs.batch_pic_descs.get(dst_batch).members
    if len(roi_nums) != len(sources):
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM, f"{len(roi_nums)} roi counts for {len(sources)} source pictures"
        )
    if not sum(roi_nums) == len(crop_rois) == len(border_configs) == len(outputs):
        raise AclError(
            AclCode.ACL_ERROR_INVALID_PARAM,
            f"roi counts add up to {sum(roi_nums)}, with {len(crop_rois)} crop areas, {len(border_configs)} border"
            f" configs and {len(outputs)} outputs",
        )
    items = []
    j = 0
    for source, count in zip(sources, roi_nums, strict=True):
        for _ in range(count):
            if crop_rois[j] == 0:
                raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"crop area {j} is 0")
            items.append(_border_job(source, outputs[j], crop_rois[j], border_configs[j], rules, scaled=True))
            j += 1
    _submit_border(stream, "batch_crop_resize_make_border", items, method)
    return dst_batch
