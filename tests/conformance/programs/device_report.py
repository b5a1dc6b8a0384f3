"""A small program in the style of an acllite-based sample: it reports on the device and checks its memory.

It logs through acl.app_log (with its own [file:line function] prefix, as acllite's logger does), chooses an
image alignment from the SoC name, and checks that acl.rt.get_mem_info follows an allocation.
Only `import acl` is used, so the program runs unchanged on an Ascend device.
"""

import inspect
import os
import sys

import acl

ACL_ERROR, ACL_INFO = 3, 1
DEVICE_ID = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_DDR_MEM, ACL_HBM_MEM = 0, 1
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2


def log(level, text):
    caller = inspect.stack()[1]
    where = f"[{os.path.basename(caller.filename)}:{caller.lineno} {caller.function}]"
    acl.app_log(level, f"{where} {text}")
    print(f"{'ERROR' if level == ACL_ERROR else 'INFO'} {text}")


def check(ret, what):
    if ret != 0:
        log(ACL_ERROR, f"{what} failed, ret {ret}")
        sys.exit(1)


def jpeg_alignment(soc):
    """Width and height alignment of decoded pictures, which differs between SoC generations."""
    if soc == "Ascend310P3":
        return 64, 16
    return 128, 16


class DeviceReport:
    def __init__(self, device_id):
        self.device_id = device_id
        self.context = None

    def init(self):
        check(acl.init(), "acl.init")
        check(acl.rt.set_device(self.device_id), "set_device")
        self.context, ret = acl.rt.create_context(self.device_id)
        check(ret, "create_context")
        log(ACL_INFO, "resources ready")

    def run(self):
        soc = acl.get_soc_name()
        if soc is None:
            log(ACL_ERROR, "the SoC name is unknown")
            return 1
        width_align, height_align = jpeg_alignment(soc)
        print(f"soc {soc} align {width_align}x{height_align}")

        free_before, total, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
        check(ret, "get_mem_info")
        hbm_free, hbm_total, ret = acl.rt.get_mem_info(ACL_HBM_MEM)
        check(ret, "get_mem_info")
        print(f"memory free {free_before} total {total} hbm {hbm_free}/{hbm_total}")

        size = 4 * 1024 * 1024
        dev_ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "malloc")
        free_after, _, ret = acl.rt.get_mem_info(ACL_DDR_MEM)
        check(ret, "get_mem_info")
        print(f"allocated {free_before - free_after} bytes")

        data = bytes(range(256)) * 16
        check(acl.rt.memcpy(dev_ptr, size, acl.util.bytes_to_ptr(data), len(data), ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
        back = bytes(len(data))
        check(
            acl.rt.memcpy(acl.util.bytes_to_ptr(back), len(back), dev_ptr, len(data), ACL_MEMCPY_DEVICE_TO_HOST),
            "memcpy",
        )
        print(f"round trip {'ok' if back == data else 'wrong'}")
        check(acl.rt.free(dev_ptr), "free")

        ret = acl.rt.set_device(1000)
        print(f"bad device ret {ret} last error {acl.rt.get_last_error(0)} then {acl.rt.get_last_error(0)}")
        message = acl.get_recent_err_msg()
        print(f"recent message mentions set_device: {message is not None and 'set_device' in message}")
        return 0

    def release(self):
        check(acl.rt.destroy_context(self.context), "destroy_context")
        check(acl.rt.reset_device(self.device_id), "reset_device")
        check(acl.finalize(), "acl.finalize")
        log(ACL_INFO, "resources released")


def main():
    report = DeviceReport(DEVICE_ID)
    report.init()
    try:
        return report.run()
    finally:
        report.release()


if __name__ == "__main__":
    sys.exit(main())
