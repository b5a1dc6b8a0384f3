"""What every benchmark shares: interleaved measurement, the 20 % rule, and one row format (a table or JSON).

A row is ``(figure, openacl, baseline, ratio, target)``, or a dict with those keys and optional ones
(``spread``: the ratio's ``[low, high]`` over interleaved rounds; ``within``: whether it meets its target;
``moved``: the spread is over ``SPREAD_LIMIT``). ``print_rows`` fills ``within`` from a target on the ratio
(``<= X``, ``>= X``, ``== X``) where a row does not say, so ``openacl bench`` reads one JSON shape from every script.

The rule for noisy figures (issue 26): where a figure moves more than 20 % between runs, the benchmark says
so and takes the median of interleaved rounds. ``ratio_rounds`` is that rule: baseline and ours alternate,
round after round, the ratio is the median of the rounds' ratios, its spread their min-max, and ``moved``
flags a spread over 20 % of the median.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
Row = tuple[str, str, str, float, str]  # figure, openacl, baseline, ratio, target
KEYS = ("figure", "openacl", "baseline", "ratio", "target")
SPREAD_LIMIT = 0.20  # a figure whose rounds (or runs) spread more than this around the median has "moved"


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


@dataclass(frozen=True)
class Rounds:
    """Interleaved rounds of one figure: each round's value of ours and of the baseline.

    ``higher_is_better`` for rates (callbacks per second): the ratio is then baseline / ours, so that a ratio
    is always "how many times worse than the baseline" and every target reads ``<= X``.
    """

    ours: tuple[float, ...]
    baseline: tuple[float, ...]
    higher_is_better: bool = False

    @property
    def ratios(self) -> list[float]:
        pairs = zip(self.ours, self.baseline, strict=True)
        return [b / a if self.higher_is_better else a / b for a, b in pairs]

    @property
    def ratio(self) -> float:
        """The median of the rounds' ratios (each round compares two measurements taken back to back)."""
        return statistics.median(self.ratios)

    @property
    def low(self) -> float:
        return min(self.ratios)

    @property
    def high(self) -> float:
        return max(self.ratios)

    @property
    def moved(self) -> bool:
        return moved(self.low, self.high, self.ratio)

    @property
    def ours_median(self) -> float:
        return statistics.median(self.ours)

    @property
    def baseline_median(self) -> float:
        return statistics.median(self.baseline)


def ratio_rounds(
    rounds: int, ours: Callable[[], float], baseline: Callable[[], float], *, higher_is_better: bool = False
) -> Rounds:
    """Measure baseline and ours alternately, ``rounds`` times each (the baseline first in every round)."""
    a, b = [], []
    for _ in range(rounds):
        b.append(baseline())
        a.append(ours())
    return Rounds(tuple(a), tuple(b), higher_is_better)


def moved(low: float, high: float, median: float) -> bool:
    """The 20 % rule: the spread (max - min) is more than ``SPREAD_LIMIT`` of the median."""
    return median > 0 and (high - low) / median > SPREAD_LIMIT


def within(ratio: float, target: str) -> bool | None:
    """Whether ``ratio`` meets a target on the ratio, written ``<= X``, ``>= X`` or ``== X`` (``X`` a number, an
    ``x`` after it allowed); None for any other target (one with a unit is on a figure, not on the ratio)."""
    found = re.fullmatch(r"\s*(<=|>=|==)\s*([0-9]*\.?[0-9]+)\s*x?\s*", target or "")
    if found is None:
        return None
    limit = float(found.group(2))
    if found.group(1) == "==":
        return math.isclose(ratio, limit)
    return ratio <= limit if found.group(1) == "<=" else ratio >= limit


