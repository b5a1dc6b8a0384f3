"""Model execution and dumps against bare onnxruntime and numpy.save, measured side by side in one run.

(a) acl.mdl.execute (device buffers in and out) vs onnxruntime's own run of the same model and input,
    on a 320x320 variant of the shipped model (about 1.5 ms).                          target ratio <= 1.10
(b) a full tensor dump (dump_mode "all") of one run of a larger variant, writing more than 256 MB:
    openacl's dump (headers, files under temporary names, renames, all on disk) vs numpy.save of the
    same arrays, one .npy file per tensor. Both start from the run's values, so only writing is timed.
                                                                                        target ratio <= 1.25
(c) execute in callback mode with a callback that only counts bytes, until every chunk is delivered, on the
    512x512 variant (13-15 ms), vs its floor: onnxruntime's optimised run of the model (the outputs a program reads,
    which must not depend on the dump) plus a run with optimisations off and every intermediate exposed (the
    model's own operators' tensors).                                                    target ratio <= 1.10
(c0) the same on the 320x320 variant of (a): the dump's fixed cost per operator shows there.
(d) openacl compare of two dumps of 300 MB each (fp32 golden, a device run 1e-4 away), in dump bytes read per
    second, vs the floor: reading the same files with numpy alone (np.fromfile).        target >= 0.5 GB/s
(e) peak resident memory of one run of a ViT-B/16-sized model (86M parameters, 403 operators), each side a fresh
    process: acl.mdl.load_from_file and execute without a dump vs a plain onnxruntime session.
(f) the same for `openacl dump --layer` of one operator                                  target ratio <= 1.30
(g) the same for `openacl dump --stats` (every operator's statistics)                    target ratio <= 1.30

Usage: python benchmarks/dump.py [--quick] [--json]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _memory
import numpy as np
import onnx
import onnxruntime as ort
from _common import argument_parser, import_model_builder, interleaved, per_call, print_rows

import openacl
from openacl.dump import format as dump_format
from openacl.dump import selection
from openacl.dump import session as dump_session
from openacl.dump.config import DumpConfig
from openacl.dump.record import OpRecord
from openacl.model import model as model_mod
from openacl.onnxrt import session_options
from openacl.tools import compare, report

openacl.install()
import acl  # noqa: E402

H2D = 1


def _dataset(sizes: list[int]) -> tuple[list[int], int]:
    """Device buffers of these sizes in a new dataset: (their addresses, the dataset)."""
    dataset, ptrs = acl.mdl.create_dataset(), []
    for size in sizes:
        ptr, _ = acl.rt.malloc(size, 0)
        acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        ptrs.append(ptr)
    return ptrs, dataset


class Loaded:
    """A model loaded through acl.mdl with device buffers for its input and outputs."""

    def __init__(self, path: Path, x: np.ndarray) -> None:
        self.model_id, ret = acl.mdl.load_from_file(str(path))
        assert ret == 0, ret
        self.model = model_mod.get(self.model_id)
        self.path = path
        self.x = x
        (input_ptr,), inputs = _dataset([x.nbytes])
        _, outputs = _dataset([d.size for d in self.model.outputs])
        self._host = x.tobytes()
        acl.rt.memcpy(input_ptr, x.nbytes, acl.util.bytes_to_ptr(self._host), x.nbytes, H2D)
        self.datasets = [inputs, outputs]

    def execute(self) -> None:
        assert acl.mdl.execute(self.model_id, *self.datasets) == 0


def save_model(build, directory: Path, size: int, channels: tuple[int, int], name: str) -> Path:
    path = directory / f"{name}.onnx"
    onnx.save(build(size, channels), path)
    return path


def bench_execute(small: Loaded, n: int) -> tuple[float, float]:
    """Median per call, the two sides alternating call by call: on a noisy VM, drift hits both alike."""
    session = model_mod.Model(0, "baseline", None, "baseline", str(small.path)).session
    feeds = {"input": small.x}
    ours, base = [], []
    for _ in range(n):
        start = time.perf_counter()
        small.execute()
        middle = time.perf_counter()
        session.run(None, feeds)
        ours.append(middle - start)
        base.append(time.perf_counter() - middle)
    return statistics.median(ours), statistics.median(base)


def bench_disk_dump(big: Loaded, out: Path, rounds: int) -> tuple[float, float, int]:
    observed = big.model.observed()
    config = DumpConfig.default(str(out))
    config = DumpConfig(**{**config.__dict__, "dump_mode": "all"})
    plan = selection.plan(config, big.model.name, observed.ops)
    operators = observed.operators
    ops = [OpRecord(e.index, operators[e.index].type, operators[e.index].name, e.inputs, e.outputs) for e in plan]
    observed.prepare(ops)
    items = [item for part in observed.run([big.x]) for item in part]
    arrays = [a for _, inputs, outputs in items for a in (*inputs, *outputs) if a is not None]
    total = sum(a.nbytes for a in arrays)

    def fresh() -> None:
        """An empty directory and no dirty pages, so neither side pays for the other's writeback."""
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        os.sync()

    def ours() -> float:
        fresh()
        state = dump_session.ModelDump(dump_session.DumpSession(config, "benchmark"), ops=ops)
        start = time.perf_counter()
        step = dump_session.DumpStep(big.model.id, big.model.name, state, 0, None)
        step.start()
        step.emit(items, 0, 0)
        step.seal()
        step.wait()
        return time.perf_counter() - start

    def baseline() -> float:
        fresh()
        start = time.perf_counter()
        for i, array in enumerate(arrays):
            np.save(out / f"{i}.npy", array)
        return time.perf_counter() - start

    ours_s, base_s = interleaved(rounds, ours, baseline)
    shutil.rmtree(out, ignore_errors=True)
    return ours_s, base_s, total


