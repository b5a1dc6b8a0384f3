"""``openacl.dump.config``: every key of the "dump" section, valid and invalid (what it selects: test_selection)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openacl.dump import config as cfg
from openacl.dump.config import (
    DEFAULT_STATS,
    BlacklistEntry,
    DumpConfig,
    ModelRule,
    StepSet,
    load_dump_config,
    parse_dump_section,
)
from openacl.dump.selection import OpInfo, plan, selects_model, selects_step
from openacl.errors import AclCode, AclError
from tests.dump.sections import DIR, model_list, warnings_of

BAD = AclCode.ACL_ERROR_INVALID_DUMP_CONFIG


# ----- valid sections: each key -----


@pytest.mark.parametrize(
    ("section", "field", "expected"),
    [
        ({"dump_path": DIR, "dump_list": model_list()}, "dump_mode", "output"),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_mode": "input"}, "dump_mode", "input"),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_mode": "all"}, "dump_mode", "all"),
        ({"dump_path": DIR, "dump_list": model_list()}, "dump_data", "tensor"),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_data": "stats"}, "dump_data", "stats"),
        ({"dump_path": DIR, "dump_list": model_list()}, "dump_stats", DEFAULT_STATS),
        (
            {"dump_path": DIR, "dump_list": model_list(), "dump_data": "stats", "dump_stats": ["L2norm", "Max", "Max"]},
            "dump_stats",
            ("Max", "L2norm"),
        ),
        ({"dump_path": DIR, "dump_list": model_list()}, "dump_step", None),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_step": ""}, "dump_step", None),
        (
            {"dump_path": DIR, "dump_list": model_list(), "dump_step": "0|5|10-20"},
            "dump_step",
            StepSet.parse("0|5|10-20"),
        ),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_op_switch": "off"}, "dump_op_switch", False),
        ({"dump_path": DIR, "dump_list": [], "dump_op_switch": "on"}, "dump_op_switch", True),
        ({"dump_path": DIR, "dump_list": model_list()}, "dump_level", "all"),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_level": "op"}, "dump_level", "op"),
        ({"dump_path": DIR, "dump_list": model_list(), "dump_level": "kernel"}, "dump_level", "kernel"),
        ({"dump_path": DIR, "dump_debug": "off", "dump_list": model_list()}, "dump_debug", False),
        ({"dump_path": DIR, "dump_debug": "on"}, "dump_debug", True),
        ({"dump_scene": "lite_exception"}, "dump_scene", "lite_exception"),
        ({"dump_scene": "aic_err_norm_dump"}, "dump_scene", "aic_err_norm_dump"),
        ({"dump_scene": "aic_err_detail_dump"}, "dump_scene", "aic_err_detail_dump"),
        ({"dump_path": DIR, "dump_scene": "watcher"}, "dump_scene", "watcher"),
        ({"dump_path": DIR, "dump_kernel_data": "printf,assert"}, "dump_kernel_data", ("printf", "assert")),
        ({"dump_path": DIR, "dump_kernel_data": "all"}, "dump_kernel_data", ("all",)),
        ({"dump_path": DIR, "dump_list": model_list()}, "dump_kernel_data", ()),
    ],
)
def test_valid_key(parse, section, field, expected):
    assert getattr(parse(section), field) == expected


def test_empty_section_is_valid_and_dumps_nothing(acl_log):
    config = parse_dump_section({})
    assert config == DumpConfig()
    assert not config.model_dump_enabled
    assert plan(config, "m", [OpInfo("a", "Add", 2, 1)]) is None
    assert warnings_of(acl_log) == []


def test_cann_model_dump_example(parse):
    config = parse(
        {
            "dump_list": [
                {"model_name": "ResNet-101"},
                {"model_name": "ResNet-50", "layer": ["conv1conv1_relu", "pool1"]},
            ],
            "dump_path": DIR,
            "dump_mode": "output",
            "dump_op_switch": "off",
            "dump_data": "tensor",
        }
    )
    assert config.dump_list == (ModelRule("ResNet-101"), ModelRule("ResNet-50", layer=("conv1conv1_relu", "pool1")))
    assert config.model_dump_enabled
    assert selects_model(config, "ResNet-50") and selects_model(config, "ResNet-101")
    assert not selects_model(config, "ResNet-18")


@pytest.mark.parametrize("dump_list", [[{}], [], [{"model_name": "", "layer": []}]])
def test_single_op_examples_dump_every_model(parse, dump_list):
    config = parse({"dump_path": DIR, "dump_list": dump_list, "dump_op_switch": "on", "dump_data": "tensor"})
    assert config.model_dump_enabled and config.dump_op_switch
    assert selects_model(config, "anything")
    assert all(rule.model_name is None and rule.layer == () for rule in config.dump_list)


def test_entry_without_model_name_applies_to_every_model(parse):
    config = parse({"dump_path": DIR, "dump_list": [{"layer": ["a"]}]})
    assert selects_model(config, "x") and selects_model(config, "y")


def test_dump_path_is_made_absolute(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    config = parse_dump_section({"dump_path": "out", "dump_list": model_list()})
    assert config.dump_path == str(tmp_path / "out")
    assert not config.remote_dump_path


def test_dump_path_of_512_characters_is_accepted(tmp_path):
    path = str(tmp_path) + "/" * (512 - len(str(tmp_path)))
    assert parse_dump_section({"dump_path": path, "dump_list": model_list()}).dump_path is not None


def test_remote_dump_path_is_kept_and_warned(acl_log):
    config = parse_dump_section({"dump_path": "10.0.0.1:/home/dump", "dump_list": model_list()})
    assert config.dump_path == "10.0.0.1:/home/dump"
    assert config.remote_dump_path
    assert any("dump_path has no effect" in w for w in warnings_of(acl_log))


def test_exception_scene_does_not_check_dump_path():
    config = parse_dump_section({"dump_scene": "aic_err_brief_dump", "dump_path": "/no/such/dir"})
    assert config.dump_path == "/no/such/dir"
    assert not config.model_dump_enabled


def test_watcher_is_valid_but_dumps_no_model(parse):
    config = parse(
        {
            "dump_list": [{"layer": ["A", "B"], "watcher_nodes": ["C", "D"]}],
            "dump_path": DIR,
            "dump_mode": "output",
            "dump_scene": "watcher",
        }
    )
    assert config.dump_list[0].watcher_nodes == ("C", "D")
    assert not config.model_dump_enabled
    assert not selects_model(config, "m")


def test_blacklist_entries_are_parsed(parse, acl_log):
    config = parse(
        {
            "dump_path": DIR,
            "dump_level": "op",
            "dump_list": model_list(
                opname_blacklist=[{"name": "conv1", "pos": ["input0", "output1", "input2"]}, {"name": "fc"}],
                optype_blacklist=[{"name": "Relu", "pos": []}, {"name": "Add", "pos": ["in0"]}, {"pos": ["input0"]}],
            ),
        }
    )
    rule = config.dump_list[0]
    assert rule.opname_blacklist == (
        BlacklistEntry("conv1", frozenset({0, 2}), frozenset({1})),
        BlacklistEntry("fc", whole_op=True),
    )
    assert rule.optype_blacklist == (
        BlacklistEntry("Relu", whole_op=True),
        BlacklistEntry("Add"),  # its only position was invalid: it excludes nothing
        BlacklistEntry("", frozenset({0})),  # no name: it matches no operator
    )
    text = "\n".join(warnings_of(acl_log))
    assert "'in0' is not inputN or outputN" in text
    assert "dump_list[0].optype_blacklist[2] has no name" in text


def test_opname_range_is_parsed(parse):
    config = parse(
        {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_range=[{"begin": "a", "end": "b"}])}
    )
    assert config.dump_list[0].opname_range == (("a", "b"),)


def test_default_config():
    config = DumpConfig.default("/tmp")
    assert config.dump_path == "/tmp"
    assert (config.dump_mode, config.dump_data, config.dump_step) == ("output", "tensor", None)
    assert config.model_dump_enabled and selects_model(config, "any") and selects_step(config, 12345)
    assert DumpConfig.default().dump_path is None


# ----- invalid sections: each key, and the detail names it -----


@pytest.mark.parametrize(
    ("section", "detail"),
    [
        # dump_path
        ({"dump_path": 5, "dump_list": model_list()}, "dump_path: must be a JSON string, not a number"),
        ({"dump_path": None, "dump_list": model_list()}, "dump_path: must be a JSON string, not null"),
        ({"dump_path": "", "dump_list": model_list()}, "dump_path: is empty"),
        ({"dump_list": model_list()}, "dump_path: is required"),
        ({"dump_kernel_data": "all"}, "dump_path: is required"),
        ({"dump_debug": "on"}, "dump_path: is required"),
        ({"dump_scene": "watcher"}, "dump_path: is required"),
        ({"dump_mode": "all"}, "dump_path: is required"),
        ({"dump_path": "/no/such/dir", "dump_list": model_list()}, "dump_path: '/no/such/dir' does not exist"),
        ({"dump_path": "/" + "a" * 512, "dump_list": model_list()}, "dump_path: is 513 characters long, more than 512"),
        ({"dump_path": "10.0.0.1:/home dump", "dump_list": model_list()}, "dump_path: '/home dump' after the IP"),
        ({"dump_path": "10.0.0.1:", "dump_list": model_list()}, "dump_path: '10.0.0.1:' does not exist"),
        # dump_mode
        ({"dump_path": DIR, "dump_mode": "foo"}, "dump_mode: 'foo' is not one of input, output, all"),
        ({"dump_path": DIR, "dump_mode": "Output"}, "dump_mode: 'Output' is not one of input, output, all"),
        ({"dump_path": DIR, "dump_mode": ""}, "dump_mode: is empty"),
        ({"dump_path": DIR, "dump_mode": ["all"]}, "dump_mode: must be a JSON string, not an array"),
        # dump_data
        ({"dump_path": DIR, "dump_data": "npy"}, "dump_data: 'npy' is not one of tensor, stats"),
        ({"dump_path": DIR, "dump_data": 1}, "dump_data: must be a JSON string, not a number"),
        # dump_level
        ({"dump_path": DIR, "dump_level": "layer"}, "dump_level: 'layer' is not one of op, kernel, all"),
        # dump_op_switch
        ({"dump_path": DIR, "dump_op_switch": "ON"}, "dump_op_switch: 'ON' is not one of on, off"),
        ({"dump_path": DIR, "dump_op_switch": True}, "dump_op_switch: must be a JSON string, not a boolean"),
        # dump_debug
        ({"dump_path": DIR, "dump_debug": "yes"}, "dump_debug: 'yes' is not one of on, off"),
        (
            {"dump_path": DIR, "dump_debug": "on", "dump_op_switch": "on"},
            "dump_op_switch: cannot be 'on' when dump_debug",
        ),
        ({"dump_path": DIR, "dump_debug": "on", "dump_list": []}, "dump_list: cannot be set when dump_debug is 'on'"),
        # dump_scene
        ({"dump_scene": "exception"}, "dump_scene: 'exception' is not one of lite_exception"),
        ({"dump_scene": {}}, "dump_scene: must be a JSON string, not an object"),
        # dump_kernel_data
        ({"dump_path": DIR, "dump_kernel_data": "all,foo"}, "dump_kernel_data: 'foo' is not one of all, printf"),
        ({"dump_path": DIR, "dump_kernel_data": "all,"}, "dump_kernel_data: is empty"),
        ({"dump_path": DIR, "dump_kernel_data": ""}, "dump_kernel_data: is empty"),
        ({"dump_path": DIR, "dump_kernel_data": ["all"]}, "dump_kernel_data: must be a JSON string"),
        # dump_step
        ({"dump_path": DIR, "dump_step": 5}, "dump_step: must be a JSON string, not a number"),
        ({"dump_path": DIR, "dump_step": "a"}, "dump_step[0]: 'a' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": "1|2-3-4"}, "dump_step[1]: '2-3-4' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": "0|9-3"}, "dump_step[1]: '9-3' starts after it ends"),
        ({"dump_path": DIR, "dump_step": "1|"}, "dump_step[1]: '' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": " 1"}, "dump_step[0]: ' 1' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": "-1"}, "dump_step[0]: '-1' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": "1.5"}, "dump_step[0]: '1.5' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": "٣"}, "dump_step[0]: '٣' is not N or N-M"),
        ({"dump_path": DIR, "dump_step": "|".join(map(str, range(101)))}, "dump_step: has 101 items, more than 100"),
        # dump_stats
        ({"dump_path": DIR, "dump_data": "stats", "dump_stats": "Max"}, "dump_stats: must be an array, not a string"),
        ({"dump_path": DIR, "dump_data": "stats", "dump_stats": ["Max", 1]}, "dump_stats[1]: must be a JSON string"),
        ({"dump_path": DIR, "dump_data": "stats", "dump_stats": ["max"]}, "dump_stats[0]: 'max' is not one of Max"),
        ({"dump_path": DIR, "dump_data": "stats", "dump_stats": [""]}, "dump_stats[0]: is empty"),
        ({"dump_path": DIR, "dump_data": "stats", "dump_stats": []}, "dump_stats: is empty"),
        ({"dump_path": DIR, "dump_stats": ["Max"]}, "dump_stats: can only be set when dump_data is 'stats'"),
        (
            {"dump_path": DIR, "dump_data": "tensor", "dump_stats": ["Max"]},
            "dump_stats: can only be set when dump_data",
        ),
        # dump_list and its entries
        ({"dump_path": DIR, "dump_list": {}}, "dump_list: must be an array, not an object"),
        ({"dump_path": DIR, "dump_list": [1]}, "dump_list[0]: must be an object, not a number"),
        ({"dump_path": DIR, "dump_list": [{"model_name": 1}]}, "dump_list[0].model_name: must be a JSON string"),
        ({"dump_path": DIR, "dump_list": [{"model_name": ""}]}, "dump_list[0].model_name: is empty"),
        ({"dump_path": DIR, "dump_list": model_list(layer=[])}, "dump_list[0].layer: is empty"),
        ({"dump_path": DIR, "dump_list": model_list(layer="a")}, "dump_list[0].layer: must be an array"),
        ({"dump_path": DIR, "dump_list": model_list(layer=["a", 2])}, "dump_list[0].layer[1]: must be a JSON string"),
        (
            {"dump_path": DIR, "dump_list": model_list(watcher_nodes="x")},
            "dump_list[0].watcher_nodes: must be an array",
        ),
        (
            {"dump_path": DIR, "dump_list": model_list(watcher_nodes=["x"])},
            "dump_list[0].watcher_nodes: can only be set when dump_scene is 'watcher'",
        ),
        # blacklists
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_blacklist={})},
            "dump_list[0].opname_blacklist: must be an array",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(optype_blacklist=["Relu"])},
            "dump_list[0].optype_blacklist[0]: must be an object, not a string",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(optype_blacklist=[{"name": 1}])},
            "dump_list[0].optype_blacklist[0].name: must be a JSON string",
        ),
        (
            {
                "dump_path": DIR,
                "dump_level": "op",
                "dump_list": model_list(opname_blacklist=[{"name": "a", "pos": "input0"}]),
            },
            "dump_list[0].opname_blacklist[0].pos: must be an array",
        ),
        (
            {
                "dump_path": DIR,
                "dump_level": "op",
                "dump_list": model_list(opname_blacklist=[{"name": "a", "pos": [0]}]),
            },
            "dump_list[0].opname_blacklist[0].pos[0]: must be a JSON string",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_blacklist=[{"name": "a"}] * 101)},
            "dump_list[0].opname_blacklist: has 101 entries, more than 100",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(optype_blacklist=[{"name": "a"}] * 101)},
            "dump_list[0].optype_blacklist: has 101 entries, more than 100",
        ),
        (
            {"dump_path": DIR, "dump_list": model_list(opname_blacklist=[{"name": "a"}])},
            "dump_list[0].opname_blacklist: can only be set when dump_level is 'op' (it is 'all')",
        ),
        (
            {"dump_path": DIR, "dump_level": "kernel", "dump_list": model_list(optype_blacklist=[{"name": "a"}])},
            "dump_list[0].optype_blacklist: can only be set when dump_level is 'op' (it is 'kernel')",
        ),
        # opname_range
        (
            {"dump_path": DIR, "dump_list": model_list(opname_range=[{"begin": "a", "end": "b"}])},
            "dump_list[0].opname_range: can only be set when dump_level is 'op'",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": [{"opname_range": [{"begin": "a", "end": "b"}]}]},
            "dump_list[0].model_name: is required when opname_range is set",
        ),
        (
            {
                "dump_path": DIR,
                "dump_level": "op",
                "dump_op_switch": "on",
                "dump_list": [{"model_name": "", "opname_range": [{"begin": "a", "end": "b"}]}],
            },
            "dump_list[0].model_name: is empty",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_range=[{"begin": "a"}])},
            "dump_list[0].opname_range[0]: needs a non-empty begin and end",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_range=[{"begin": "", "end": "b"}])},
            "dump_list[0].opname_range[0]: needs a non-empty begin and end",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_range=[{"begin": 1, "end": "b"}])},
            "dump_list[0].opname_range[0].begin: must be a JSON string",
        ),
        (
            {"dump_path": DIR, "dump_level": "op", "dump_list": model_list(opname_range={"begin": "a", "end": "b"})},
            "dump_list[0].opname_range: must be an array",
        ),
        # watcher mode
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_debug": "on"},
            "dump_debug: cannot be 'on' when dump_scene is 'watcher'",
        ),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_op_switch": "on"},
            "dump_op_switch: cannot be 'on' when dump_scene is 'watcher'",
        ),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_mode": "all"},
            "dump_mode: must be 'output' when dump_scene is 'watcher', not 'all'",
        ),
        ({"dump_path": DIR, "dump_scene": "watcher", "dump_level": "op"}, "dump_level: cannot be set when dump_scene"),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_data": "tensor"},
            "dump_data: cannot be set when dump_scene",
        ),
        ({"dump_path": DIR, "dump_scene": "watcher", "dump_step": "1"}, "dump_step: cannot be set when dump_scene"),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_kernel_data": "all"},
            "dump_kernel_data: cannot be set when dump_scene",
        ),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_stats": ["Max"]},
            "dump_stats: cannot be set when dump_scene",
        ),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_list": [{"layer": ["A"]}]},
            "dump_list[0].watcher_nodes: is required (non-empty) when dump_scene is 'watcher'",
        ),
        (
            {"dump_path": DIR, "dump_scene": "watcher", "dump_list": [{"model_name": "m", "watcher_nodes": ["C"]}]},
            "dump_list[0].model_name: cannot be set when dump_scene is 'watcher'",
        ),
    ],
)
def test_invalid_key(refuse, section, detail):
    assert refuse(section).startswith(detail)


@pytest.mark.parametrize("key", cfg._EXCEPTION_FORBIDS)
@pytest.mark.parametrize("scene", cfg.EXCEPTION_SCENES)
def test_exception_scene_forbids_other_dump_keys(refuse, scene, key):
    valid = {
        "dump_mode": "output",
        "dump_level": "all",
        "dump_data": "tensor",
        "dump_debug": "off",
        "dump_op_switch": "off",
        "dump_kernel_data": "all",
        "dump_step": "1",
        "dump_stats": ["Max"],
        "dump_list": [],
    }
    value = valid[key]
    assert refuse({"dump_scene": scene, key: value}) == f"{key}: cannot be set when dump_scene is {scene!r}"


@pytest.mark.parametrize("section", [[], "dump", 1, None, True])
def test_section_must_be_an_object(section):
    with pytest.raises(AclError) as info:
        parse_dump_section(section)
    assert info.value.code == BAD and info.value.detail.startswith("dump: must be a JSON object")


def test_dump_path_not_a_directory(refuse, tmp_path):
    (tmp_path / "file").write_text("x")
    assert refuse({"dump_path": str(tmp_path / "file"), "dump_list": model_list()}).endswith("is not a directory")


def test_dump_path_without_permission(refuse, tmp_path, monkeypatch):
    # The tests may run as root, for whom access() always succeeds: stand in for a read-only directory.
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if p == str(tmp_path) else real_access(p, mode))
    detail = refuse({"dump_path": str(tmp_path), "dump_list": model_list()})
    assert detail == f"dump_path: {str(tmp_path)!r} is not readable and writable"


def test_error_text_names_code_and_key(refuse):
    with pytest.raises(AclError) as info:
        parse_dump_section({"dump_mode": "foo"})
    assert str(info.value).startswith("ACL_ERROR_INVALID_DUMP_CONFIG(100009)")
    assert "dump_mode: 'foo' is not one of input, output, all" in refuse({"dump_path": DIR, "dump_mode": "foo"})


# ----- warnings -----


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"dump_scene": "aic_err_brief_dump"}, "dump_scene"),
        ({"dump_scene": "lite_exception", "dump_path": DIR}, "dump_scene"),
        ({"dump_scene": "watcher", "dump_path": DIR, "dump_list": [{"watcher_nodes": ["C"]}]}, "dump_scene"),
        ({"dump_debug": "on", "dump_path": DIR}, "dump_debug"),
        ({"dump_kernel_data": "printf", "dump_path": DIR}, "dump_kernel_data"),
        ({"dump_kernel_data": "all", "dump_path": DIR, "dump_list": model_list()}, "dump_kernel_data"),
        ({"dump_level": "kernel", "dump_path": DIR, "dump_list": model_list()}, "dump_level"),
        ({"dump_path": "192.168.1.1:/dump", "dump_list": model_list()}, "dump_path"),
    ],
)
def test_no_effect_keys_warn_once(parse, acl_log, section, key):
    parse(section)
    hits = [w for w in warnings_of(acl_log) if w.startswith(f"dump config: {key} has no effect in openacl")]
    assert len(hits) == 1


@pytest.mark.parametrize(
    "section",
    [
        {"dump_path": DIR, "dump_list": model_list()},
        {"dump_path": DIR, "dump_list": model_list(), "dump_level": "op", "dump_mode": "all", "dump_data": "stats"},
        {"dump_path": DIR, "dump_list": [], "dump_op_switch": "on"},
    ],
)
def test_supported_sections_do_not_warn(parse, acl_log, section):
    parse(section)
    assert warnings_of(acl_log) == []


@pytest.mark.parametrize(
    "section", [{"dump_path": DIR}, {"dump_path": DIR, "dump_list": []}, {"dump_path": DIR, "dump_op_switch": "off"}]
)
def test_section_that_dumps_nothing_warns(parse, acl_log, section):
    config = parse(section)
    assert not config.model_dump_enabled
    assert warnings_of(acl_log) == ["dump config: no dump_list entry and dump_op_switch is off, so no model is dumped"]


def test_unknown_keys_warn_and_are_ignored(parse, acl_log):
    config = parse(
        {
            "dump_path": DIR,
            "dump_modee": "all",
            "dump_level": "op",
            "dump_list": [
                {
                    "model_name": "m",
                    "layers": ["x"],
                    "opname_blacklist": [{"name": "a", "poss": []}],
                    "opname_range": [{"begin": "a", "end": "b", "step": 1}],
                }
            ],
        }
    )
    assert config.dump_mode == "output"
    unknown = [w.split("'")[1] for w in warnings_of(acl_log) if w.startswith("dump config: unknown key")]
    assert unknown == [
        "dump_modee",
        "dump_list[0].layers",
        "dump_list[0].opname_blacklist[0].poss",
        "dump_list[0].opname_range[0].step",
    ]


def test_section_with_only_unknown_keys_still_needs_dump_path(refuse):
    assert refuse({"comment": "x"}).startswith("dump_path: is required")


# ----- StepSet -----


def test_step_set_membership():
    steps = StepSet.parse("0|5|10-20")
    assert [s for s in range(25) if s in steps] == [0, 5, *range(10, 21)]
    assert "5" not in steps and -1 not in steps


def test_step_set_canonical_form():
    assert str(StepSet.parse("3-5|1|2|20-20|4-9")) == "1-9|20"
    assert StepSet.parse("1|2|3") == StepSet.parse("1-3")
    assert hash(StepSet.parse("007")) == hash(StepSet([(7, 7)]))
    assert StepSet.parse("1-1").ranges == ((1, 1),)
    assert repr(StepSet.parse("1|3")) == "StepSet('1|3')"
    assert StepSet.parse("|".join(map(str, range(100)))).ranges == ((0, 99),)


def test_step_set_rejects_reversed_range():
    with pytest.raises(ValueError):
        StepSet([(5, 4)])


@settings(derandomize=True)
@given(st.sets(st.integers(min_value=0, max_value=10**12), max_size=100), st.randoms(use_true_random=False))
def test_any_set_of_steps_round_trips(steps, rnd):
    items = [str(s) for s in steps] or ["0"]
    rnd.shuffle(items)
    parsed = StepSet.parse("|".join(items))
    expected = steps or {0}
    probes = expected | {s + 1 for s in expected} | {max(s - 1, 0) for s in expected}
    assert {p for p in probes if p in parsed} == expected
    assert StepSet.parse(str(parsed)) == parsed


@settings(derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 50)), min_size=1, max_size=100))
def test_any_ranges_round_trip(pairs):
    ranges = [(a, a + n) for a, n in pairs]
    parsed = StepSet.parse("|".join(f"{a}-{b}" for a, b in ranges))
    expected = {s for a, b in ranges for s in range(a, b + 1)}
    assert {s for s in range(0, 552) if s in parsed} == expected
    assert StepSet.parse(str(parsed)) == parsed


# ----- load_dump_config -----


def write(tmp_path, content: str) -> str:
    path = tmp_path / "dump.json"
    path.write_text(content)
    return str(path)


def test_load_valid_file(tmp_path):
    path = write(tmp_path, json.dumps({"dump": {"dump_path": str(tmp_path), "dump_list": [{"model_name": "m"}]}}))
    config = load_dump_config(path)
    assert config.dump_path == str(tmp_path) and selects_model(config, "m")


def test_load_missing_file(tmp_path):
    with pytest.raises(AclError) as info:
        load_dump_config(str(tmp_path / "nope.json"))
    assert info.value.code == AclCode.ACL_ERROR_INVALID_FILE


def test_load_bad_json(tmp_path):
    with pytest.raises(AclError) as info:
        load_dump_config(write(tmp_path, '{"dump": {'))
    assert info.value.code == AclCode.ACL_ERROR_PARSE_FILE


@pytest.mark.parametrize("content", ["{}", "", '{"profiler": {}}'])
def test_load_file_without_dump_object(tmp_path, content):
    with pytest.raises(AclError) as info:
        load_dump_config(write(tmp_path, content))
    assert info.value.code == BAD and info.value.detail.startswith("dump: ")


def test_load_file_whose_dump_is_not_an_object(tmp_path):
    with pytest.raises(AclError) as info:
        load_dump_config(write(tmp_path, '{"dump": []}'))
    assert info.value.code == BAD and info.value.detail == "dump: must be a JSON object, not an array"


def test_load_file_with_invalid_dump(tmp_path):
    with pytest.raises(AclError) as info:
        load_dump_config(write(tmp_path, json.dumps({"dump": {"dump_path": str(tmp_path), "dump_mode": "x"}})))
    assert info.value.code == BAD and info.value.detail.startswith("dump_mode: 'x'")
