"""The README's coverage table lists every function the facade exports, marked as present."""

from __future__ import annotations

import re
from pathlib import Path

from openacl import acl

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_table_lists_every_facade_function():
    text = README.read_text(encoding="utf-8")
    table = text.split("<!-- coverage:start -->")[1].split("<!-- coverage:end -->")[0]
    present = {f"{m}.{f}" for m, f in re.findall(r"\| `([a-z.]+)` \| `([a-z_0-9]+)` \| \[x\] \|", table)}
    exported = {f"acl.{n}" for n in acl.__all__ if n not in acl.SUBMODULES}
    for sub in acl.SUBMODULES:
        exported |= {f"acl.{sub}.{n}" for n in getattr(acl, sub).__all__}
    assert present == exported, "run scripts/coverage_table.py"
