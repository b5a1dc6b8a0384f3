"""``openacl check``: each buggy program (one bug each) is reported at its own lines; the right ones report nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from tests.aipp_models import detector_model
from tests.conformance.test_examples import ROOT
from tests.gear_models import nhwc_classifier
from tests.media.images import jpeg_bytes, photo
from tests.media.video_clips import encode_clip
from tests.tools.convnet import conv_bn_relu_net

from openacl.model.model import DEMO_MODEL

PROGRAMS = ROOT / "tests" / "conformance" / "programs"
BUGGY = PROGRAMS / "check"


def check(tmp_path: Path, program: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    report = tmp_path / "findings.json"
    report.unlink(missing_ok=True)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "check", "--json", report.name, str(program), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**full_env, **env},
    )
    return result, json.loads(report.read_text())["findings"] if report.exists() else []


def only_finding(tmp_path: Path, program: Path, kind: str, *args: str, **env: str):
    """Run ``program`` under check: it fails (exit 1) with exactly one finding, of ``kind``; that and the run."""
    result, found = check(tmp_path, program, *args, **env)
    assert result.returncode == 1, result.stdout + result.stderr
    [finding] = found
    assert finding["kind"] == kind
    return finding, result


def line_of(program: Path, text: str, after: int = 0) -> int:
    """The number of the first line (after line ``after``) that contains ``text``."""
    lines = program.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if i > after and text in line)


def lines(finding: dict, program: Path) -> dict[str, int]:
    """Each site's innermost line, where it is in ``program``."""
    return {
        label: frames[0]["line"]
        for label, frames in finding["sites"].items()
        if frames and Path(frames[0]["file"]).resolve() == program
    }


@pytest.fixture
def picture(tmp_path) -> Path:
    path = tmp_path / "picture.jpg"
    path.write_bytes(jpeg_bytes(photo(500, 375, seed=3)))
    return path


def test_leak_names_the_allocation(tmp_path):
    program = BUGGY / "leak_input_buffer.py"
    finding, result = only_finding(tmp_path, program, "leak", str(DEMO_MODEL))
    assert finding["count"] == 1 and finding["size"] == 3 * 64 * 64 * 4
    assert lines(finding, program) == {"allocated": line_of(program, "# BUG")}
    assert result.stderr.count("openacl check: leak: 1 device memory allocation still alive at reset_device(0)") == 1


def test_use_after_free_names_the_access_the_free_and_the_allocation(tmp_path):
    program = BUGGY / "use_after_free.py"
    finding, _ = only_finding(tmp_path, program, "use-after-free")
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "freed": line_of(program, "acl.rt.free(dev)"),
        "allocated": line_of(program, "acl.rt.malloc(SIZE"),
    }


def test_double_free_names_both_frees_and_the_allocation(tmp_path, picture):
    program = BUGGY / "double_free.py"
    finding, _ = only_finding(tmp_path, program, "double-free", str(picture))
    assert lines(finding, program) == {
        "freed again": line_of(program, "acl.media.dvpp_free(ptr)"),
        "first freed": line_of(program, "acl.media.dvpp_free(in_dev)"),
        "allocated": line_of(program, "acl.media.dvpp_malloc(jpeg.size)"),
    }


def test_overrun_of_the_vpc_sample_names_the_copy_and_the_allocation(tmp_path, picture):
    program = PROGRAMS / "vpc_jpeg_resize.py"
    finding, result = only_finding(tmp_path, program, "overrun", str(picture), str(tmp_path / "out.yuv"))
    assert "vpc sample passed" in result.stdout  # under check the copy is cut too: the program runs on
    assert finding["size"] == 512 * 384 * 3 // 2
    assert lines(finding, program) == {
        "access": line_of(program, "acl.rt.memcpy(in_dev, picture_size"),
        "allocated": line_of(program, "dvpp_malloc(in_size)", after=line_of(program, "def vpc_resize")),
    }


