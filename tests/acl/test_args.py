"""pyACL's calling convention: argument parsing, return shapes and error logging (``acl/_args.py``)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import acl
from openacl.acl import _args
from openacl.errors import AclCode, AclError
from openacl.runtime import device as _device

U64 = (1 << 64) - 1


def logged(caplog, qualname: str, code: int) -> list[str]:
    """Messages of the facade's log lines for ``qualname`` returning ``code``."""
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


def facade_lines(caplog, qualname: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"{qualname}:")]


# ----- parse failures -----


@pytest.mark.parametrize(
    ("fn", "args", "qualname"),
    [
        (lambda *a: acl.rt.set_device(*a), (), "acl.rt.set_device"),
        (lambda *a: acl.rt.set_device(*a), (0, 1), "acl.rt.set_device"),
        (lambda *a: acl.rt.set_device(*a), ("0",), "acl.rt.set_device"),
        (lambda *a: acl.rt.set_device(*a), (None,), "acl.rt.set_device"),
        (lambda *a: acl.rt.set_device(*a), (0.0,), "acl.rt.set_device"),
        (lambda *a: acl.rt.set_device(*a), (1 << 31,), "acl.rt.set_device"),
        (lambda *a: acl.rt.set_device(*a), (-(1 << 31) - 1,), "acl.rt.set_device"),
        (lambda *a: acl.rt.free(*a), (1.5,), "acl.rt.free"),
        (lambda *a: acl.rt.free(*a), ("0x10",), "acl.rt.free"),
        (lambda *a: acl.rt.free(*a), (np.uint64(16),), "acl.rt.free"),
        (lambda *a: acl.rt.malloc(*a), (16,), "acl.rt.malloc"),
        (lambda *a: acl.rt.malloc(*a), (16.0, 0), "acl.rt.malloc"),
        (lambda *a: acl.rt.malloc(*a), (16, 0.0), "acl.rt.malloc"),
        (lambda *a: acl.rt.memcpy(*a), (0, 0, 0, 0), "acl.rt.memcpy"),
        (lambda *a: acl.rt.synchronize_stream_with_timeout(*a), (0, 1.0), "acl.rt.synchronize_stream_with_timeout"),
        (lambda *a: acl.rt.create_stream_with_config(*a), (0,), "acl.rt.create_stream_with_config"),
        (lambda *a: acl.util.ptr_to_bytes(*a), ("x", 1), "acl.util.ptr_to_bytes"),
        (lambda *a: acl.util.stop_thread(*a), (), "acl.util.stop_thread"),
        (lambda *a: acl.init(*a), (1,), "acl.init"),
        (lambda *a: acl.init(*a), (b"/tmp/x.json",), "acl.init"),
        (lambda *a: acl.init(*a), ("a\x00b.json",), "acl.init"),
        (lambda *a: acl.init(*a), ("", ""), "acl.init"),
        (lambda *a: acl.create_data_buffer(*a), ("x", 1), "acl.create_data_buffer"),
        (lambda *a: acl.create_data_buffer(*a), (0,), "acl.create_data_buffer"),
        (lambda *a: acl.destroy_data_buffer(*a), (), "acl.destroy_data_buffer"),
    ],
)
def test_parse_failure_raises_type_error_with_pyacl_text(fn, args, qualname, acl_log):
    with pytest.raises(TypeError) as info:
        fn(*args)
    assert str(info.value) == f"{qualname} args parse failed"
    # A parse failure is not an error code: nothing is logged for it.
    assert facade_lines(acl_log, qualname) == []


def test_keyword_arguments_are_refused():
    with pytest.raises(TypeError, match=r"^acl\.rt\.set_device args parse failed$"):
        acl.rt.set_device(device_id=0)
    with pytest.raises(TypeError, match=r"^acl\.init args parse failed$"):
        acl.init(config_path="")
    with pytest.raises(TypeError, match=r"^acl\.rt\.get_context args parse failed$"):
        acl.rt.get_context(context=0)


def test_parse_failure_changes_no_state():
    with pytest.raises(TypeError):
        acl.rt.set_device(0, 0)
    _, ret = acl.rt.get_device()
    assert ret == AclCode.ACL_ERROR_RT_CONTEXT_NULL


