"""openacl.lazy: heavy libraries load where first used, once, from any thread; and start-up loads none of them."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
import threading
import uuid

import numpy as np
import pytest

from openacl import dtypes, lazy

# The libraries a program that never touches models, operators, DVPP, dumps, sinks or tables must not load.
HEAVY = ["ml_dtypes", "onnx", "onnxruntime", "av", "PIL", "google.protobuf", "rich", "tensorboardX", "safetensors"]


@pytest.fixture
def counting_module(tmp_path, monkeypatch):
    """A fresh module on ``sys.path`` that appends to a list each time its body runs; (name, runs, gate)."""
    name = f"lazy_probe_{uuid.uuid4().hex}"
    runs: list[str] = []
    gate = threading.Event()
    gate.set()
    monkeypatch.setattr(sys, f"_{name}", (runs, gate), raising=False)
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            f"""
            import sys, threading
            _runs, _gate = sys._{name}
            _runs.append(threading.current_thread().name)
            _gate.wait(30)
            VALUE = object()
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, runs, gate
    sys.modules.pop(name, None)


def test_a_proxy_imports_on_its_first_attribute_read_and_keeps_the_attribute(counting_module):
    name, runs, _ = counting_module
    proxy = lazy.module(name)
    assert not lazy.loaded(proxy) and runs == []
    value = proxy.VALUE
    assert lazy.loaded(proxy) and len(runs) == 1
    assert value is sys.modules[name].VALUE
    assert proxy.VALUE is value and len(runs) == 1
    assert "VALUE" in vars(proxy), "a read attribute is a plain attribute of the proxy afterwards"


def test_naming_repr_and_dunder_reads_do_not_import(counting_module):
    name, runs, _ = counting_module
    proxy = lazy.module(name)
    assert repr(proxy) == f"<lazy module {name!r}>"
    assert not hasattr(proxy, "__wrapped__")
    assert proxy.__name__ == name
    assert runs == [] and not lazy.loaded(proxy)


def test_a_missing_attribute_is_an_attribute_error_of_the_real_module(counting_module):
    name, _, _ = counting_module
    with pytest.raises(AttributeError, match="NOT_THERE"):
        getattr(lazy.module(name), "NOT_THERE")  # noqa: B009 (the read under test)


def test_threads_reading_a_proxy_at_once_import_the_module_once(counting_module):
    name, runs, gate = counting_module
    gate.clear()  # the first importer stays inside the module's body until the others have started
    proxy = lazy.module(name)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(proxy.VALUE), name=f"reader-{i}") for i in range(4)]
    threads[0].start()
    while not runs:  # the first reader is inside the import; the others arrive while it is
        threading.Event().wait(0.001)
    for thread in threads[1:]:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(30)
    assert runs == ["reader-0"]
    assert len(got) == 4 and all(value is sys.modules[name].VALUE for value in got)


def test_bfloat16_lookups_without_a_table_row_for_it():
    bf16 = dtypes.BFLOAT16
    assert dtypes.is_bfloat16(bf16) and not dtypes.is_bfloat16(np.dtype(np.float16))
    assert dtypes.acl_from_numpy(bf16) == dtypes.AclDataType.ACL_BF16
    assert dtypes.ge_from_numpy(bf16) == 27
    assert dtypes.proto_from_numpy(bf16) == dtypes.ProtoDataType.DT_BF16
    assert dtypes.onnx_from_numpy(bf16) == 16
    assert dtypes.numpy_from_onnx(16) == bf16 and dtypes.numpy_from_proto(27) == bf16
    assert dtypes.is_floating(bf16) and dtypes.acl_dtype_size(27) == 2
    with pytest.raises(KeyError):
        dtypes.numpy_from_acl(27)  # acl.op has no bfloat16 (see dtypes)
    assert dtypes.acl_from_numpy(np.dtype("datetime64[s]")) == dtypes.AclDataType.ACL_DT_UNDEFINED
    with pytest.raises(KeyError):
        dtypes.onnx_from_numpy(np.dtype("datetime64[s]"))


