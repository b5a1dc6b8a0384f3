"""The ``openacl`` command: ``demo``, ``run``, ``check``, ``dump``, ``parse``, ``compare``, ``trace``, ``bench``.

Exit codes a shell can test: 0 success; 1 the work failed or found a problem (a model that does not load or
whose execution fails, a check failed, a file did not parse, dumps diverge); 2 bad arguments (a missing file,
an unwritable directory, an input that does not fit the model). Either is one line on stderr, never a
traceback. ``--json`` prints one JSON document on stdout instead of tables.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from types import SimpleNamespace
from typing import TYPE_CHECKING

from openacl import lazy

if TYPE_CHECKING:
    from pathlib import Path

# Built only for a command line that needs a parser: ``openacl run SCRIPT`` reaches the program without it.
argparse = lazy.module("argparse")
json = lazy.module("json")

EXAMPLES = """examples:
  openacl demo
  openacl run my_pyacl_app.py --device 0
  openacl run --dump dump.json --trace trace.json my_pyacl_app.py
  openacl check --json findings.json my_pyacl_app.py
  openacl dump model.onnx -o ./golden --mode all
  openacl parse ./golden -o ./npy
  openacl compare ./npu_dump ./golden --csv diff.csv
  openacl trace -o trace.json my_pyacl_app.py
  openacl bench --quick
"""


class UsageError(Exception):
    """Bad arguments: one line on stderr, exit code 2."""


def _fail(command: str, message: str, code: int = 2) -> int:
    """One line on stderr; exit code 2 (bad arguments) unless told 1 (the work itself failed)."""
    one_line = " ".join(line.strip() for line in message.strip().splitlines())  # onnxruntime's have newlines
    print(f"openacl {command}: {one_line}", file=sys.stderr)
    return code


def _emit_json(document: object) -> None:
    print(json.dumps(document, indent=2, default=str))


# ----- run / trace -----


def _run_script(script: str, args: list[str]) -> int:
    import openacl

    openacl.install()
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except Exception:  # the program's own failure: its traceback, as Python prints it, then where the log is
        traceback.print_exc()
        return 1
    return 0


def _say_where_the_log_is(command: str, code: int) -> None:
    """One line on stderr when the program failed and openacl logged errors: the plog file that holds them.

    A program that succeeds stays silent, as on an NPU, where CANN's records go only to its log files (acllite
    programs log an error on every inference and at exit, and succeed)."""
    from openacl import log

    notice = log.exit_notice() if code != 0 else None
    if notice is not None:
        print(f"openacl {command}: {notice}", file=sys.stderr)


def _check_dump_config(path: str) -> None:
    from openacl.dump.config import load_dump_config
    from openacl.errors import AclError

    try:
        load_dump_config(path)
    except AclError as exc:
        raise UsageError(f"--dump {path}: {exc.detail or exc}") from None


def _run(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.script):
        return _fail("run", f"no such file: {args.script}")
    try:
        if args.dump:
            _check_dump_config(args.dump)
            os.environ["OPENACL_DUMP"] = os.path.abspath(args.dump)
    except UsageError as exc:
        return _fail("run", str(exc))
    if args.trace:
        from openacl import trace

        trace.enable(args.trace)
    code = _run_script(args.script, args.args)
    _say_where_the_log_is("run", code)
    return code


def _check(args: argparse.Namespace) -> int:
    """Run the program with every check on; 1 if anything was found, else the program's own status."""
    import gc

    from openacl.runtime import checker

    if not os.path.isfile(args.script):
        return _fail("check", f"no such file: {args.script}")
    if args.json:
        args.json = os.path.abspath(args.json)  # now: the program may change its working directory
        if not os.path.isdir(os.path.dirname(args.json)):
            return _fail("check", f"--json {args.json}: no such directory")
    checker.enable()
    try:
        code = _run_script(args.script, args.args)
    finally:
        gc.collect()  # the program's objects are gone: their finalizers free what they free at exit
        checker.report_leaks("exit")
        found = checker.findings()
        if args.json:
            checker.write_json(args.json)
        kinds = sorted({f.kind for f in found})
        summary = f"{len(found)} finding(s): {', '.join(kinds)}" if found else "no findings"
        print(f"openacl check: {summary}", file=sys.stderr)
    return 1 if found else code


