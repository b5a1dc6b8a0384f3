"""openacl.tools.parse: dump trees to .npy files, as msaccucmp's convert does."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from openacl.dump import format as fmt
from openacl.tools import parse


def _write_dump(directory, op_type, op_name, inputs, outputs, task_id=1, timestamp=1700000000000000, name=None):
    directory.mkdir(parents=True, exist_ok=True)
    name = name or fmt.file_name(op_type, op_name, task_id, 0, timestamp)
    path = directory / name
    path.write_bytes(b"".join(fmt.file_parts(op_name, inputs, outputs, timestamp)))
    return path


@pytest.fixture
def tree(tmp_path):
    """A model dump tree: two steps, a stats CSV, a temp file, a broken file and a hashed long name."""
    step0 = fmt.dump_dir(tmp_path / "dump", "20240125153144", 0, "resnet.v1", 1, 0)
    step1 = fmt.dump_dir(tmp_path / "dump", "20240125153144", 0, "resnet.v1", 1, 1)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    relu = _write_dump(step0, "Relu", "layer1/relu", [x], [np.maximum(x - 5, 0)])
    add = _write_dump(step1, "Add", "add", [x, np.float32(1.5)], [x + 1.5], task_id=2, timestamp=1700000000000001)
    (step0 / f"{relu.name}.csv").write_text(fmt.stats_csv([x], [x]))
    (step0 / ".Relu.tmp").write_bytes(b"partial")
    (step1 / "Relu.relu.3.0.1700000000000002.tmp").write_bytes(b"partial")
    broken = step1 / "Bad.bad.4.0.1700000000000003"
    broken.write_bytes(relu.read_bytes()[:-3])

    long_name = fmt.file_name("MatMul", "m" * 300, 5, 0, 1700000000000004)
    hashed = fmt.hashed_name(long_name)
    assert hashed is not None
    mat = np.eye(2, dtype=np.float16)
    _write_dump(step1, "MatMul", "m" * 300, [mat, mat], [mat @ mat], name=hashed)
    # a hashed stats CSV is skipped too, through its mapping line
    stats_name = long_name + ".csv"
    (step1 / fmt.hashed_name(stats_name)).write_text(fmt.stats_csv([mat], [mat]))
    (step1 / fmt.MAPPING_FILE_NAME).write_text(f"{hashed},{long_name}\n{fmt.hashed_name(stats_name)},{stats_name}\n")
    return {
        "root": tmp_path / "dump",
        "relu": relu,
        "add": add,
        "broken": broken,
        "hashed": step1 / hashed,
        "long_name": long_name,
        "x": x,
        "mat": mat,
    }


def test_find_dump_files_skips_csv_mapping_npy_and_temp_files(tree):
    found = parse.find_dump_files(tree["root"])
    assert found == sorted([tree["relu"], tree["add"], tree["broken"], tree["hashed"]])
    assert parse.find_dump_files(str(tree["relu"])) == [tree["relu"]]
    with pytest.raises(FileNotFoundError):
        parse.find_dump_files(tree["root"] / "missing")


def test_parse_dumps_writes_msaccucmp_named_npy_files(tree, tmp_path):
    out = tmp_path / "out" / "npy"
    calls = []
    result = parse.parse_dumps(tree["root"], out, progress=lambda done, total: calls.append((done, total)))

    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert sorted(result.parsed) == sorted([tree["relu"], tree["add"], tree["hashed"]])
    assert [path for path, _ in result.failed] == [tree["broken"]]
    assert "left over" in result.failed[0][1] or "add up to" in result.failed[0][1]

    relu, add, long_name = tree["relu"].name, tree["add"].name, tree["long_name"]
    expected = {
        f"{relu}.input.0.npy",
        f"{relu}.output.0.npy",
        f"{add}.input.0.npy",
        f"{add}.input.1.npy",
        f"{add}.output.0.npy",
    }
    # the original name of the hashed file is too long for .npy names too: they keep its hashed name
    hashed = tree["hashed"].name
    expected |= {f"{hashed}.input.0.npy", f"{hashed}.input.1.npy", f"{hashed}.output.0.npy"}
    assert {p.name for p in result.written} == expected
    assert {p.name for p in out.iterdir()} == expected | {parse.FAILED_LIST_NAME}
    assert len(long_name.encode()) > fmt.MAX_NAME_BYTES

    x = tree["x"]
    got = np.load(out / f"{relu}.output.0.npy")
    assert got.dtype == np.float32 and got.shape == (3, 4)
    np.testing.assert_array_equal(got, np.maximum(x - 5, 0))
    scalar = np.load(out / f"{add}.input.1.npy")
    assert scalar.shape == () and scalar.dtype == np.float32 and scalar == np.float32(1.5)
    assert np.load(out / f"{hashed}.output.0.npy").dtype == np.float16
    assert stat.S_IMODE(os.stat(out / f"{relu}.input.0.npy").st_mode) & 0o077 == 0

    assert (out / parse.FAILED_LIST_NAME).read_text() == f"{tree['broken']}\n"


def test_hashed_file_gets_its_original_name_back_from_mapping_csv(tmp_path):
    directory = tmp_path / "dump"
    # an original name of 240 bytes: the dump file name fits, but a writer may have hashed a longer path; the
    # .npy names are built from the mapped name whenever they fit
    original = fmt.file_name("Mul", "n" * 200, 1, 0, 1700000000000000)
    assert len(original) + len(".output.0.npy") <= fmt.MAX_NAME_BYTES
    hashed = "1234567890123456789"
    array = np.array([1, 2, 3], np.int32)
    _write_dump(directory, "Mul", "n" * 200, [array], [array * 2], name=hashed)
    (directory / fmt.MAPPING_FILE_NAME).write_text(f"{hashed},{original}\n")

    result = parse.parse_dumps(directory, tmp_path / "out")
    assert not result.failed
    assert {p.name for p in result.written} == {f"{original}.input.0.npy", f"{original}.output.0.npy"}
    np.testing.assert_array_equal(np.load(tmp_path / "out" / f"{original}.output.0.npy"), [2, 4, 6])


def test_parse_a_single_file_and_rerun_clears_the_failed_list(tree, tmp_path):
    out = tmp_path / "single"
    parse.parse_dumps(tree["broken"], out)
    assert (out / parse.FAILED_LIST_NAME).exists()
    result = parse.parse_dumps(tree["relu"], out)
    assert result.parsed == [tree["relu"]] and not result.failed
    assert not (out / parse.FAILED_LIST_NAME).exists()


def test_output_directory_inside_the_source_is_left_out(tree):
    out = tree["root"] / "npy"
    first = parse.parse_dumps(tree["root"], out)
    second = parse.parse_dumps(tree["root"], out)
    assert sorted(second.parsed) == sorted(first.parsed)
    assert [p for p, _ in second.failed] == [tree["broken"]]


def test_same_name_in_two_directories_fails_instead_of_overwriting(tmp_path):
    a = _write_dump(tmp_path / "d" / "0", "Abs", "abs", [np.float32([1])], [np.float32([1])])
    b = _write_dump(tmp_path / "d" / "1", "Abs", "abs", [np.float32([2])], [np.float32([2])])
    result = parse.parse_dumps(tmp_path / "d", tmp_path / "out")
    assert result.parsed == [a]
    assert [p for p, _ in result.failed] == [b] and "already written" in result.failed[0][1]
    assert np.load(tmp_path / "out" / f"{a.name}.input.0.npy").tolist() == [1.0]


def test_unreadable_mapping_or_unknown_hash_keeps_the_hashed_name(tmp_path):
    directory = tmp_path / "dump"
    _write_dump(directory, "Abs", "abs", [np.int64([5])], [np.int64([5])], name="123456789")
    (directory / fmt.MAPPING_FILE_NAME).write_text("garbage line\n987,other\n")
    result = parse.parse_dumps(directory, tmp_path / "out")
    assert {p.name for p in result.written} == {"123456789.input.0.npy", "123456789.output.0.npy"}


def test_empty_directory_parses_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    result = parse.parse_dumps(tmp_path / "empty", tmp_path / "out")
    assert result == parse.ParseResult([], [], [])
    assert (tmp_path / "out").is_dir()
