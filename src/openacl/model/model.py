"""ONNX models: load, describe, execute on onnxruntime.

A ``Model`` is what ``acl.mdl.load_from_*`` returns the id of: the parsed ONNX graph, the description pyACL's
``get_input_dims`` and friends read, and an onnxruntime session on the CPU provider. Load failures map to
CANN's codes: a file that cannot be read is ``ACL_ERROR_INVALID_FILE``, an empty one
``ACL_ERROR_MODEL_SIZE_INVALID``, and bytes that are not a model onnxruntime accepts ``ACL_ERROR_PARSE_MODEL``.

Model ids count from 1 and are never reused in a process (CANN's are small ints too), so a stale id can
never reach a newer model.

onnxruntime threads: ``OPENACL_ORT_THREADS`` sets the intra-op thread count (default 0: onnxruntime's own
choice, one per core).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from openacl import atfork, division_guard, lazy, onnxrt
from openacl.dtypes import ONNX_STRING, AclFormat, acl_from_numpy, numpy_from_onnx
from openacl.dump import session as dump_session
from openacl.errors import AclCode, AclError, ExecutionFailed
from openacl.log import get_logger
from openacl.model import aipp, dynamic, plan, skeleton
from openacl.model.observed import ObservedModel
from openacl.onnxrt import session_options
from openacl.runtime import checker, memory
from openacl.runtime.prof import session as prof_session

onnx = lazy.module("onnx")

log = get_logger("model")

MAX_MODEL_BYTES = 2 * 1024**3  # protobuf's own limit for one message
#: A gear whose outputs shape inference cannot fix is run once on zeros at load, up to this many input bytes.
GEAR_PROBE_BYTES = 256 * 1024**2

#: The small convolutional classifier the package ships (built by ``scripts/make_demo_model.py``).
DEMO_MODEL = Path(__file__).resolve().parents[1] / "data" / "tinynet.onnx"


@dataclass(frozen=True)
class TensorDesc:
    """One model input or output as pyACL describes it. ``-1`` marks a dimension known only at run time."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    format: int = AclFormat.ACL_FORMAT_ND
    largest_shape: tuple[int, ...] | None = None  # a gear model's dynamic input: its largest gear's shape
    byte_size: int | None = None  # an AIPP input: the bytes of its largest source image (openacl.model.aipp)

    @functools.cached_property
    def is_static(self) -> bool:
        return all(dim >= 0 for dim in self.shape)

    @functools.cached_property
    def size(self) -> int:
        """Bytes of one tensor: the largest gear's for a gear input, 0 when a dimension is otherwise dynamic
        (as CANN reports for dynamic shapes)."""
        if self.byte_size is not None:
            return self.byte_size
        if self.largest_shape is not None:
            return math.prod(self.largest_shape) * self.dtype.itemsize
        return math.prod(self.shape) * self.dtype.itemsize if self.is_static else 0

    @property
    def acl_dtype(self) -> int:
        return int(acl_from_numpy(self.dtype))


#: ONNX ``TypeProto`` kinds that are not tensors, as a user reads them.
_NOT_TENSOR = {"sequence_type": "a sequence", "map_type": "a map", "optional_type": "an optional value"}


def _describe(value_info) -> TensorDesc:
    """One model input or output; ``ACL_ERROR_UNSUPPORTED_DATA_TYPE`` for one a pyACL buffer cannot hold.

    Decision: strings, sequences, maps and optionals are refused at load. A pyACL buffer is a run of fixed-size
    elements that ``get_input_size_by_index`` can size; none of those fit (an sklearn classifier exported with
    its default ZipMap gives a sequence of maps: export it with ``zipmap=False``). Inside a model they run.
    """
    kind = value_info.type.WhichOneof("value")
    if kind != "tensor_type":
        what = _NOT_TENSOR.get(kind, "a value of no tensor type")
        raise AclError(
            AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            f"{value_info.name!r} is {what}, not a tensor: pyACL buffers hold tensors of fixed-size elements",
        )
    tensor_type = value_info.type.tensor_type
    if tensor_type.elem_type == ONNX_STRING:
        raise AclError(
            AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            f"{value_info.name!r} is a tensor of strings: pyACL buffers hold fixed-size elements",
        )
    try:
        dtype = numpy_from_onnx(tensor_type.elem_type)
    except KeyError:
        raise AclError(
            AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE,
            f"{value_info.name!r}: ONNX element type {tensor_type.elem_type} has no numpy type",
        ) from None
    dims = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim)
    fmt = AclFormat.ACL_FORMAT_NCHW if len(dims) == 4 else AclFormat.ACL_FORMAT_ND
    return TensorDesc(value_info.name, dtype, dims, int(fmt))


