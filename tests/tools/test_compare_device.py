"""openacl compare against "device" dumps: fp16 and bf16 runs, device layouts, fused ops, an inserted node.

The golden dump is openacl's own fp32 dump of a Conv/BN/Relu network built with onnx.helper. A device dump is the
golden dump rewritten file by file (same names, same ops) with the tensors of an emulated device run
(:mod:`tests.tools.convnet`): fp16 or bf16 storage with fp32 accumulation, optionally with one Conv's weights
multiplied by 1.05 (a real divergence), optionally stored in the NPU's layouts.
"""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from openacl import cli, dtypes
from openacl.dump import format as fmt
from openacl.dump import layouts
from openacl.dump.proto import dump_data_pb2
from openacl.dump.reader import find_dump_files, read_dump
from openacl.tools import compare as cmp
from openacl.tools import metrics, report
from openacl.tools.oneshot import dump_model
from tests.tools.convnet import BF16, conv_bn_relu_net, device_run, insert_identity_scale

FP16 = np.dtype(np.float16)
FP32 = np.dtype(np.float32)


def _input() -> np.ndarray:
    return np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    """The model, its input and openacl's golden fp32 dump (every op's inputs and outputs)."""
    root = tmp_path_factory.mktemp("net")
    model = conv_bn_relu_net(blocks=6)
    path = root / "convnet.onnx"
    onnx.save(model, path)
    summary = dump_model(path, root / "golden", inputs={"input": _input()}, mode="all")
    return model, summary.directory


def _proto_dtype(dtype: np.dtype) -> int:
    return int(dtypes.ProtoDataType.DT_BF16) if dtype == BF16 else int(dtypes.proto_from_numpy(dtype))


def _write_device_file(path, op_name, inputs, outputs, stored_formats=None) -> None:
    """A dump file whose tensors are ``(array, format, original_shape)``; bf16 is written as DT_BF16 (27)."""
    message = dump_data_pb2.DumpData(version=fmt.DUMP_VERSION, dump_time=fmt.now_us(), op_name=op_name)
    raw = []
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for array, form, original in tensors:
            tensor = getattr(message, kind).add()
            tensor.data_type = _proto_dtype(array.dtype)
            tensor.format = form
            tensor.shape.dim.extend(array.shape)
            tensor.original_shape.dim.extend(original)
            tensor.size = array.nbytes
            raw.append((kind, np.ascontiguousarray(array).tobytes()))
    body = message.SerializeToString()
    data = [r for k, r in raw if k == "input"] + [r for k, r in raw if k == "output"]
    path.write_bytes(len(body).to_bytes(8, "little") + body + b"".join(data))


def _stored(array: np.ndarray, role: str, device_layouts: bool) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """How a device stores a tensor: 4-D activations NC1HWC0, conv weights FRACTAL_Z, matrices FRACTAL_NZ."""
    shape = array.shape
    if not device_layouts or array.dtype.kind != "f":
        return array, fmt.model_format(shape), shape
    if role == "weight" and array.ndim == 4:
        return layouts.from_original(array, 4), 4, shape
    if array.ndim == 4:
        return layouts.from_original(array, 3), 3, shape
    if role == "weight" and array.ndim == 2:
        return layouts.from_original(array, 29), 29, shape
    return array, fmt.model_format(shape), shape


def device_dump(model, golden_dir, out_dir, dtype, *, scale_weight=None, device_layouts=False):
    """Rewrite every golden file with the tensors of a device run in ``dtype``."""
    values = device_run(model, _input(), dtype, scale_weight=scale_weight)
    nodes = {node.name: node for node in model.graph.node}
    initializers = {init.name for init in model.graph.initializer}
    out_dir.mkdir(parents=True)
    for path in find_dump_files(golden_dir):
        golden = read_dump(path)
        node = nodes[golden.op_name]
        inputs = [_stored(values[n], "weight" if n in initializers else "data", device_layouts) for n in node.input]
        outputs = [_stored(values[n], "data", device_layouts) for n in node.output]
        _write_device_file(out_dir / path.name, golden.op_name, inputs, outputs)
    return out_dir


