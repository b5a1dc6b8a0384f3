"""benchmarks/_common.py: the 20 % rule, interleaved rounds, targets met and the rows `openacl bench` reads.

Loaded the way `openacl bench` loads it (``cli._bench_rules``): the rules live once, in the benchmarks folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openacl import cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def common():
    return cli._bench_rules(ROOT / "benchmarks")


def test_ratio_rounds_alternate_baseline_and_ours_and_take_the_median_ratio(common):
    order = []
    ours_values, base_values = iter([2.0, 3.0, 9.0]), iter([1.0, 1.0, 1.0])

    def ours():
        order.append("ours")
        return next(ours_values)

    def baseline():
        order.append("baseline")
        return next(base_values)

    rounds = common.ratio_rounds(3, ours, baseline)
    assert order == ["baseline", "ours"] * 3
    assert rounds.ratios == [2.0, 3.0, 9.0]
    assert (rounds.ratio, rounds.low, rounds.high) == (3.0, 2.0, 9.0)
    assert rounds.moved  # (9 - 2) / 3 > 20 %
    assert (rounds.ours_median, rounds.baseline_median) == (3.0, 1.0)


def test_a_rate_is_compared_the_other_way_so_that_every_ratio_reads_times_worse(common):
    rounds = common.Rounds(ours=(100.0, 100.0), baseline=(300.0, 310.0), higher_is_better=True)
    assert rounds.ratios == [3.0, 3.1]
    assert not rounds.moved


def test_the_20_percent_rule(common):
    assert common.SPREAD_LIMIT == 0.20
    assert not common.moved(1.0, 1.2, 1.0)  # exactly 20 %: not moved
    assert common.moved(1.0, 1.21, 1.0)
    assert not common.moved(0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("ratio", "target", "expected"),
    [
        (1.5, "<= 1.5", True),
        (1.51, "<= 1.5", False),
        (2.4, "<= 2.5x", True),
        (0.9, "<=1.10", True),
        (1.0, "p50 <= 20 µs", None),
        (1.0, "== 1.00", True),
        (0.99, "== 1.00", False),
        (0.6, ">= 0.5", True),
        (0.4, ">= 0.5", False),
        (1.0, ">= 0.5 GB/s", None),
        (1.0, "", None),
        (1.0, "-", None),
    ],
)
def test_within_reads_a_target_on_the_ratio_and_nothing_else(common, ratio, target, expected):
    assert common.within(ratio, target) is expected


def test_rows_in_json_carry_within_spread_and_moved(common, capsys):
    measured = common.Rounds(ours=(2.0, 2.2, 3.0), baseline=(1.0, 1.0, 1.0))
    rows = [
        ("(a) tuple row", "1 ms", "1 ms", 1.0, "<= 1.1"),
        common.rounds_row("(b) rounds row", measured, "{:.1f} s".format, "<= 2.5"),
        common.row("(c) latency", "9 µs", "5 µs", 1.8, "p50 <= 20 µs", within=True),
    ]
    common.print_rows(rows, True)
    a, b, c = json.loads(capsys.readouterr().out)
    assert a == {"figure": "(a) tuple row", "openacl": "1 ms", "baseline": "1 ms", "ratio": 1.0, "target": "<= 1.1"} | {
        "within": True
    }
    assert b["openacl"] == "2.2 s" and b["ratio"] == 2.2 and b["spread"] == [2.0, 3.0]
    assert b["moved"] is True and b["within"] is True
    assert c["within"] is True and "spread" not in c


def test_the_table_flags_a_moved_figure_and_says_what_moved_means(common, capsys):
    steady = common.Rounds(ours=(1.0, 1.05), baseline=(1.0, 1.0))
    noisy = common.Rounds(ours=(1.0, 2.0), baseline=(1.0, 1.0))
    common.print_rows(
        [common.rounds_row("steady", steady, str, "<= 1.1"), common.rounds_row("noisy", noisy, str, "<= 1.1")], False
    )
    out = capsys.readouterr().out
    steady_line, noisy_line = (
        next(line for line in out.splitlines() if line.startswith(n)) for n in ("steady", "noisy")
    )
    assert "moved" not in steady_line and "1.00-1.05" in steady_line and "yes" in steady_line
    assert noisy_line.endswith("1.00-2.00 moved") and "NO" in noisy_line
    assert "more than 20% of the median" in out


def test_combine_runs_gives_the_median_run_and_the_spread_over_runs(common):
    def run(ratio, within=None):
        item = {"benchmark": "x", "figure": "f", "openacl": f"{ratio}", "baseline": "1", "ratio": ratio, "target": ""}
        return [item if within is None else {**item, "within": within}]

    (one,) = common.combine_runs([run(1.0, True), run(1.3, False), run(1.1, True)])
    assert one["ratio"] == 1.1 and one["openacl"] == "1.1" and one["runs"] == [1.0, 1.3, 1.1]
    assert one["spread"] == [1.0, 1.3] and one["moved"] is True and one["within"] is False
    (unknown,) = common.combine_runs([run(1.0), run(1.0)])
    assert "within" not in unknown and unknown["moved"] is False
    assert common.combine_runs([run(1.0)]) == [run(1.0)[0]]  # one run: its rows as they are
