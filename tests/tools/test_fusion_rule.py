"""openacl.tools.fusion_rule: the fusion rule JSON msaccucmp takes with -f."""

from __future__ import annotations

import json

import pytest

from openacl.tools.fusion_rule import FusionRuleError, read_fusion_rule

RULE = {
    "graph": [
        {
            "name": "resnet",
            "op": [
                {"name": "data", "type": "Data"},
                {
                    "name": "layer1/conv_fused",
                    "type": "Conv2D",
                    "id": 3,
                    "input": ["data:0", "w:0"],
                    "attr": [
                        {"key": "_L1_fusion_sub_graph_no", "value": {"s": ""}},
                        {"key": "_datadump_original_op_names", "value": {"list": {"s": ["conv1", "bn1", "relu1"]}}},
                    ],
                    "output_desc": [
                        {
                            "dtype": "DT_FLOAT16",
                            "attr": [
                                {"key": "_datadump_origin_name", "value": {"s": "relu1"}},
                                {"key": "_datadump_origin_output_index", "value": {"i": 0}},
                            ],
                        },
                        {"dtype": "DT_FLOAT16"},
                    ],
                },
            ],
        }
    ]
}


def test_reads_original_names_and_output_origins(tmp_path):
    path = tmp_path / "fusion_result.json"
    path.write_text(json.dumps(RULE))
    ops = read_fusion_rule(path)
    assert set(ops) == {"data", "layer1_conv_fused"}  # keyed as file names spell op names
    fused = ops["layer1_conv_fused"]
    assert (fused.name, fused.op_type, fused.originals) == ("layer1/conv_fused", "Conv2D", ("conv1", "bn1", "relu1"))
    assert fused.output_origins == (("relu1", 0), None) and fused.fused
    assert ops["data"].originals == ("data",) and not ops["data"].fused


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{", "is not JSON"),
        ("[]", 'no "graph" list'),
        ('{"graph": [{}]}', 'no "op" list'),
        ('{"graph": [{"op": [{"type": "Conv2D"}]}]}', 'no "name" string'),
        (
            '{"graph": [{"op": [{"name": "a", "attr": [{"key": "_datadump_original_op_names",'
            ' "value": {"list": {"s": [1]}}}]}]}]}',
            "list of strings",
        ),
    ],
)
def test_bad_files_are_fusion_rule_errors(tmp_path, text, match):
    path = tmp_path / "rule.json"
    path.write_text(text)
    with pytest.raises(FusionRuleError, match=match):
        read_fusion_rule(path)
    with pytest.raises(FusionRuleError, match="cannot read"):
        read_fusion_rule(tmp_path / "missing.json")
