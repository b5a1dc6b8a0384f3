"""Write the pyACL coverage table into README.md: every name the reference notes mention, [x] if openacl has it.

    python scripts/coverage_table.py [SPEC_DIR]     (default: ../shared/spec, the project's reference notes)

Names come from the notes (``acl.rt.launch_callback`` and the like) and from the facade's ``__all__``; the
table goes between the ``coverage`` markers in README.md. tests/test_coverage_table.py checks that the table
lists every function the facade exports, so it cannot fall behind the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- coverage:start -->", "<!-- coverage:end -->"
_NAME = re.compile(r"\bacl\.(?:(rt|mdl|op|util)\.)?([a-z_][a-z_0-9]*)\b(\()?")
_NOT_FUNCTIONS = {"rt", "mdl", "op", "util", "json", "h"}


def facade_names() -> set[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from openacl import acl

    names = {f"acl.{n}" for n in acl.__all__ if n not in acl.SUBMODULES}
    for sub in acl.SUBMODULES:
        names |= {f"acl.{sub}.{n}" for n in getattr(acl, sub).__all__}
    return names


def spec_names(spec_dir: Path) -> set[str]:
    found = set()
    for path in spec_dir.glob("*.md"):
        for sub, name, call in _NAME.findall(path.read_text(encoding="utf-8")):
            if name in _NOT_FUNCTIONS or (not sub and not call):  # acl.media, acl.prof...: other pyACL modules
                continue
            if name.endswith("_"):  # a family written as a prefix (acl.op.set_attr_list_{bool,int}), not a name
                continue
            found.add(f"acl.{sub}.{name}" if sub else f"acl.{name}")
    return found


def table(implemented: set[str], mentioned: set[str]) -> str:
    rows = ["| module | function | in openacl |", "|---|---|---|"]
    for name in sorted(implemented | mentioned):
        module, _, function = name.rpartition(".")
        rows.append(f"| `{module}` | `{function}` | {'[x]' if name in implemented else '[ ]'} |")
    return "\n".join(rows)


def main() -> int:
    spec_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "spec"
    implemented = facade_names()
    mentioned = spec_names(spec_dir) if spec_dir.is_dir() else set()
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{START}\n{table(implemented, mentioned)}\n{END}{tail}", encoding="utf-8")
    missing = sorted(mentioned - implemented)
    print(f"{len(implemented)} functions in openacl; in the notes but not here: {', '.join(missing) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
