"""openacl.tools.compare, .pairing, .metrics, .report: operator by operator, a dump under test against a golden dump."""

from __future__ import annotations

import csv
import math
import subprocess
import sys

import numpy as np
import pytest
from rich.console import Console

from openacl import dtypes
from openacl.dump import format as fmt
from openacl.dump.proto import dump_data_pb2
from openacl.tools import compare as cmp
from openacl.tools import pairing, report

T_A = 1700000000000000
T_B = 1800000000000000


def _write(directory, op_type, op_name, inputs, outputs, *, task_id, timestamp, stream_id=0, name=None):
    directory.mkdir(parents=True, exist_ok=True)
    name = name or fmt.file_name(op_type, op_name, task_id, stream_id, timestamp)
    path = directory / name
    path.write_bytes(b"".join(bytes(p) for p in fmt.file_parts(op_name, inputs, outputs, timestamp)))
    return path


def _network(x, *, perturb=None):
    """Five ops of a small network: ``(op_type, op_name, inputs, outputs)``; ``perturb`` adds 1 to one op's output."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4)).astype(np.float32)
    ops = []
    current = x
    for i, (op_type, fn) in enumerate(
        [
            ("MatMul", lambda t: t @ w),
            ("Relu", lambda t: np.maximum(t, 0)),
            ("Mul", lambda t: t * np.float32(2)),
            ("Add", lambda t: t + np.float32(1)),
            ("Tanh", np.tanh),
        ]
    ):
        out = fn(current).astype(np.float32)
        if perturb == i:
            out = out + np.float32(1)
        ops.append((op_type, f"layer{i}/{op_type.lower()}", [current], [out]))
        current = out
    return ops


def _tree(root, ops, *, t0, stream_id=0, step=0, task_base=1):
    directory = fmt.dump_dir(root, "20240101000000", 0, "net", 1, step)
    return [
        _write(directory, t, n, i, o, task_id=task_base + k, timestamp=t0 + k, stream_id=stream_id)
        for k, (t, n, i, o) in enumerate(ops)
    ]


@pytest.fixture
def x():
    return np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)


def _only(result, tensor="output.0"):
    (row,) = [r for r in result.rows if r.tensor == tensor]
    return row


def _pair(tmp_path, a_arrays, b_arrays, *, kind="outputs", **kwargs):
    """Compare one op whose outputs (or inputs) are ``a_arrays`` in A and ``b_arrays`` in B."""
    for side, arrays, t0 in (("a", a_arrays, T_A), ("b", b_arrays, T_B)):
        inputs, outputs = (arrays, []) if kind == "inputs" else ([], arrays)
        _write(tmp_path / side, "Op", "op", inputs, outputs, task_id=1, timestamp=t0)
    return cmp.compare_dumps(tmp_path / "a", tmp_path / "b", **kwargs)


# --------------------------------------------------------------------------------------------------------------
# match_key
# --------------------------------------------------------------------------------------------------------------


def test_match_key_ignores_stream_and_timestamp():
    a = fmt.file_name("Conv2D", "layer1/conv", 7, 0, T_A)
    b = fmt.file_name("Conv2D", "layer1/conv", 7, 3, T_B)
    assert pairing.match_key(a) == pairing.match_key(b) == ("Conv2D", "layer1_conv", 7)
    assert pairing.match_key(f"/some/dir/{a}") == ("Conv2D", "layer1_conv", 7)
    assert pairing.match_key("Add.a.b.3.0.0000000000000001") == ("Add", "a.b", 3)


@pytest.mark.parametrize("name", ["Relu.relu.1.0.1700000000000000.csv", "mapping.csv", "a.b.c.d.e", "Relu.1.0.1"])
def test_match_key_rejects_other_names(name):
    with pytest.raises(ValueError, match="not a dump file name"):
        pairing.match_key(name)


# --------------------------------------------------------------------------------------------------------------
# Whole trees
# --------------------------------------------------------------------------------------------------------------


def test_identical_trees_have_no_divergence(tmp_path, x):
    ops = _network(x)
    _tree(tmp_path / "a", ops, t0=T_A, stream_id=0)
    _tree(tmp_path / "b", ops, t0=T_B, stream_id=5)
    calls = []
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(i, 5) for i in range(1, 6)]
    assert result.first_divergence is None
    assert result.only_in_a == result.only_in_b == []
    assert result.operators == 5 and result.compared == 10
    assert [(r.op_type, r.tensor) for r in result.rows[:4]] == [
        ("MatMul", "input.0"),
        ("MatMul", "output.0"),
        ("Relu", "input.0"),
        ("Relu", "output.0"),
    ]
    assert result.rows[0].op_name == "layer0/matmul"  # the header's name, not the sanitized file name
    for row in result.rows:
        assert (row.max_abs_error, row.max_rel_error, row.cosine) == (0.0, 0.0, 1.0)
        assert row.shape == (3, 4) and row.dtype == "float32" and not row.reason and not row.exceeds


def test_first_divergence_is_the_perturbed_op(tmp_path, x):
    _tree(tmp_path / "a", _network(x, perturb=2), t0=T_A)
    _tree(tmp_path / "b", _network(x), t0=T_B)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    first = result.first_divergence
    assert first is not None
    assert (first.op_type, first.op_name, first.tensor) == ("Mul", "layer2/mul", "output.0")
    assert first.exceeds and first.max_abs_error == pytest.approx(1.0)
    exceeding = [(r.op_type, r.tensor) for r in result.rows if r.exceeds]
    assert exceeding[0] == ("Mul", "output.0")
    assert ("Add", "input.0") in exceeding and ("Add", "output.0") in exceeding  # later ops diverge too
    assert not any(r.exceeds for r in result.rows[: result.rows.index(first)])


def test_rows_follow_execution_order_not_names(tmp_path, x):
    ops = [("Z", "zzz", [x], [x]), ("A", "aaa", [x], [x])]
    _tree(tmp_path / "a", ops, t0=T_A, task_base=5)
    _tree(tmp_path / "b", ops, t0=T_B, task_base=5)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert [r.op_name for r in result.rows] == ["zzz", "zzz", "aaa", "aaa"]


def test_missing_operators_on_either_side(tmp_path, x):
    ops = _network(x)
    _tree(tmp_path / "a", [*ops[:2], ("Extra", "only_a", [x], [x]), *ops[2:4]], t0=T_A)
    _tree(tmp_path / "b", [*ops[:3], ("Other", "only_b", [x], [x]), ops[3]], t0=T_B)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.only_in_a == ["only_a"]
    assert result.only_in_b == ["only_b"]
    missing = [(r.op_name, r.tensor, r.reason) for r in result.rows if r.reason]
    assert missing == [("only_a", "-", "missing in B"), ("only_b", "-", "missing in A")]
    assert result.rows[-1].op_name == "only_b"  # rows only in B come last
    row = next(r for r in result.rows if r.op_name == "only_a")
    assert math.isnan(row.max_abs_error) and math.isnan(row.cosine) and not row.exceeds
    assert result.first_divergence is None
    assert result.operators == 4  # the paired ones: ops[0..3] (Extra/Other aside)


def test_steps_pair_by_occurrence(tmp_path, x):
    ops = _network(x)[:2]
    bad = [(t, n, i, [o[0] * 3]) for t, n, i, o in ops]
    _tree(tmp_path / "a", ops, t0=T_A, step=0)
    _tree(tmp_path / "a", bad, t0=T_A + 100, step=1)
    _tree(tmp_path / "b", ops, t0=T_B, step=0)
    _tree(tmp_path / "b", ops, t0=T_B + 100, step=1)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.operators == 4 and len(result.rows) == 8
    assert not any(r.exceeds for r in result.rows[:4])
    assert result.first_divergence is result.rows[5]  # step 1's MatMul output
    # one step directory against another works too
    step1 = fmt.dump_dir(tmp_path / "a", "20240101000000", 0, "net", 1, 1)
    step0 = fmt.dump_dir(tmp_path / "b", "20240101000000", 0, "net", 1, 0)
    assert cmp.compare_dumps(step1, step0).first_divergence.tensor == "output.0"


def test_different_task_ids_still_pair_by_type_and_name(tmp_path, x):
    ops = _network(x)
    _tree(tmp_path / "a", ops, t0=T_A, task_base=1)
    _tree(tmp_path / "b", ops, t0=T_B, task_base=100)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.operators == 5 and result.compared == 10 and not result.only_in_a


def test_hashed_long_names_pair_through_mapping(tmp_path, x):
    for side, t0 in (("a", T_A), ("b", T_B)):
        directory = tmp_path / side
        long_name = fmt.file_name("MatMul", "m" * 300, 1, 0, t0)
        hashed = fmt.hashed_name(long_name)
        _write(directory, "MatMul", "m" * 300, [x], [x + (side == "a")], task_id=1, timestamp=t0, name=hashed)
        (directory / fmt.MAPPING_FILE_NAME).write_text(f"{hashed},{long_name}\n")
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.operators == 1 and result.first_divergence.op_name == "m" * 300


def test_stats_csv_files_are_skipped_with_a_reason(tmp_path, x):
    ops = _network(x)[:1]
    a_files = _tree(tmp_path / "a", ops, t0=T_A)
    _tree(tmp_path / "b", ops, t0=T_B)
    stats = a_files[0].parent / f"{a_files[0].name}.csv"
    stats.write_text(fmt.stats_csv([x], [x]))
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.skipped == [(str(stats), pairing.STATS_REASON)]
    assert result.compared == 2
    only_stats = cmp.compare_dumps(stats, stats)
    assert only_stats.rows == [] and len(only_stats.skipped) == 2


def test_two_single_files_compare_whatever_their_names(tmp_path, x):
    a = _write(tmp_path, "Relu", "npu_relu", [x], [x], task_id=1, timestamp=T_A)
    b = _write(tmp_path, "Relu", "cpu_relu", [x], [x * 2], task_id=9, timestamp=T_B)
    result = cmp.compare_dumps(a, b)
    assert result.operators == 1 and result.first_divergence.tensor == "output.0"


def test_unreadable_and_missing_paths(tmp_path, x):
    ops = _network(x)[:2]
    a_files = _tree(tmp_path / "a", ops, t0=T_A)
    _tree(tmp_path / "b", ops, t0=T_B)
    a_files[0].write_bytes(a_files[0].read_bytes()[:-2])
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    assert result.rows[0].tensor == "-" and result.rows[0].reason.startswith("unreadable in A:")
    assert result.compared == 2
    with pytest.raises(FileNotFoundError):
        cmp.compare_dumps(tmp_path / "nope", tmp_path / "b")


def test_tensor_count_mismatch(tmp_path, x):
    result = _pair(tmp_path, [x, x], [x])
    assert [(r.tensor, r.reason) for r in result.rows] == [("output.0", ""), ("output.1", "missing in B")]


# --------------------------------------------------------------------------------------------------------------
# Tensor metrics
# --------------------------------------------------------------------------------------------------------------


def test_shape_mismatch_is_not_compared(tmp_path):
    a = np.zeros((2, 3), np.float32)
    result = _pair(tmp_path, [a], [a.reshape(3, 2)])
    row = _only(result)
    assert row.reason == "shape (2,3) vs (3,2)" and not row.exceeds and math.isnan(row.max_rel_error)
    assert result.first_divergence is None and result.compared == 0


def test_shapes_equal_but_for_ones_are_compared(tmp_path):
    a = np.arange(3, dtype=np.float32)
    row = _only(_pair(tmp_path, [a.reshape(1, 3)], [a]))
    assert row.reason == "" and row.shape == (1, 3) and row.cosine == 1.0


def test_metric_values(tmp_path):
    a = np.array([1.0, 2.0, 4.0], np.float32)
    b = np.array([1.0, 2.5, 4.0], np.float32)
    row = _only(_pair(tmp_path, [a], [b]))
    assert row.max_abs_error == 0.5
    rms = float(np.sqrt(np.mean(b.astype(np.float64) ** 2)))  # 2.78 > |2.5|: the floor decides
    assert row.max_rel_error == pytest.approx(0.5 / rms)  # relative to B, the golden
    assert row.rel_l2_error == pytest.approx(0.5 / float(np.linalg.norm(b)))
    assert row.cosine == pytest.approx(float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)))
    assert row.exceeds


@pytest.mark.parametrize(
    ("kwargs", "exceeds"),
    [
        ({"max_rel": 1e-3, "max_rel_l2": 1.0}, True),
        ({"max_rel": 0.5, "max_rel_l2": 1.0, "min_cosine": 0.9}, False),
        ({"max_rel": 0.5, "max_rel_l2": 1e-2, "min_cosine": 0.9}, True),
        ({"max_rel": 0.5, "max_rel_l2": 1.0, "min_cosine": 0.9999}, True),
        ({"max_rel": 0.5, "max_rel_l2": 1.0, "min_cosine": 0.9, "max_abs": 0.05}, True),
        ({"max_rel": 0.5, "max_rel_l2": 1.0, "min_cosine": 0.9, "max_abs": 0.5}, False),
    ],
)
def test_thresholds(tmp_path, kwargs, exceeds):
    a = np.array([1.0, 2.0, 4.0], np.float64)
    b = np.array([1.0, 2.1, 4.0], np.float64)
    result = _pair(tmp_path, [a], [b], **kwargs)
    assert _only(result).exceeds is exceeds
    assert (result.first_divergence is not None) is exceeds


def test_nan_and_inf_at_the_same_positions_are_equal(tmp_path):
    a = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    row = _only(_pair(tmp_path, [a], [a.copy()]))
    assert (row.max_abs_error, row.max_rel_error, row.cosine, row.exceeds) == (0.0, 0.0, 1.0, False)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([np.nan, 1.0], [1.0, 1.0]),  # NaN in A only
        ([1.0, 1.0], [np.nan, 1.0]),  # NaN in B only
        ([np.inf, 1.0], [1.0, 1.0]),
        ([np.inf, 1.0], [-np.inf, 1.0]),
        ([np.nan, 1.0], [np.inf, 1.0]),
        ([3e38, 1.0], [-3e38, 1.0]),  # the float32 difference would overflow; float64 does not
    ],
)
def test_non_finite_mismatches(tmp_path, a, b):
    row = _only(_pair(tmp_path, [np.array(a, np.float32)], [np.array(b, np.float32)]))
    assert row.exceeds and not row.reason
    if not np.isfinite(a[0]) or not np.isfinite(b[0]):
        assert row.max_abs_error == math.inf and row.max_rel_error == math.inf
        assert row.cosine == 1.0  # over the elements finite on both sides
    else:
        assert row.max_abs_error == pytest.approx(6e38, rel=1e-6) and row.cosine == pytest.approx(-1.0)


def test_nan_in_a_exceeds_even_with_loose_thresholds(tmp_path):
    result = _pair(
        tmp_path, [np.array([np.nan], np.float32)], [np.array([1.0], np.float32)], max_rel=math.inf, min_cosine=-2
    )
    assert _only(result).exceeds


def test_zeros(tmp_path):
    z = np.zeros(4, np.float32)
    one = np.ones(4, np.float32)
    both, a_zero, b_zero = (
        _only(_pair(tmp_path / str(i), [a], [b])) for i, (a, b) in enumerate([(z, z), (z, one), (one, z)])
    )
    assert (both.max_abs_error, both.max_rel_error, both.cosine, both.exceeds) == (0.0, 0.0, 1.0, False)
    assert math.isnan(a_zero.cosine) and a_zero.max_rel_error == 1.0 and a_zero.rel_l2_error == 1.0 and a_zero.exceeds
    # a golden of zeros: the errors are relative to the dtype's absolute floor (1e-30 for fp32)
    assert math.isnan(b_zero.cosine) and b_zero.max_rel_error == pytest.approx(1e30) and b_zero.exceeds


def test_empty_tensors_are_equal(tmp_path):
    e = np.zeros((0, 3), np.float16)
    row = _only(_pair(tmp_path, [e], [e]))
    assert (row.shape, row.max_abs_error, row.max_rel_error, row.cosine, row.exceeds) == ((0, 3), 0.0, 0.0, 1.0, False)


def test_scalars(tmp_path):
    row = _only(_pair(tmp_path, [np.float32(2.0)], [np.float32(-2.0)]))
    assert row.shape == () and row.cosine == -1.0 and row.max_abs_error == 4.0 and row.exceeds


def test_integer_and_bool_tensors_compare_as_float64(tmp_path):
    big = np.array([2**40, 7, -3], np.int64)
    ints = _only(_pair(tmp_path / "i", [big], [big + np.array([0, 0, 1])]))
    assert ints.dtype == "int64" and ints.max_abs_error == 1.0 and ints.exceeds  # integers must be equal
    bools = _only(_pair(tmp_path / "b", [np.array([True, False])], [np.array([True, True])]))
    assert bools.dtype == "bool" and bools.max_abs_error == 1.0 and bools.exceeds
    u8 = np.array([0, 255], np.uint8)
    assert _only(_pair(tmp_path / "u", [u8], [u8])).max_abs_error == 0.0


def test_mixed_dtypes_compare_by_value(tmp_path):
    a = np.array([0.1, 0.2, 0.3], np.float16)
    row = _only(_pair(tmp_path, [a], [a.astype(np.float32)], kind="inputs"), "input.0")
    assert row.dtype == "float16 vs float32" and row.max_abs_error == 0.0 and not row.exceeds


def test_complex_tensors(tmp_path):
    a = np.array([1 + 1j, 2 - 1j], np.complex64)
    same = _only(_pair(tmp_path / "s", [a], [a]))
    assert same.cosine == pytest.approx(1.0) and same.max_abs_error == 0.0
    diff = _only(_pair(tmp_path / "d", [a], [a + 1j]))
    assert diff.max_abs_error == pytest.approx(1.0) and diff.exceeds


def test_bf16_dumps_compare_as_float32(tmp_path):
    values = np.array([1.0, -2.5, 0.15625], np.float32)
    raw = (values.view(np.uint32) >> 16).astype("<u2").tobytes()
    for side, t0 in (("a", T_A), ("b", T_B)):
        message = dump_data_pb2.DumpData(version=fmt.DUMP_VERSION, dump_time=t0, op_name="cast")
        out = message.output.add()
        out.data_type = dtypes.ProtoDataType.DT_BF16
        out.format = fmt.FORMAT_ND
        out.shape.dim.extend([3])
        out.size = len(raw)
        body = message.SerializeToString()
        path = tmp_path / side / fmt.file_name("Cast", "cast", 1, 0, t0)
        path.parent.mkdir()
        path.write_bytes(len(body).to_bytes(8, "little") + body + raw)
    row = _only(cmp.compare_dumps(tmp_path / "a", tmp_path / "b"))
    assert row.dtype == "bfloat16" and row.max_abs_error == 0.0 and row.cosine == 1.0


# --------------------------------------------------------------------------------------------------------------
# CSV and terminal output
# --------------------------------------------------------------------------------------------------------------


def test_csv_header_and_values_round_trip(tmp_path, x):
    _tree(tmp_path / "a", [*_network(x, perturb=1), ("Extra", "only_a", [x], [x])], t0=T_A)
    _tree(tmp_path / "b", _network(x), t0=T_B)
    _pair(tmp_path / "nan", [np.array([np.nan])], [np.array([1.0])])
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    out = tmp_path / "result.csv"
    report.write_csv(result, out)
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[0] == (
        "Index,OpType,OpName,Tensor,Shape,DataType,MaxAbsError,MaxRelError,RelL2Error,CosineSimilarity,Exceeds,Reason,"
        "GoldenOp"
    )
    with open(out, newline="", encoding="utf-8") as f:
        records = list(csv.DictReader(f))
    assert len(records) == len(result.rows)
    for i, (record, row) in enumerate(zip(records, result.rows, strict=True)):
        assert int(record["Index"]) == i
        assert (record["OpType"], record["OpName"], record["Tensor"]) == (row.op_type, row.op_name, row.tensor)
        assert record["Shape"] == ("" if row.shape is None else "(3,4)")
        for column, value in (
            ("MaxAbsError", row.max_abs_error),
            ("MaxRelError", row.max_rel_error),
            ("RelL2Error", row.rel_l2_error),
            ("CosineSimilarity", row.cosine),
        ):
            parsed = float(record[column])
            assert parsed == value or (math.isnan(parsed) and math.isnan(value))
        assert record["Exceeds"] == str(row.exceeds)
        assert record["Reason"] == row.reason
    assert records[-1]["Reason"] == "missing in B"

    special = cmp.compare_dumps(tmp_path / "nan" / "a", tmp_path / "nan" / "b")
    report.write_csv(special, out)
    (record,) = list(csv.DictReader(out.open(encoding="utf-8")))
    assert (record["MaxAbsError"], record["MaxRelError"], record["CosineSimilarity"]) == ("inf", "inf", "1.0")
    assert record["Shape"] == "(1,)"


def _rendered(result, limit=50):
    console = Console(record=True, width=200)
    report.render(result, console, limit=limit)
    return console.export_text()


def test_render_marks_the_first_divergence(tmp_path, x):
    _tree(tmp_path / "a", _network(x, perturb=2), t0=T_A)
    _tree(tmp_path / "b", _network(x), t0=T_B)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    text = _rendered(result)
    marked = [line for line in text.splitlines() if "<< first divergence" in line]
    assert len(marked) == 1 and "Mul.layer2/mul" in marked[0] and "output.0" in marked[0]
    assert "compared 10 tensors of 5 operators; first divergence: Mul.layer2/mul output.0 (max rel error" in text


def test_render_without_divergence_and_with_notes(tmp_path, x):
    ops = _network(x)
    _tree(tmp_path / "a", [*ops, ("Extra", "[bold]x", [x], [x])], t0=T_A)
    _tree(tmp_path / "b", ops, t0=T_B)
    text = _rendered(cmp.compare_dumps(tmp_path / "a", tmp_path / "b"))
    assert "compared 10 tensors of 5 operators; no tensor passes the threshold" in text
    assert "<< first divergence" not in text
    assert "only in A: 1 operator(s): _bold_x" in text and "missing in B" in text


def test_render_limit_keeps_the_first_divergence_visible(tmp_path, x):
    ops = [("Relu", f"r{i}", [x], [x]) for i in range(40)]
    bad = [*ops[:30], ("Relu", "r30", [x], [x + 5]), *ops[31:]]
    _tree(tmp_path / "a", bad, t0=T_A)
    _tree(tmp_path / "b", ops, t0=T_B)
    result = cmp.compare_dumps(tmp_path / "a", tmp_path / "b")
    text = _rendered(result, limit=10)
    assert "<< first divergence" in text and "Relu.r30" in text
    assert "Relu.r0 " not in text
    assert "of 80; the CSV has them all" in text
    assert "Relu.r39" in _rendered(result, limit=None)


# RLIMIT_FSIZE fails every write past the limit with EFBIG, as a full disk fails them with ENOSPC.
_CSV_ON_A_FULL_DISK = """
import resource, signal, sys
from openacl.tools import compare as cmp
from openacl.tools import metrics, report

row = metrics.TensorComparison("Conv2D", "layer/conv", "output.0", (1, 64), "float32", 0.5, 0.25, 0.99)
result = cmp.CompareResult([row] * 2000, None, [], [])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    report.write_csv(result, sys.argv[1])
except OSError as exc:
    print("refused:", exc.strerror)
"""


@pytest.mark.subprocess
def test_regression_compare_csv_left_a_truncated_file_when_the_disk_filled(tmp_path):
    out = tmp_path / "result.csv"
    out.write_text("the previous result\n")
    done = subprocess.run(
        [sys.executable, "-c", _CSV_ON_A_FULL_DISK, str(out)], capture_output=True, text=True, timeout=300
    )
    assert done.stdout.strip() == "refused: File too large", done.stdout + done.stderr
    assert out.read_text() == "the previous result\n"  # the old file, whole; no temporary file beside it
    assert [p.name for p in tmp_path.iterdir()] == ["result.csv"]