def test_without_findings_the_exit_status_is_the_programs(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("import acl, sys\nacl.init()\nacl.finalize()\nsys.exit(3)\n")
    result, found = check(tmp_path, script)
    assert (result.returncode, found) == (3, [])
    assert result.stderr.strip().endswith("openacl check: no findings")


def test_regression_json_report_followed_the_programs_chdir(tmp_path):
    """``--json findings.json`` was resolved when the program ended, so a program that changed its working
    directory got the report written there, not where the command was run."""
    (tmp_path / "elsewhere").mkdir()
    script = tmp_path / "app.py"
    script.write_text("import os\nimport acl\nacl.init()\nptr, _ = acl.rt.malloc_host(64)\nos.chdir('elsewhere')\n")
    result, found = check(tmp_path, script)
    assert result.returncode == 1, result.stdout + result.stderr
    assert [f["kind"] for f in found] == ["leak"]
    assert not (tmp_path / "elsewhere" / "findings.json").exists()


def test_openacl_check_env_checks_any_process(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("import acl\nacl.init()\nptr, _ = acl.rt.malloc_host(64)\nacl.finalize()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    result = subprocess.run(
        [sys.executable, "-m", "openacl", "run", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "OPENACL_CHECK": "1"},
    )
    assert result.returncode == 0
    assert "openacl check: leak: 1 host memory allocation still alive at acl.finalize" in result.stderr
    assert f"allocated at {script}:3 in <module>" in result.stderr


# Programs left out of the clean list, and why: each contains a real bug of a kind check reports.
NOT_CLEAN = {
    "exception_callback.py": "frees memory a queued copy still reads, on purpose (it exercises the exception "
    "callback): a use after free",
    "late_finalizers.py": "its __del__ methods run in the order module globals die: reset_device (in the resource's) "
    "reclaims the model's buffers before the model's own __del__ frees them: leaks, then double frees",
    "acllite_logs.py": "acllite's image destructor frees DVPP memory after reset_device gave it back, as acllite "
    "programs do (the log test needs that line): a double free",
}


def _clean_programs(tmp_path: Path, picture: Path) -> dict[str, tuple[Path, list[str]]]:
    model = str(DEMO_MODEL)
    clip = tmp_path / "clip.h264"
    clip.write_bytes(b"".join(encode_clip("libx264", 6, 192, 128)))
    frames = tmp_path / "frames.nv12"
    np.zeros(128 * 128 * 3 // 2 * 3, np.uint8).tofile(frames)
    net = tmp_path / "net.onnx"
    onnx.save(conv_bn_relu_net(blocks=2, size=16), net)
    image = tmp_path / "image.bin"
    np.zeros((1, 3, 16, 16), np.float32).tofile(image)
    (tmp_path / "dump").mkdir()
    config = tmp_path / "acl.json"
    config.write_text(json.dumps({"dump": {"dump_path": str(tmp_path / "dump"), "dump_list": [{"model_name": "net"}]}}))
    detector_model(tmp_path / "yolov3.onnx")
    nhwc_classifier(tmp_path / "classifier.onnx")
    for folder in ("detect", "classify", "blas"):
        (tmp_path / folder).mkdir()
    programs = {
        "examples/stream_callbacks.py": [],
        "examples/dump_callback.py": [model],
        "examples/ge_train_loop.py": [str(tmp_path / "ge")],
        "examples/gepy_train_loop.py": [str(tmp_path / "gepy")],
        "acllite_video.py": [str(clip)],
        "device_report.py": [],
        "dump_classify.py": [str(net), str(config), str(image)],
        "dvpp_classify.py": [model, str(picture)],
        "dvpp_detect_crop.py": [str(picture), str(tmp_path)],
        "single_op_add.py": [],
        "vdec_classify.py": [str(clip), model],
        "venc_file.py": [str(frames), "128", "128", str(tmp_path / "out.h264")],
        "static_aipp_detect.py": [str(tmp_path / "yolov3.om"), str(picture), str(tmp_path / "detect")],
        "nhwc_hw_classify.py": [str(tmp_path / "classifier.om"), str(tmp_path / "classify")],
        "streams_and_memory.py": [],
        "streams_with_events.py": [],
        "blas_gemm.py": [str(tmp_path / "blas")],
        "prof_classify.py": [str(net), str(tmp_path / "prof"), "2"],
        "prof_subscribe.py": [str(net), "2"],
        "async_callback_results.py": [model, "3"],
        "stream_wait_pipeline.py": [],
        **{f"gepy/{p.name}": [] for p in sorted((PROGRAMS / "gepy").glob("*.py"))},
    }
    found = {p.name for p in PROGRAMS.glob("*.py")} | {f"gepy/{p.name}" for p in (PROGRAMS / "gepy").glob("*.py")}
    assert found - set(programs) - set(NOT_CLEAN) == {"vpc_jpeg_resize.py"}, "a new program: list it here"
    return {
        name: (ROOT / name if name.startswith("examples/") else PROGRAMS / name, args)
        for name, args in programs.items()
    }


def test_the_right_programs_and_examples_have_no_findings(tmp_path, picture):
    failures = []
    for name, (program, args) in _clean_programs(tmp_path, picture).items():
        result, found = check(tmp_path, program, *args)
        if found or result.returncode != 0:
            failures.append(f"{name}: exit {result.returncode}\n{result.stderr[-3000:]}")
    assert not failures, "\n\n".join(failures)


def test_race_names_the_read_and_the_task_it_races(tmp_path):
    program = BUGGY / "race_output_before_sync.py"
    finding, _ = only_finding(tmp_path, program, "race", str(DEMO_MODEL))
    assert "memcpy reads memory that execute_async of model 1 queued on stream" in finding["what"]
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "queued": line_of(program, "acl.mdl.execute_async(model_id"),
    }


def test_uninitialized_names_the_read_and_the_allocation(tmp_path):
    program = BUGGY / "uninitialized_input.py"
    finding, _ = only_finding(tmp_path, program, "uninitialized", str(DEMO_MODEL))
    assert finding["what"] == "input 0 of model 1 reads device memory that nothing wrote"
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "allocated": line_of(program, "in_dev, ret = acl.rt.malloc(in_size, 0)"),
    }


def test_misuse_destroy_of_a_stream_the_host_never_synchronized(tmp_path):
    program = BUGGY / "destroy_unsynchronized_stream.py"
    finding, _ = only_finding(tmp_path, program, "misuse")
    assert "1 task(s) queued that the host never waited for (memcpy_async first)" in finding["what"]
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "queued": line_of(program, "ret = acl.rt.memcpy_async(dev"),
    }