def _trace(args: argparse.Namespace) -> int:
    from openacl import trace

    if not os.path.isfile(args.script):
        return _fail("trace", f"no such file: {args.script}")
    trace.enable(args.output)
    code = _run_script(args.script, args.args)
    _say_where_the_log_is("trace", code)
    trace.write_now()
    summary = trace.summarize(args.output)
    if args.json:
        _emit_json(summary)
    elif not args.quiet:
        _print_trace_summary(summary, args.output)
    return code


def _print_trace_summary(summary: dict, path: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"timeline written to {path}")
    for column in ("category", "spans", "total ms", "longest ms"):
        table.add_column(column, justify="right" if column != "category" else "left")
    for category, row in sorted(summary["categories"].items()):
        table.add_row(category, str(row["count"]), f"{row['total_ms']:.2f}", f"{row['max_ms']:.2f}")
    console = Console()
    console.print(table)
    console.print(f"{summary['threads']} threads; open the file in https://ui.perfetto.dev or chrome://tracing")


# ----- dump / parse / compare -----


def _parse_inputs(items: list[str]) -> dict:
    import numpy as np

    inputs = {}
    for item in items:
        name, sep, file = item.partition("=")
        if not sep or not name or not file:
            raise UsageError(f"--input {item!r}: expected NAME=FILE.npy")
        try:
            inputs[name] = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--input {name}: cannot read {file}: {exc}") from None
    return inputs


def _dump(args: argparse.Namespace) -> int:
    from openacl.errors import AclError
    from openacl.tools.oneshot import BadArgument, dump_model

    if not os.path.isfile(args.model):
        return _fail("dump", f"no such file: {args.model}")
    try:
        inputs = _parse_inputs(args.input)
        with _status(f"dumping {os.path.basename(args.model)}", args.quiet or args.json):
            summary = dump_model(
                args.model, args.output, inputs=inputs, mode=args.mode, stats=args.stats, layers=args.layer or ()
            )
    except UsageError as exc:
        return _fail("dump", str(exc))
    except BadArgument as exc:
        return _fail("dump", exc.detail or str(exc))
    except AclError as exc:  # the model does not load, or its execution (or writing its dump) failed
        return _fail("dump", exc.detail or str(exc), code=1)
    except Exception as exc:  # a fault of openacl's own: one line still (ASCEND_GLOBAL_LOG_LEVEL=0 logs the traceback)
        import logging

        logging.getLogger("openacl").debug("openacl dump failed", exc_info=True)
        return _fail("dump", f"internal error: {type(exc).__name__}: {exc}", code=1)
    if args.json:
        _emit_json(summary.__dict__)
    elif not args.quiet:
        print(
            f"{summary.files} dump files ({summary.bytes:,} bytes) of {summary.operators}/{summary.model_operators} "
            f"operators in {summary.directory}"
        )
    return 0


def _progress(disabled: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        disable=disabled,
        transient=True,
    )


def _status(text: str, disabled: bool):
    """A spinner on stderr while something runs that may take a while (nothing when disabled or piped)."""
    import contextlib

    from rich.console import Console

    console = Console(stderr=True)
    if disabled or not console.is_terminal:
        return contextlib.nullcontext()
    return console.status(text)


def _parse(args: argparse.Namespace) -> int:
    from openacl.tools.parse import find_dump_files, parse_dumps

    if not os.path.exists(args.dump):
        return _fail("parse", f"no such file or directory: {args.dump}")
    total = len(find_dump_files(args.dump))
    try:
        with _progress(args.quiet or args.json or total < 50) as progress:
            task = progress.add_task("parsing dump files", total=total)
            result = parse_dumps(args.dump, args.output, lambda done, _total: progress.update(task, completed=done))
    except OSError as exc:
        return _fail("parse", f"cannot write to {args.output}: {exc.strerror or exc}")
    if args.json:
        _emit_json(
            {
                "parsed": len(result.parsed),
                "written": [str(p) for p in result.written],
                "failed": [{"file": str(p), "reason": why} for p, why in result.failed],
            }
        )
    elif not args.quiet:
        print(f"{len(result.parsed)} dump files -> {len(result.written)} .npy files in {args.output}")
    for path, why in result.failed:
        print(f"openacl parse: {path}: {why}", file=sys.stderr)
    return 1 if result.failed else 0