def external_data_files(proto, own: str = "") -> list[str]:
    """The files a model's initializers keep their bytes in (ONNX external data), in first-use order; ``own``
    is the skeleton's name for the model's own bytes (not an external file)."""
    found: dict[str, None] = {}
    for init in proto.graph.initializer:
        if init.data_location == 1:  # TensorProto.EXTERNAL
            location = next((entry.value for entry in init.external_data if entry.key == "location"), "")
            if location != own:
                found[location] = None
    return list(found)


class Model:
    """A loaded ONNX model. ``run`` is thread-safe (onnxruntime sessions are).

    ``path`` is the model file when it was loaded from one (``data`` is then None): onnxruntime opens the file
    itself, and external data (initializers kept in files beside the model, as torch's exporter writes them) is
    found relative to the model's folder, whatever the current directory. Bytes from memory have no folder: a
    model whose weights are in external data files is refused (``ACL_ERROR_PARSE_MODEL``) rather than looked up
    in the current directory.

    Memory: the model's weights are held once, by onnxruntime. What openacl keeps is the graph without its large
    weights (``proto``, see :mod:`openacl.model.skeleton`) and where the weights are (``weights``): the file,
    or for a model from memory its bytes, kept only while a dump or a profiling session may need them
    (:meth:`forget_model_bytes`). A dump's observed sessions and a profiled twin read the weights from there.

    ``dump_only`` (``openacl dump``): no optimised session is built, since nothing reads the outputs; an
    execution is then its observed run.
    """

    def __init__(
        self,
        model_id: int,
        name: str | None,
        data: bytes | None,
        source: str,
        path: str | None = None,
        dump_only: bool = False,
    ) -> None:
        try:
            found = skeleton.of_file(path) if path is not None else skeleton.of_bytes(data or b"", skeleton.IN_MEMORY)
            proto = onnx.load_model_from_string(found.data)
        except Exception as exc:
            raise AclError(AclCode.ACL_ERROR_PARSE_MODEL, f"{source}: not an ONNX model ({exc})") from None
        if not proto.graph.node and not proto.graph.output:
            raise AclError(AclCode.ACL_ERROR_PARSE_MODEL, f"{source}: not an ONNX model (no graph)")
        guarded = division_guard.guard(proto)  # None for almost every model: no integer Div that could trap
        if guarded is not None:
            proto = guarded
        external = external_data_files(proto, found.location)
        if external and path is None:
            raise AclError(
                AclCode.ACL_ERROR_PARSE_MODEL,
                f"{source}: its weights are in external data files ({', '.join(external[:3])}), which a model in "
                "memory has no folder to find: load it from its file",
            )
        initializers = {init.name for init in proto.graph.initializer}
        self.id = model_id
        self.name = name or proto.graph.name or "model"  # no file name: the ONNX graph's name
        self.source = source
        self.proto = proto  # the graph without its large weights
        #: Where external data is found (the model file's folder), None for a model from memory.
        self.folder = os.path.dirname(os.path.abspath(path)) if path is not None else None
        self.weights = (
            skeleton.Weights.of_file(path, found.stamp, external) if path is not None else skeleton.Weights(data=data)
        )
        self.inputs = tuple(_describe(vi) for vi in proto.graph.input if vi.name not in initializers)
        self.outputs = tuple(_describe(vi) for vi in proto.graph.output)
        self.session = None
        if not dump_only:
            try:
                if guarded is None:
                    self.session = onnxrt.new_session(path if path is not None else data, session_options())
                else:  # the guarded graph, reading its weights where the skeleton says, as a dump's sessions do
                    options = session_options()
                    self.weights.apply(options)
                    self._weights_of_guarded_session = self.weights  # onnxruntime may read them while it runs
                    self.session = onnxrt.new_session(proto.SerializeToString(), options)
            except Exception as exc:
                raise AclError(AclCode.ACL_ERROR_PARSE_MODEL, f"{source}: onnxruntime cannot load it ({exc})") from None
        self._ort_values = self.session is not None and onnxrt.needs_ort_values(self.session)
        self._input_names = [desc.name for desc in self.inputs]
        self._output_names = [desc.name for desc in self.outputs]
        metadata = {prop.key: prop.value for prop in proto.metadata_props}
        layout = dynamic.layout_of(metadata)
        nhwc = int(AclFormat.ACL_FORMAT_NHWC)
        self.inputs = tuple(  # ATC's --input_format, or NHWC image-size gears, make a 4-D input NHWC
            dataclasses.replace(desc, format=nhwc) if dynamic.is_nhwc(layout, desc.shape) else desc
            for desc in self.inputs
        )
        self.gears = dynamic.declared(metadata, self._input_names, [desc.shape for desc in self.inputs])
        self.gear_outputs = self._gear_output_shapes() if self.gears is not None else {}
        #: What pyACL's description reports: the graph's inputs plus, for a gear model, the gear input.
        self.acl_inputs, self.acl_outputs = self._described()
        shapes, dtypes = [d.shape for d in self.inputs], [d.dtype for d in self.inputs]
        self.aipp = aipp.declared(metadata, self._input_names, shapes, self.gears, dtypes)
        if self.aipp is not None:
            self.acl_inputs = self._with_aipp_inputs()
        self._observed = None
        self._observed_lock = atfork.lock()
        self.executions = 0  # Invariant: counts execute calls; the dump step of the next one
        self._step_lock = atfork.lock()
        self.last_output_shapes: list[tuple[int, ...]] = [desc.shape for desc in self.acl_outputs]
        if self.gears is not None:
            self.select_gear(self.gears.largest)
        self.plans = plan.ModelPlans(self)  # last: it reads what the model is (gears, AIPP, shapes)

    def _gear_output_shapes(self) -> dict[tuple[int, ...], list[tuple[int, ...]]]:
        """Each gear's output shapes: by shape inference, or by one run on zeros where inference falls short."""
        assert self.gears is not None
        found = dynamic.output_shapes(self.proto, self._input_names, self.gears)
        shapes = {}
        for gear, inferred in found.items():
            if inferred is None:
                gear_shapes = self.gears.shapes(gear)
                nbytes = sum(math.prod(s) * d.dtype.itemsize for s, d in zip(gear_shapes, self.inputs, strict=True))
                if nbytes > GEAR_PROBE_BYTES:
                    raise AclError(
                        AclCode.ACL_ERROR_PARSE_MODEL,
                        f"{self.source}: gear {','.join(map(str, gear))}: shape inference cannot fix its outputs, "
                        f"and its inputs ({nbytes} bytes) are too large to run once on zeros to find them",
                    )
                feeds = [np.zeros(s, d.dtype) for s, d in zip(gear_shapes, self.inputs, strict=True)]
                inferred = [out.shape for out in self.run(feeds)]
            shapes[gear] = [tuple(int(d) for d in shape) for shape in inferred]
        return shapes

    def _described(self) -> tuple[tuple[TensorDesc, ...], tuple[TensorDesc, ...]]:
        """A gear model's inputs sized for their largest gear, its outputs with their largest gear's dims
        (as CANN's description shows them), and the gear input last."""
        if self.gears is None:
            return self.inputs, self.outputs
        inputs = tuple(
            desc if desc.is_static else dataclasses.replace(desc, largest_shape=largest)
            for desc, largest in zip(self.inputs, self.gears.largest_input_shapes(), strict=True)
        )
        gear_input = TensorDesc(dynamic.GEAR_INPUT_NAME, dynamic.GEAR_INPUT_DTYPE, self.gears.gear_input_shape)
        outputs = []
        for index, desc in enumerate(self.outputs):
            largest = max((shapes[index] for shapes in self.gear_outputs.values()), key=math.prod)
            outputs.append(dataclasses.replace(desc, shape=largest))
        return (*inputs, gear_input), tuple(outputs)

    def _with_aipp_inputs(self) -> tuple[TensorDesc, ...]:
        """An AIPP model's inputs: each AIPP'd input takes the raw images (uint8, as the caller fills it), sized
        for its largest source; a static AIPP's is described as CANN does, NHWC of the source image's height
        and width; after the inputs, one ``ascend_dynamic_aipp_data`` input per dynamic AIPP (see
        ``openacl.model.aipp``)."""
        assert self.aipp is not None
        inputs = list(self.acl_inputs)
        extra = []
        for item in self.aipp.inputs:
            desc = dataclasses.replace(inputs[item.related], byte_size=item.max_src_size)
            if item.static is not None:
                nhwc = int(AclFormat.ACL_FORMAT_NHWC)
                desc = dataclasses.replace(desc, dtype=np.dtype(np.uint8), shape=item.src_dims, format=nhwc)
            else:
                extra.append(TensorDesc(aipp.AIPP_INPUT_NAME, np.dtype(np.uint8), (item.data_size,)))
            inputs[item.related] = desc
        return (*inputs, *extra)

    def select_gear(self, gear: tuple[int, ...]) -> None:
        """The gear ``get_cur_output_dims`` reports until the next execution or gear change."""
        self.last_output_shapes = list(self.gear_outputs[gear])

    def __repr__(self) -> str:
        return f"<Model {self.id} {self.name!r}>"

    def next_step(self) -> int:
        """This execution's step number (0, 1, ...), taken once per execution."""
        with self._step_lock:
            step = self.executions
            self.executions += 1
            return step

    def run(self, feeds: list[np.ndarray]) -> list[np.ndarray]:
        """Execute once; ``feeds`` in input order. Raises ``AclError`` if onnxruntime rejects them."""
        if self.session is None:
            raise AclError(AclCode.ACL_ERROR_FAILURE, f"model {self.id} ({self.name}) is loaded for dumps only")
        self.weights.check(f"model {self.id} ({self.name})", model_file=False)  # onnxruntime maps external data
        try:
            feeds_by_name = dict(zip(self._input_names, feeds, strict=True))
            outputs = onnxrt.run(self.session, self._output_names, feeds_by_name, self._ort_values)
        except Exception as exc:
            raise ExecutionFailed(
                AclCode.ACL_ERROR_FAILURE, f"model {self.id} ({self.name}): execution failed: {exc}"
            ) from None
        self.last_output_shapes = [out.shape for out in outputs]
        return outputs

    def observed(self) -> ObservedModel:
        """The model's own operators, run for a dump; built on first use only (dumps need it)."""
        with self._observed_lock:
            if self._observed is None:
                label = f"model {self.id} ({self.name})"  # as ``run`` names the model in errors
                self._observed = ObservedModel(self.proto, self.weights, label, self._input_names, self._output_names)
            return self._observed

    def forget_model_bytes(self) -> None:
        """A model from memory that no dump will read: its bytes go (onnxruntime holds its own weights)."""
        if self.weights.data is not None:
            self.weights = skeleton.Weights()


