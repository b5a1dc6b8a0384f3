"""``openacl demo``: the three callback systems at work on the model the package ships.

1. Stream callbacks: on two streams served by one report thread, each step copies an input to device
   memory, executes the model asynchronously, copies the result back, and queues a BLOCK callback that
   post-processes it (reads it, checks it against onnxruntime's own answer), as pyACL's async sample does.
2. A dump of one execution to files, in CANN's format (``set_dump``).
3. The same execution dumped through ``dump_reg_callback``: chunks counted, files reassembled, compared with
   the files of (2) byte for byte but for the timestamps.
4. A GE training loop (linear regression with Assign updates) whose Summary and Save callbacks are the
   ready sinks: TensorBoard events and safetensors checkpoints.

Everything is written as a pyACL / GE program would be, through ``acl`` and ``openacl.ge``.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np

from openacl import acl, ge, lazy
from openacl.atomicfile import write_text
from openacl.dump.reader import read_dump
from openacl.model.model import DEMO_MODEL

ort = lazy.module("onnxruntime")
rich_console = lazy.module("rich.console")
rich_table = lazy.module("rich.table")

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
ACL_CALLBACK_BLOCK = 1
STEPS_PER_STREAM = 24


def _check(ret: int, what: str) -> None:
    if ret != 0:
        raise RuntimeError(f"{what} returned {ret}")


def _reference(inputs: list[np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(str(DEMO_MODEL), providers=["CPUExecutionProvider"])
    return [session.run(["probabilities"], {"input": x})[0] for x in inputs]


class _Buffers:
    """Device input/output buffers and their datasets for one in-flight execution."""

    def __init__(self, desc: int) -> None:
        self.in_size = acl.mdl.get_input_size_by_index(desc, 0)
        self.out_sizes = [acl.mdl.get_output_size_by_index(desc, i) for i in range(acl.mdl.get_num_outputs(desc))]
        self.dev_in, _ = acl.rt.malloc(self.in_size, ACL_MEM_MALLOC_HUGE_FIRST)
        self.dev_out = [acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)[0] for size in self.out_sizes]
        self.host_out, _ = acl.rt.malloc_host(self.out_sizes[0])
        self.inputs = acl.mdl.create_dataset()
        acl.mdl.add_dataset_buffer(self.inputs, acl.create_data_buffer(self.dev_in, self.in_size))
        self.outputs = acl.mdl.create_dataset()
        for ptr, size in zip(self.dev_out, self.out_sizes, strict=True):
            acl.mdl.add_dataset_buffer(self.outputs, acl.create_data_buffer(ptr, size))


def stream_callbacks(model_id: int, desc: int, context: int) -> dict:
    """Section 1: asynchronous executions post-processed by BLOCK callbacks on a report thread."""
    streams = [acl.rt.create_stream()[0] for _ in range(2)]
    exit_flag = threading.Event()

    def report_loop(args: list) -> None:
        acl.rt.set_context(args[0])
        while not exit_flag.is_set():
            acl.rt.process_report(50)

    report_tid, ret = acl.util.start_thread(report_loop, [context])
    _check(ret, "start_thread")
    for stream in streams:
        _check(acl.rt.subscribe_report(report_tid, stream), "subscribe_report")

    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((1, 3, 64, 64)).astype(np.float32) for _ in range(2 * STEPS_PER_STREAM)]
    host_inputs = [x.tobytes() for x in inputs]
    want = _reference(inputs)
    results: dict[int, tuple[bool, int]] = {}
    order: list[list[int]] = [[] for _ in streams]
    threads: set[int] = set()

    def post_process(user_data: tuple[int, int, _Buffers]) -> None:
        step, lane, buffers = user_data
        threads.add(threading.get_ident())
        data = acl.util.ptr_to_bytes(buffers.host_out, buffers.out_sizes[0])
        probabilities = np.frombuffer(data, np.float32).reshape(1, 10)
        results[step] = (bool(np.array_equal(probabilities, want[step])), int(probabilities.argmax()))
        order[lane].append(step)

    started = time.perf_counter()
    in_flight = []
    for step, x in enumerate(host_inputs):
        lane = step % len(streams)
        stream = streams[lane]
        buffers = _Buffers(desc)
        in_flight.append(buffers)
        ptr = acl.util.bytes_to_ptr(x)
        _check(
            acl.rt.memcpy_async(buffers.dev_in, buffers.in_size, ptr, len(x), ACL_MEMCPY_HOST_TO_DEVICE, stream),
            "memcpy_async",
        )
        _check(acl.mdl.execute_async(model_id, buffers.inputs, buffers.outputs, stream), "execute_async")
        _check(
            acl.rt.memcpy_async(
                buffers.host_out,
                buffers.out_sizes[0],
                buffers.dev_out[0],
                buffers.out_sizes[0],
                ACL_MEMCPY_DEVICE_TO_HOST,
                stream,
            ),
            "memcpy_async",
        )
        _check(acl.rt.launch_callback(post_process, (step, lane, buffers), ACL_CALLBACK_BLOCK, stream), "callback")
    for stream in streams:
        _check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    elapsed = time.perf_counter() - started
    for stream in streams:
        _check(acl.rt.unsubscribe_report(report_tid, stream), "unsubscribe_report")
    exit_flag.set()
    _check(acl.util.stop_thread(report_tid), "stop_thread")
    for stream in streams:
        acl.rt.destroy_stream(stream)
    correct = sum(ok for ok, _ in results.values())
    in_order = all(lane_steps == sorted(lane_steps) for lane_steps in order)
    return {
        "executions": len(inputs),
        "callbacks_run": len(results),
        "matching_onnxruntime": correct,
        "in_stream_order": in_order,
        "on_report_thread": threads == {report_tid},
        "seconds": round(elapsed, 3),
        "ok": correct == len(inputs) and in_order and threads == {report_tid},
    }


def _dump_config(path: Path, dump_path: Path) -> str:
    write_text(path, json.dumps({"dump": {"dump_path": str(dump_path), "dump_list": [{"model_name": "tinynet"}]}}))
    return str(path)


def _execute_once(x: np.ndarray) -> None:
    """Load the shipped model, run it once on ``x`` synchronously, unload it (its dump settings come at load)."""
    model_id, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
    _check(ret, "load_from_file")
    desc = acl.mdl.create_desc()
    acl.mdl.get_desc(desc, model_id)
    buffers = _Buffers(desc)
    data = x.tobytes()
    _check(acl.rt.memcpy(buffers.dev_in, buffers.in_size, acl.util.bytes_to_ptr(data), len(data), 1), "memcpy")
    _check(acl.mdl.execute(model_id, buffers.inputs, buffers.outputs), "execute")
    acl.mdl.destroy_desc(desc)
    _check(acl.mdl.unload(model_id), "unload")


def dumps(out: Path) -> tuple[dict, dict]:
    """Sections 2 and 3: one execution dumped to files, then the same through a dump callback."""
    x = np.random.default_rng(11).standard_normal((1, 3, 64, 64)).astype(np.float32)
    dump_path = out / "dump"
    dump_path.mkdir(parents=True, exist_ok=True)
    _check(acl.mdl.init_dump(), "init_dump")
    _check(acl.mdl.set_dump(_dump_config(out / "dump.json", dump_path)), "set_dump")
    _execute_once(x)
    _check(acl.mdl.finalize_dump(), "finalize_dump")
    files = sorted(p for p in dump_path.rglob("*") if p.is_file())
    disk = {
        "files": len(files),
        "bytes": sum(p.stat().st_size for p in files),
        "operators": len({p.name.split(".")[1] for p in files}),
        "directory": str(files[0].parent) if files else str(dump_path),
    }

    chunks: list[int] = []
    reassembled: dict[str, bytearray] = {}

    def on_chunk(chunk: dict) -> int:
        chunks.append(chunk["buf_len"])
        data = acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
        reassembled.setdefault(chunk["file_name"], bytearray()).extend(data)
        return 0

    _check(acl.mdl.init_dump(), "init_dump")
    _check(acl.mdl.dump_reg_callback(on_chunk, 0), "dump_reg_callback")
    _execute_once(x)
    acl.mdl.dump_unreg_callback()
    _check(acl.mdl.finalize_dump(), "finalize_dump")
    on_disk = {_untimed(p.name): _strip_time(p.read_bytes()) for p in files}
    through_callback = {_untimed(Path(n).name): _strip_time(bytes(d)) for n, d in reassembled.items()}
    callback = {
        "files": len(reassembled),
        "chunks": len(chunks),
        "bytes": sum(chunks),
        "same_as_disk": on_disk == through_callback,
    }
    disk["ok"] = disk["files"] == disk["operators"] > 0
    callback["ok"] = callback["same_as_disk"] and callback["files"] == disk["files"]
    return disk, callback


def _untimed(name: str) -> str:
    return name.rsplit(".", 1)[0]  # drop the µs timestamp: two runs differ only there


def _strip_time(data: bytes) -> bytes:
    dumped = read_dump(data)
    dumped.header.dump_time = 0
    return dumped.header.SerializeToString() + b"".join(a.tobytes() for a in dumped.inputs + dumped.outputs)


def ge_training(out: Path, steps: int = 120, n: int = 64) -> dict:
    """Section 4: a GE training loop with Summary and Save callbacks writing the ready sinks."""
    rng = np.random.default_rng(0)
    true_w = np.array([[2.0], [-3.0], [0.5]], np.float32)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = (x @ true_w + 1.0).astype(np.float32)

    train = ge.Graph("train_step")
    gx = train.data("x", index=0, shape=[n, 3], dtype="float32")
    gy = train.data("y", index=1, shape=[n, 1], dtype="float32")
    w = train.variable("w", value=np.zeros((3, 1), np.float32))
    b = train.variable("b", value=np.zeros(1, np.float32))
    err = train.op("Sub", [train.op("Add", [train.op("MatMul", [gx, w]), b]), gy])
    loss = train.op("ReduceMean", [train.op("Mul", [err, err])], name="loss", keepdims=0)
    lr_2_n = train.const("lr_2_n", np.float32(0.1 * 2.0 / n))
    grad_w = train.op("MatMul", [train.op("Transpose", [gx]), err])
    grad_b = train.op("Mul", [train.op("ReduceMean", [err], axes=[0], keepdims=0), train.const("n", np.float32(n))])
    train.assign(w, train.op("Sub", [w, train.op("Mul", [grad_w, lr_2_n])]))
    train.assign(b, train.op("Sub", [b, train.op("Mul", [grad_b, lr_2_n])]))
    train.summary("loss[:Scalar]", loss)
    train.summary("w[:Histogram]", w)
    train.set_outputs([loss])
    checkpoint = ge.Graph("checkpoint")
    checkpoint.save([checkpoint.variable("w"), checkpoint.variable("b")])

    _check(ge.ge_initialize({"ge.exec.deviceId": "0"}), "ge_initialize")
    summaries = ge.TensorBoardSummaryWriter(out / "tensorboard")
    checkpoints = ge.SafetensorsCheckpointWriter(out / "checkpoints", keep=3)
    counts = {"Summary": 0, "Save": 0}

    def counted(key: str, sink):
        def callback(graph_id: int, params: dict) -> int:
            counts[key] += 1
            return sink(graph_id, params)

        return callback

    try:
        session = ge.Session({"ge.graphRunMode": "1"})
        _check(session.register_callback_func("Summary", counted("Summary", summaries)), "RegisterCallBackFunc")
        _check(session.register_callback_func("Save", counted("Save", checkpoints)), "RegisterCallBackFunc")
        _check(session.add_graph(1, train), "add_graph")
        _check(session.add_graph(2, checkpoint), "add_graph")
        losses = []
        for step in range(steps):
            outputs, ret = session.run_graph(1, [x, y])
            _check(ret, "run_graph")
            losses.append(float(outputs[0]))
            if (step + 1) % 40 == 0:
                _check(session.run_graph(2, [])[1], "run_graph")
        values, ret = session.get_variables(["w", "b"])
        _check(ret, "get_variables")
        learned_w = values[0]
    finally:
        summaries.close()
        checkpoints.close()
        ge.ge_finalize()
    kept = [p.name for p in checkpoints.checkpoints(2)]
    return {
        "steps": steps,
        "loss_first": round(losses[0], 4),
        "loss_last": float(f"{losses[-1]:.3g}"),
        "summary_callbacks": counts["Summary"],
        "save_callbacks": counts["Save"],
        "checkpoints_kept": kept,
        "w": [round(float(v), 3) for v in learned_w.ravel()],
        "ok": losses[-1] < 0.01 * losses[0] and counts["Summary"] == steps and len(kept) == 3,
    }


def run_demo(out: Path = Path("openacl-demo"), quiet: bool = False, as_json: bool = False) -> int:
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    _check(acl.init(), "acl.init")
    try:
        _check(acl.rt.set_device(0), "set_device")
        context, ret = acl.rt.create_context(0)
        _check(ret, "create_context")
        model_id, ret = acl.mdl.load_from_file(str(DEMO_MODEL))
        _check(ret, "load_from_file")
        desc = acl.mdl.create_desc()
        _check(acl.mdl.get_desc(desc, model_id), "get_desc")
        stream = stream_callbacks(model_id, desc, context)
        acl.mdl.destroy_desc(desc)
        _check(acl.mdl.unload(model_id), "unload")
        disk, callback = dumps(out)
        acl.rt.destroy_context(context)
        acl.rt.reset_device(0)
    finally:
        acl.finalize()
    training = ge_training(out / "ge")
    elapsed = time.perf_counter() - started
    report = {"stream_callbacks": stream, "dump_to_files": disk, "dump_callback": callback, "ge_training": training}
    ok = all(section["ok"] for section in report.values())
    report["seconds"] = round(elapsed, 2)
    report["out"] = str(out)
    report["ok"] = ok
    if as_json:
        print(json.dumps(report, indent=2))
        return 0 if ok else 1
    console = rich_console.Console()
    if not quiet:
        _print_report(console, report)
    verdict = "all checks passed" if ok else "SOME CHECKS FAILED"
    console.print(f"openacl demo: 3 callback systems in {elapsed:.1f} s: {verdict}")
    return 0 if ok else 1


def _mark(ok: bool) -> str:
    return "[green]ok[/green]" if ok else "[red]FAILED[/red]"


def _print_report(console, report: dict) -> None:
    s, d, c, g = (report[k] for k in ("stream_callbacks", "dump_to_files", "dump_callback", "ge_training"))
    table = rich_table.Table(title=f"openacl demo ({DEMO_MODEL.name}, outputs under {report['out']})", show_lines=True)
    table.add_column("callback system")
    table.add_column("what happened")
    table.add_column("check", justify="center")
    table.add_row(
        "stream callbacks",
        f"{s['executions']} execute_async on 2 streams, each post-processed by a BLOCK callback on one report "
        f"thread in {s['seconds']} s; {s['matching_onnxruntime']}/{s['executions']} results equal onnxruntime's; "
        f"stream order {'kept' if s['in_stream_order'] else 'BROKEN'}",
        _mark(s["ok"]),
    )
    table.add_row(
        "dump to files",
        f"{d['files']} files, {d['bytes']:,} bytes, {d['operators']} operators in {d['directory']}",
        _mark(d["ok"]),
    )
    table.add_row(
        "dump callback",
        f"{c['files']} files in {c['chunks']} chunks, {c['bytes']:,} bytes through dump_reg_callback; "
        f"{'identical to' if c['same_as_disk'] else 'DIFFERENT FROM'} the files but for the timestamps",
        _mark(c["ok"]),
    )
    table.add_row(
        "GE Summary / Save",
        f"{g['steps']} training steps, loss {g['loss_first']} -> {g['loss_last']}; {g['summary_callbacks']} Summary "
        f"callbacks to TensorBoard, {g['save_callbacks']} Save callbacks, checkpoints kept {g['checkpoints_kept']}",
        _mark(g["ok"]),
    )
    console.print(table)
    out = report["out"]
    last = g["checkpoints_kept"][-1] if g["checkpoints_kept"] else "2-0.safetensors"
    commands = [
        f"openacl parse {d['directory']} -o {out}/npy",
        f"openacl compare {d['directory']} {d['directory']}",
        f"tensorboard --logdir {out}/ge/tensorboard",
        f"python -c \"from safetensors.numpy import load_file; print(load_file('{out}/ge/checkpoints/{last}'))\"",
    ]
    console.print("Look at them:")
    for command in commands:
        console.print(f"  {command}", markup=False, soft_wrap=True, highlight=False)