def _compare(args: argparse.Namespace) -> int:
    from rich.console import Console

    from openacl.tools import compare, report
    from openacl.tools.fusion_rule import FusionRuleError

    for path in (args.dump_a, args.dump_b):
        if not os.path.exists(path):
            return _fail("compare", f"no such file or directory: {path}")
    with _progress(args.quiet or args.json) as progress:
        task = progress.add_task("comparing tensors", total=None)
        try:
            result = compare.compare_dumps(
                args.dump_a,
                args.dump_b,
                max_abs=args.max_abs,
                max_rel=args.max_rel,
                max_rel_l2=args.max_rel_l2,
                min_cosine=args.min_cosine,
                fusion_rule=args.fusion_rule,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        except FusionRuleError as exc:
            return _fail("compare", str(exc))
    if args.csv:
        try:
            report.write_csv(result, args.csv)
        except OSError as exc:
            return _fail("compare", f"cannot write {args.csv}: {exc.strerror or exc}")
    if args.json:
        _emit_json(
            {
                "rows": [row.__dict__ for row in result.rows],
                "first_divergence": result.first_divergence.__dict__ if result.first_divergence else None,
                "only_in_a": result.only_in_a,
                "only_in_b": result.only_in_b,
            }
        )
    elif not args.quiet:
        report.render(result, Console(), limit=args.limit)
    if not result.rows:
        print("openacl compare: no operator appears in both dumps", file=sys.stderr)
        return 1
    if result.compared == 0:
        print("openacl compare: no tensor could be compared (see the Note column)", file=sys.stderr)
        return 1
    if result.first_divergence is None and result.incomparable:
        print(f"openacl compare: {result.incomparable} tensor(s) could not be compared", file=sys.stderr)
        return 1
    return 1 if result.first_divergence is not None else 0


# ----- demo / bench -----


def _demo(args: argparse.Namespace) -> int:
    from openacl.demo import run_demo

    if args.trace:
        from openacl import trace

        trace.enable(args.trace)
    from pathlib import Path

    try:
        return run_demo(Path(args.out), quiet=args.quiet, as_json=args.json)
    except OSError as exc:
        return _fail("demo", f"cannot write under {args.out}: {exc.strerror or exc}")
    except RuntimeError as exc:  # a pyACL call returned an error code: the demo itself failed
        print(f"openacl demo: {exc}", file=sys.stderr)
        return 1


def benchmarks_dir() -> Path | None:
    """``benchmarks/`` of the source checkout openacl runs from (they are not installed with the package)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    directory = root / "benchmarks"
    return directory if directory.is_dir() else None


def _bench_rules(directory: Path):
    """``benchmarks/_common.py``, where the rows' rules live once: a target met, the 20 % spread, several runs."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_openacl_bench_common", directory / "_common.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  # its dataclasses look themselves up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _bench_script(script: Path, quick: bool) -> tuple[list[dict] | None, str]:
    """One benchmark script's rows (its last stdout line, JSON), or None and the last line of its stderr."""
    import subprocess

    command = [sys.executable, str(script), "--json", *(["--quick"] if quick else [])]
    done = subprocess.run(command, capture_output=True, text=True, cwd=script.parent.parent)
    try:
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (json.JSONDecodeError, IndexError):
        found = None
    if found is None:
        return None, (done.stderr.strip().splitlines() or ["no output"])[-1]
    return found, ""


def _bench(args: argparse.Namespace) -> int:
    directory = benchmarks_dir()
    if directory is None:
        return _fail("bench", "no benchmarks/ directory: run openacl from a source checkout (pip install -e .)")
    available = {p.stem: p for p in sorted(directory.glob("*.py")) if not p.name.startswith("_")}
    unknown = [name for name in args.names if name not in available]
    if unknown:
        return _fail("bench", f"no benchmark named {', '.join(unknown)} (there are: {', '.join(available)})")
    if args.runs < 1:
        return _fail("bench", f"--runs {args.runs}: at least one run")
    scripts = [available[name] for name in dict.fromkeys(args.names or available)]
    rules = _bench_rules(directory)
    runs: list[list[dict]] = []
    failed: dict[tuple[str, str], None] = {}
    with _progress(args.quiet or args.json) as progress:
        task = progress.add_task("running benchmarks", total=len(scripts) * args.runs)
        for _ in range(args.runs):  # whole runs one after another: "three runs in a row"
            rows: list[dict] = []
            for script in scripts:
                found, error = _bench_script(script, args.quick)
                if found is None:
                    failed[(script.stem, error)] = None
                else:
                    rows.extend({"benchmark": script.stem, **row} for row in found)
                progress.advance(task)
            runs.append(rows)
    combined = rules.combine_runs(runs)
    if args.json:
        _emit_json({"runs": args.runs, "rows": combined, "failed": [{"benchmark": n, "error": e} for n, e in failed]})
    elif not args.quiet:
        _print_bench(combined, args.runs, rules)
    for name, error in failed:
        print(f"openacl bench: {name} failed: {error}", file=sys.stderr)
    return 1 if failed else 0


def _print_bench(rows: list[dict], runs: int, rules) -> None:
    from rich.console import Console
    from rich.table import Table

    over = f"{rules.SPREAD_LIMIT:.0%}"
    caption = (
        f"ratio: the median of {runs} runs; spread: the runs' ratios, min-max"
        if runs > 1
        else "spread: the interleaved rounds' ratios, min-max"
    ) + f"; moved: a spread over {over} of the median"
    table = Table(title="openacl benchmarks: ours vs baseline, side by side in one run", caption=caption)
    for column in ("benchmark", "figure", "openacl", "baseline", "ratio", "target", "within", "spread"):
        table.add_column(column, justify="right" if column in ("openacl", "baseline", "ratio") else "left")
    for row in rows:
        table.add_row(
            row["benchmark"],
            row["figure"],
            row["openacl"],
            row["baseline"],
            f"{row['ratio']:.2f}",
            row["target"],
            rules.within_text(row.get("within")),
            rules.spread_text(row),
        )
    Console().print(table)


# ----- the parser -----


def _formatter(prog: str) -> argparse.HelpFormatter:
    """Help as written, as wide as the terminal. argparse reads the width through ``shutil`` (which imports bz2
    and lzma) for every parser and argument, help or not; this is the same rule without it: ``COLUMNS``, else the
    terminal of stdout, else 80; less 2, as argparse does."""
    return argparse.RawDescriptionHelpFormatter(prog, width=_columns() - 2)


def _columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _subcommand(sub, name: str, help: str, description: str, example: str, func) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=f"example:\n  {example}",
        formatter_class=_formatter,
    )
    parser.set_defaults(func=func)
    return parser