def _tensor_bytes(tensor) -> int:
    try:
        itemsize = numpy_from_onnx(tensor.data_type).itemsize
    except KeyError:
        itemsize = 1
    return math.prod(tensor.dims) * itemsize


# ----- the model table -----

_ids = itertools.count(1)
_lock = atfork.lock()
models: dict[int, Model] = {}


def onnx_stand_in(path: str) -> str:
    """The file openacl reads for a model path: ``model/resnet50.om`` is read from ``model/resnet50.onnx`` when
    that file exists.

    Ascend's programs name the ``.om`` model ATC compiled for the NPU, which only an NPU can run; the ONNX model
    it was compiled from sits beside it, and with it the program runs unmodified. Without one, the ``.om`` is
    read and refused as before (``ACL_ERROR_PARSE_MODEL``).
    """
    if path.lower().endswith(".om"):
        onnx_path = path[:-3] + ".onnx"
        if os.path.isfile(onnx_path):
            log.info("%s: reading the ONNX model beside it, %s", path, onnx_path)
            return onnx_path
    return path


def check_model_file(path: str) -> str:
    """The file openacl reads for a model path (an ``.om`` path's ONNX stand-in), checked with CANN's codes for
    files that cannot be used: a file that is not there or not a regular readable file, or an empty one."""
    path = onnx_stand_in(path)
    try:
        if not os.path.isfile(path):
            raise OSError("no such file" if not os.path.exists(path) else "not a regular file")
        size = os.path.getsize(path)
        if size == 0 or size > MAX_MODEL_BYTES:
            raise AclError(AclCode.ACL_ERROR_MODEL_SIZE_INVALID, f"model file {path!r} has {size} bytes")
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise AclError(AclCode.ACL_ERROR_INVALID_FILE, f"cannot read model file {path!r}: {exc}") from None
    return path