@pytest.fixture
def lazy_package(tmp_path, monkeypatch):
    """A fresh package on ``sys.path`` whose ``__init__`` defers its submodules ``a`` and ``b``; its name."""
    name = f"lazy_package_{uuid.uuid4().hex}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(
        "from openacl import lazy\n"
        "SUBMODULES = ('a', 'b')\n"
        "__getattr__, __dir__ = lazy.submodules(__name__, SUBMODULES)\n"
    )
    for sub in ("a", "b"):
        (tmp_path / name / f"{sub}.py").write_text(f"VALUE = {sub!r}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def test_submodules_load_on_first_read_as_the_real_module(lazy_package):
    package = importlib.import_module(lazy_package)
    assert f"{lazy_package}.a" not in sys.modules
    assert {"a", "b"} <= set(dir(package)) and "SUBMODULES" in dir(package)
    a = package.a
    assert a is sys.modules[f"{lazy_package}.a"] and a.VALUE == "a"
    assert "a" in vars(package), "the import binds the submodule: later reads never reach __getattr__"
    assert f"{lazy_package}.b" not in sys.modules
    assert importlib.import_module(f"{lazy_package}.b") is package.b


def test_a_name_that_is_no_submodule_is_an_attribute_error(lazy_package):
    package = importlib.import_module(lazy_package)
    with pytest.raises(AttributeError, match="has no attribute 'c'"):
        package.c  # noqa: B018 (the read under test)
    assert not hasattr(package, "__wrapped__")


def test_acl_submodules_are_one_module_under_every_name():
    import acl.rt

    import acl
    from acl import mdl
    from openacl.acl import media

    assert acl.rt is sys.modules["openacl.acl.rt"] and mdl is sys.modules["openacl.acl.mdl"]
    assert importlib.import_module("acl.media") is media is acl.media
    assert set(acl.SUBMODULES) <= set(dir(acl)) and set(acl.SUBMODULES) <= set(acl.__all__)


def loaded_after(body: str, names: list[str] = HEAVY) -> list[str]:
    """The modules of ``names`` in ``sys.modules`` after ``body`` runs in a fresh interpreter (which imports only
    ``sys`` before it, and ``json`` after the names are looked up)."""
    report = f"found = [m for m in {names!r} if m in sys.modules]\nimport json\nprint(json.dumps(found))"
    program = f"import sys\n{textwrap.dedent(body)}\n{report}"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.subprocess
def test_regression_import_acl_loaded_every_heavy_library():
    """``import acl`` + init + set_device took over half a second importing libraries the program never used."""
    body = """
        import openacl
        openacl.install()
        import acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream()
        assert ret == 0 and acl.rt.destroy_stream(stream) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
    """
    assert loaded_after(body) == []


@pytest.mark.subprocess
def test_regression_import_ge_and_help_loaded_heavy_libraries():
    assert loaded_after("import openacl; openacl.install(); import ge, ge.session; from openacl import ge") == []
    body = """
        import contextlib, io
        from openacl import cli
        with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):
            cli.main(["--help"])
    """
    assert loaded_after(body) == []


@pytest.mark.subprocess
def test_ml_dtypes_loads_when_bfloat16_is_asked_for():
    body = """
        import numpy as np
        from openacl import dtypes
        assert dtypes.acl_from_numpy(np.float32) == 0 and dtypes.proto_from_numpy(np.int8) == 3
        assert not dtypes.is_floating(np.int32) and dtypes.onnx_from_numpy(np.float16) == 10
        assert "ml_dtypes" not in sys.modules
        import ml_dtypes
        assert dtypes.numpy_from_onnx(16) == np.dtype(ml_dtypes.bfloat16)
    """
    assert loaded_after(body) == ["ml_dtypes"]


# openacl's own packages that a program which only sets a device never needs.
FLOORS_3_4 = [
    *(f"openacl.acl.{name}" for name in ("mdl", "op", "util", "media", "prof", "blas")),
    *(f"openacl.{name}" for name in ("model", "op", "ops", "media", "dump", "graph_engine", "gepy", "tools")),
]


@pytest.mark.subprocess
def test_regression_import_acl_loaded_every_facade_module_models_operators_dvpp_and_dumps():
    """``import acl`` imported every facade submodule and ``process.py`` the model, operator, dump and GE
    registries, with their floor-3/4 packages: a third of start-up went to modules the program never used."""
    body = """
        import openacl
        openacl.install()
        import acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
        from openacl import process
        process.reset()
    """
    assert loaded_after(body, [*HEAVY, *FLOORS_3_4]) == []


@pytest.mark.subprocess
def test_dump_settings_loaded_after_acl_init_see_it():
    """The dump settings load on a program's first dump call, after ``acl.init``: ``init_dump`` still sees acl
    initialized, and after ``acl.finalize`` not."""
    body = """
        import openacl
        openacl.install()
        import acl
        assert acl.init() == 0
        assert "openacl.dump.session" not in sys.modules
        assert acl.mdl.init_dump() == 0 and acl.mdl.finalize_dump() == 0
        assert acl.finalize() == 0
        assert acl.mdl.init_dump() == 100001  # ACL_ERROR_UNINITIALIZE
    """
    assert loaded_after(body, ["openacl.dump.session"]) == ["openacl.dump.session"]


@pytest.mark.subprocess
def test_an_operator_library_first_loaded_in_a_forked_child_runs_and_is_torn_down_there():
    """The parent never ran an operator, so its fork hook has no compiled operators to drop; the child's first
    ``execute_v2`` loads the library and onnxruntime, runs, and the child's finalize and reset tear it down."""
    body = """
        import os
        import numpy as np
        import openacl
        openacl.install()
        import acl
        from openacl import process
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                assert "openacl.op.execute" not in sys.modules
                host = np.arange(4, dtype=np.float32).tobytes()
                pointers = [acl.rt.malloc(16, 0)[0] for _ in range(3)]
                for pointer in pointers[:2]:
                    assert acl.rt.memcpy(pointer, 16, acl.util.bytes_to_ptr(host), 16, 1) == 0
                desc = acl.create_tensor_desc(0, [4], 2)
                buffers = [acl.create_data_buffer(pointer, 16) for pointer in pointers]
                attr = acl.op.create_attr()
                assert acl.op.execute_v2("Add", [desc, desc], buffers[:2], [desc], buffers[2:], attr, 0) == 0
                assert acl.rt.synchronize_device() == 0
                out = bytes(16)
                assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), 16, pointers[2], 16, 2) == 0
                assert np.frombuffer(out, np.float32).tolist() == [0.0, 2.0, 4.0, 6.0]
                assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
                process.reset()
                assert acl.init() == 0 and acl.rt.set_device(0) == 0
                assert acl.op.execute_v2("Add", [desc, desc], buffers[:2], [desc], buffers[2:], attr, 0) != 0
                code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
    """
    assert loaded_after(body, ["openacl.op.execute", "onnxruntime"]) == []


@pytest.mark.subprocess
def test_a_device_alone_loads_no_copy_map_or_json_machinery():
    """Copies, virtual memory, notifies, allocation configs and JSON load with their first use, not at start."""
    body = """
        import openacl
        openacl.install()
        import acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
    """
    deferred = [f"openacl.runtime.{name}" for name in ("alloc_config", "copies", "notify", "vmm")]
    assert loaded_after(body, [*deferred, "json", "argparse"]) == []
    body = """
        import openacl
        openacl.install()
        import acl
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        pointer, ret = acl.rt.malloc(16, 0)
        assert ret == 0 and acl.rt.memset(pointer, 16, 1, 16) == 0 and acl.rt.free(pointer) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
        from openacl import process
        process.reset()
    """
    assert loaded_after(body, deferred) == ["openacl.runtime.copies"]


@pytest.mark.subprocess
def test_regression_loading_vmm_ran_ldconfig_and_imported_secrets():
    """runtime/vmm.py found libc with ctypes.util.find_library, which imports subprocess and runs ldconfig in a
    child process, and drew its memory-file tags from secrets (hmac, hashlib): milliseconds of every start."""
    body = """
        import openacl
        openacl.install()
        import acl
        from openacl.runtime import vmm
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        prop = {"handleType": 0, "allocationType": 0, "memAttr": 0, "location": {"id": 0, "type": 1}, "reserve": 0}
        handle, ret = acl.rt.malloc_physical(2 * 1024 * 1024, prop, 0)
        assert ret == 0 and acl.rt.free_physical(handle) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
    """
    assert loaded_after(body, ["ctypes.util", "subprocess", "secrets"]) == []


@pytest.mark.subprocess
def test_import_acl_dot_submodule_in_a_fresh_process_is_the_facade_module():
    """``import acl.rt`` before any ``acl.rt`` read goes through the alias finder: one module, never a second copy
    loaded from the same file under the name ``acl.rt``."""
    body = """
        import openacl
        openacl.install()
        import acl
        assert "openacl.acl.rt" not in sys.modules
        import acl.rt
        assert acl.rt is sys.modules["openacl.acl.rt"] is sys.modules["acl.rt"]
        from acl import mdl
        assert mdl is sys.modules["openacl.acl.mdl"] and acl.rt.__name__ == "openacl.acl.rt"
    """
    assert loaded_after(body, ["openacl.acl.media", "openacl.acl.blas"]) == []


@pytest.mark.subprocess
def test_profiling_without_the_model_layer_is_finished_reset_and_dropped_in_a_child():
    """The runtime's profiling sessions are finished, reset and renewed after fork by the process even when the
    model layer above them (which used to do it) was never loaded."""
    body = """
        import os
        from openacl import process
        from openacl.runtime.prof import session
        def subscribe(model_id):
            _, w = os.pipe()
            session.subscribe(model_id, session.create_subscribe_config(1, 255, w))
            assert session.active and session.subscribed_models() == [model_id]
        process.init()
        subscribe(1)
        process.finalize()
        assert not session.active and not session.subscribed_models()
        subscribe(2)
        process.reset()
        assert not session.active and not session.subscribed_models()
        subscribe(3)
        pid = os.fork()
        if pid == 0:
            os._exit(0 if not session.active and not session.subscribed_models() else 1)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        process.reset()
    """
    assert loaded_after(body, ["openacl.model.profiled"]) == []
