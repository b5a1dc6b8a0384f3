"""``openacl.dump.selection``: which models, steps, operators and slots a parsed "dump" section dumps."""

from __future__ import annotations

import pytest

from openacl.dump.config import DumpConfig
from openacl.dump.selection import OpInfo, OpPlan, plan, selects_model, selects_step
from tests.dump.sections import DIR, model_list, warnings_of


def test_selects_step(parse):
    config = parse({"dump_path": DIR, "dump_list": model_list(), "dump_step": "1|3-4"})
    assert [s for s in range(6) if selects_step(config, s)] == [1, 3, 4]
    assert selects_step(parse({"dump_path": DIR, "dump_list": model_list()}), 10**9)


# ----- plan -----

OPS = [
    OpInfo("conv1", "Conv", 3, 1),
    OpInfo("relu1", "Relu", 1, 1),
    OpInfo("pool1", "MaxPool", 1, 2),
    OpInfo("fc", "Gemm", 3, 1),
    OpInfo("const", "Constant", 0, 1),
    OpInfo("out", "Softmax", 1, 1),
]


def plan_of(parse, entry=None, *, model="m", **keys):
    section = {"dump_path": DIR, "dump_list": [{"model_name": "m", **(entry or {})}], **keys}
    return plan(parse(section), model, OPS)


def test_plan_outputs_of_every_op_by_default(parse):
    assert plan_of(parse) == [OpPlan(i, (), tuple(range(op.num_outputs))) for i, op in enumerate(OPS)]


def test_plan_inputs_only_leaves_out_ops_without_inputs(parse):
    plan = plan_of(parse, dump_mode="input")
    assert [p.index for p in plan] == [0, 1, 2, 3, 5]
    assert plan[0] == OpPlan(0, (0, 1, 2), ())


def test_plan_all_slots(parse):
    plan = plan_of(parse, dump_mode="all")
    assert plan[2] == OpPlan(2, (0,), (0, 1)) and plan[4] == OpPlan(4, (), (0,))


def test_plan_of_unselected_model_is_none(parse):
    assert plan_of(parse, model="other") is None


def test_plan_layer(parse):
    plan = plan_of(parse, {"layer": ["fc", "relu1", "missing"]})
    assert [p.index for p in plan] == [1, 3]


def test_plan_opname_blacklist_positions(parse):
    entry = {
        "opname_blacklist": [{"name": "conv1", "pos": ["input1", "output0"]}, {"name": "pool1", "pos": ["output1"]}]
    }
    plan = plan_of(parse, entry, dump_mode="all", dump_level="op")
    assert plan[0] == OpPlan(0, (0, 2), ())
    assert plan[2] == OpPlan(2, (0,), (0,))


def test_plan_blacklist_without_pos_drops_the_whole_op(parse):
    entry = {"optype_blacklist": [{"name": "Relu"}, {"name": "Gemm", "pos": []}], "opname_blacklist": [{"name": "out"}]}
    plan = plan_of(parse, entry, dump_mode="all", dump_level="op")
    assert [p.index for p in plan] == [0, 2, 4]


def test_plan_blacklisting_every_slot_drops_the_op(parse):
    entry = {"optype_blacklist": [{"name": "Relu", "pos": ["output0"]}]}
    assert [p.index for p in plan_of(parse, entry, dump_level="op")] == [0, 2, 3, 4, 5]


def test_plan_invalid_pos_excludes_nothing(parse):
    entry = {"optype_blacklist": [{"name": "Relu", "pos": ["Output0"]}]}
    assert len(plan_of(parse, entry, dump_level="op")) == len(OPS)


@pytest.mark.parametrize(
    ("ranges", "indices"),
    [
        ([("relu1", "fc")], [1, 2, 3]),
        ([("relu1", "relu1")], [1]),
        ([("conv1", "relu1"), ("fc", "const")], [0, 1, 3, 4]),
        ([("conv1", "pool1"), ("relu1", "fc")], [0, 1, 2, 3]),
        ([("fc", "missing")], [3, 4, 5]),  # an end never met: through the last operator
        ([("missing", "fc")], []),  # a begin never met
        ([("fc", "relu1")], []),  # end before begin
    ],
)
def test_plan_opname_range(parse, acl_log, ranges, indices):
    entry = {"opname_range": [{"begin": b, "end": e} for b, e in ranges]}
    assert [p.index for p in plan_of(parse, entry, dump_level="op")] == indices
    if not indices:
        assert any("opname_range" in w for w in warnings_of(acl_log))


def test_plan_range_and_layer_union(parse):
    entry = {"layer": ["out"], "opname_range": [{"begin": "relu1", "end": "pool1"}]}
    assert [p.index for p in plan_of(parse, entry, dump_level="op")] == [1, 2, 5]


def test_plan_rules_applying_to_a_model_are_united(parse):
    config = parse(
        {
            "dump_path": DIR,
            "dump_level": "op",
            "dump_mode": "all",
            "dump_list": [
                {"model_name": "m", "layer": ["conv1"], "opname_blacklist": [{"name": "conv1", "pos": ["input0"]}]},
                {"layer": ["conv1", "out"], "opname_blacklist": [{"name": "conv1", "pos": ["input1"]}]},
                {"model_name": "other", "layer": ["fc"]},
            ],
        }
    )
    assert plan(config, "m", OPS) == [OpPlan(0, (0, 1, 2), (0,)), OpPlan(5, (0,), (0,))]
    assert plan(config, "x", OPS) == [OpPlan(0, (0, 2), (0,)), OpPlan(5, (0,), (0,))]
    assert [p.index for p in plan(config, "other", OPS)] == [0, 3, 5]


def test_plan_op_switch_dumps_unnamed_models_whole(parse):
    config = parse({"dump_path": DIR, "dump_op_switch": "on", "dump_list": [{"model_name": "m", "layer": ["fc"]}]})
    assert [p.index for p in plan(config, "m", OPS)] == [3]
    assert len(plan(config, "other", OPS)) == len(OPS)


def test_plan_when_no_model_dump(parse):
    for section in ({"dump_path": DIR, "dump_debug": "on"}, {"dump_scene": "aic_err_norm_dump"}):
        config = parse(section)
        assert plan(config, "m", OPS) is None and not selects_model(config, "m")


def test_plan_of_default_config():
    assert plan(DumpConfig.default(), "any", OPS) == [
        OpPlan(i, (), tuple(range(o.num_outputs))) for i, o in enumerate(OPS)
    ]


def test_plan_of_empty_model(parse):
    assert plan(parse({"dump_path": DIR, "dump_list": model_list()}), "m", []) == []
