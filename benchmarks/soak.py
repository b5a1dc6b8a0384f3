"""Soak: millions of stream callbacks and a long dump loop, with resident memory measured at start and end.

(a) callbacks: 4 streams served by 2 report threads take BLOCK and NO_BLOCK callbacks in batches of 10,000
    (with a copy per batch), each batch synchronized; every batch also creates, subscribes, uses and destroys
    one more stream and event (handle tables, subscriptions). Every callback must run exactly once.
(b) dumps: the shipped model executed again and again with every operator dumped, alternately through a
    dump callback (that reads each chunk) and to disk (files removed as they come).
For each phase, RSS (VmRSS of /proc/self/status), live Python objects and the regions of openacl's checked
address space are read once the phase is warm (after its first 5 %) and at its end: memory that stays flat
has end / start close to 1.                                                    target ratio <= 1.10

Usage: python benchmarks/soak.py [--quick] [--json] [--callbacks N] [--dumps N]
"""

from __future__ import annotations

import gc
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from _common import ROOT, argument_parser, print_rows

import openacl
from openacl.runtime import memory

openacl.install()
import acl  # noqa: E402

sys.path.insert(0, str(ROOT))
from tests.model_io import ModelIO, demo_input  # noqa: E402

BLOCK, NO_BLOCK = 1, 0
H2D = 1
BATCH = 10_000
TARGET = "<= 1.10"


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class Phase:
    """RSS and live-object counts at the start (once warm) and the end of a phase."""

    def __init__(self) -> None:
        self.cold = rss_mib()
        self.start = self.end = self.peak = self.cold
        self.objects_start = self.objects_end = 0
        self.regions_start = self.regions_end = 0

    def warm(self) -> None:
        gc.collect()
        self.start = self.peak = rss_mib()
        self.objects_start = len(gc.get_objects())
        self.regions_start = len(memory.space.regions())

    def sample(self) -> None:
        self.peak = max(self.peak, rss_mib())

    def finish(self) -> None:
        gc.collect()
        self.end = rss_mib()
        self.peak = max(self.peak, self.end)
        self.objects_end = len(gc.get_objects())
        self.regions_end = len(memory.space.regions())