def test_misuse_a_callback_no_thread_will_run_is_found_at_synchronize(tmp_path):
    program = BUGGY / "callback_thread_stopped.py"
    finding, result = only_finding(tmp_path, program, "misuse")
    assert "batches done: [0, 1]" in result.stdout  # the last batch's callback never ran
    assert "1 callback(s) launched on stream" in finding["what"] and "exited without running them" in finding["what"]
    loop = line_of(program, "# BUG")
    assert lines(finding, program) == {
        "access": line_of(program, "acl.rt.synchronize_stream(stream)", after=loop),
        "queued": line_of(program, "ret = acl.rt.launch_callback(", after=loop),
    }


def test_misuse_a_stream_used_while_another_devices_context_is_current(tmp_path):
    program = BUGGY / "stream_of_other_device.py"
    finding, result = only_finding(tmp_path, program, "misuse")
    assert "round trip equal: True" in result.stdout
    assert "stream 2 of device 0 used while a context of device 1 is current" in finding["what"]
    assert lines(finding, program) == {
        "access": line_of(program, "ret = acl.rt.memcpy_async(first.buffer"),
        "created": line_of(program, "self.stream, ret = acl.rt.create_stream()"),
    }


def test_leak_of_a_report_subscription_names_the_subscribe(tmp_path):
    program = BUGGY / "leak_report_subscription.py"
    result, found = check(tmp_path, program)
    assert result.returncode == 1, result.stdout + result.stderr
    [finding] = found
    assert (finding["kind"], finding["what"]) == ("leak", "1 report subscription still alive at destroy_stream")
    assert lines(finding, program) == {"created": line_of(program, "acl.rt.subscribe_report(tid, stream)")}


def test_a_gepy_session_alive_at_exit_without_ge_finalize_is_a_leak_and_one_let_go_is_not(tmp_path):
    """Under OPENACL_CHECK=1 in plain Python the exit report comes before the main module's globals are dropped;
    `openacl check` drops the program's objects first (as Python ends them), so a session let go is not reported."""
    script = tmp_path / "app.py"
    script.write_text(
        "import openacl\nopenacl.install()\nfrom ge.ge_global import GeApi\nfrom ge.session import Session\n"
        "GeApi().ge_initialize({'ge.exec.deviceId': '0'})\nsession = Session()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENACL_", "ASCEND_"))}
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, env={**env, "OPENACL_CHECK": "1"}
    )
    assert result.returncode == 0, result.stderr
    assert "openacl check: leak: 1 GE session still alive at exit" in result.stderr
    assert f"created at {script}:6 in <module>" in result.stderr
    result, found = check(tmp_path, script)
    assert (result.returncode, found) == (0, []), result.stderr


def test_race_between_two_streams_names_both_copies(tmp_path):
    program = BUGGY / "race_two_streams.py"
    finding, _ = only_finding(tmp_path, program, "race")
    assert finding["size"] == 4096
    assert "memcpy_async queued on stream" in finding["what"] and "reads memory that memcpy_async" in finding["what"]
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "queued": line_of(program, "ret = acl.rt.memcpy_async(dev_in"),
    }