@pytest.mark.parametrize("dtype", [FP16, BF16], ids=["fp16", "bf16"])
def test_healthy_device_run_passes_the_default_thresholds(net, tmp_path, dtype):
    model, golden = net
    device = device_dump(model, golden, tmp_path / "device", dtype)
    result = cmp.compare_dumps(device, golden)
    assert result.operators == len(model.graph.node) and result.incomparable == 0
    assert result.compared == sum(len(n.input) + len(n.output) for n in model.graph.node)
    assert result.first_divergence is None, report.summary(result)
    assert max(row.max_rel_error for row in result.rows) < 0.5
    # the near-zero elements are there: unfloored, the first Conv's relative error is 100x the old default (1e-3)
    x, y = (read_dump(next(p for p in find_dump_files(d) if ".conv0." in p.name)).outputs[0] for d in (device, golden))
    y64 = y.astype(np.float64)
    near = np.abs(y64) > np.finfo(np.float64).eps
    assert (np.abs(x.astype(np.float64) - y64)[near] / np.abs(y64[near])).max() > 0.1
    assert max(row.rel_l2_error for row in result.rows) < (2e-3 if dtype == FP16 else 1e-2)


@pytest.mark.parametrize("dtype", [FP16, BF16], ids=["fp16", "bf16"])
def test_conv_weights_times_1_05_is_the_first_divergence_not_an_earlier_near_zero(net, tmp_path, dtype):
    model, golden = net
    device = device_dump(model, golden, tmp_path / "device", dtype, scale_weight=("w2", 1.05))
    result = cmp.compare_dumps(device, golden)
    first = result.first_divergence
    assert first is not None and first.op_name == "conv2", report.summary(result)
    assert first.tensor == "input.1" and first.rel_l2_error == pytest.approx(0.05, rel=0.1)  # the weight itself
    output = next(r for r in result.rows if r.op_name == "conv2" and r.tensor == "output.0")
    assert output.exceeds and output.cosine > 0.999  # the cosine alone (msaccucmp's 0.99) would not catch it
    assert not any(r.exceeds for r in result.rows[: result.rows.index(first)])


def test_bf16_tensors_are_judged_as_bf16_not_as_the_float32_they_are_read_as(net, tmp_path):
    model, golden = net
    device = device_dump(model, golden, tmp_path / "device", BF16)
    row = next(r for r in cmp.compare_dumps(device, golden).rows if r.tensor == "output.0")
    assert row.dtype == "bfloat16 vs float32"
    strict = cmp.compare_dumps(
        device, golden, thresholds={**metrics.DEFAULT_THRESHOLDS, "bfloat16": metrics.DEFAULT_THRESHOLDS["float32"]}
    )
    assert strict.first_divergence is not None


# --------------------------------------------------------------------------------------------------------------
# Device layouts
# --------------------------------------------------------------------------------------------------------------


def test_device_layouts_are_converted_before_comparing(net, tmp_path):
    model, golden = net
    device = device_dump(model, golden, tmp_path / "device", FP16, device_layouts=True)
    conv = next(p for p in find_dump_files(device) if p.name.startswith("Conv.conv0."))
    info = read_dump(conv)
    assert [i.format for i in info.input_info] == [3, 4, 2] and info.output_info[0].format == 3
    gemm = next(p for p in find_dump_files(device) if p.name.startswith("Gemm."))
    assert read_dump(gemm).input_info[1].format == 29
    result = cmp.compare_dumps(device, golden)
    assert result.incomparable == 0 and result.first_divergence is None, report.summary(result)
    diverged = device_dump(model, golden, tmp_path / "diverged", FP16, scale_weight=("w2", 1.05), device_layouts=True)
    assert cmp.compare_dumps(diverged, golden).first_divergence.op_name == "conv2"


