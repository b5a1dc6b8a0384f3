"""What every benchmark shares: interleaved measurement and one table format (or JSON rows)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
Row = tuple[str, str, str, float, str]  # figure, openacl, baseline, ratio, target


def argument_parser(description: str | None, quick: str = "fewer iterations (a smoke run)") -> argparse.ArgumentParser:
    """``--quick`` and ``--json``, which every benchmark takes (``openacl bench`` passes them)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=quick)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    return parser


def interleaved(rounds: int, ours: Callable[[], float], baseline: Callable[[], float], pick=min) -> tuple[float, float]:
    """Alternate the two measurements round by round, so that drift on a noisy machine hits both alike."""
    a, b = [], []
    for _ in range(rounds):
        a.append(ours())
        b.append(baseline())
    return pick(a), pick(b)


def per_call(fn: Callable[[], object], n: int) -> float:
    """Seconds per call of ``fn`` over ``n`` calls."""
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def print_rows(rows: Sequence[Row], as_json: bool, notes: Sequence[str] = ()) -> None:
    if as_json:
        keys = ("figure", "openacl", "baseline", "ratio", "target")
        print(json.dumps([dict(zip(keys, row, strict=True)) for row in rows]))
        return
    print(f"{'figure':44} {'openacl':>14} {'baseline':>14} {'ratio':>7}  target")
    for name, ours, base, ratio, target in rows:
        print(f"{name:44} {ours:>14} {base:>14} {ratio:7.2f}  {target}")
    for note in notes:
        print(note)


def import_model_builder():
    """``scripts/make_demo_model.build_model``: the shipped model's generator, at any size."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_demo_model import build_model

    return build_model
