"""Reading back the plog files a process wrote (CANN's layout: ``<root>/debug/plog/plog-<pid>_<time>.log``)."""

from __future__ import annotations

import re
from pathlib import Path

NAME = re.compile(r"plog-(\d+)_(\d{17})\.log")


def plog_files(root: Path) -> list[Path]:
    """Every plog file under ``root``, oldest name first."""
    return sorted((Path(root) / "debug" / "plog").glob("plog-*.log"))


def plog_text(root: Path) -> str:
    """The lines of every plog file under ``root``, together."""
    return "".join(path.read_text() for path in plog_files(root))