def bench_callback(small: Loaded, n: int, rounds: int) -> tuple[float, float, int]:
    counted = [0]

    def count(chunk: dict) -> int:
        counted[0] += chunk["buf_len"]
        return 0

    exposed = onnx.load(small.path)
    known = {output.name for output in exposed.graph.output}
    exposed.graph.output.extend(
        onnx.ValueInfoProto(name=name) for node in exposed.graph.node for name in node.output if name not in known
    )
    options = session_options(optimize=False, prepack=False)
    session = ort.InferenceSession(exposed.SerializeToString(), options, providers=["CPUExecutionProvider"])
    plain = ort.InferenceSession(str(small.path), session_options(), providers=["CPUExecutionProvider"])
    feeds = {"input": small.x}
    names = [output.name for output in session.get_outputs()]

    def floor() -> None:
        plain.run(None, feeds)
        session.run(names, feeds)

    def ours_once() -> None:
        acl.mdl.dump_reg_callback(count, 0)
        small.execute()
        acl.mdl.dump_unreg_callback()  # returns once every chunk is delivered

    ours_s, base_s = interleaved(rounds, lambda: per_call(ours_once, n), lambda: per_call(floor, n))
    return ours_s, base_s, counted[0]


def write_compare_dumps(root: Path, total_bytes: int) -> int:
    """Two dump trees (a golden and a device run 1e-4 away) of ``total_bytes`` each: Conv-sized 4-D tensors."""
    rng = np.random.default_rng(0)
    shape = (1, 64, 96, 96)  # 2.25 MiB of float32 per tensor, an input and an output per file
    per_file = 2 * 4 * int(np.prod(shape))
    for k in range(max(total_bytes // per_file, 1)):
        golden = rng.standard_normal(shape, dtype=np.float32)
        device = golden * np.float32(1 + 1e-4)
        for side, array in (("golden", golden), ("device", device)):
            directory = root / side
            directory.mkdir(parents=True, exist_ok=True)
            name = dump_format.file_name("Conv", f"conv{k}", k + 1, 0, 1700000000000000 + k)
            with open(directory / name, "wb") as f:
                for part in dump_format.file_parts(f"conv{k}", [array], [array], 1):
                    f.write(part)
    os.sync()  # no writeback of these files competes with the measurement
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def bench_compare(root: Path, total_bytes: int, rounds: int) -> tuple[float, float, int]:
    """Seconds for ``compare_dumps`` of the two trees vs reading their files with numpy alone (the floor)."""
    size = write_compare_dumps(root, total_bytes)
    files = sorted(p for p in root.rglob("*") if p.is_file())

    def ours() -> float:
        start = time.perf_counter()
        result = compare.compare_dumps(root / "device", root / "golden")
        elapsed = time.perf_counter() - start
        assert result.first_divergence is None and result.compared == len(files), report.summary(result)
        return elapsed

    def floor() -> float:
        start = time.perf_counter()
        for path in files:
            np.fromfile(path, dtype=np.uint8)
        return time.perf_counter() - start

    ours_s, floor_s = interleaved(rounds, ours, floor)
    return ours_s, floor_s, size


def bench_memory(work: Path, rounds: int) -> dict[str, list[int]]:
    """Peak resident bytes of each program, ``rounds`` fresh processes each, the programs alternating."""
    model = work / "vit.onnx"
    onnx.save(_memory.build_vit(), model)
    dump = ["openacl", "dump", str(model), "--quiet", "-o", str(work / "vit-dump")]
    programs = {
        "onnxruntime": ["onnxruntime", str(model)],
        "acl": ["acl", str(model)],
        "layer": [*dump, "--layer", "block6_fc1_matmul"],
        "stats": [*dump, "--stats"],
    }
    peaks: dict[str, list[int]] = {name: [] for name in programs}
    for _ in range(rounds):
        for name, argv in programs.items():
            peaks[name].append(_memory.peak_rss(argv))
            shutil.rmtree(work / "vit-dump", ignore_errors=True)
    model.unlink()
    return peaks


def _memory_row(figure: str, ours: list[int], base: list[int], target: str) -> tuple:
    mib = 2**20
    return (figure, f"{statistics.median(ours) / mib:.0f} MiB", f"{statistics.median(base) / mib:.0f} MiB",
            statistics.median(ours) / statistics.median(base), target)  # fmt: skip


def main() -> int:
    args = argument_parser(__doc__).parse_args()
    n, rounds = (20, 3) if args.quick else (200, 7)
    build = import_model_builder()
    work = Path(tempfile.mkdtemp(prefix="openacl-bench-dump-"))
    acl.init()
    acl.rt.set_device(0)
    try:
        small_path = save_model(build, work, 320, (8, 16), "tinynet320")
        rng = np.random.default_rng(0)
        small = Loaded(small_path, rng.standard_normal((1, 3, 320, 320)).astype(np.float32))
        exec_ours, exec_base = bench_execute(small, 10 * n)

        big_path = save_model(build, work, 1024, (16, 32), "tinynet1024")
        big = Loaded(big_path, rng.standard_normal((1, 3, 1024, 1024)).astype(np.float32))
        dump_ours, dump_base, dumped = bench_disk_dump(big, work / "dump", 3 if args.quick else 5)

        mid_path = save_model(build, work, 512, (16, 32), "tinynet512")
        mid_x = rng.standard_normal((1, 3, 512, 512)).astype(np.float32)
        acl.mdl.init_dump()  # defaults: every operator's outputs, to the callback
        cb_ours, cb_base, counted = bench_callback(Loaded(mid_path, mid_x), max(n // 10, 5), rounds)
        cb0_ours, cb0_base, _ = bench_callback(Loaded(small_path, small.x), max(n // 4, 5), rounds)
        acl.mdl.finalize_dump()
        per_op = (cb0_ours - cb0_base) / len(small.model.proto.graph.node)
        cmp_ours, cmp_floor, cmp_bytes = bench_compare(work / "compare", (60 if args.quick else 300) << 20, rounds)
        peaks = bench_memory(work, 1 if args.quick else 3)
    finally:
        acl.rt.reset_device(0)
        acl.finalize()
        shutil.rmtree(work, ignore_errors=True)

    rows = [
        (
            "(a) execute, the 320x320 model",
            f"{exec_ours * 1e3:.3f} ms",
            f"{exec_base * 1e3:.3f} ms",
            exec_ours / exec_base,
            "<= 1.10",
        ),
        (
            f"(b) tensor dump to disk, {dumped / 2**20:.0f} MiB",
            f"{dumped / dump_ours / 2**20:.0f} MiB/s",
            f"{dumped / dump_base / 2**20:.0f} MiB/s",
            dump_ours / dump_base,
            "<= 1.25",
        ),
        (
            "(c) callback dump, the 512x512 model",
            f"{cb_ours * 1e3:.3f} ms",
            f"{cb_base * 1e3:.3f} ms",
            cb_ours / cb_base,
            "<= 1.10",
        ),
        (
            "(c0) callback dump, the 320x320 model",
            f"{cb0_ours * 1e3:.3f} ms",
            f"{cb0_base * 1e3:.3f} ms",
            cb0_ours / cb0_base,
            "",
        ),
        (
            f"(d) compare, 2 x {cmp_bytes / 2 / 2**20:.0f} MiB dumps",
            f"{cmp_bytes / cmp_ours / 1e9:.2f} GB/s",
            f"{cmp_bytes / cmp_floor / 1e9:.2f} GB/s",
            cmp_ours / cmp_floor,
            ">= 0.5 GB/s",
        ),
        _memory_row("(e) peak memory, ViT-B/16 execute", peaks["acl"], peaks["onnxruntime"], ""),
        _memory_row("(f) peak memory, ViT-B/16 dump --layer", peaks["layer"], peaks["onnxruntime"], "<= 1.30"),
        _memory_row("(g) peak memory, ViT-B/16 dump --stats", peaks["stats"], peaks["onnxruntime"], "<= 1.30"),
    ]
    spread = ", ".join(f"{name} {min(v) / 2**20:.0f}-{max(v) / 2**20:.0f}" for name, v in peaks.items())
    notes = [
        f"(e-g) peak MiB over {len(peaks['acl'])} processes each: {spread}",
        f"(c) bytes counted by the callback: {counted:,}",
        f"(c0) fixed cost of a callback dump: {per_op * 1e6:.0f} µs per operator (header, chunks, the dump thread)",
        f"(a) the 320x320 model runs {exec_base * 1e3:.1f} ms; (c) the 512x512 one {cb_base * 1e3:.1f} ms; (c0) the "
        f"320x320 one {cb0_base * 1e3:.1f} ms (a row's name stays the same from run to run, so --runs adds them up)",
    ]
    print_rows(rows, args.json, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
