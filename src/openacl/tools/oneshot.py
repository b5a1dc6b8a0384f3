"""Dump one execution of any ONNX model, without writing a program (``openacl dump``).

The runtime is used directly: the model is loaded, given a dump session built from the command's options
(as if ``set_dump`` had been called with the equivalent JSON, so every option is validated the same way),
run once on the given or random inputs, and its files are on disk when :func:`dump_model` returns.

Random inputs use a fixed seed, so two dumps of one model are comparable: floats are standard normal,
integers uniform in [0, 10), booleans fair coins. A bfloat16 input may be given as a float ``.npy`` (numpy's
file format has no bfloat16): it is rounded to bfloat16.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from openacl import dtypes
from openacl.dump import naming
from openacl.dump import session as dump_session
from openacl.dump.config import parse_dump_section
from openacl.errors import AclCode, AclError, ExecutionFailed
from openacl.model import execute
from openacl.model import model as _model

SEED = 0


class BadArgument(AclError):
    """What the command was given cannot be used (an output directory, an input, a dump option): the command's
    arguments are wrong (exit 2), as opposed to a model that does not load or run (any other ``AclError``)."""


@dataclass(frozen=True)
class DumpSummary:
    directory: Path  # the step directory holding the files
    files: int
    bytes: int
    operators: int
    model_operators: int


def random_input(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    if dtypes.is_floating(dtype):
        return rng.standard_normal(shape).astype(dtype)
    if np.issubdtype(dtype, np.bool_):
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 10, shape).astype(dtype)


def _random_hint(model: _model.Model, given: Mapping[str, np.ndarray]) -> str:
    """Why a run on random inputs may fail (an embedding's indices past its table, say), and what to do."""
    random = [desc.name for desc in model.inputs if desc.name not in given]
    if not random:
        return ""
    return f" (random values for {', '.join(random)}: give real ones with --input NAME=FILE.npy)"


def model_inputs(model: _model.Model, given: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The model's inputs in order: ``given`` by name, random (fixed seed) for the rest."""
    unknown = set(given) - {desc.name for desc in model.inputs}
    if unknown:
        names = ", ".join(desc.name for desc in model.inputs)
        raise BadArgument(AclCode.ACL_ERROR_INVALID_PARAM, f"no input named {sorted(unknown)[0]!r}; inputs: {names}")
    rng = np.random.default_rng(SEED)
    feeds = []
    for desc in model.inputs:
        if desc.name in given:
            array = np.ascontiguousarray(given[desc.name])
            if dtypes.is_bfloat16(desc.dtype) and array.dtype.kind == "f":
                array = array.astype(dtypes.BFLOAT16)  # .npy files cannot hold bfloat16: floats are rounded to it
            if array.dtype != desc.dtype:
                raise BadArgument(
                    AclCode.ACL_ERROR_INVALID_PARAM, f"input {desc.name}: {array.dtype}, model takes {desc.dtype}"
                )
            if desc.is_static and array.shape != desc.shape:
                raise BadArgument(
                    AclCode.ACL_ERROR_INVALID_PARAM,
                    f"input {desc.name}: shape {list(array.shape)}, model takes {list(desc.shape)}",
                )
            feeds.append(array)
        elif desc.is_static:
            feeds.append(random_input(desc.shape, desc.dtype, rng))
        else:
            raise BadArgument(
                AclCode.ACL_ERROR_INVALID_PARAM,
                f"input {desc.name} has dynamic shape {desc.shape}: give it with --input {desc.name}=FILE.npy",
            )
    return feeds


def dump_model(
    model_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    inputs: Mapping[str, np.ndarray] | None = None,
    mode: str = "output",
    stats: bool = False,
    layers: Sequence[str] = (),
) -> DumpSummary:
    """Dump one execution of ``model_path`` under ``out_dir`` (created if needed).

    Raises :class:`BadArgument` for arguments that cannot be used, any other ``AclError`` when the model does not
    load or its execution fails."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadArgument(AclCode.ACL_ERROR_WRITE_FILE, f"cannot create {out}: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK):
        raise BadArgument(AclCode.ACL_ERROR_WRITE_FILE, f"{out} is not writable")
    model = _model.load_from_file(str(model_path), dump_only=True)  # nothing reads its outputs
    try:
        entry: dict = {"model_name": model.name}
        if layers:
            entry["layer"] = list(layers)
        section = {
            "dump_path": str(out.resolve()),
            "dump_list": [entry],
            "dump_mode": mode,
            "dump_data": "stats" if stats else "tensor",
        }
        try:
            config = parse_dump_section(section)
        except AclError as exc:
            raise BadArgument(exc.code, exc.detail) from None
        session = dump_session.DumpSession(config, "openacl dump")
        dump_session.attach(model.id, session)
        feeds = model_inputs(model, inputs or {})
        try:
            execute.run(model, feeds, [], device_id=0, stream_id=0)
        except ExecutionFailed as exc:
            raise ExecutionFailed(exc.code, exc.detail + _random_hint(model, inputs or {})) from None
        operators = dump_session.planned_operators(model.id)
        directory = naming.dump_dir(section["dump_path"], session.time_str, 0, model.name, model.id, 0)
        files = [p for p in directory.iterdir() if p.is_file()] if directory.is_dir() else []
        written = sum(p.stat().st_size for p in files)
        return DumpSummary(directory, len(files), written, operators, len(model.observed().operators))
    finally:
        _model.unload(model.id)
