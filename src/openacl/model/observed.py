"""A model with every intermediate value exposed: what a dump reads each operator's tensors from.

The observed session is a second onnxruntime session of the same graph whose outputs are every node's
outputs. Graph optimisations are off, so the operators are the model's own (no fusion renames or removes
them) and a dump names the nodes a user sees in Netron. It is built the first time a dump needs it.

Values that are not tensors (sequences, maps, optionals) are not exposed, and the operators that read or write
one are ``skipped``: a dump file holds tensors. Strings are tensors (dumped as ``DT_STRING``).

Only the top-level graph's nodes are operators here; the bodies of ``If``/``Loop``/``Scan`` run inside their
node and are not dumped separately.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from openacl import onnxrt
from openacl.dump.config import OpInfo
from openacl.errors import AclCode, AclError
from openacl.onnxrt import session_options


@dataclass(frozen=True)
class Operator:
    """One node: its dump identity and the value names it reads and writes."""

    name: str
    type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @property
    def info(self) -> OpInfo:
        return OpInfo(self.name, self.type, len(self.inputs), len(self.outputs))


class ObservedModel:
    """Runs a model and returns every operator's input and output arrays."""

    def __init__(self, model) -> None:
        import onnx
        import onnxruntime as ort
        from onnx import numpy_helper

        graph = model.proto.graph
        self.operators = tuple(
            Operator(
                node.name or f"{node.op_type}_{index}",
                node.op_type,
                tuple(name for name in node.input if name),
                tuple(name for name in node.output if name),
            )
            for index, node in enumerate(graph.node)
        )
        self.ops = [op.info for op in self.operators]
        folder = model.folder or ""
        self.constants: dict[str, np.ndarray] = {
            init.name: numpy_helper.to_array(init, folder) for init in graph.initializer
        }
        for array in self.constants.values():
            array.flags.writeable = False
        exposed = onnx.ModelProto()
        exposed.CopyFrom(model.proto)
        known = {output.name for output in exposed.graph.output}
        for op in self.operators:
            for name in op.outputs:
                if name not in known:
                    known.add(name)
                    exposed.graph.output.append(onnx.ValueInfoProto(name=name))
        self.label = f"model {model.id} ({model.name})"  # as Model.run names it in errors
        self.model_output_names = [desc.name for desc in model.outputs]
        self.input_names = [desc.name for desc in model.inputs]
        options = session_options(optimize=False, external_data_folder=model.folder)

        def session(proto):
            try:
                return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise AclError(
                    AclCode.ACL_ERROR_FAILURE, f"cannot expose {model.name}'s intermediates: {exc}"
                ) from None

        self.session = session(exposed)
        # Sequences, maps and optionals are values no dump file can hold: they stay inside the session, and the
        # operators that read or write one are not dumped (``skipped``).
        opaque = {arg.name for arg in self.session.get_outputs() if not arg.type.startswith("tensor(")}
        if opaque:
            kept = [output for output in exposed.graph.output if output.name not in opaque]
            del exposed.graph.output[:]
            exposed.graph.output.extend(kept)
            self.session = session(exposed)
        self.output_names = [output.name for output in exposed.graph.output]
        self.skipped = frozenset(
            index for index, op in enumerate(self.operators) if opaque.intersection(op.inputs + op.outputs)
        )
        self._ort_values = onnxrt.needs_ort_values(self.session)

    def run(self, feeds: list[np.ndarray]) -> dict[str, np.ndarray]:
        """Every value of one execution by name: inputs, weights and each node's outputs."""
        try:
            feeds_by_name = dict(zip(self.input_names, feeds, strict=True))
            results = onnxrt.run(self.session, self.output_names, feeds_by_name, self._ort_values)
        except Exception as exc:
            raise AclError(AclCode.ACL_ERROR_FAILURE, f"{self.label}: execution failed: {exc}") from None
        values = dict(self.constants)
        values.update(zip(self.input_names, feeds, strict=True))
        values.update(zip(self.output_names, results, strict=True))
        return values

    def tensors(self, values: dict[str, np.ndarray], index: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Operator ``index``'s (inputs, outputs) from a ``run`` result."""
        op = self.operators[index]
        return [values[name] for name in op.inputs], [values[name] for name in op.outputs]

    def model_outputs(self, values: dict[str, np.ndarray]) -> list[np.ndarray]:
        return [values[name] for name in self.model_output_names]
