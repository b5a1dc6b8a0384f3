"""Bundles (``aclmdlBundleLoadFromFile`` / ``_FromMem``): several models loaded and unloaded as one.

CANN's bundle is one ``.om`` that ATC built from several graphs sharing weights. openacl's bundle of ONNX
models is one of:

- a **zip archive** whose members ending in ``.onnx`` are the models, in the order the archive lists them
  (other members are ignored; a zip without an ``.onnx`` member is ``ACL_ERROR_PARSE_MODEL``);
- a **folder** (``bundle_load_from_file`` only): its ``*.onnx`` files, sorted by name;
- a **single ONNX model**: a bundle of one.

``bundle_load_from_mem`` takes the bytes of a zip archive or of one ONNX model. Each model is loaded as
``load_from_mem`` loads it (named after its member's file name, for dumps); if one fails to load, those loaded
before it are unloaded and the load returns that model's code. Bundle ids count from 1, are never reused, and
an unknown one is ``ACL_ERROR_INVALID_BUNDLE_MODEL_ID`` (148053). ``bundle_unload`` unloads every model of the
bundle that is still loaded (one unloaded on its own with ``unload`` is skipped).
"""

from __future__ import annotations

import io
import itertools
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from openacl import atfork
from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.model import model as _model
from openacl.runtime import memory

log = get_logger("model")

_BAD_BUNDLE = AclCode.ACL_ERROR_INVALID_BUNDLE_MODEL_ID
_MAX_MEMBER_BYTES = _model.MAX_MODEL_BYTES


@dataclass(frozen=True)
class Bundle:
    id: int
    model_ids: tuple[int, ...]
    source: str


_ids = itertools.count(1)
_lock = atfork.lock()
bundles: dict[int, Bundle] = {}


def _zip_members(data: bytes, source: str) -> list[tuple[str, bytes]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [info for info in archive.infolist() if info.filename.lower().endswith(".onnx")]
            if not members:
                raise AclError(AclCode.ACL_ERROR_PARSE_MODEL, f"{source}: a zip bundle without an .onnx member")
            for info in members:
                if info.file_size > _MAX_MEMBER_BYTES:
                    raise AclError(AclCode.ACL_ERROR_MODEL_SIZE_INVALID, f"{source}: {info.filename} is too large")
            return [(info.filename, archive.read(info)) for info in members]
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise AclError(AclCode.ACL_ERROR_PARSE_MODEL, f"{source}: unreadable zip bundle ({exc})") from None


def _members_of_bytes(data: bytes, source: str) -> list[tuple[str, bytes]]:
    if not data:
        raise AclError(AclCode.ACL_ERROR_MODEL_SIZE_INVALID, f"{source}: bundle size is 0")
    if zipfile.is_zipfile(io.BytesIO(data)):
        return _zip_members(data, source)
    return [(source, data)]


def _members_of_folder(path: str) -> list[tuple[str, bytes]]:
    files = sorted(p for p in Path(path).iterdir() if p.suffix.lower() == ".onnx" and p.is_file())
    if not files:
        raise AclError(AclCode.ACL_ERROR_INVALID_FILE, f"bundle folder {path!r} holds no .onnx file")
    return [(str(p), _model.read_model_file(str(p))) for p in files]


def _load(members: list[tuple[str, bytes]], source: str) -> Bundle:
    loaded: list[_model.Model] = []
    try:
        for name, data in members:
            loaded.append(_model.load_bytes(data, _model.model_name_of_path(name), f"{source}:{name}"))
    except BaseException:  # Invariant: a failed load, whatever raised, leaves no member loaded with no id to unload
        for model in loaded:
            _model.unload(model.id)
        raise
    with _lock:
        bundle = Bundle(next(_ids), tuple(model.id for model in loaded), source)
        bundles[bundle.id] = bundle
    log.info("loaded bundle %d from %s: models %s", bundle.id, source, list(bundle.model_ids))
    return bundle


def load_from_file(path: str) -> Bundle:
    if os.path.isdir(path):
        return _load(_members_of_folder(path), path)
    return _load(_members_of_bytes(_model.read_model_file(path), path), path)


def load_from_memory(addr: int, size: int) -> Bundle:
    data = memory.read_bytes(addr, size) if size else b""
    return _load(_members_of_bytes(data, "memory"), "memory")


def get(bundle_id: int) -> Bundle:
    with _lock:
        bundle = bundles.get(bundle_id)
    if bundle is None:
        raise AclError(_BAD_BUNDLE, f"bundle {bundle_id} is not loaded")
    return bundle


def model_num(bundle_id: int) -> int:
    return len(get(bundle_id).model_ids)


def model_id(bundle_id: int, index: int) -> int:
    ids = get(bundle_id).model_ids
    if not 0 <= index < len(ids):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, f"bundle {bundle_id} has {len(ids)} models, no index {index}")
    return ids[index]


def unload(bundle_id: int) -> None:
    with _lock:
        bundle = bundles.pop(bundle_id, None)
    if bundle is None:
        raise AclError(_BAD_BUNDLE, f"bundle {bundle_id} is not loaded")
    for mid in bundle.model_ids:
        if mid in _model.models:
            _model.unload(mid)
    log.info("unloaded bundle %d", bundle_id)


def unload_all() -> None:
    with _lock:
        bundles.clear()
