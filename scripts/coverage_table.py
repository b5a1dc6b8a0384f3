"""Write the pyACL coverage tables into docs/coverage.md: every function of pyACL, module by module, [x] or [ ] and why.

    python scripts/coverage_table.py [SPEC]     (default: ../shared/spec/pyacl_surface.md, the reference notes)

The function list is the whole of §2 of the notes (every pyACL function, with how many of Ascend's sample files
call it); what openacl has is what the facade exports. A function openacl lacks shows its reason, taken from
:data:`REASONS`, the one table of reasons. The tables go between the ``coverage`` markers in docs/coverage.md;
tests/test_coverage_table.py checks that they match the facade and that every missing function has a reason.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SPEC = ROOT.parent / "shared" / "spec" / "pyacl_surface.md"
START, END = "<!-- coverage:start -->", "<!-- coverage:end -->"
MODULES = ("acl", "acl.rt", "acl.mdl", "acl.op", "acl.media", "acl.util", "acl.prof", "acl.blas", "acl.fv", "acl.himpi")

_OP_DESC_ARRAYS = (
    "read the address and the array of the op descs create_and_get_op_desc gives for a failed AI Core task, "
    "which openacl cannot name"
)
_CORE_LIMITS = "limits on a chip's cube and vector cores, which the simulated device has not"

# Why openacl lacks a function: glob patterns over qualified names, the first match wins. One table for all.
REASONS: dict[str, str] = {
    # acl (top level)
    "acl.get_tensor_desc_address": _OP_DESC_ARRAYS,
    "acl.get_tensor_desc_by_index": _OP_DESC_ARRAYS,
    "acl.get_device_capability": "hardware feature flags of a real chip; no simulated answer would be true",
    "acl.get_cann_attribute*": "feature attributes of an installed CANN; openacl installs none",
    "acl.get_cann_version": "versions of installed CANN packages (runtime, compiler, driver); openacl installs none",
    "acl.get_version_str": "versions of installed CANN packages (runtime, compiler, driver); openacl installs none",
    # acl.rt
    "acl.rt.*overflow_status": "AI Core float-overflow flags; nothing sets them in CPU execution",
    "acl.rt.set_ts_device": "chooses between AI Core and AI Vector task schedulers, which a CPU has not",
    "acl.rt.get_device_utilization_rate": "utilisation counters of real AI Cores, vector cores and AI CPUs",
    "acl.rt.get_device_info": "per-chip hardware attributes (core counts, caches, board ids)",
    "acl.rt.get_device_capability": "hardware feature flags of a real chip; no simulated answer would be true",
    "acl.rt.get_devices_topo": "the HCCS/PCIe topology between real chips",
    "acl.rt.device_get_uuid": "a chip's hardware UUID",
    "acl.rt.*res_limit": _CORE_LIMITS,
    "acl.rt.*stream_res_in_current_thread": _CORE_LIMITS,
    "acl.rt.get_res_in_current_thread": _CORE_LIMITS,
    "acl.rt.*mem_uce*": "repair of uncorrectable memory errors (USE_MDL builds only)",
    "acl.rt.memcpy_async_with_condition": "conditional and descriptor copies built for device-side task launch",
    "acl.rt.*memcpy_desc*": "conditional and descriptor copies built for device-side task launch",
    "acl.rt.memcpy_async_with_desc": "conditional and descriptor copies built for device-side task launch",
    "acl.rt.ipc_*": "sharing device memory between processes; each openacl process has its own devices",
    "acl.rt.value_w*": "device-memory semaphores written and waited on by the hardware scheduler",
    "acl.rt.get_stream_available_num": "openacl does not limit streams, so no remaining count would be true",
    "acl.rt.get_event_avail_num": "openacl does not limit events, so no remaining count would be true",
    "acl.rt.get_thread_last_task_id": "task ids of the hardware task scheduler",
    "acl.rt.cmo_async": "cache maintenance operations of the device's L2 cache",
    "acl.rt.set_op_execute_timeout_v2": "needs the hardware's timeout granularity, which the notes do not record",
    "acl.rt.get_op_timeout_interval": "needs the hardware's timeout granularity, which the notes do not record",
    "acl.rt.*group*": "AI Core groups of a chip (USE_MDL builds only)",
    "acl.rt.notify_*_key": "sharing notifies between processes; each openacl process has its own devices",
    "acl.rt.notify_set_import_pid": "sharing notifies between processes; each openacl process has its own devices",
    "acl.rt.*binary*": "loads AI Core / AI CPU kernel binaries, which cannot run on a CPU",
    "acl.rt.*function*": "loads AI Core / AI CPU kernel binaries, which cannot run on a CPU",
    "acl.rt.register_cpu_func": "loads AI Core / AI CPU kernel binaries, which cannot run on a CPU",
    "acl.rt.*kernel*": "launches AI Core kernels, which cannot run on a CPU",
    "acl.rt.allocator_*": "user allocators for operator workspaces; pyACL's C trampoline returns NULL anyway",
    # other modules
    "acl.mdl.load_from_*_with_q": "binds a model's inputs and outputs to hardware queues (USE_MDL builds only); "
    "openacl has no queues, and load_with_config's queue load types return ACL_ERROR_FEATURE_UNSUPPORTED",
    "acl.mdl.create_and_get_op_desc": "names the operator of a failed AI Core task; onnxruntime reports that a run "
    "failed, never which operator",
    "acl.op.*kernel*": "registers and launches AI Core kernels, which cannot run on a CPU",
    "acl.op.*register_compile_func": "registers AI Core kernel compilers, which cannot run on a CPU",
    "acl.op.*_dump_args": "dumps the argument blocks of AI Core kernels as they launch; openacl launches none",
    "acl.op.*": "not written yet",
    "acl.media.*hist*": "histogram operators exist only in pyACL builds with USE_MDL",
    "acl.media.*lut_map*": "LUT operators exist only in pyACL builds with USE_MDL",
    "acl.media.dvpp_vpc_pyr_down_async": "VPC's pyramid down-sampling: not written yet",
    "acl.media.*": "DVPP, JPEG, PNG, VDEC and VENC (acl.media) are the DVPP issue's work",
    "acl.fv.*": "the feature-vector search engine of a real chip; not planned",
    "acl.himpi.*": "Hi-MPI media interfaces of Ascend 310B chips; acl.media covers the same features",
}

_SECTION = re.compile(r"^### 2\.\d+ (acl(?:\.[a-z]+)?)\b")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class Function:
    name: str  # qualified: acl.rt.memcpy
    samples: int  # sample files of Ascend/samples that call it (0 where the notes give none)


def spec_functions(spec: Path) -> list[Function]:
    """Every function of the notes' §2 tables, in the notes' order."""
    found: dict[str, Function] = {}
    module = None
    columns: list[str] = []
    for line in spec.read_text(encoding="utf-8").splitlines():
        if line.startswith("## ") or line.startswith("### "):
            match = _SECTION.match(line)
            module = match.group(1) if match else None
            columns = []
            continue
        if module is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in _CELL_SPLIT.split(line.strip())[1:-1]]
        if not columns:
            columns = [c.lower() for c in cells]
            continue
        if not cells[0].startswith("`"):  # the |---| row
            continue
        name = f"{module}.{cells[0].strip('`')}"
        count = cells[columns.index("samples")] if "samples" in columns else ""
        samples = int(count) if count.isdigit() else 0
        if name not in found:  # a media function listed in two families counts once
            found[name] = Function(name, samples)
    return list(found.values())


def facade_names() -> set[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from openacl import acl

    names = {f"acl.{n}" for n in acl.__all__ if n not in acl.SUBMODULES}
    for sub in acl.SUBMODULES:
        names |= {f"acl.{sub}.{n}" for n in getattr(acl, sub).__all__}
    return names


def module_of(name: str) -> str:
    return name.rpartition(".")[0]


def reason(name: str) -> str | None:
    for pattern, text in REASONS.items():
        if fnmatch.fnmatchcase(name, pattern):
            return text
    return None


def counts(functions: list[Function], implemented: set[str]) -> dict[str, tuple[int, int, int, int]]:
    """Per module: (pyACL functions, in openacl, used by samples, used by samples and in openacl)."""
    result = {}
    for module in MODULES:
        mine = [f for f in functions if module_of(f.name) == module]
        used = [f for f in mine if f.samples]
        result[module] = (
            len(mine),
            sum(f.name in implemented for f in mine),
            len(used),
            sum(f.name in implemented for f in used),
        )
    return result


def render(functions: list[Function], implemented: set[str]) -> str:
    per_module = counts(functions, implemented)
    lines = [
        "| module | pyACL functions | in openacl | used by samples | used by samples, in openacl |",
        "|---|---|---|---|---|",
    ]
    totals = [0, 0, 0, 0]
    for module, row in per_module.items():
        lines.append(f"| `{module}` | {' | '.join(str(n) for n in row)} |")
        totals = [a + b for a, b in zip(totals, row, strict=True)]
    lines.append(f"| **all** | {' | '.join(f'**{n}**' for n in totals)} |")
    for module in MODULES:
        mine = sorted((f for f in functions if module_of(f.name) == module), key=lambda f: f.name)
        total, have, _, _ = per_module[module]
        lines += ["", f"<details><summary><code>{module}</code>: {have} of {total}</summary>", ""]
        lines += ["| function | samples | in openacl | why not |", "|---|---|---|---|"]
        for f in mine:
            mark = "[x]" if f.name in implemented else "[ ]"
            why = "" if f.name in implemented else (reason(f.name) or "")
            lines.append(f"| `{f.name}` | {f.samples or ''} | {mark} | {why} |")
        lines += ["", "</details>"]
    return "\n".join(lines)


def main() -> int:
    spec = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SPEC
    functions = spec_functions(spec)
    implemented = facade_names()
    readme = ROOT / "docs" / "coverage.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    readme.write_text(f"{head}{START}\n{render(functions, implemented)}\n{END}{tail}", encoding="utf-8")
    known = {f.name for f in functions}
    extra = sorted(implemented - known)
    unexplained = sorted(f.name for f in functions if f.name not in implemented and reason(f.name) is None)
    print(f"{len(implemented & known)} of {len(known)} pyACL functions in openacl")
    if extra:
        print(f"exported but not pyACL's: {', '.join(extra)}")
    if unexplained:
        print(f"missing without a reason: {', '.join(unexplained)}")
    return 1 if extra or unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