def test_two_streams_ordered_by_events_run_clean(tmp_path):
    result, found = check(tmp_path, PROGRAMS / "streams_with_events.py")
    assert (result.returncode, found) == (0, []), result.stderr
    assert "pipeline passed" in result.stdout


def test_race_of_a_vpc_output_read_before_synchronize(tmp_path):
    program = BUGGY / "race_vpc_output_before_sync.py"
    finding, _ = only_finding(tmp_path, program, "race")
    assert "memcpy reads memory that dvpp resize queued on stream" in finding["what"]
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "queued": line_of(program, "acl.media.dvpp_vpc_resize_async(channel"),
    }


def test_uninitialized_operator_input_names_the_execute_and_the_allocation(tmp_path):
    program = BUGGY / "uninitialized_op_input.py"
    finding, _ = only_finding(tmp_path, program, "uninitialized")
    assert finding["what"] == "operator Add input 1 reads device memory that nothing wrote"
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "allocated": line_of(program, "x2_dev, ret = acl.rt.malloc"),
    }


def test_overrun_of_a_decode_output_names_the_decode_and_the_allocation(tmp_path, picture):
    program = BUGGY / "overrun_jpegd_output.py"
    finding, result = only_finding(tmp_path, program, "overrun", str(picture))
    assert "failed ret=100000" in result.stdout  # refused as without check: a task's range must fit
    assert finding["what"].startswith("output picture runs ")
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "allocated": line_of(program, "out_dev, ret = acl.media.dvpp_malloc"),
    }


def test_use_after_free_of_memory_a_callback_freed(tmp_path):
    program = BUGGY / "free_in_callback_then_read.py"
    finding, _ = only_finding(tmp_path, program, "use-after-free")
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "freed": line_of(program, "acl.rt.free(dev_ptr)"),  # in the callback, on the report thread
        "allocated": line_of(program, "acl.rt.malloc(SIZE"),
    }


def test_use_after_free_of_memory_freed_while_a_copy_was_queued(tmp_path):
    program = BUGGY / "free_while_copy_queued.py"
    finding, _ = only_finding(tmp_path, program, "use-after-free")
    assert "memcpy_async queued on stream" in finding["what"]
    assert lines(finding, program) == {
        "access": line_of(program, "acl.rt.memcpy_async(dst"),
        "freed": line_of(program, "# BUG"),
        "allocated": line_of(program, "src, ret = acl.rt.malloc"),
    }


def test_race_in_worker_threads_is_one_finding_at_the_workers_lines(tmp_path):
    program = BUGGY / "race_in_worker_thread.py"
    finding, result = only_finding(tmp_path, program, "race", str(DEMO_MODEL))
    assert finding["count"] == 2  # one per worker thread, reported once
    assert lines(finding, program) == {
        "access": line_of(program, "# BUG"),
        "queued": line_of(program, "acl.mdl.execute_async(model_id"),
    }
    assert result.stderr.count("openacl check: race:") == 1


def test_double_free_after_realloc_names_the_old_buffer(tmp_path):
    program = BUGGY / "double_free_after_realloc.py"
    finding, _ = only_finding(tmp_path, program, "double-free")
    assert lines(finding, program) == {
        "freed again": line_of(program, "# BUG"),
        "first freed": line_of(program, "acl.rt.free(old)"),
        "allocated": line_of(program, "old, ret = acl.rt.malloc"),
    }


def test_sites_through_a_helper_class_name_the_helper_and_the_programs_line(tmp_path):
    program = BUGGY / "use_after_free_through_helper.py"
    helper = BUGGY / "device_buffer.py"
    finding, _ = only_finding(tmp_path, program, "use-after-free")
    sites = {
        label: [(Path(f["file"]).name, f["line"]) for f in frames[:2]] for label, frames in finding["sites"].items()
    }
    assert sites == {
        "access": [
            (helper.name, line_of(helper, "self.ptr, self.size, ACL_MEMCPY_DEVICE_TO_HOST")),
            (program.name, line_of(program, "# BUG")),
        ],
        "freed": [
            (helper.name, line_of(helper, "acl.rt.free(self.ptr)")),
            (program.name, line_of(program, "buffer.release()")),
        ],
        "allocated": [
            (helper.name, line_of(helper, "acl.rt.malloc(size")),
            (program.name, line_of(program, "DeviceBuffer(256)")),
        ],
    }
