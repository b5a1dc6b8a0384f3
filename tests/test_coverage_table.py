"""docs/coverage.md's tables: every pyACL function, the facade's exactly marked, every missing one explained."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from openacl import acl

ROOT = Path(__file__).resolve().parents[1]
COVERAGE_PAGE = ROOT / "docs" / "coverage.md"
_spec = importlib.util.spec_from_file_location("coverage_table", ROOT / "scripts" / "coverage_table.py")
coverage = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("coverage_table", coverage)  # dataclasses look their module up there
_spec.loader.exec_module(coverage)

ROW = re.compile(r"^\| `(acl(?:\.[a-z]+)?\.[a-z_0-9]+)` \| (\d*) \| \[( |x)\] \| (.*) \|$", re.MULTILINE)
needs_spec = pytest.mark.skipif(not coverage.DEFAULT_SPEC.is_file(), reason="the reference notes are not here")


def readme_tables() -> str:
    text = COVERAGE_PAGE.read_text(encoding="utf-8")
    return text.split(coverage.START)[1].split(coverage.END)[0]


def exported() -> set[str]:
    names = {f"acl.{n}" for n in acl.__all__ if n not in acl.SUBMODULES}
    for sub in acl.SUBMODULES:
        names |= {f"acl.{sub}.{n}" for n in getattr(acl, sub).__all__}
    return names


def test_marked_functions_are_exactly_the_facade_exports():
    present = {name for name, _, mark, _ in ROW.findall(readme_tables()) if mark == "x"}
    assert present == exported(), "run scripts/coverage_table.py"


def test_every_missing_function_has_a_reason():
    missing = [(name, why.strip()) for name, _, mark, why in ROW.findall(readme_tables()) if mark == " "]
    assert missing
    assert [name for name, why in missing if not why] == []


def test_every_exported_name_is_callable_and_declared():
    for name in exported():
        module, _, function = name.rpartition(".")
        fn = getattr(acl if module == "acl" else getattr(acl, module.split(".")[1]), function)
        assert fn.acl_name == name


def test_reasons_are_looked_up_in_the_one_table():
    assert coverage.reason("acl.rt.launch_kernel") == coverage.REASONS["acl.rt.*kernel*"]
    assert coverage.reason("acl.fv.init") == coverage.REASONS["acl.fv.*"]
    assert coverage.reason("acl.no_such_thing") is None


@needs_spec
def test_the_list_is_the_whole_of_the_notes_section_2():
    functions = coverage.spec_functions(coverage.DEFAULT_SPEC)
    assert len(functions) == 739  # the notes' own total: acl 47, rt 190, mdl 86, ... himpi 130
    assert sum(1 for f in functions if f.samples) == 161
    by_module = coverage.counts(functions, set())
    assert {m: row[0] for m, row in by_module.items()} == {
        "acl": 47,
        "acl.rt": 190,
        "acl.mdl": 86,
        "acl.op": 32,
        "acl.media": 177,
        "acl.util": 7,
        "acl.prof": 36,
        "acl.blas": 12,
        "acl.fv": 22,
        "acl.himpi": 130,
    }
    memcpy = next(f for f in functions if f.name == "acl.rt.memcpy")
    assert memcpy.samples == 27


@needs_spec
def test_readme_tables_are_up_to_date():
    functions = coverage.spec_functions(coverage.DEFAULT_SPEC)
    assert readme_tables().strip() == coverage.render(functions, exported()).strip(), "run scripts/coverage_table.py"


@needs_spec
def test_the_facade_exports_no_name_pyacl_lacks_and_explains_every_gap():
    functions = coverage.spec_functions(coverage.DEFAULT_SPEC)
    known = {f.name for f in functions}
    assert exported() - known == set()
    assert [f.name for f in functions if f.name not in exported() and coverage.reason(f.name) is None] == []


@needs_spec
def test_every_function_the_samples_use_in_acl_rt_and_util_is_supported():
    functions = coverage.spec_functions(coverage.DEFAULT_SPEC)
    used = {f.name for f in functions if f.samples and coverage.module_of(f.name) in ("acl.rt", "acl.util")}
    assert used - exported() == set()
    top_level = {"acl.app_log", "acl.get_soc_name", "acl.init", "acl.finalize"}
    assert top_level <= exported()
