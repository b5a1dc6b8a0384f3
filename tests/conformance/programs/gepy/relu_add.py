"""GE-PY style: y = x + Relu(Relu(x)) on one Data input, dumped as ONNX text, then run once."""

import numpy as np
from ge.es.all import Add, Relu
from ge.es.graph_builder import GraphBuilder
from ge.ge_global import GeApi
from ge.graph import DumpFormat, Tensor
from ge.graph.types import DataType, Format
from ge.session import Session


def build():
    builder = GraphBuilder("ReluAddGraph")
    x = builder.create_input(index=0, name="x", data_type=DataType.DT_FLOAT, shape=[2, 3])
    builder.set_graph_output(Add(x, Relu(Relu(x))), 0)
    return builder.build_and_reset()


def main():
    graph = build()
    graph.dump_to_file(format=DumpFormat.kOnnx, suffix="relu_add")
    ret = GeApi().ge_initialize({"ge.exec.deviceId": "0", "ge.graphRunMode": "0"})
    if ret != 0:
        print(f"[Error] ge_initialize returned {ret}")
        return
    print("[Info] GE initialized")
    try:
        session = Session()
        if session.add_graph(1, graph) != 0:
            print("[Error] add_graph failed")
            return
        data = np.array([[-1.0, 0.5, 2.0], [-3.0, 4.0, 0.25]], dtype=np.float32)
        inputs = [Tensor(data.flatten().tolist(), None, DataType.DT_FLOAT, Format.FORMAT_ND, [2, 3])]
        outputs = session.run_graph(1, inputs)
        print("[Info] run_graph succeeded")
        for idx, tensor in enumerate(outputs, start=1):
            print(f"Tensor{idx} details: {tensor}")
    except Exception as exc:
        print(f"[Error] {exc}")
    finally:
        GeApi.ge_finalize()
        print("[Info] GE finalized")


if __name__ == "__main__":
    main()