def test_int_format_accepts_index_objects_and_the_full_int32_range(acl_log):
    assert acl.rt.set_device(np.int64(0)) == 0
    # The extremes parse; the runtime then refuses them with a code, not a TypeError.
    assert acl.rt.set_device((1 << 31) - 1) == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    assert acl.rt.set_device(-(1 << 31)) == AclCode.ACL_ERROR_RT_INVALID_DEVICEID
    assert len(logged(acl_log, "acl.rt.set_device", 107001)) == 2


def test_minus_one_for_k_is_masked_to_u64_max(acl_log):
    assert acl.rt.free(-1) == AclCode.ACL_ERROR_INVALID_PARAM
    (line,) = logged(acl_log, "acl.rt.free", 100000)
    assert f"{U64:#x}" in line


def test_minus_one_for_capital_k_is_masked_to_u64_max(acl_log):
    host, ret = acl.rt.malloc_host(-1)
    assert (host, ret) == (0, AclCode.ACL_ERROR_RT_MEMORY_ALLOCATION)
    (line,) = logged(acl_log, "acl.rt.malloc_host", 207001)
    assert str(U64) in line


def test_minus_one_for_capital_i_is_masked_to_u32_max(ctx, acl_log):
    assert acl.rt.create_event_with_flag(-1) == (0, AclCode.ACL_ERROR_INVALID_PARAM)
    (line,) = logged(acl_log, "acl.rt.create_event_with_flag", 100000)
    assert "event flag 0xffffffff" in line


def test_k_masks_any_negative_and_oversized_int(ctx):
    ptr, ret = acl.rt.malloc(16, 0)
    assert ret == 0
    # ptr - 2**64 masks back to ptr, as CPython's "k" does.
    assert acl.rt.free(ptr - (1 << 64)) == 0
    ptr, _ = acl.rt.malloc(16, 0)
    assert acl.rt.free(ptr + (1 << 64)) == 0


def test_no_argument_functions_ignore_extra_positional_arguments(ctx):
    """pyACL's wrappers that never parse their arguments accept and ignore any positional ones."""
    assert acl.rt.get_context() == (ctx, 0)
    assert acl.rt.get_context(1, "two", None) == (ctx, 0)
    assert acl.rt.get_device_count(0) == (8, 0)
    assert acl.get_soc_name(None, 1.5) == acl.get_soc_name()
    assert acl.init() == 0
    assert acl.finalize(None) == 0


def test_no_argument_functions_still_refuse_keywords():
    for fn, name in ((acl.rt.get_device_count, "acl.rt.get_device_count"), (acl.finalize, "acl.finalize")):
        with pytest.raises(TypeError, match=rf"^{name.replace('.', chr(92) + '.')} args parse failed$"):
            fn(x=1)


def test_optional_string_may_be_omitted_or_given():
    assert acl.init() == 0
    assert acl.finalize() == 0
    assert acl.init("") == 0


# ----- return conventions -----


def test_ret_functions_return_a_bare_int(ctx):
    ret = acl.rt.set_device(0)
    assert type(ret) is int and ret == 0
    ret = acl.rt.set_device(99)
    assert type(ret) is int and ret == 107001


def test_value_functions_return_value_then_ret(ctx):
    result = acl.rt.get_device_count()
    assert isinstance(result, tuple) and result == (8, 0)
    ptr, ret = acl.rt.malloc(8, 0)
    assert ret == 0 and isinstance(ptr, int) and ptr != 0
    assert type(ret) is int


def test_value_functions_return_failure_value_and_code(acl_log):
    assert acl.rt.get_device() == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)
    assert acl.rt.malloc(8, 0) == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)
    assert logged(acl_log, "acl.rt.get_device", 107002)
    assert logged(acl_log, "acl.rt.malloc", 107002)


def test_create_data_buffer_returns_a_bare_handle_or_zero(ctx, acl_log):
    ptr, _ = acl.rt.malloc(64, 0)
    handle = acl.create_data_buffer(ptr, 64)
    assert type(handle) is int and handle != 0
    assert acl.get_data_buffer_addr(handle) == ptr
    assert acl.get_data_buffer_size_v2(handle) == 64

    assert acl.create_data_buffer(ptr, 65) == 0
    assert acl.create_data_buffer(0x10, 4) == 0
    assert acl.create_data_buffer(0, 4) == 0
    assert acl.create_data_buffer(ptr, -1) == 0
    assert len(logged(acl_log, "acl.create_data_buffer", 100000)) == 4


