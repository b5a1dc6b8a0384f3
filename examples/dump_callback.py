"""Dump every operator of one model execution through a dump callback, the pyACL way.

Runs unmodified on an NPU (with an .om model) or under openacl (with an .onnx model):

    openacl run examples/dump_callback.py src/openacl/data/tinynet.onnx

The callback receives each dump file as chunks; it reassembles them and, at the end, the program checks
each file's 8-byte header length against its size.
"""

import struct
import sys

import numpy as np

import acl

ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEM_MALLOC_HUGE_FIRST = 0
DEVICE_ID = 0

files = {}


def on_chunk(chunk):
    data = acl.util.ptr_to_bytes(chunk["data_buf"], chunk["buf_len"])
    files.setdefault(chunk["file_name"], bytearray()).extend(data)
    return 0


def check(ret, what):
    if ret != 0:
        raise SystemExit(f"{what} failed: {ret}")


def make_dataset(desc, count, size_of):
    dataset = acl.mdl.create_dataset()
    buffers = []
    for i in range(count):
        size = size_of(desc, i)
        ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "malloc")
        _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(ptr, size))
        check(ret, "add_dataset_buffer")
        buffers.append((ptr, size))
    return dataset, buffers


def destroy_dataset(dataset, buffers):
    for i, (ptr, _) in enumerate(buffers):
        check(acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i)), "destroy_data_buffer")
        check(acl.rt.free(ptr), "free")
    check(acl.mdl.destroy_dataset(dataset), "destroy_dataset")


def main(model_path):
    check(acl.init(), "init")
    check(acl.rt.set_device(DEVICE_ID), "set_device")
    context, ret = acl.rt.create_context(DEVICE_ID)
    check(ret, "create_context")
    check(acl.mdl.init_dump(), "init_dump")
    check(acl.mdl.dump_reg_callback(on_chunk, 0), "dump_reg_callback")

    model_id, ret = acl.mdl.load_from_file(model_path)
    check(ret, "load_from_file")
    desc = acl.mdl.create_desc()
    check(acl.mdl.get_desc(desc, model_id), "get_desc")
    inputs, in_buffers = make_dataset(desc, acl.mdl.get_num_inputs(desc), acl.mdl.get_input_size_by_index)
    outputs, out_buffers = make_dataset(desc, acl.mdl.get_num_outputs(desc), acl.mdl.get_output_size_by_index)

    ptr, size = in_buffers[0]
    host = np.random.default_rng(0).standard_normal(size // 4).astype(np.float32).tobytes()
    check(acl.rt.memcpy(ptr, size, acl.util.bytes_to_ptr(host), size, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
    check(acl.mdl.execute(model_id, inputs, outputs), "execute")

    acl.mdl.dump_unreg_callback()
    check(acl.mdl.finalize_dump(), "finalize_dump")
    check(acl.mdl.unload(model_id), "unload")
    destroy_dataset(inputs, in_buffers)
    destroy_dataset(outputs, out_buffers)
    acl.mdl.destroy_desc(desc)
    check(acl.rt.destroy_context(context), "destroy_context")
    check(acl.rt.reset_device(DEVICE_ID), "reset_device")
    check(acl.finalize(), "finalize")

    total = 0
    for name, data in sorted(files.items()):
        (header_len,) = struct.unpack_from("<Q", data)
        assert 8 + header_len <= len(data), name
        total += len(data)
        print(f"  {name.rsplit('/', 1)[-1]}: {len(data)} bytes")
    print(f"{len(files)} dump files, {total} bytes through the dump callback")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "model.om")
