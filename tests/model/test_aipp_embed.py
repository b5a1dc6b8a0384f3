"""``python -m openacl.model.aipp_embed``: an ATC aipp.cfg written into an ONNX model, checked as a load checks it."""

from __future__ import annotations

import subprocess
import sys

import onnx
import pytest

import acl
from openacl.errors import AclCode, AclError
from openacl.model import aipp_embed
from tests.aipp_models import YUV2RGB, YUV420SP_U8, aipp_model, static_conf

ATC_CFG = """\
# an ATC aipp.cfg as Ascend's samples ship them
aipp_op{
    aipp_mode:static
    input_format : YUV420SP_U8
    src_image_size_w : 6
    src_image_size_h : 4
    csc_switch : true
    rbuv_swap_switch : false
    matrix_r0c0 : 256
    matrix_r0c1 : 0
    matrix_r0c2 : 359
    matrix_r1c0 : 256
    matrix_r1c1 : -88
    matrix_r1c2 : -183
    matrix_r2c0 : 256
    matrix_r2c1 : 454
    matrix_r2c2 : 0
    input_bias_0 : 0
    input_bias_1 : 128
    input_bias_2 : 128
    var_reci_chn_0 : 0.0039216
    var_reci_chn_1 : 0.0039216
    var_reci_chn_2 : 0.0039216
}
"""


@pytest.fixture
def plain(tmp_path):
    """A model without AIPP: the one ATC would convert."""
    path = aipp_model(tmp_path / "plain.onnx", conf="")
    model = onnx.load(str(path))
    del model.metadata_props[:]
    onnx.save(model, str(path))
    return path


@pytest.mark.subprocess
def test_embedded_config_loads_as_atc_converted_it(ctx, plain, tmp_path):
    (tmp_path / "aipp.cfg").write_text(ATC_CFG)
    out = tmp_path / "yolo.onnx"
    result = subprocess.run(
        [sys.executable, "-m", "openacl.model.aipp_embed", str(plain), str(tmp_path / "aipp.cfg"), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert {p.key: p.value for p in onnx.load(str(out)).metadata_props}["insert_op_conf"] == ATC_CFG
    model_id, ret = acl.mdl.load_from_file(str(tmp_path / "yolo.om"))  # the .om path reads the .onnx beside it
    assert ret == 0
    info, ret = acl.mdl.get_first_aipp_info(model_id, 0)
    assert ret == 0 and (info["matrixR0C0"], info["matrixR2C2"], info["inputBias1"]) == (256, 0, 128)
    assert acl.mdl.unload(model_id) == 0


def test_a_config_openacl_would_refuse_writes_nothing(plain, tmp_path):
    out = tmp_path / "out.onnx"
    conf = static_conf(YUV420SP_U8, 8, 4, {"csc": (YUV2RGB, (0, 128, 128), (0, 0, 0))})  # 8 wide, the model 6
    with pytest.raises(AclError) as info:
        aipp_embed.embed(plain, conf, out)
    assert info.value.code == AclCode.ACL_ERROR_PARSE_MODEL and "4x6" in info.value.detail
    assert not out.exists()
    (tmp_path / "bad.cfg").write_text(conf)
    assert aipp_embed.main([str(plain), str(tmp_path / "bad.cfg"), str(out)]) == 1
    assert not out.exists()


def test_input_format_is_written_beside_the_config(plain, tmp_path):
    out = tmp_path / "out.onnx"
    aipp_embed.embed(plain, static_conf(YUV420SP_U8, 6, 4, {}), out, "NCHW")
    metadata = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert metadata["input_format"] == "NCHW" and "aipp_mode : static" in metadata["insert_op_conf"]
