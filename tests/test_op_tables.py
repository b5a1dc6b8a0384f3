"""The docs' operator tables are what ``scripts/op_tables.py`` writes from the operator library's registry."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("op_tables", ROOT / "scripts" / "op_tables.py")
op_tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(op_tables)


def test_docs_op_tables_match_the_registry():
    for page, markers, body in op_tables.pages():
        text = page.read_text(encoding="utf-8")
        assert op_tables.render(text, markers, body) == text, f"run scripts/op_tables.py ({page.name})"


def test_the_library_table_names_every_type_once_per_family():
    table = op_tables.library_table()
    for op_type in op_tables.REGISTRY:
        assert table.count(f"`{op_type}`,") + table.count(f"`{op_type}` |") >= 1, op_type
