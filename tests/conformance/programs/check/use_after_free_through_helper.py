"""A program built on a small acllite-style helper class (device_buffer.py, beside it), with one bug: the buffer is
released, then downloaded.

    python use_after_free_through_helper.py

Under ``openacl check`` each site names the helper's line and, below it, this program's line that called it.
"""

import numpy as np
from device_buffer import DeviceBuffer

import acl

DEVICE_ID = 0


def main():
    acl.init()
    acl.rt.set_device(DEVICE_ID)
    buffer = DeviceBuffer(256)
    buffer.upload(np.arange(256, dtype=np.uint8))
    buffer.release()
    _, ret = buffer.download()  # BUG: released already
    print(f"download: ret={ret}")
    acl.rt.reset_device(DEVICE_ID)
    acl.finalize()


if __name__ == "__main__":
    main()