def test_error_log_line_names_the_function_code_message_and_detail(acl_log):
    assert acl.rt.set_device(8) == 107001
    (line,) = logged(acl_log, "acl.rt.set_device", 107001)
    assert line == (
        "acl.rt.set_device: ACL_ERROR_RT_INVALID_DEVICEID(107001): invalid device id: device 8 does not exist (0..7)"
    )
    (record,) = [r for r in acl_log.records if r.getMessage() == line]
    assert record.levelno == logging.ERROR


def test_success_logs_nothing(ctx, acl_log):
    acl_log.clear()
    assert acl.rt.get_device() == (0, 0)
    assert facade_lines(acl_log, "acl.rt.get_device") == []


def test_unexpected_exception_becomes_internal_error(monkeypatch, acl_log):
    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(_device, "device_count", broken)
    assert acl.rt.get_device_count() == (0, AclCode.ACL_ERROR_INTERNAL_ERROR)
    (record,) = [r for r in acl_log.records if r.getMessage() == "acl.rt.get_device_count: internal error"]
    assert record.exc_info is not None and "boom" in str(record.exc_info[1])


def test_memory_error_becomes_bad_alloc(monkeypatch, acl_log):
    def exhausted():
        raise MemoryError

    monkeypatch.setattr(_device, "device_count", exhausted)
    assert acl.rt.get_device_count() == (0, AclCode.ACL_ERROR_BAD_ALLOC)
    assert any(r.getMessage() == "acl.rt.get_device_count: out of host memory" for r in acl_log.records)


def test_every_facade_function_names_itself():
    for module, prefix in ((acl, "acl."), (acl.rt, "acl.rt."), (acl.mdl, "acl.mdl."), (acl.util, "acl.util.")):
        for name in module.__all__:
            fn = getattr(module, name)
            if name in acl.SUBMODULES:
                continue
            assert fn.acl_name == prefix + name


def test_parser_is_reusable_and_strict_about_counts():
    parse = _args.parser("i|kK", "acl.x.y")
    assert parse((1,), {}) == [1]
    assert parse((1, -1, -2), {}) == [1, U64, U64 - 1]
    for bad in ((), (1, 2, 3, 4)):
        with pytest.raises(TypeError, match=r"^acl\.x\.y args parse failed$"):
            parse(bad, {})


_EDGES = [edge + step for edge in (0, 1 << 31, -(1 << 31), 1 << 32, 1 << 64) for step in (-1, 0, 1)]


@given(
    st.lists(
        st.one_of(st.integers(-(1 << 66), 1 << 66), st.sampled_from(_EDGES), st.booleans()), min_size=4, max_size=4
    )
)
def test_plain_int_fast_path_agrees_with_the_converters(values):
    """The parser returns plain in-range ints untouched; that must equal what the full conversion gives."""
    fmt = "kIiO"
    try:
        expected = [_args._CONVERTERS[code](value) for code, value in zip(fmt, values, strict=True)]
    except (TypeError, ValueError, OverflowError):
        expected = None
    parse = _args.parser(fmt, "acl.test.f")
    if expected is None:
        with pytest.raises(TypeError, match=r"^acl\.test\.f args parse failed$"):
            parse(tuple(values), {})
    else:
        parsed = list(parse(tuple(values), {}))
        assert parsed == expected
        assert [type(v) for v in parsed] == [type(v) for v in expected]


@given(st.one_of(st.text(max_size=8), st.sampled_from(["Add", "A\x00dd", "\udc80", "Ädd", b"Add", 1, None])))
def test_plain_str_fast_path_agrees_with_the_converters(value):
    """``"s"`` in the fast path (acl.op's operator type): a plain ASCII str without NUL is returned untouched;
    anything else (a NUL, a lone surrogate, bytes, a non-str) goes through the converter as before."""
    try:
        expected = [_args._CONVERTERS["s"](value), 7]
    except (TypeError, ValueError, OverflowError):
        expected = None
    parse = _args.parser("sk", "acl.test.f")
    if expected is None:
        with pytest.raises(TypeError, match=r"^acl\.test\.f args parse failed$"):
            parse((value, 7), {})
    else:
        assert list(parse((value, 7), {})) == expected


