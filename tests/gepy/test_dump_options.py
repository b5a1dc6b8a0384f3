"""GE's dump options on a GE-PY session: CANN dump files of every operator, read back with openacl's reader."""

from __future__ import annotations

import numpy as np
import pytest
from ge.error import GeError
from ge.es.all import Mul, Relu
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import Tensor
from ge.graph.types import DataType, Format
from ge.session import Session

from openacl.dump.reader import read_dump


def graph():
    b = GraphBuilder("DumpedGraph")
    x = b.create_input(0, name="x", data_type=DataType.DT_FLOAT, shape=[3])
    b.set_graph_output(Mul(Relu(x), 2.0), 0)
    return b.build_and_reset()


def x_tensor(values):
    return Tensor(list(values), None, DataType.DT_FLOAT, Format.FORMAT_ND, [3])


def session(options):
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    s = Session(options)
    assert s.add_graph(4, graph()) == 0
    return s


def test_every_operator_of_the_selected_steps_is_dumped(tmp_path):
    s = session(
        {
            "ge.exec.enableDump": "1",
            "ge.exec.dumpPath": str(tmp_path),
            "ge.exec.dumpMode": "all",
            "ge.exec.dumpStep": "0|2",
        }
    )
    runs = [[-1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [4.0, -4.0, 0.5]]
    for values in runs:
        [out] = s.run_graph(4, [x_tensor(values)])
        assert out.get_data() == [2 * max(v, 0.0) for v in values]
    [stamp] = list(tmp_path.iterdir())  # GE's timestamp directory
    steps = sorted(p.name for p in (stamp / "0" / "DumpedGraph" / "4").iterdir())
    assert steps == ["0", "2"]
    files = sorted((stamp / "0" / "DumpedGraph" / "4" / "2").iterdir())
    relu = next(f for f in files if f.name.startswith("Relu.Relu_0."))
    dumped = read_dump(relu)
    np.testing.assert_array_equal(dumped.inputs[0], [4.0, -4.0, 0.5])
    np.testing.assert_array_equal(dumped.outputs[0], [4.0, 0.0, 0.5])
    mul = next(f for f in files if f.name.startswith("Mul.Mul_2."))
    np.testing.assert_array_equal(read_dump(mul).outputs[0], [8.0, 0.0, 1.0])


def test_dump_layer_picks_operators(tmp_path):
    s = session({"ge.exec.enableDump": "1", "ge.exec.dumpPath": str(tmp_path), "ge.exec.dumpLayer": "Mul_2"})
    s.run_graph(4, [x_tensor([1.0, 2.0, 3.0])])
    files = [p.name for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].startswith("Mul.Mul_2.")


def test_no_dump_without_enable(tmp_path):
    s = session({"ge.exec.enableDump": "0", "ge.exec.dumpPath": str(tmp_path)})
    s.run_graph(4, [x_tensor([1.0, 2.0, 3.0])])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"ge.exec.enableDump": "yes"}, "must be '1' or '0'"),
        ({"ge.exec.enableDump": "1"}, "dumpPath is required"),
        ({"ge.exec.enableDump": "1", "ge.exec.dumpPath": "/no/such/dir"}, "does not exist"),
        ({"ge.exec.enableDump": "1", "ge.exec.dumpPath": ".", "ge.exec.dumpMode": "some"}, "dump_mode"),
        ({"ge.exec.enableDump": "1", "ge.exec.dumpPath": ".", "ge.exec.dumpStep": "5-1"}, "starts after it ends"),
        ({"ge.exec.enableDump": "1", "ge.exec.dumpPath": ".", "ge.exec.enableDumpDebug": "1"}, "cannot both"),
    ],
)
def test_bad_dump_options_fail_the_first_add_graph(options, reason):
    assert GeApi.ge_initialize({"ge.exec.deviceId": "0"}) == 0
    s = Session(options)
    with pytest.raises(GeError, match=reason):
        s.add_graph(1, graph())