def test_a_layout_that_cannot_be_converted_is_reported_and_is_not_a_pass(tmp_path, capsys):
    x = np.arange(2 * 19 * 3 * 3, dtype=np.float32).reshape(2, 19, 3, 3)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    name = fmt.file_name("Conv", "conv", 1, 0, 1700000000000000)
    (tmp_path / "b" / name).write_bytes(b"".join(bytes(p) for p in fmt.file_parts("conv", [], [x], 1)))
    stored = layouts.from_original(x.astype(np.float16), 3)
    _write_device_file(tmp_path / "a" / name, "conv", [], [(stored, 13, x.shape)])  # FRACTAL_Z_C04: unknown here
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    (row,) = result.rows
    assert row.reason.startswith("layout: stored format") and not row.exceeds
    assert result.first_divergence is None and result.compared == 0 and result.incomparable == 1
    assert report.summary(result).endswith("nothing was compared")
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--quiet"]) == 1
    assert "no tensor could be compared" in capsys.readouterr().err

    # one comparable tensor beside it: still not a pass while the other cannot be compared
    other = fmt.file_name("Relu", "relu", 2, 0, 1700000000000001)
    for side in ("a", "b"):
        (tmp_path / side / other).write_bytes(b"".join(bytes(p) for p in fmt.file_parts("relu", [], [x[0]], 2)))
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.compared == 1 and result.incomparable == 1
    assert "but 1 could not be compared" in report.summary(result)
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--quiet"]) == 1


def test_original_shape_that_does_not_fit_the_stored_one_is_reported(tmp_path):
    x = np.ones((1, 16, 2, 2), np.float16)
    name = fmt.file_name("Relu", "relu", 1, 0, 1700000000000000)
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
    (tmp_path / "b" / name).write_bytes(b"".join(bytes(p) for p in fmt.file_parts("relu", [], [x], 1)))
    _write_device_file(tmp_path / "a" / name, "relu", [], [(layouts.from_original(x, 3), 3, (1, 40, 2, 2))])
    (row,) = cmp.compare_dumps(tmp_path / "a", tmp_path / "b").rows
    assert row.reason.startswith("layout: NC1HWC0: stored shape")


# --------------------------------------------------------------------------------------------------------------
# Fused operators
# --------------------------------------------------------------------------------------------------------------


def _rule(ops) -> dict:
    entries = []
    for name, op_type, originals, origins in ops:
        entry = {
            "name": name,
            "type": op_type,
            "attr": [{"key": "_datadump_original_op_names", "value": {"list": {"s": originals}}}],
        }
        if origins:
            entry["output_desc"] = [
                {
                    "attr": [
                        {"key": "_datadump_origin_name", "value": {"s": origin}},
                        {"key": "_datadump_origin_output_index", "value": {"i": index}},
                    ]
                }
                for origin, index in origins
            ]
        entries.append(entry)
    return {"graph": [{"name": "convnet", "op": entries}]}


def fused_device_dump(model, golden, out, *, scale_weight=None):
    """A device that fused each Conv+BN+Relu into one Conv2D named ``convK_fused`` (FP16 outputs)."""
    values = device_run(model, _input(), FP16, scale_weight=scale_weight)
    out.mkdir()
    ops = []
    for k in range(6):
        name = f"conv{k}_fused"
        inputs = [
            (values["input" if k == 0 else f"relu{k - 1}"], 0, values["input" if k == 0 else f"relu{k - 1}"].shape)
        ]
        outputs = [(values[f"relu{k}"], 0, values[f"relu{k}"].shape)]
        _write_device_file(out / fmt.file_name("Conv2D", name, k + 1, 0, 1700000000000000 + k), name, inputs, outputs)
        ops.append((name, "Conv2D", [f"conv{k}", f"bn{k}", f"relu{k}"], None))
    return out, ops


