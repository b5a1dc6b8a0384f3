"""Bundles of ONNX models: a zip archive, a folder, or one model; their ids and codes."""

from __future__ import annotations

import logging
import zipfile

import pytest

import acl
from openacl.errors import AclCode
from openacl.model import bundle as _bundle
from openacl.model import model as _model
from openacl.model.model import DEMO_MODEL
from tests.gear_models import batch_model

BAD_BUNDLE = AclCode.ACL_ERROR_INVALID_BUNDLE_MODEL_ID


def _zip(tmp_path, members: dict[str, bytes]):
    path = tmp_path / "bundle.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def test_zip_bundle_loads_its_onnx_members_in_archive_order(ctx, tmp_path):
    second = batch_model(tmp_path / "second.onnx").read_bytes()
    path = _zip(tmp_path, {"b_first.onnx": DEMO_MODEL.read_bytes(), "README.txt": b"x", "a_second.onnx": second})
    bundle_id, ret = acl.mdl.bundle_load_from_file(str(path))
    assert ret == 0 and bundle_id > 0
    assert acl.mdl.bundle_get_model_num(bundle_id) == (2, 0)
    first_id, ret = acl.mdl.bundle_get_model_id(bundle_id, 0)
    second_id, _ = acl.mdl.bundle_get_model_id(bundle_id, 1)
    assert ret == 0 and _model.get(first_id).name == "b_first" and _model.get(second_id).name == "a_second"
    assert acl.mdl.bundle_get_model_id(bundle_id, 2) == (0, AclCode.ACL_ERROR_INVALID_PARAM)
    assert acl.mdl.bundle_unload(bundle_id) == 0
    assert first_id not in _model.models and second_id not in _model.models
    assert acl.mdl.bundle_unload(bundle_id) == BAD_BUNDLE
    assert acl.mdl.bundle_get_model_num(bundle_id) == (0, BAD_BUNDLE)


def test_folder_and_single_model_and_memory(ctx, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "z.onnx").write_bytes(DEMO_MODEL.read_bytes())
    batch_model(folder / "a.onnx")
    bundle_id, ret = acl.mdl.bundle_load_from_file(str(folder))
    assert ret == 0
    assert _model.get(acl.mdl.bundle_get_model_id(bundle_id, 0)[0]).name == "a"  # sorted by name
    single, ret = acl.mdl.bundle_load_from_file(str(DEMO_MODEL))
    assert ret == 0 and acl.mdl.bundle_get_model_num(single) == (1, 0)
    data = _zip(tmp_path, {"m.onnx": DEMO_MODEL.read_bytes()}).read_bytes()
    ptr, _ = acl.rt.malloc_host(len(data))
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 0) == 0
    from_mem, ret = acl.mdl.bundle_load_from_mem(ptr, len(data))
    assert ret == 0 and acl.mdl.bundle_get_model_num(from_mem) == (1, 0)


def test_a_model_unloaded_alone_is_skipped_by_bundle_unload(ctx, tmp_path):
    bundle_id, _ = acl.mdl.bundle_load_from_file(str(DEMO_MODEL))
    model_id, _ = acl.mdl.bundle_get_model_id(bundle_id, 0)
    assert acl.mdl.unload(model_id) == 0
    assert acl.mdl.bundle_unload(bundle_id) == 0


def test_bad_bundles(ctx, tmp_path):
    assert acl.mdl.bundle_load_from_file(str(_zip(tmp_path, {"a.txt": b"x"})))[1] == AclCode.ACL_ERROR_PARSE_MODEL
    broken = _zip(tmp_path, {"ok.onnx": DEMO_MODEL.read_bytes(), "bad.onnx": b"not a model"})
    before = set(_model.models)
    assert acl.mdl.bundle_load_from_file(str(broken))[1] == AclCode.ACL_ERROR_PARSE_MODEL
    assert set(_model.models) == before  # the model loaded before the bad one is unloaded again
    empty = tmp_path / "empty"
    empty.mkdir()
    assert acl.mdl.bundle_load_from_file(str(empty))[1] == AclCode.ACL_ERROR_INVALID_FILE
    assert acl.mdl.bundle_load_from_file(str(tmp_path / "none.zip"))[1] == AclCode.ACL_ERROR_INVALID_FILE
    assert acl.mdl.bundle_load_from_mem(0, 0)[1] == AclCode.ACL_ERROR_MODEL_SIZE_INVALID


def _in_memory(data: bytes) -> int:
    ptr, ret = acl.rt.malloc_host(len(data))
    assert ret == 0
    assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data), 0) == 0
    return ptr


def test_regression_a_bundle_member_failing_with_an_internal_error_unloads_the_ones_before(ctx, tmp_path):
    """The second member's gear past int64 raised a ValueError, not an AclError: the first member stayed loaded
    for ever with no id to unload it."""
    second = batch_model(tmp_path / "second.onnx", gears=f"1,{2**63}").read_bytes()
    data = _zip(tmp_path, {"first.onnx": DEMO_MODEL.read_bytes(), "second.onnx": second}).read_bytes()
    before = set(_model.models)
    assert acl.mdl.bundle_load_from_mem(_in_memory(data), len(data))[1] == AclCode.ACL_ERROR_PARSE_MODEL
    assert set(_model.models) == before


class _Refuse(Exception):
    pass


class _RefuseSecond(logging.Filter):
    """User code in the load's path: a logging filter that raises on the second member's record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg.startswith("loaded model") and record.args[1] == "second":
            raise _Refuse("a logging filter refused")
        return True


def test_regression_a_bundle_member_failing_with_any_exception_unloads_every_member(ctx, tmp_path, acl_log):
    """Whatever the second member's load raises (here user code: a logging filter), no member stays loaded."""
    data = _zip(tmp_path, {"first.onnx": DEMO_MODEL.read_bytes(), "second.onnx": DEMO_MODEL.read_bytes()}).read_bytes()
    ptr = _in_memory(data)
    before = set(_model.models)
    logger = logging.getLogger("openacl.model")
    refuse = _RefuseSecond()
    logger.addFilter(refuse)
    try:
        with pytest.raises(_Refuse):
            _bundle.load_from_memory(ptr, len(data))
    finally:
        logger.removeFilter(refuse)
    assert set(_model.models) == before
    bundle_id, ret = acl.mdl.bundle_load_from_mem(ptr, len(data))
    assert ret == 0 and acl.mdl.bundle_get_model_num(bundle_id) == (2, 0)
