"""The ``openacl`` command: ``demo`` (the tour), ``run`` (unmodified pyACL programs), ``parse`` (dumps to .npy).

Exit codes: 0 success, 1 the work ran and something failed, 2 bad arguments (a missing file, say).
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys

EXAMPLES = """examples:
  openacl demo
  openacl run my_pyacl_app.py --device 0
  openacl parse ./dump -o ./npy
"""


def _run(args: argparse.Namespace) -> int:
    import openacl

    script = args.script
    if not os.path.isfile(script):
        print(f"openacl run: no such file: {script}", file=sys.stderr)
        return 2
    openacl.install()
    sys.argv = [script, *args.args]
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
    return 0


def _parse(args: argparse.Namespace) -> int:
    from openacl.dump.parse import find_dump_files, parse_dumps

    if not os.path.exists(args.dump):
        print(f"openacl parse: no such file or directory: {args.dump}", file=sys.stderr)
        return 2
    total = len(find_dump_files(args.dump))
    try:
        with _progress(args.quiet or total < 50) as progress:
            task = progress.add_task("parsing dump files", total=total)
            result = parse_dumps(args.dump, args.output, lambda done, _total: progress.update(task, completed=done))
    except OSError as exc:
        print(f"openacl parse: cannot write to {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"{len(result.parsed)} dump files -> {len(result.written)} .npy files in {args.output}")
    for path, why in result.failed:
        print(f"openacl parse: {path}: {why}", file=sys.stderr)
    return 1 if result.failed else 0


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


def _demo(args: argparse.Namespace) -> int:
    from openacl.demo import run_demo

    return run_demo(callbacks=args.callbacks, quiet=args.quiet)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="openacl",
        description="Ascend pyACL's callback system in Python, on any Linux machine.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser(
        "demo",
        help="run the stream-callback tour and report what happened",
        description="Queue copies and BLOCK/NO_BLOCK callbacks on streams served by a report thread, "
        "then report ordering, threads and latency.",
        epilog="example:\n  openacl demo --callbacks 2000",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--callbacks", type=int, default=1000, help="callbacks per stream (default 1000)")
    demo.add_argument("--quiet", action="store_true", help="print only the summary line")
    demo.set_defaults(func=_demo)

    run = sub.add_parser(
        "run",
        help="run a pyACL program with `import acl` resolving to openacl",
        description="Run SCRIPT as __main__ with `import acl` resolving to openacl's facade.",
        epilog="example:\n  openacl run examples/stream_callbacks.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("script", help="the Python program to run")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the program")
    run.set_defaults(func=_run)

    parse = sub.add_parser(
        "parse",
        help="convert CANN dump files to .npy, as msaccucmp convert does",
        description="Convert every dump file under DUMP (a file or a directory tree) into "
        "{file}.input.{i}.npy and {file}.output.{i}.npy in OUT.",
        epilog="example:\n  openacl parse ./dump/20261202101500/0/tinynet/1/0 -o ./npy",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument("dump", help="a dump file or a directory of dump files")
    parse.add_argument("-o", "--output", required=True, help="directory for the .npy files (created if needed)")
    parse.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    parse.set_defaults(func=_parse)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
