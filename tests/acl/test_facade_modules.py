"""The facade modules as readers and tools see them: a static ``__all__`` that names exactly the module's public
functions (generated desc accessors included), each an ordinary module-level function that names itself."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import acl

MODULES = [acl, *(getattr(acl, sub) for sub in acl.SUBMODULES)]


def public_functions(module) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and inspect.isfunction(value) and value.__module__ == module.__name__
    }


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_all_is_a_literal_list_of_exactly_the_public_functions(module):
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    (literal,) = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        and "__all__" in ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
    ]
    assert literal == module.__all__
    assert len(set(literal)) == len(literal)
    assert set(literal) - set(acl.SUBMODULES) == public_functions(module)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_every_facade_function_is_named_and_placed_as_if_written_in_its_module(module):
    for name in set(module.__all__) - set(acl.SUBMODULES):
        fn = getattr(module, name)
        assert (fn.__name__, fn.__qualname__, fn.__module__) == (name, name, module.__name__)
        assert fn.acl_name.rpartition(".")[2] == name
        assert inspect.getmodule(fn) is module


def test_generated_accessors_keep_pyacls_formats_and_return_conventions():
    media = acl.media
    assert media.dvpp_set_pic_desc_width.__name__ == "dvpp_set_pic_desc_width"
    assert media.dvpp_set_pic_desc_width.acl_name == "acl.media.dvpp_set_pic_desc_width"
    assert str(inspect.signature(media.dvpp_set_pic_desc_width)) == "(pic_desc, width)"
    expected = {
        "dvpp_set_pic_desc_data": ("kk", "ret"),
        "dvpp_set_pic_desc_format": ("ki", "ret"),
        "dvpp_set_stream_desc_timestamp": ("kK", "ret"),
        "dvpp_set_stream_desc_eos": ("kB", "ret"),
        "dvpp_set_channel_desc_mode": ("kI", "ret"),
        "vdec_set_channel_desc_thread_id": ("kK", "ret"),
        "venc_set_channel_desc_buf_addr": ("kk", "ret"),
        "venc_set_frame_config_force_i_frame": ("kB", "ret"),
        "dvpp_get_pic_desc_width": ("k", "bare"),
        "venc_get_channel_desc_channel_id": ("k", "bare"),
    }
    assert {name: (getattr(media, name).acl_format, getattr(media, name).acl_returns) for name in expected} == expected
    # pyACL has only one of the pair for these fields
    for absent in ("dvpp_get_channel_desc_mode", "dvpp_get_roi_config_left", "venc_set_channel_desc_channel_id"):
        assert not hasattr(media, absent)