def soak_callbacks(total: int) -> tuple[Phase, int, int, float]:
    """Returns the phase, callbacks launched, callbacks run and seconds."""
    acl.rt.set_device(0)
    ctx, _ = acl.rt.create_context(0)
    streams = [acl.rt.create_stream()[0] for _ in range(4)]
    stop = threading.Event()

    def serve(args):
        acl.rt.set_context(args[0])
        while not stop.is_set():
            acl.rt.process_report(100)

    tids = [acl.util.start_thread(serve, [ctx])[0] for _ in range(2)]
    for i, s in enumerate(streams):
        acl.rt.subscribe_report(tids[i % 2], s)
    counter = [0]

    def count(_):
        counter[0] += 1  # the churn streams are all served by tids[0]: one writer

    counts = [[0] for _ in tids]  # one counter per report thread: each is written by one thread only

    def count_on(slot):
        slot[0] += 1

    payload = bytes(4096)
    dev, _ = acl.rt.malloc(4096, 0)
    phase = Phase()
    batches = max(total // BATCH, 1)
    warm_after = max(batches // 20, 1)
    launched = 0
    start = time.perf_counter()
    for batch in range(batches):
        for i in range(BATCH):
            s = streams[i % 4]
            acl.rt.launch_callback(count_on, counts[(i % 4) % 2], i & 1, s)
        launched += BATCH
        acl.rt.memcpy_async(dev, 4096, acl.util.bytes_to_ptr(payload), 4096, H2D, streams[batch % 4])
        # churn: a stream, an event and a subscription made, used and destroyed
        extra, _ = acl.rt.create_stream()
        event, _ = acl.rt.create_event()
        acl.rt.subscribe_report(tids[0], extra)
        acl.rt.launch_callback(count, None, BLOCK, extra)
        acl.rt.record_event(event, extra)
        for s in streams:
            acl.rt.synchronize_stream(s)
        acl.rt.synchronize_event(event)
        acl.rt.unsubscribe_report(tids[0], extra)
        acl.rt.destroy_event(event)
        acl.rt.destroy_stream(extra)
        if batch + 1 == warm_after:
            phase.warm()
        elif batch % 10 == 0:
            phase.sample()
    seconds = time.perf_counter() - start
    phase.finish()
    ran = sum(c[0] for c in counts)
    churn_ok = counter[0] == batches
    for i, s in enumerate(streams):
        acl.rt.unsubscribe_report(tids[i % 2], s)
    stop.set()
    for tid in tids:
        acl.util.stop_thread(tid)
    acl.rt.free(dev)
    for s in streams:
        acl.rt.destroy_stream(s)
    acl.rt.destroy_context(ctx)
    acl.rt.reset_device(0)
    return phase, launched, ran if churn_ok else -1, seconds


def soak_dumps(total: int) -> tuple[Phase, int, int, int, int, float]:
    """Returns the phase, executions, executions that returned 0, files delivered (callback files counted by
    their last chunk, disk files as found), files expected and seconds."""
    from openacl.dump.reader import read_dump

    acl.init()
    acl.rt.set_device(0)
    tmp = Path(tempfile.mkdtemp(prefix="openacl-soak-"))
    out = tmp / "dump"
    out.mkdir()
    config = tmp / "dump.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(out), "dump_list": [{"model_name": "tinynet"}]}}))
    files = [0]

    def on_chunk(chunk):
        acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
        files[0] += chunk["is_last_chunk"]

    acl.mdl.init_dump()
    acl.mdl.set_dump(str(config))
    io = ModelIO()
    ops = len(io_ops(io))
    io.load_input(demo_input())
    phase = Phase()
    warm_after = max(total // 20, 1)
    ok = 0
    start = time.perf_counter()
    for run in range(total):
        to_callback = run % 2 == 0
        if to_callback:
            acl.mdl.dump_reg_callback(on_chunk, 0)
        ok += acl.mdl.execute(io.model_id, io.inputs[0], io.outputs[0]) == 0
        if to_callback:
            acl.mdl.dump_unreg_callback()
        else:
            written = [p for p in out.rglob("*") if p.is_file()]
            if run % 50 == 1:
                for path in written:
                    read_dump(path)  # now and then, check the files are whole
            files[0] += len(written)
            for path in written:
                path.unlink()
        if run + 1 == warm_after:
            phase.warm()
        elif run % 20 == 0:
            phase.sample()
    seconds = time.perf_counter() - start
    phase.finish()
    acl.mdl.finalize_dump()
    acl.mdl.unload(io.model_id)
    acl.finalize()
    shutil.rmtree(tmp, ignore_errors=True)
    return phase, total, ok, files[0], total * ops, seconds


def io_ops(io: ModelIO) -> list:
    from openacl.model import model as model_mod

    return model_mod.get(io.model_id).observed().ops


def main() -> int:
    parser = argument_parser(__doc__, quick="200,000 callbacks and 100 dumps (a smoke run)")
    parser.add_argument("--callbacks", type=int, help="callbacks to run (default 5,000,000)")
    parser.add_argument("--dumps", type=int, help="dumped executions (default 2,000)")
    args = parser.parse_args()
    n_callbacks = args.callbacks or (200_000 if args.quick else 5_000_000)
    n_dumps = args.dumps or (100 if args.quick else 2_000)

    cb, launched, ran, cb_seconds = soak_callbacks(n_callbacks)
    dp, runs, ok, delivered, expected, dp_seconds = soak_dumps(n_dumps)

    rows = [
        ("(a) callbacks run / launched", f"{ran:,}", f"{launched:,}", ran / launched, "== 1.00"),
        ("(a) callbacks per second", f"{launched / cb_seconds:,.0f}", "-", 1.0, ""),
        ("(a) RSS MiB, end vs start", f"{cb.end:.1f}", f"{cb.start:.1f}", cb.end / cb.start, TARGET),
        ("(a) live Python objects, end vs start", f"{cb.objects_end:,}", f"{cb.objects_start:,}",
         cb.objects_end / max(cb.objects_start, 1), TARGET),
        ("(a) known memory regions, end vs start", f"{cb.regions_end:,}", f"{cb.regions_start:,}",
         cb.regions_end / max(cb.regions_start, 1), TARGET),
        ("(b) dumped executions ok / run", f"{ok:,}", f"{runs:,}", ok / runs, "== 1.00"),
        ("(b) dump files delivered / expected", f"{delivered:,}", f"{expected:,}", delivered / expected, "== 1.00"),
        ("(b) RSS MiB, end vs start", f"{dp.end:.1f}", f"{dp.start:.1f}", dp.end / dp.start, TARGET),
        ("(b) live Python objects, end vs start", f"{dp.objects_end:,}", f"{dp.objects_start:,}",
         dp.objects_end / max(dp.objects_start, 1), TARGET),
        ("(b) known memory regions, end vs start", f"{dp.regions_end:,}", f"{dp.regions_start:,}",
         dp.regions_end / max(dp.regions_start, 1), TARGET),
    ]  # fmt: skip
    notes = [
        f"(a) {launched:,} callbacks in {cb_seconds:.1f} s; RSS cold {cb.cold:.1f} MiB, peak {cb.peak:.1f} MiB",
        f"(b) {runs:,} executions in {dp_seconds:.1f} s, half to a callback, half to disk; "
        f"RSS cold {dp.cold:.1f} MiB, peak {dp.peak:.1f} MiB",
    ]
    print_rows(rows, args.json, [] if args.json else notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
