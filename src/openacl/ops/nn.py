"""Neural-network operators: SoftmaxV2 and Conv2D (CANN's NHWC default, via Transposes around ONNX's NCHW Conv)."""

from __future__ import annotations

from openacl.dtypes import AclFormat
from openacl.ops import kinds as A
from openacl.ops.record import AttrSpec, Builder, Operand, OpRecord, Output, attr_mismatch, input_mismatch


def _softmax(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    (x,) = inputs
    axes = list(attrs["axes"])
    if len(axes) != 1:
        raise attr_mismatch(b.op_type, f"axes {axes}: ONNX Softmax takes exactly one axis")
    return [b.one("Softmax", [x.name], axis=axes[0])]


# Filter layouts by the filter desc's format, and the perm that makes each one ONNX's OIHW.
_FILTER_TO_OIHW = {
    int(AclFormat.ACL_FORMAT_NCHW): None,
    int(AclFormat.ACL_FORMAT_NHWC): [0, 3, 1, 2],
    int(AclFormat.ACL_FORMAT_HWCN): [3, 2, 0, 1],
}
_LAYOUTS = {"NCHW": (2, 3), "NHWC": (1, 2)}  # where H and W sit in strides / dilations


def _conv2d(b: Builder, inputs: list[Operand | None], attrs: dict, outputs: list[Output]) -> list[str]:
    x, weights, bias, offset_w = inputs
    layout = attrs["data_format"]
    if layout not in _LAYOUTS:
        raise attr_mismatch(b.op_type, f"data_format {layout!r} is not NCHW or NHWC")
    if offset_w is not None or attrs["offset_x"] != 0:
        raise input_mismatch(b.op_type, "quantized convolution (offset_w, offset_x) is not supported")
    if x.rank != 4 or weights.rank != 4:
        raise input_mismatch(b.op_type, f"x {x.shape} and filter {weights.shape} must be 4-D")
    strides, pads, dilations = list(attrs["strides"]), list(attrs["pads"]), list(attrs["dilations"])
    if len(strides) != 4 or len(dilations) != 4 or len(pads) != 4:
        raise attr_mismatch(b.op_type, "strides and dilations need 4 values, pads 4 (top, bottom, left, right)")
    h, w = _LAYOUTS[layout]
    data = b.one("Transpose", [x.name], perm=[0, 3, 1, 2]) if layout == "NHWC" else x.name
    perm = _FILTER_TO_OIHW.get(weights.format, _FILTER_TO_OIHW[int(AclFormat.ACL_FORMAT_NCHW)])
    kernel = b.one("Transpose", [weights.name], perm=perm) if perm else weights.name
    conv_inputs = [data, kernel] + ([bias.name] if bias is not None else [])
    y = b.one(
        "Conv",
        conv_inputs,
        strides=[strides[h], strides[w]],
        dilations=[dilations[h], dilations[w]],
        pads=[pads[0], pads[2], pads[1], pads[3]],
        group=attrs["groups"],
    )
    return [b.one("Transpose", [y], perm=[0, 2, 3, 1]) if layout == "NHWC" else y]


_AXES = AttrSpec("axes", A.LIST_INT, (-1,), "axis", "exactly one axis")

RECORDS = (
    OpRecord("SoftmaxV2", "Softmax", ("x",), ("y",), (_AXES,), _softmax, "softmax along one axis"),
    OpRecord("Softmax", "Softmax", ("x",), ("y",), (_AXES,), _softmax, "as SoftmaxV2"),
    OpRecord(
        "Conv2D",
        "Conv",
        ("x", "filter", "bias?", "offset_w?"),
        ("y",),
        (
            AttrSpec("strides", A.LIST_INT, onnx="strides", doc="4 values in data_format order"),
            AttrSpec("pads", A.LIST_INT, onnx="pads", doc="top, bottom, left, right"),
            AttrSpec("dilations", A.LIST_INT, (1, 1, 1, 1), "dilations", "4 values in data_format order"),
            AttrSpec("groups", A.INT, 1, "group"),
            AttrSpec("data_format", A.STRING, "NHWC", "", "x and y layout; the filter's comes from its desc format"),
            AttrSpec("offset_x", A.INT, 0, "", "must be 0"),
        ),
        _conv2d,
        "2-D convolution; filter desc format NCHW (OIHW), NHWC (OHWI) or HWCN",
    ),
)
