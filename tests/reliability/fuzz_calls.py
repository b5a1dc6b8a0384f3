"""The fuzz suite's machinery: every facade entry point, hostile values, and a checked call wrapper.

``call(fn, *args)`` is the only way the fuzz tests call ``acl.*``: it counts the call, times it, and checks
the outcome against the function's declared convention (``@api`` in ``openacl/acl/_args.py``):

- ``RET``: an ``AclCode`` value; ``VALUE``/``VALUES``: ``(..., code)`` with the declared failure value when the
  code is not 0; ``BARE``: a value of the failure value's type; ``RAISE``: a value, or ``ArgumentValueError``.
- ``TypeError("acl.<sub>.<name> args parse failed")`` (and "parameter must be callable" where a callable is
  required; ``stop_thread`` may re-raise the thread's failure as ``RuntimeError``); pyACL's own messages for
  list and dict arguments it checks after the parse (:data:`OTHER_TYPE_ERRORS`), and ``set_tensor_shape``'s
  ValueError for an empty list (:data:`VALUE_ERRORS`).

Anything else is a :class:`Violation`, kept in :data:`VIOLATIONS` as well as raised, so a violation inside a
callback (which the runtime would log and swallow) still fails the test. :class:`BugWatch` also fails a test
for log records with a traceback that are not about user code (the facade's "internal error", an engine
failure) and for exceptions that escape a thread.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import acl
from openacl.acl import _args
from openacl.errors import AclCode, GeStatus
from openacl.runtime.threads import ThreadFailed

ACL_CODES = frozenset(int(c) for c in AclCode)
GE_CODES = frozenset(int(c) for c in GeStatus)
SLOW_CALL_S = 10.0  # a single call taking longer than this is reported (a hang is left to pytest-timeout)


def _entry_points() -> dict[str, Callable]:
    found = {}
    for module in (acl, acl.rt, acl.mdl, acl.op, acl.util, acl.media, acl.blas):
        for name in module.__all__:
            fn = getattr(module, name)
            if callable(fn) and hasattr(fn, "acl_name"):
                found[fn.acl_name] = fn
    return found


#: Every ``acl.*`` facade function, by its pyACL name (``acl.rt.malloc``).
ENTRY_POINTS: dict[str, Callable] = _entry_points()
NEEDS_CALLABLE = {
    "acl.rt.launch_callback",
    "acl.util.start_thread",
    "acl.media.vdec_set_channel_desc_callback",
    "acl.media.venc_set_channel_desc_callback",
    "acl.media.venc_set_channel_desc_param",  # its type 1 is the callback
}
_NO_CALLBACK = "did not set callback, failed"
# pyACL's video wrappers keep the callable per desc: a send or a get on a desc without one is its RuntimeError.
NEEDS_CALLBACK_SET = {
    "acl.media.vdec_send_frame",
    "acl.media.vdec_send_skipped_frame",
    "acl.media.vdec_get_channel_desc_callback",
    "acl.media.venc_send_frame",
    "acl.media.venc_get_channel_desc_callback",
    "acl.media.venc_get_channel_desc_param",  # its type 1 is the callback
}
_RAISE_TYPES: dict[str, type | tuple[type, ...]] = {
    "acl.util.bytes_to_ptr": int,
    "acl.util.numpy_to_ptr": int,
    "acl.util.numpy_contiguous_to_ptr": tuple,
    "acl.util.ptr_to_bytes": bytes,
    "acl.util.ptr_to_numpy": np.ndarray,
}

# pyACL's own TypeErrors with messages of their own: list arguments checked after the parse (``handle_list``, the
# aclmdlIODims dict of ``set_input_dynamic_dims``); and ``set_tensor_shape``'s ValueError for an empty list.
_MEDIA_BATCHES = ("crop", "crop_and_paste", "crop_resize", "crop_resize_paste", "crop_resize_make_border")
_HANDLE_LISTS = (
    "acl.op.execute",
    "acl.op.execute_v2",
    "acl.op.update_params",
    "acl.op.infer_shape",
    "acl.op.create_handle",
    "acl.op.execute_with_handle",
    "acl.rt.notify_batch_reset",
    *(f"acl.media.dvpp_vpc_batch_{kind}_async" for kind in _MEDIA_BATCHES),
)
_LIST_MESSAGES = r"argument \w+ is not list|argument \w+ holds an element that is not an int"
OTHER_TYPE_ERRORS: dict[str, re.Pattern] = {
    **{name: re.compile(rf"{re.escape(name)}: (?:{_LIST_MESSAGES})") for name in _HANDLE_LISTS},
    "acl.mdl.set_input_dynamic_dims": re.compile(
        "argument 4 is not dict|the dimCount of parameter 4 is not a non-negative int"
        "|The dims of parameter 4 is not a list\\.|the dims of fourth parameter is not list of int"
    ),
}
VALUE_ERRORS: dict[str, re.Pattern] = {
    "acl.set_tensor_shape": re.compile("list is empty"),
    # acl.media's batch VPC calls check their list lengths before anything reaches DVPP
    **{
        f"acl.media.dvpp_vpc_batch_{kind}_async": re.compile(
            "number of (?:crop areas|roi) must be between 1 and 256"
            "|number of (?:paste areas|border configs) must equal the number of crop areas"
        )
        for kind in _MEDIA_BATCHES
    },
}


class Violation(AssertionError):
    """An outcome the facade does not document."""


VIOLATIONS: list[str] = []


class Stats:
    """Calls made, by entry point; the fuzz tests that ran to the end."""

    def __init__(self) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        self.codes: collections.Counter[tuple[str, int]] = collections.Counter()
        self.tests_done: set[str] = set()
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def count(self, name: str) -> None:
        with self._lock:
            self.calls[name] += 1


STATS = Stats()


def violation(text: str) -> Violation:
    VIOLATIONS.append(text)
    return Violation(text)


def _short(args: tuple) -> str:
    text = ", ".join(_brief(a) for a in args)
    return text if len(text) < 400 else text[:400] + "..."


def _brief(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"ndarray({value.shape}, {value.dtype})"
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def code_of(fn: Callable, result: object) -> int | None:
    """The ``aclError`` in a result, or None where the convention has none (or an exception was returned)."""
    if isinstance(result, BaseException):
        return None
    if fn.acl_returns == _args.RET:
        return result  # type: ignore[return-value]
    if fn.acl_returns in (_args.VALUE, _args.VALUES):
        return result[-1]  # type: ignore[index]
    return None


def value_of(fn: Callable, result: object) -> Any:
    """The value a call returned when it succeeded, else None."""
    if isinstance(result, BaseException):
        return None
    if fn.acl_returns == _args.VALUE:
        return result[0] if result[1] == 0 else None  # type: ignore[index]
    if fn.acl_returns == _args.VALUES:
        return result[:-1] if result[-1] == 0 else None  # type: ignore[index]
    if fn.acl_returns in (_args.BARE, _args.RAISE):
        return result
    return None


def check_result(fn: Callable, args: tuple, result: object) -> None:
    name, kind, failure = fn.acl_name, fn.acl_returns, fn.acl_failure
    problem = None
    if kind == _args.RET:
        if type(result) is not int or result not in ACL_CODES:
            problem = "is not an aclError"
    elif kind == _args.VALUE:
        if type(result) is not tuple or len(result) != 2 or type(result[1]) is not int or result[1] not in ACL_CODES:
            problem = "is not (value, aclError)"
        elif isinstance(failure, _args.FailureOf):  # one of the arguments: any int
            if result[1] != 0 and type(result[0]) is not int:
                problem = f"fails with value {result[0]!r}, not an int"
        elif result[1] != 0 and not _same(result[0], failure):
            problem = f"fails with value {result[0]!r}, not {failure!r}"
    elif kind == _args.VALUES:
        if (
            type(result) is not tuple
            or len(result) != len(failure) + 1
            or type(result[-1]) is not int
            or result[-1] not in ACL_CODES
        ):
            problem = "is not (*values, aclError)"
        elif result[-1] != 0 and tuple(result[:-1]) != tuple(failure):
            problem = f"fails with values {result[:-1]!r}"
    elif kind == _args.CODE:
        if type(result) is not int or result not in ACL_CODES:
            problem = "is not an aclError"
    elif kind == _args.BARE:
        if failure is None:  # None-returning functions, and "s" returns (a str, or None for a NULL string)
            if result is not None and type(result) is not str:
                problem = "is neither None nor a str"
        elif name in NEEDS_CALLBACK_SET and callable(result):
            pass  # a video desc's callback getter hands back the callable that was set
        elif type(result) is not type(failure):
            problem = f"is not a {type(failure).__name__}"
    elif kind == _args.RAISE:
        want = _RAISE_TYPES.get(name)
        if want is not None and not isinstance(result, want):
            problem = f"is not a {want}"
    if problem:
        raise violation(f"{name}({_short(args)}) returned {_brief(result)}, which {problem}")


def _same(value: object, failure: object) -> bool:
    if isinstance(failure, float):
        return isinstance(value, float) and value == failure
    return type(value) is type(failure) and value == failure


def check_exception(fn: Callable, args: tuple, exc: BaseException) -> None:
    name = fn.acl_name
    if type(exc) is _args.ArgumentTypeError and str(exc) == f"{name} args parse failed":
        return
    if type(exc) is _args.ArgumentTypeError and str(exc) == "parameter must be callable" and name in NEEDS_CALLABLE:
        return
    if type(exc) is _args.ArgumentValueError and fn.acl_returns == _args.RAISE:
        return
    if type(exc) is _args.ArgumentRuntimeError and name in NEEDS_CALLBACK_SET and str(exc) == _NO_CALLBACK:
        return
    own = {_args.ArgumentTypeError: OTHER_TYPE_ERRORS, _args.ArgumentValueError: VALUE_ERRORS}.get(type(exc), {})
    if name in own and own[name].fullmatch(str(exc)):
        return
    if type(exc) is ThreadFailed and name == "acl.util.stop_thread":
        return
    raise violation(f"{name}({_short(args)}) raised {type(exc).__name__}: {exc}") from exc


def call(fn: Callable, *args: Any) -> Any:
    """Call a facade function and check its outcome; returns the result, or the (documented) exception."""
    STATS.count(fn.acl_name)
    start = time.monotonic()
    try:
        result = fn(*args)
    except Exception as exc:
        check_exception(fn, args, exc)
        result = exc
    else:
        check_result(fn, args, result)
    elapsed = time.monotonic() - start
    if elapsed > SLOW_CALL_S:
        raise violation(f"{fn.acl_name}({_short(args)}) took {elapsed:.1f} s")
    with STATS._lock:
        code = code_of(fn, result)
        STATS.codes[fn.acl_name, -1 if code is None else code] += 1
    return result


def ok(fn: Callable, *args: Any) -> Any:
    """``call`` for a call that must succeed; returns its value."""
    result = call(fn, *args)
    code = code_of(fn, result)
    if isinstance(result, BaseException) or (code is not None and code != 0):
        raise violation(f"{fn.acl_name}({_short(args)}) failed: {_brief(result)}")
    return value_of(fn, result)


# ----- GE -----

GE_NAMES = (
    "ge.ge_initialize",
    "ge.ge_finalize",
    "ge.is_initialized",
    "ge.Session",
    "Session.add_graph",
    "Session.remove_graph",
    "Session.build_graph",
    "Session.run_graph",
    "Session.run_graph_async",
    "Session.get_variables",
    "Session.register_callback_func",
    "Session.compiled_model",
    "Session.close",
)


def ge_call(name: str, fn: Callable, *args: Any, well_typed: bool = True) -> Any:
    """Call a GE function or Session method: a GeStatus, ``(list, GeStatus)``, or TypeError for a wrong type."""
    STATS.count(name)
    start = time.monotonic()
    try:
        result = fn(*args)
    except TypeError as exc:
        if well_typed:
            raise violation(f"{name}({_short(args)}) raised TypeError for well-typed arguments: {exc}") from exc
        return exc
    except Exception as exc:
        raise violation(f"{name}({_short(args)}) raised {type(exc).__name__}: {exc}") from exc
    if time.monotonic() - start > SLOW_CALL_S:
        raise violation(f"{name}({_short(args)}) took too long")
    if name in ("Session.run_graph", "Session.get_variables"):
        if not (
            type(result) is tuple
            and len(result) == 2
            and isinstance(result[0], list)
            and int(result[1]) in GE_CODES
            and (result[1] == 0 or result[0] == [])
        ):
            raise violation(f"{name}({_short(args)}) returned {_brief(result)}")
        if result[1] == 0 and not all(isinstance(a, np.ndarray) for a in result[0]):
            raise violation(f"{name}({_short(args)}) returned non-arrays")
    elif name in ("ge.Session", "Session.close", "ge.is_initialized", "Session.compiled_model"):
        pass
    elif not (isinstance(result, int) and int(result) in GE_CODES):
        raise violation(f"{name}({_short(args)}) returned {_brief(result)}, not a GeStatus")
    return result


def ge_well_typed(options: object = None, graph_id: object = 0, inputs: object = (), names: object = ()) -> bool:
    """Whether arguments are of the types the GE API documents (anything else may raise TypeError)."""
    return (
        (options is None or isinstance(options, Mapping))
        and isinstance(graph_id, int)
        and not isinstance(graph_id, bool)
        and isinstance(inputs, Sequence)
        and not isinstance(inputs, np.ndarray | str | bytes)
        and isinstance(names, Sequence)
        and not isinstance(names, str | bytes)
    )


# ----- watching for what the return values cannot show -----

# Log records with a traceback that are about user code (a callback that raised), not about openacl.
_USER_CODE_LOGS = ("callback %r raised", "%s callback raised", "done callback raised", "dump callback raised")


class BugWatch(logging.Filter):
    """Collects openacl log records with a traceback that are not about user code, and thread crashes.

    It filters openacl's loggers: while installed, their records go nowhere else (tens of thousands of
    expected error lines would cost more than the calls themselves in pytest's capture).
    """

    def __init__(self) -> None:
        super().__init__()
        self.bugs: list[str] = []
        self._old_hook = threading.excepthook
        self._loggers: list[logging.Logger] = []
        self._formatter = logging.Formatter("%(name)s: %(message)s")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and not any(p in str(record.msg) for p in _USER_CODE_LOGS):
            self.bugs.append(self._formatter.format(record))
        return False

    def _thread_hook(self, args: threading.ExceptHookArgs) -> None:
        self.bugs.append(f"thread {args.thread} died: {args.exc_type.__name__}: {args.exc_value}")
        self._old_hook(args)

    def __enter__(self) -> BugWatch:
        manager = logging.getLogger().manager
        names = ["openacl", *(n for n in list(manager.loggerDict) if n.startswith("openacl."))]
        self._loggers = [logging.getLogger(n) for n in names]
        for logger in self._loggers:
            logger.addFilter(self)
        threading.excepthook = self._thread_hook
        return self

    def __exit__(self, *exc: object) -> None:
        for logger in self._loggers:
            logger.removeFilter(self)
        threading.excepthook = self._old_hook

    def check(self) -> None:
        found = self.bugs + VIOLATIONS
        self.bugs.clear()
        VIOLATIONS.clear()
        assert not found, "\n\n".join(found[:5])


# ----- hostile values -----


class Index:
    """Has ``__index__`` (accepted by ``i`` as CPython's parser does, refused by ``k``/``K``/``I``)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"Index({self.value})"


class FuzzBoom(Exception):
    """Raised on purpose by fuzz callbacks."""


def noop(*args: object) -> None:
    return None


def boom(*args: object) -> None:
    raise FuzzBoom("boom")


BIG_INTS = [
    2**31 - 1,
    2**31,
    -(2**31),
    -(2**31) - 1,
    2**32 - 1,
    2**32,
    2**63 - 1,
    2**63,
    -(2**63),
    2**64 - 1,
    2**64,
    2**64 + 16,
    2**100,
    -(2**100),
    10**30,
]
SMALL_INTS = [0, 1, -1, 2, 3, 7, 8, 9, 16, 64, 4096, -2, -4096]
#: The values every integer argument is tried with (each is in SMALL_INTS or BIG_INTS too).
BOUNDARY_INTS = (0, -1, 2**31, 2**32, 2**63, 2**64)
assert set(BOUNDARY_INTS) <= {*SMALL_INTS, *BIG_INTS}
FLOATS = [0.0, -0.0, 1.0, 1.5, math.nan, math.inf, -math.inf, 1e308, 5e-324]
STRINGS = ["", "x", "a\x00b", "\x00", "\udcff", "\ud800x", "é/ü/中文/🙂", "../../../etc/passwd", "/", "~", "x" * 5000]


def other_objects() -> list[object]:
    """Values of no type any facade parameter documents (fresh, so callers may keep them)."""
    return [
        None,
        True,
        False,
        b"",
        b"bytes",
        bytearray(b"ab"),
        memoryview(b"mv"),
        [],
        [1, 2],
        (),
        (1, 2),
        {},
        {"a": 1},
        {1, 2},
        object(),
        np.int64(5),
        np.uint64(2**64 - 1),
        np.float32(1.0),
        np.bool_(True),
        np.zeros(3, np.float32),
        np.arange(12).reshape(3, 4)[:, ::2],
        np.array([object(), "x"], dtype=object),
        np.array(5.0),
        complex(1, 2),
        Index(3),
        Index(2**70),
        noop,
        boom,
        len,
        int,
        type,
        ...,
        NotImplemented,
        math.nan,
        math.inf,
        *FLOATS[:4],
    ]


@contextlib.contextmanager
def quiet_numpy():
    with np.errstate(all="ignore"):
        yield