# ----- the formats acl.op needs: f (C float), L (long long), B (unsigned char) -----


def test_float32_long_long_and_unsigned_char_formats():
    from openacl.acl._args import parser

    parse = parser("fLB", "acl.op.demo")
    value, number, flag = parse((0.1, -(1 << 63), 257), {})
    assert value == float(np.float32(0.1)) and number == -(1 << 63) and flag == 1
    assert list(parse((1, 5, False), {})) == [1.0, 5, 0]  # an int where a float goes; B of False is 0
    for bad in ((0.1, 1 << 63, 0), (0.1, 1.5, 0), ("x", 1, 0), (0.1, 1, 1.0)):
        with pytest.raises(TypeError, match=r"acl\.op\.demo args parse failed"):
            parse(bad, {})


def test_handle_lists_are_lists():
    from openacl.acl._args import handle_list

    assert handle_list([1, 2], "acl.op.x", "inputs") == [1, 2]
    assert handle_list([-1], "acl.op.x", "inputs") == [(1 << 64) - 1]  # as PyLong_AsVoidPtr
    with pytest.raises(TypeError, match="argument inputs is not list"):
        handle_list((1, 2), "acl.op.x", "inputs")
    with pytest.raises(TypeError):
        handle_list([1, None], "acl.op.x", "inputs")


def test_regression_d_format_accepted_a_string():
    """CPython's "d" refuses a str (PyFloat_AsDouble raises TypeError); the converter parsed "1" as 1.0."""
    parse = _args.parser("d", "acl.x.y")
    for bad in ("1", b"1", bytearray(b"1")):
        with pytest.raises(TypeError, match=r"acl\.x\.y args parse failed"):
            parse((bad,), {})
    assert list(parse((2,), {})) == [2.0] and list(parse((2.5,), {})) == [2.5]


def test_l_format_is_a_range_checked_c_long():
    parse = _args.parser("l", "acl.x.y")
    assert list(parse((-(1 << 63),), {})) == [-(1 << 63)]
    for bad in (1 << 63, 1.0, "1"):
        with pytest.raises(TypeError):
            parse((bad,), {})


# ----- the common call's shortcut -----


def test_plain_check_passes_plain_ints_in_range_and_objects_only():
    """The wrapper skips ``parse`` only for what ``parse`` would return unchanged; anything else still goes to it."""
    most, plain = _args.plain_check("OOik")
    assert most == 4
    assert plain((print, None, 0, U64)) and plain((None, 1.5, -(1 << 31), 0))
    assert not plain((print, None, 1 << 31, 1))  # "i" out of range: parse's OverflowError
    assert not plain((print, None, True, 1))  # a bool is not a plain int: parse converts it
    assert not plain((print, None, 0, -1))  # "k" of -1: parse masks it to 2**64 - 1
    assert not plain((print, None, 0.0, 1))
    assert _args.plain_check("")[0] == -1  # no arguments: extra ones are ignored, by parse
    most, plain = _args.plain_check("sk")
    assert most == 2 and plain(("Add", 1))
    assert not plain(("A\x00dd", 1))  # a NUL: parse's TypeError
    assert not plain(("\ud800", 1))  # not ASCII (here a lone surrogate, which fails the parse): parsed
    assert not plain((b"Add", 1)) and not plain((None, 1))
    most, plain = _args.plain_check("K|i")
    assert most == 2 and plain((5, 7)) and not plain((5, 1 << 40))


# ----- the generated wrapper and its ``entry`` -----


def test_entry_is_what_the_program_calls_and_hands_the_rest_to_the_wrapper():
    """``entry`` gets the finished wrapper and returns the function the declaration gives, with the wrapper's name and
    attributes; what it hands on gets the wrapper's parse and codes."""

    def entry(whole):
        def fast(*args):
            if args == (1, 2):
                return 0
            return whole(*args)

        return fast

    def f(a, b):
        raise _args.AclError(AclCode.ACL_ERROR_INVALID_PARAM, "handed on")

    wrapped = _args.api("kk", entry=entry)(f)
    assert wrapped(1, 2) == 0
    assert wrapped(2, 2) == AclCode.ACL_ERROR_INVALID_PARAM
    with pytest.raises(TypeError, match="args parse failed"):
        wrapped(1)
    assert (wrapped.__name__, wrapped.acl_name, wrapped.acl_format) == ("f", "acl.test_args.f", "kk")
    with pytest.raises(ValueError, match="entry"):
        _args.api("k", _args.VALUE, entry=entry)(f)


