"""Turn CANN dump files into ``.npy`` files, as msaccucmp's ``convert -t npy`` does (spec section 3.1, steps 3-4).

For each dump file ``{name}`` it writes ``{name}.input.{i}.npy`` and ``{name}.output.{i}.npy`` (plus
``{name}.l1buffer.{i}.bin`` / ``{name}.space.{i}.bin`` for raw buffers and workspaces, which openacl never
writes) flat into the output directory, with mode 0600. A file stored under a hashed name gets its original name
back from the ``mapping.csv`` next to it. Files that fail are listed, one path a line, in
``convert_failed_file_list.txt`` in the output directory (removed at the start of each run, as msaccucmp does).

Where openacl differs from msaccucmp, on purpose, so parsed values equal onnxruntime's bit for bit:

* Arrays keep the header's exact shape and dtype. A scalar comes out with shape ``()`` (msaccucmp: ``(1,)``);
  a tensor with a 0 dimension keeps its dtype (msaccucmp: ``float64``). ``DT_UNDEFINED`` tensors come out as
  ``int8`` of shape ``(size,)`` and ``DT_BF16`` ones as ``float32``, as msaccucmp does.
* A file whose output names would overwrite those of an earlier file (same name in two directories) fails
  instead of silently replacing them.
* An output name longer than the OS allows falls back to the dump file's name on disk (its hashed name).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from openacl.atomicfile import replacing, write_text
from openacl.dump.format import MAX_NAME_BYTES
from openacl.dump.reader import FAILED_LIST_NAME, DumpFormatError, Names, find_dump_files, read_dump

__all__ = ["FAILED_LIST_NAME", "ParseResult", "find_dump_files", "parse_dumps"]


@dataclass
class ParseResult:
    """What :func:`parse_dumps` did: dump files parsed, files written, and ``(file, reason)`` for failures."""

    parsed: list[pathlib.Path] = field(default_factory=list)
    written: list[pathlib.Path] = field(default_factory=list)
    failed: list[tuple[pathlib.Path, str]] = field(default_factory=list)


def _save(path: pathlib.Path, write: Callable[[object], None]) -> None:
    with replacing(path, "wb", permissions=0o600) as f:
        write(f)


def _outputs(base: str, dump) -> list[tuple[str, Callable[[object], None]]]:
    """``(file name, writer)`` for every array and raw block of one parsed dump, in msaccucmp's naming."""
    planned: list[tuple[str, Callable[[object], None]]] = []
    for kind, arrays in (("input", dump.inputs), ("output", dump.outputs)):
        for i, array in enumerate(arrays):
            planned.append((f"{base}.{kind}.{i}.npy", lambda f, a=array: np.save(f, a, allow_pickle=False)))
    for kind, blocks in (("l1buffer", dump.buffers), ("space", dump.workspaces)):
        for i, block in enumerate(blocks):
            planned.append((f"{base}.{kind}.{i}.bin", lambda f, b=block: f.write(b)))
    return planned


def _is_within(path: pathlib.Path, directory: pathlib.Path) -> bool:
    try:
        path.resolve().relative_to(directory)
    except ValueError:
        return False
    return True


def parse_dumps(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    progress: Callable[[int, int], None] | None = None,
) -> ParseResult:
    """Convert every dump file at ``src`` (a file or a directory tree) into ``.npy`` files in ``out``.

    Creates ``out`` if needed and leaves out any files already inside it. Calls ``progress(done, total)`` after
    each dump file. A file that cannot be read or parsed, or whose outputs cannot be written, goes into
    ``ParseResult.failed`` with the reason and into ``out/convert_failed_file_list.txt``; the others still go on.
    """
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    out_resolved = out.resolve()
    failed_list = out / FAILED_LIST_NAME
    with contextlib.suppress(FileNotFoundError):
        failed_list.unlink()

    names = Names()
    files = [path for path in find_dump_files(src, names) if not _is_within(path, out_resolved)]
    result = ParseResult()
    owner: dict[str, pathlib.Path] = {}  # output name -> the dump file that produced it
    total = len(files)
    for done, path in enumerate(files, 1):
        try:
            base = names.original(path)
            dump = read_dump(path)
            planned = _outputs(base, dump)
            if any(len(os.fsencode(name)) > MAX_NAME_BYTES for name, _ in planned):
                planned = _outputs(path.name, dump)
            for name, _ in planned:
                if name in owner:
                    raise FileExistsError(f"output {name} was already written for {owner[name]}")
            written = []
            try:
                for name, write in planned:
                    target = out / name
                    _save(target, write)
                    written.append(target)
            except BaseException:
                for target in written:
                    with contextlib.suppress(OSError):
                        target.unlink()
                raise
        except (DumpFormatError, OSError, ValueError) as exc:
            result.failed.append((path, str(exc)))
        else:
            result.parsed.append(path)
            result.written.extend(written)
            owner.update((name, path) for name, _ in planned)
        if progress is not None:
            progress(done, total)
    if result.failed:
        write_text(failed_list, "".join(f"{path}\n" for path, _ in result.failed))
    return result
