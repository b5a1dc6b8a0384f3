"""Start-up: a whole ``openacl run hello.py`` process against a whole ``python -c "import numpy"`` one, side by side.

(a) ``openacl run hello.py``, where hello.py does acl.init, set_device, reset_device and finalize, from process
    start to exit, vs ``python -c "import numpy"`` (numpy is what every pyACL program imports first). The two
    are run alternately, round after round; each time is the median of its rounds, and the ratio the median of
    the rounds' own ratios (a round's two runs share the machine's load of the moment), printed with their
    p10-p90 spread.  target ratio <= 1.5
    Both run as a user's do, from bytecode caches: written by a first run of each into a temporary folder
    (``PYTHONPYCACHEPREFIX``), so the checkout stays clean and ``PYTHONDONTWRITEBYTECODE`` cannot make every
    run compile openacl from source.

Then the import-time top ten of the same ``openacl run`` (``python -X importtime``): the time each package's own
modules took to import, every microsecond counted once (openacl by subpackage), the least of a few runs (one
noisy run can make any package look slow), so what start-up pays for is plain.

Usage: python benchmarks/startup.py [--quick] [--json]
"""

from __future__ import annotations

import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import argument_parser, interleaved, print_rows

HELLO = """\
import acl

assert acl.init() == 0
assert acl.rt.set_device(0) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
"""
SPREAD_NOTE = 0.20  # a figure whose rounds spread wider than this (p90 - p10, of the median) is flagged


def openacl_command(hello: Path) -> list[str]:
    """``openacl run hello.py`` as a user types it: the console script beside this Python, or ``-m openacl``."""
    script = Path(sys.executable).with_name("openacl")
    if script.is_file():
        return [str(script), "run", str(hello)]
    return [sys.executable, "-m", "openacl", "run", str(hello)]


def wall(command: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``command`` to its exit; it must succeed."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    return elapsed


def deciles(values: list[float]) -> tuple[float, float]:
    """(p10, p90) of the rounds; (least, most) of fewer than three."""
    if len(values) < 3:
        return min(values), max(values)
    cuts = statistics.quantiles(values, n=10)
    return cuts[0], cuts[-1]


def spread(times: list[float]) -> float:
    """(p90 - p10) / median of the rounds."""
    low, high = deciles(times)
    return (high - low) / statistics.median(times) if len(times) >= 3 else 0.0


def import_top_ten(hello: Path, env: dict[str, str], runs: int) -> tuple[list[tuple[str, float]], float]:
    """([(package, least seconds of its modules' own import time)] largest first, least total) of ``runs`` runs."""
    found = [import_times(hello, env) for _ in range(runs)]
    least = {package: min(times.get(package, 0.0) for times in found) for package in found[0]}
    return collections.Counter(least).most_common(10), min(sum(times.values()) for times in found)


def import_times(hello: Path, env: dict[str, str]) -> collections.Counter[str]:
    """{package: seconds of its modules' own import time} of one ``openacl run hello.py``."""
    command = [sys.executable, "-X", "importtime", "-m", "openacl", "run", str(hello)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    per_package: collections.Counter[str] = collections.Counter()
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        own, _, name = (part.strip() for part in line[len("import time:") :].split("|"))
        if not own.isdigit():
            continue  # the header line
        parts = name.split(".")
        package = ".".join(parts[:2]) if parts[0] == "openacl" and len(parts) > 1 else parts[0]
        per_package[package] += int(own) / 1e6
    return per_package


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    rounds = 5 if args.quick else 21
    with tempfile.TemporaryDirectory(prefix="openacl-startup-") as folder:
        hello = Path(folder) / "hello.py"
        hello.write_text(HELLO)
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
        ours_command, base_command = openacl_command(hello), [sys.executable, "-c", "import numpy"]
        wall(ours_command, env), wall(base_command, env)  # bytecode caches and page cache: every round starts alike
        ours_times, base_times = interleaved(
            rounds, lambda: wall(ours_command, env), lambda: wall(base_command, env), list
        )
        top, total = ([], 0.0) if args.json else import_top_ten(hello, env, 1 if args.quick else 5)
    ours, base = statistics.median(ours_times), statistics.median(base_times)
    ratios = [o / b for o, b in zip(ours_times, base_times, strict=True)]
    rows = [
        (
            "(a) openacl run hello.py vs import numpy",
            f"{ours * 1e3:.0f} ms",
            f"{base * 1e3:.0f} ms",
            statistics.median(ratios),
            "<= 1.5",
        )
    ]
    low, high = deciles(ratios)
    notes = [
        f"median of {rounds} interleaved rounds, process start to exit; ratio: the median of the rounds' own "
        f"ratios (p10 {low:.2f}, p90 {high:.2f})"
    ]
    for name, times in (("openacl", ours_times), ("baseline", base_times)):
        if spread(times) > SPREAD_NOTE:
            notes.append(f"noisy: the {name} rounds spread {spread(times):.0%} (p10-p90 of the median)")
    if top:
        notes.append(f"import-time top ten of openacl run hello.py (least own time per package; all {total:.3f} s):")
        notes += [f"  {seconds * 1e3:8.1f} ms  {name}" for name, seconds in top]
    print_rows(rows, args.json, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