def _output_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of tables")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="openacl",
        description="Ascend pyACL's callback system in Python, on any Linux machine.",
        epilog=EXAMPLES,
        formatter_class=_formatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = _subcommand(
        sub,
        "demo",
        "run the three callback systems on the shipped model and report what happened",
        "Stream callbacks post-processing asynchronous executions, a dump to files, the same dump through "
        "dump_reg_callback, and a GE training loop with Summary and Save callbacks writing TensorBoard events "
        "and safetensors checkpoints. Outputs go under --out.",
        "openacl demo --out ./openacl-demo",
        _demo,
    )
    demo.add_argument("--out", default="openacl-demo", help="where the dumps, events and checkpoints go")
    demo.add_argument("--trace", metavar="FILE", help="also write a Chrome/Perfetto timeline of the run")
    _output_flags(demo)

    run = _subcommand(
        sub,
        "run",
        "run a pyACL program with `import acl` resolving to openacl",
        "Run SCRIPT as __main__ with `import acl` resolving to openacl's facade. Options go before SCRIPT; "
        "everything after it is the program's.",
        "openacl run --dump dump.json examples/stream_callbacks.py",
        _run,
    )
    run.add_argument("--dump", metavar="CONFIG.json", help='dump the program\'s models with this "dump" config')
    run.add_argument("--trace", metavar="FILE", help="write a Chrome/Perfetto timeline at acl.finalize or exit")
    run.add_argument("script", help="the Python program to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")

    check = _subcommand(
        sub,
        "check",
        "run a pyACL program with every check on and report its memory and lifetime bugs",
        "Run SCRIPT as `openacl run` does, with openacl check on: leaks (at acl.finalize, reset_device and "
        "exit), use after free, double free, races with queued tasks and overruns, each printed once to stderr "
        "with the program's own lines. Exit code 1 if anything was found, else the program's own. Options go "
        "before SCRIPT.",
        "openacl check --json findings.json examples/stream_callbacks.py",
        _check,
    )
    check.add_argument("--json", metavar="FILE", help="also write every finding to FILE as JSON")
    check.add_argument("script", help="the Python program to run")
    check.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")

    dump = _subcommand(
        sub,
        "dump",
        "dump one execution of an ONNX model in CANN's format",
        "Run MODEL once on random inputs of the right shape and dtype (fixed seed) or on the given .npy files, "
        "and dump every operator's tensors in CANN's dump format under OUT.",
        "openacl dump model.onnx --input input=x.npy --mode all -o ./golden",
        _dump,
    )
    dump.add_argument("model", help="an .onnx model")
    dump.add_argument("-o", "--output", required=True, help="dump_path: where the dump directory goes")
    dump.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy", help="an input's value")
    dump.add_argument("--mode", choices=("input", "output", "all"), default="output", help="dump_mode")
    dump.add_argument("--stats", action="store_true", help="statistics CSV files instead of tensors")
    dump.add_argument("--layer", nargs="+", metavar="OP", help="only these operators (by name)")
    _output_flags(dump)

    parse = _subcommand(
        sub,
        "parse",
        "convert CANN dump files to .npy, as msaccucmp convert does",
        "Convert every dump file under DUMP (a file or a directory tree) into "
        "{file}.input.{i}.npy and {file}.output.{i}.npy in OUT.",
        "openacl parse ./dump/20261202101500/0/tinynet/1/0 -o ./npy",
        _parse,
    )
    parse.add_argument("dump", help="a dump file or a directory of dump files")
    parse.add_argument("-o", "--output", required=True, help="directory for the .npy files (created if needed)")
    _output_flags(parse)

    compare = _subcommand(
        sub,
        "compare",
        "compare two dumps operator by operator and find where they diverge",
        "Pair the operators of DUMP_A (the run under test, e.g. an NPU) with DUMP_B (the golden, e.g. "
        "`openacl dump` on a CPU) and report max absolute error, max relative error and cosine similarity per "
        "tensor. The first tensor past a threshold is marked. Exit code 1 when one is.",
        "openacl compare ./npu_dump ./golden --csv diff.csv",
        _compare,
    )
    compare.add_argument("dump_a", help="the dump under test")
    compare.add_argument("dump_b", help="the golden dump")
    compare.add_argument("--csv", metavar="FILE", help="also write every row as CSV")
    compare.add_argument(
        "-f", "--fusion-rule", metavar="JSON", help="msaccucmp's fusion rule (atc --mode=1 --json) for fused ops"
    )
    compare.add_argument("--max-rel", type=float, help="max floored relative error (default per dtype)")
    compare.add_argument("--max-rel-l2", type=float, help="max relative L2 error (default per dtype)")
    compare.add_argument("--min-cosine", type=float, help="min cosine similarity (default per dtype)")
    compare.add_argument("--max-abs", type=float, default=None, help="max absolute error allowed (default none)")
    compare.add_argument("--limit", type=int, default=50, help="table rows to show (default 50)")
    _output_flags(compare)

    trace = _subcommand(
        sub,
        "trace",
        "run a pyACL program and write a timeline of its tasks, events and callbacks",
        "Run SCRIPT as `openacl run` does, recording every stream task, event, callback and wait, and write "
        "Chrome trace JSON (Perfetto opens it) to OUTPUT; print a summary. Options go before SCRIPT.",
        "openacl trace -o trace.json examples/stream_callbacks.py",
        _trace,
    )
    trace.add_argument(
        "-o", "--output", default="openacl-trace.json", help="the trace file (default openacl-trace.json)"
    )
    _output_flags(trace)
    trace.add_argument("script", help="the Python program to run")
    trace.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")

    bench = _subcommand(
        sub,
        "bench",
        "run every benchmark and print one table of figures, baselines and ratios",
        "Run each script in benchmarks/ (of the source checkout), or the ones named, and collect its rows: "
        "openacl against its baseline, measured side by side, with its target, whether it is within it, and its "
        "spread (a figure that moves more than 20 % is flagged and its median taken). --runs N runs everything N "
        "times in a row and shows each row's median and spread over the runs.",
        "openacl bench callbacks op --runs 3",
        _bench,
    )
    bench.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default all): callbacks op ...")
    bench.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    bench.add_argument(
        "--runs", type=int, default=1, metavar="N", help="whole runs in a row; each row shows its spread over them"
    )
    _output_flags(bench)
    return parser


def plain_run(argv: list[str]) -> SimpleNamespace | None:
    """``openacl run SCRIPT [ARGS]`` without options (``SCRIPT`` not an option, no ``--``): what the parser would
    return, without importing argparse and building every subcommand's parser (a tenth of a small program's
    start). None for any other command line, which the parser reads."""
    if len(argv) < 2 or argv[0] != "run" or argv[1].startswith("-") or "--" in argv:
        return None
    return SimpleNamespace(command="run", dump=None, trace=None, script=argv[1], args=argv[2:], func=_run)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = plain_run(argv) or build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
