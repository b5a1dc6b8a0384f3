"""Small ONNX models with a dynamic-AIPP input (``insert_op_conf`` metadata), and a per-pixel reference AIPP in
plain Python to check openacl's against."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

AIPP_INPUT = "ascend_dynamic_aipp_data"
YUV420SP_U8, XRGB8888_U8, RGB888_U8, YUV400_U8 = 1, 2, 3, 4
#: ATC's YUV420SP -> RGB matrix (BT.601, full range) with input bias 0, 128, 128, as Ascend's docs give it
YUV2RGB = (256, 0, 359, 256, -88, -183, 256, 454, 0)


def aipp_model(
    path: Path,
    shape=(1, 3, 4, 6),
    conf: str | None = None,
    layout: str | None = None,
    elem=TensorProto.FLOAT,
    inputs: int = 1,
    metadata: dict[str, str] | None = None,
) -> Path:
    """``image`` (and ``image1`` ...) -> ``out`` (and ``out1`` ...): Identity, so the output is what AIPP made."""
    names = ["image"] + [f"image{i}" for i in range(1, inputs)]
    outs = ["out"] + [f"out{i}" for i in range(1, inputs)]
    graph = helper.make_graph(
        [helper.make_node("Identity", [n], [o]) for n, o in zip(names, outs, strict=True)],
        "aippnet",
        [helper.make_tensor_value_info(n, elem, list(shape)) for n in names],
        [helper.make_tensor_value_info(o, elem, list(shape)) for o in outs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if conf is None:
        conf = "aipp_op {\n  aipp_mode: dynamic\n  related_input_rank: 0\n  max_src_image_size: 4096\n}\n"
    metadata = {"insert_op_conf": conf, **(metadata or {})}
    if layout is not None:
        metadata["input_format"] = layout
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))
    return path


def reference_aipp(src: bytes, fmt: int, width: int, height: int, p: dict) -> np.ndarray:
    """One image through CANN's documented AIPP steps, pixel by pixel: (C, H, W) float32."""

    def pixel(x: int, y: int) -> list[int]:
        if fmt == YUV420SP_U8:
            yv = src[y * width + x]
            base = width * height + (y // 2) * width + (x // 2) * 2
            u, v = src[base], src[base + 1]
            return [yv, v, u] if p.get("rbuv") else [yv, u, v]
        if fmt == RGB888_U8:
            r, g, b = src[(y * width + x) * 3 : (y * width + x) * 3 + 3]
            return [b, g, r] if p.get("rbuv") else [r, g, b]
        if fmt == XRGB8888_U8:
            a0, a1, a2, a3 = src[(y * width + x) * 4 : (y * width + x) * 4 + 4]
            rgb = [a0, a1, a2] if p.get("ax") else [a1, a2, a3]
            return rgb[::-1] if p.get("rbuv") else rgb
        return [src[y * width + x]]

    sx, sy, cw, ch = p.get("crop", (0, 0, width, height))
    top, bottom, left, right = p.get("pad", (0, 0, 0, 0))
    channels = 1 if fmt == YUV400_U8 else 3
    out = np.zeros((channels, ch + top + bottom, cw + left + right), np.float32)
    mean, low, var = p.get("mean", (0, 0, 0, 0)), p.get("min", (0, 0, 0, 0)), p.get("var", (1, 1, 1, 1))
    for y in range(ch):
        for x in range(cw):
            values = pixel(sx + x, sy + y)
            if p.get("csc") and channels == 3:
                m, ib, ob = p["csc"]
                if fmt == YUV420SP_U8:  # YUV to RGB: the input bias
                    rows = [sum(m[r * 3 + k] * (values[k] - ib[k]) for k in range(3)) >> 8 for r in range(3)]
                else:  # RGB to YUV: the output bias
                    rows = [(sum(m[r * 3 + k] * values[k] for k in range(3)) >> 8) + ob[r] for r in range(3)]
                values = [min(255, max(0, v)) for v in rows]
            for c in range(channels):
                out[c, top + y, left + x] = (values[c] - mean[c] - low[c]) * var[c]
    return out


FORMAT_NAMES = {YUV420SP_U8: "YUV420SP_U8", XRGB8888_U8: "XRGB8888_U8", RGB888_U8: "RGB888_U8", YUV400_U8: "YUV400_U8"}


def static_conf(fmt: int, width: int, height: int, p: dict, related: int = 0) -> str:
    """An ATC AIPP config (``aipp_mode: static``) for the parameters ``reference_aipp`` takes, written as ATC's
    template writes one: a field a line, ``#`` comments, bools as true/false."""
    lines = [
        "# generated for the test, in the layout of ATC's aipp.cfg template",
        "aipp_op {",
        "    aipp_mode : static",
        f"    related_input_rank : {related}",
        f'    input_format : "{FORMAT_NAMES[fmt]}"',
        f"    src_image_size_w : {width}",
        f"    src_image_size_h : {height}",
    ]
    if "crop" in p:
        sx, sy, cw, ch = p["crop"]
        lines += ["    crop : true", f"    load_start_pos_w : {sx}", f"    load_start_pos_h : {sy}"]
        lines += [f"    crop_size_w : {cw}", f"    crop_size_h : {ch}"]
    if "pad" in p:
        top, bottom, left, right = p["pad"]
        lines += ["    padding : true", f"    top_padding_size : {top}", f"    bottom_padding_size : {bottom}"]
        lines += [f"    left_padding_size : {left}", f"    right_padding_size : {right}"]
    lines.append(f"    rbuv_swap_switch : {'true' if p.get('rbuv') else 'false'}")
    if p.get("ax"):
        lines.append("    ax_swap_switch : true")
    if "csc" in p:
        m, ib, ob = p["csc"]
        lines.append("    csc_switch : true  # colour-space conversion")
        lines += [f"    matrix_r{i // 3}c{i % 3} : {v}" for i, v in enumerate(m)]
        lines += [f"    output_bias_{i} : {v}" for i, v in enumerate(ob)]
        lines += [f"    input_bias_{i} : {v}" for i, v in enumerate(ib)]
    for key, name in (("mean", "mean_chn"), ("min", "min_chn"), ("var", "var_reci_chn")):
        if key in p:
            lines += [f"    {name}_{i} : {v}" for i, v in enumerate(p[key][:3])]
    lines.append("}")
    return "\n".join(lines) + "\n"


#: The spec's YOLOv3 AIPP config (a public acllite notebook's), as ATC reads it.
YOLO_AIPP_CFG = """\
aipp_op {
    aipp_mode : static
    related_input_rank : 0
    input_format : YUV420SP_U8
    src_image_size_w : 416
    src_image_size_h : 416
    crop : false
    csc_switch : true
    rbuv_swap_switch : false
    matrix_r0c0 : 256
    matrix_r0c1 : 0
    matrix_r0c2 : 359
    matrix_r1c0 : 256
    matrix_r1c1 : -88
    matrix_r1c2 : -183
    matrix_r2c0 : 256
    matrix_r2c1 : 454
    matrix_r2c2 : 0
    input_bias_0 : 0
    input_bias_1 : 128
    input_bias_2 : 128
    var_reci_chn_0 : 0.0039216
    var_reci_chn_1 : 0.0039216
    var_reci_chn_2 : 0.0039216
}
"""


def detector_model(path: Path, conf: str = YOLO_AIPP_CFG, size: int = 416) -> Path:
    """A detection-shaped net: ``data`` [1,3,size,size] -> conv 3x3 stride 8 + relu ``feature`` [1,8,size/8,size/8];
    ``img_info`` [1,4] -> ``info`` (halved), the input AIPP leaves alone."""
    weight = np.random.default_rng(5).standard_normal((8, 3, 3, 3)).astype(np.float32)
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["data", "w"], ["conv"], kernel_shape=[3, 3], strides=[8, 8], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["conv"], ["feature"]),
            helper.make_node("Mul", ["img_info", "half"], ["info"]),
        ],
        "detector",
        [
            helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, size, size]),
            helper.make_tensor_value_info("img_info", TensorProto.FLOAT, [1, 4]),
        ],
        [
            helper.make_tensor_value_info("feature", TensorProto.FLOAT, [1, 8, size // 8, size // 8]),
            helper.make_tensor_value_info("info", TensorProto.FLOAT, [1, 4]),
        ],
        [numpy_helper.from_array(weight, "w"), half],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    entry = model.metadata_props.add()
    entry.key, entry.value = "insert_op_conf", conf
    onnx.save(model, str(path))
    return path