def read_model_file(path: str) -> bytes:
    """A model file's bytes, checked as :func:`check_model_file` checks it."""
    path = check_model_file(path)
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise AclError(AclCode.ACL_ERROR_INVALID_FILE, f"cannot read model file {path!r}: {exc}") from None


def model_name_of_path(path: str) -> str:
    """The name dumps use: the file name without its extension, as CANN uses the .om file's."""
    return Path(path).stem


def load_bytes(
    data: bytes | None, name: str | None, source: str, path: str | None = None, dump_only: bool = False
) -> Model:
    """Load ONNX bytes, or the model file at ``path`` (``data`` None); ``name`` (what dumps call the model)
    defaults to the ONNX graph's name."""
    if not data and path is None:
        raise AclError(AclCode.ACL_ERROR_MODEL_SIZE_INVALID, f"{source}: model size is 0")
    with _lock:
        model_id = next(_ids)
    model = Model(model_id, name, data, source, path, dump_only)
    # Logged before the model is registered anywhere: a logging filter that raises (user code) leaves nothing.
    log.info("loaded model %d (%s) from %s", model_id, name, source)
    # It takes the dump settings in force now; a profiling session may build a profiled twin from the bytes.
    if not dump_session.model_loaded(model_id) and not dump_only and not prof_session.keeps_model_bytes():
        model.forget_model_bytes()
    with _lock:
        models[model_id] = model
    if checker.enabled and not dump_only:  # a dump-only model is openacl dump's own
        checker.on_create("model", model_id)
    return model


