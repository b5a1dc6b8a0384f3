"""Drive a model through ``acl.mdl`` the way a pyACL sample does: device buffers, datasets, memcpy in and out."""

from __future__ import annotations

import numpy as np

import acl
from openacl.model.model import DEMO_MODEL

H2D, D2H = 1, 2


def reference(path=DEMO_MODEL, x: np.ndarray | None = None) -> list[np.ndarray]:
    """onnxruntime's own answer for the same model and input."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


def demo_input(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, 3, 64, 64)).astype(np.float32)


class ModelIO:
    """A loaded model with one device buffer per input and output, wrapped in datasets."""

    def __init__(self, path=DEMO_MODEL) -> None:
        self.model_id, ret = acl.mdl.load_from_file(str(path))
        assert ret == 0, ret
        self.desc = acl.mdl.create_desc()
        assert acl.mdl.get_desc(self.desc, self.model_id) == 0
        self.inputs = self._dataset(acl.mdl.get_num_inputs(self.desc), acl.mdl.get_input_size_by_index)
        self.outputs = self._dataset(acl.mdl.get_num_outputs(self.desc), acl.mdl.get_output_size_by_index)

    def _dataset(self, count: int, size_of) -> tuple[int, list[tuple[int, int]]]:
        dataset = acl.mdl.create_dataset()
        buffers = []
        for i in range(count):
            size = size_of(self.desc, i)
            ptr, ret = acl.rt.malloc(size, 0)
            assert ret == 0
            buffer = acl.create_data_buffer(ptr, size)
            _, ret = acl.mdl.add_dataset_buffer(dataset, buffer)
            assert ret == 0
            buffers.append((ptr, size))
        return dataset, buffers

    def load_input(self, x: np.ndarray, stream: int | None = None) -> None:
        ptr, size = self.inputs[1][0]
        self._host = np.ascontiguousarray(x).tobytes()  # kept alive until the (async) copy has run
        host = acl.util.bytes_to_ptr(self._host)
        if stream is None:
            assert acl.rt.memcpy(ptr, size, host, x.nbytes, H2D) == 0
        else:
            assert acl.rt.memcpy_async(ptr, size, host, x.nbytes, H2D, stream) == 0

    def read_outputs(self) -> list[np.ndarray]:
        out = []
        for i, (ptr, size) in enumerate(self.outputs[1]):
            dims, ret = acl.mdl.get_cur_output_dims(self.desc, i)
            assert ret == 0
            data = acl.util.ptr_to_bytes(ptr, size)
            out.append(np.frombuffer(data, np.float32).reshape(dims["dims"]).copy())
        return out

    def run(self, x: np.ndarray) -> list[np.ndarray]:
        self.load_input(x)
        assert acl.mdl.execute(self.model_id, self.inputs[0], self.outputs[0]) == 0
        return self.read_outputs()