def test_fused_op_compares_with_the_last_golden_op_it_covers(net, tmp_path):
    model, golden = net
    device, ops = fused_device_dump(model, golden, tmp_path / "device")
    rule = tmp_path / "fusion_result.json"
    rule.write_text(json.dumps(_rule(ops)))
    result = cmp.compare_dumps(device, golden, fusion_rule=rule)
    fused = [r for r in result.rows if r.op_name.endswith("_fused")]
    assert [(r.op_name, r.tensor, r.golden_op) for r in fused[:2]] == [
        ("conv0_fused", "output.0", "relu0"),
        ("conv1_fused", "output.0", "relu1"),
    ]
    assert len(fused) == 6 and all(not r.reason and not r.exceeds for r in fused)
    assert result.first_divergence is None
    missing = {r.op_name for r in result.rows if r.reason == "missing in A"}
    assert "conv0" in missing and "bn0" in missing and "relu0" not in missing

    diverged, _ = fused_device_dump(model, golden, tmp_path / "diverged", scale_weight=("w2", 1.05))
    first = cmp.compare_dumps(diverged, golden, fusion_rule=rule).first_divergence
    assert (first.op_name, first.golden_op) == ("conv2_fused", "relu2")


def test_fused_output_follows_its_origin_name(net, tmp_path):
    model, golden = net
    values = device_run(model, _input(), FP16)
    (tmp_path / "device").mkdir()
    name = fmt.file_name("Conv2D", "convbn0", 1, 0, 1700000000000000)
    _write_device_file(tmp_path / "device" / name, "convbn0", [], [(values["bn0"], 0, values["bn0"].shape)])
    rule = tmp_path / "rule.json"
    rule.write_text(json.dumps(_rule([("convbn0", "Conv2D", ["conv0", "bn0", "relu0"], [("bn0", 0)])])))
    (row,) = [
        r for r in cmp.compare_dumps(tmp_path / "device", golden, fusion_rule=rule).rows if r.op_name == "convbn0"
    ]
    assert row.golden_op == "bn0" and not row.reason and not row.exceeds
    rule.write_text(json.dumps(_rule([("convbn0", "Conv2D", ["conv0", "bn0", "relu0"], [("bn0", 3)])])))
    rows = cmp.compare_dumps(tmp_path / "device", golden, fusion_rule=rule).rows
    (row,) = [r for r in rows if r.op_name == "convbn0"]
    assert row.reason == "missing in B"  # bn0 has one output, not four


def test_an_unreadable_fusion_rule_is_a_bad_argument(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    bad = tmp_path / "rule.json"
    bad.write_text("{not json")
    assert cli.main(["compare", str(tmp_path / "a"), str(tmp_path / "a"), "-f", str(bad)]) == 2
    assert "is not JSON" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------------------------
# Pairing that survives an inserted node
# --------------------------------------------------------------------------------------------------------------


def test_pairing_survives_a_node_inserted_into_a_model_with_unnamed_nodes(tmp_path):
    base = conv_bn_relu_net(blocks=4, named=False)
    inserted = insert_identity_scale(base, "relu0")
    dirs = []
    for name, model in (("golden", base), ("device", inserted)):
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
        dirs.append(dump_model(path, tmp_path / name, inputs={"input": _input()}, mode="all").directory)
    golden, device = dirs
    names = sorted(p.name.split(".")[1] for p in find_dump_files(device))
    assert "Mul_3" in names and "Conv_4" in names  # every node after the Mul is renumbered
    result = cmp.compare_dumps(device, golden)
    assert result.first_divergence is None, report.summary(result)
    assert result.operators == len(base.graph.node) and result.incomparable == 0
    assert [r.op_name for r in result.rows if r.reason] == ["Mul_3"]  # the inserted node, and only it
    conv = next(r for r in result.rows if r.op_name == "Conv_4" and r.tensor == "output.0")
    assert conv.golden_op == "Conv_3" and conv.max_abs_error == 0.0
    assert all(r.max_abs_error == 0.0 for r in result.rows if not r.reason)