def load_from_file(path: str, dump_only: bool = False) -> Model:
    return load_bytes(None, model_name_of_path(path), path, check_model_file(path), dump_only)


def load_from_memory(addr: int, size: int) -> Model:
    """``load_from_mem``: the model's bytes at a checked address; dumps name it after its ONNX graph."""
    return load_bytes(memory.read_bytes(addr, size) if size else b"", None, "memory")


def load_from_file_with_mem(path: str, work_ptr: int, work_size: int, weight_ptr: int, weight_size: int) -> Model:
    """``load_from_file_with_mem``: the lent work and weight memory must hold what ``query_size`` says."""
    work_need, weight_need = query_size(path)
    memory.check_workspace(work_ptr, work_size, work_need, "work")
    memory.check_workspace(weight_ptr, weight_size, weight_need, "weight")
    return load_from_file(path)


def load_from_mem_with_mem(
    addr: int, size: int, work_ptr: int, work_size: int, weight_ptr: int, weight_size: int
) -> Model:
    """``load_from_mem_with_mem``: as ``load_from_file_with_mem``, of model bytes in memory."""
    work_need, weight_need = query_size_from_memory(addr, size)
    memory.check_workspace(work_ptr, work_size, work_need, "work")
    memory.check_workspace(weight_ptr, weight_size, weight_need, "weight")
    return load_from_memory(addr, size)


def describe_bytes(data: bytes | None, source: str, path: str | None = None) -> Model:
    """A model built only to be described (``get_desc_from_file`` / ``_mem``): id 0, in no table, no dumps."""
    if not data and path is None:
        raise AclError(AclCode.ACL_ERROR_MODEL_SIZE_INVALID, f"{source}: model size is 0")
    return Model(0, None, data, source, path)


def get(model_id: int) -> Model:
    with _lock:
        model = models.get(model_id)
    if model is None:
        if checker.enabled:
            checker.on_stale_handle("model", model_id, destroying=False)
        raise AclError(AclCode.ACL_ERROR_INVALID_MODEL_ID, f"model {model_id} is not loaded")
    return model


def unload(model_id: int) -> None:
    with _lock:
        model = models.pop(model_id, None)
    if model is None:
        if checker.enabled:
            checker.on_stale_handle("model", model_id, destroying=True)
        raise AclError(AclCode.ACL_ERROR_INVALID_MODEL_ID, f"model {model_id} is not loaded")
    if checker.enabled:
        checker.on_destroy("model", model_id)
    dump_session.model_unloaded(model_id)
    log.info("unloaded model %d (%s)", model_id, model.name)


def unload_all() -> None:
    with _lock:
        unloaded = list(models)
        models.clear()
    for model_id in unloaded:
        dump_session.model_unloaded(model_id)


def query_size(path: str) -> tuple[int, int]:
    """``(work_size, weight_size)``: bytes of every intermediate value of one run, and of the weights."""
    return query_size_of_bytes(read_model_file(path), path)


def query_size_from_memory(addr: int, size: int) -> tuple[int, int]:
    """``query_size_from_mem``: the same as ``query_size``, of model bytes at a checked address."""
    if size == 0:
        raise AclError(AclCode.ACL_ERROR_MODEL_SIZE_INVALID, "memory: model size is 0")
    return query_size_of_bytes(memory.read_bytes(addr, size), "memory")


def query_size_of_bytes(data: bytes, source: str) -> tuple[int, int]:
    try:
        proto = onnx.load_model_from_string(data)
        inferred = onnx.shape_inference.infer_shapes(proto)
    except Exception as exc:
        raise AclError(AclCode.ACL_ERROR_PARSE_MODEL, f"{source}: not an ONNX model ({exc})") from None
    work = 0
    for vi in inferred.graph.value_info:
        try:
            desc = _describe(vi)
        except AclError:
            continue
        work += desc.size
    weights = sum(_tensor_bytes(init) for init in proto.graph.initializer)
    return work, weights