@pytest.mark.parametrize("returns", [_args.RET, _args.VALUE, _args.VALUES, _args.BARE, _args.CODE, _args.RAISE])
def test_the_generated_wrapper_keeps_each_return_convention(returns):
    """The plain path and the parsed path of one wrapper return alike, for each convention."""
    value = (3, 4) if returns == _args.VALUES else 5
    wrapped = _args.api("k|k", returns)(lambda a, b=0: value)
    expected = {
        _args.RET: 0,
        _args.VALUE: (5, 0),
        _args.VALUES: (3, 4, 0),
        _args.BARE: 5,
        _args.CODE: 5,
        _args.RAISE: 5,
    }[returns]
    assert wrapped(1, 2) == expected  # plain: unpacked and passed by position
    assert wrapped(1) == expected  # one argument short of the format: parsed
    assert wrapped(-1, True) == expected  # not plain: parsed


def test_a_wrapper_frame_is_not_the_programs_line():
    """``warn`` and ``openacl check`` look past the generated wrapper's frame, as past the facade's."""
    assert acl.rt.destroy_stream.__code__.co_filename.startswith(_args._PACKAGE)
    assert acl.rt.destroy_stream.__name__ == "destroy_stream"
    assert acl.rt.destroy_stream.__wrapped__.__code__.co_filename.endswith("rt.py")


def test_a_wrapper_takes_its_shapes_code_at_its_first_call():
    """Declaring compiles nothing (``import acl`` stays quick); the first call puts the shape's code in place, shared
    by every wrapper of that shape and named after its own function."""

    def f(a, b):
        return None

    def g(a, b):
        return None

    wrapped_f, wrapped_g = _args.api("kk")(f), _args.api("kk")(g)
    stub = wrapped_f.__code__
    assert wrapped_f(1, 2) == 0 and wrapped_g(3, 4) == 0
    assert wrapped_f.__code__ is not stub and wrapped_f.__code__.co_name == "f" and wrapped_g.__code__.co_name == "g"
    assert wrapped_f.__code__.co_code == wrapped_g.__code__.co_code
    assert wrapped_f(-1, 2) == 0  # the parsed path of the same code


def test_first_calls_from_many_threads_at_once_all_run():
    import threading

    ran: list[int] = []

    def record(i):
        ran.append(i)

    wrapped = _args.api("k")(record)
    start = threading.Barrier(8)
    threads = [threading.Thread(target=lambda i=i: (start.wait(), wrapped(i))) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(ran) == list(range(8))


def test_a_plain_shapes_wrapper_binds_by_position_and_refuses_what_pyacl_refuses():
    """A plain shape's wrapper takes its arguments as positional-only parameters: a keyword (even one named as a
    parameter), one argument too few or too many, all fail the parse as pyACL's METH_VARARGS entries do; a call
    one short of a format's optional tail is parsed, and a failing body still gets its arguments."""
    seen: list[tuple] = []

    def body(a, b, c=7):
        seen.append((a, b, c))
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "no")

    wrapped = _args.api("kk|k", _args.VALUE, failure=_args.FailureOf(lambda args: args[0]))(body)
    assert wrapped(1, 2, 3) == (1, AclCode.ACL_ERROR_INVALID_PARAM)  # plain: the failure value from the arguments
    assert wrapped(4, 5) == (4, AclCode.ACL_ERROR_INVALID_PARAM)  # the optional one left out: parsed
    assert seen == [(1, 2, 3), (4, 5, 7)]
    for args, kwargs in (((1, 2, 3), {"a0": 1}), ((), {"a0": 1, "a1": 2, "a2": 3}), ((1,), {}), ((1, 2, 3, 4), {})):
        with pytest.raises(TypeError, match=r"^acl\.test_args\.body args parse failed$"):
            wrapped(*args, **kwargs)
    assert len(seen) == 2