def row(
    figure: str,
    openacl: str,
    baseline: str,
    ratio: float,
    target: str,
    *,
    spread: tuple[float, float] | None = None,
    within: bool | None = None,
) -> dict:
    """A row with the optional keys: ``spread`` (the ratio's low and high) and ``within`` (for targets that are
    not on the ratio, such as a latency's ``p50 <= 20 µs``)."""
    out = dict(zip(KEYS, (figure, openacl, baseline, ratio, target), strict=True))
    if spread is not None:
        out["spread"] = [spread[0], spread[1]]
        out["moved"] = moved(spread[0], spread[1], ratio)
    if within is not None:
        out["within"] = within
    return out


def rounds_row(figure: str, measured: Rounds, unit: Callable[[float], str], target: str) -> dict:
    """The row of a figure measured in interleaved rounds: medians, median ratio and its spread."""
    return row(
        figure,
        unit(measured.ours_median),
        unit(measured.baseline_median),
        measured.ratio,
        target,
        spread=(measured.low, measured.high),
    )


def complete(item: Row | dict) -> dict:
    """A row as a dict, with ``within`` filled from its target where the row does not say."""
    out = dict(zip(KEYS, item, strict=True)) if isinstance(item, tuple) else dict(item)
    if out.get("within") is None:
        found = within(out["ratio"], out["target"])
        if found is not None:
            out["within"] = found
    return out


def combine_runs(runs: Sequence[Sequence[dict]]) -> list[dict]:
    """One row per figure (keyed by ``benchmark`` and ``figure``) from the rows of several whole runs.

    Its ratio is the median of the runs' ratios, its texts those of the median run, its spread the runs'
    ratios min-max (``moved`` over 20 %), ``within`` true only if every run was within (None unless every run says),
    ``runs`` every run's ratio in order. A single run's rows are returned as they are (completed).
    """
    if len(runs) == 1:
        return [complete(item) for item in runs[0]]
    groups: dict[tuple[str, str], list[dict]] = {}
    for rows in runs:
        for item in rows:
            groups.setdefault((item.get("benchmark", ""), item["figure"]), []).append(complete(item))
    combined = []
    for rows in groups.values():
        ratios = [item["ratio"] for item in rows]
        median = statistics.median(ratios)
        middle = sorted(rows, key=lambda item: item["ratio"])[len(rows) // 2]
        verdicts = [item.get("within") for item in rows]
        out = {**middle, "ratio": median, "spread": [min(ratios), max(ratios)], "runs": ratios}
        out["moved"] = moved(min(ratios), max(ratios), median)
        out.pop("within", None)
        if all(verdict is not None for verdict in verdicts):
            out["within"] = all(verdicts)
        combined.append(out)
    return combined


def within_text(value: bool | None) -> str:
    return "" if value is None else ("yes" if value else "NO")


def spread_text(item: dict) -> str:
    """``low-high`` of a row's ratio, with `` moved`` when it spread more than 20 %."""
    if "spread" not in item:
        return ""
    low, high = item["spread"]
    return f"{low:.2f}-{high:.2f}" + (" moved" if item.get("moved") else "")


def print_rows(rows: Sequence[Row | dict], as_json: bool, notes: Sequence[str] = ()) -> None:
    done = [complete(item) for item in rows]
    if as_json:
        print(json.dumps(done))
        return
    print(f"{'figure':44} {'openacl':>14} {'baseline':>14} {'ratio':>7}  {'target':14} {'within':6} spread")
    for item in done:
        print(
            f"{item['figure']:44} {item['openacl']:>14} {item['baseline']:>14} {item['ratio']:7.2f}  "
            f"{item['target']:14} {within_text(item.get('within')):6} {spread_text(item)}"
        )
    if any(item.get("moved") for item in done):
        print(f"moved: the rounds spread more than {SPREAD_LIMIT:.0%} of the median; the ratio is their median")
    for note in notes:
        print(note)


def per_call(fn: Callable[[], object], n: int) -> float:
    """Seconds per call of ``fn`` over ``n`` calls."""
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def import_model_builder():
    """``scripts/make_demo_model.build_model``: the shipped model's generator, at any size."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_demo_model import build_model

    return build_model
