"""pyACL's calling convention, declared once per function.

pyACL functions are C wrappers: they parse positional arguments with a ``PyArg_ParseTuple`` format
(``"k"`` unsigned long, ``"K"`` unsigned long long, ``"i"`` int, ``"I"`` unsigned int, ``"s"`` str,
``"H"`` unsigned short, ``"L"``/``"l"`` long long / long (64 bits on Linux, range-checked), ``"b"`` unsigned
char and ``"h"`` short (both range-checked), ``"f"``/``"d"`` float, ``"O"`` any object, ``"|"`` optional from
here on), raise ``TypeError("acl.<sub>.<name> args parse failed")`` when they cannot, and return the
``aclError`` as ``ret`` or ``(value, ret)``. The ``@api`` decorator does all of that, so facade functions only
convert objects and call the runtime; this is the one place that raises the parse error and the one place that
turns ``AclError`` into a return code (and logs it, and records it in the thread's error records of
``runtime/exceptions.py``, once).

As in CPython, ``k``/``K``/``I``/``H`` do no overflow check (``-1`` becomes ``2**64 - 1``); ``i`` does, and an
out-of-range int fails the parse.

A function declared with the empty format ``""`` takes no arguments and, like pyACL's wrappers that never call
``PyArg_ParseTuple``, ignores any positional arguments it is given; keyword arguments still fail the parse
(every pyACL entry is ``METH_VARARGS``, so CPython itself refuses them).

Each wrapper's code is written out for its shape (format, return convention) and compiled at the first call of
a wrapper of that shape (``_wrapper``): the common call (every argument a plain int in range, a plain ASCII str,
or an ``O``) is tested by name in one expression and passed on by position, with no parse; anything else goes
through ``parse``. Both paths end alike. The wrappers of
the hot calls (``execute_v2``, ``synchronize_stream``, ``launch_callback``) are entered through a runtime function
that does the common call whole in its own frame (``api``'s ``entry``, ``openacl.runtime.entry``), two Python
frames less, which on a call of a few microseconds is a
measurable share.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import operator
import os
import sys
import types
import warnings
from collections.abc import Callable

from openacl.errors import AclCode, AclError
from openacl.log import get_logger
from openacl.runtime import exceptions as _exceptions
from openacl.runtime.threads import ThreadFailed

log = get_logger("acl")

_U64 = (1 << 64) - 1
_U32 = (1 << 32) - 1
_U16 = (1 << 16) - 1

RET = "ret"  # returns the code
VALUE = "value"  # returns (value, code)
VALUES = "values"  # returns (*values, code)
BARE = "bare"  # returns the value alone; ``failure`` on error (pyACL's pointer-returning creators)
RAISE = "raise"  # returns the value alone; ValueError on error (acl.util helpers, which have no code)
CODE = "code"  # returns the value alone, the code itself on error (acl.rt.get_last_error: the value is a code)


class ArgumentTypeError(TypeError):
    """A TypeError that pyACL itself raises (parse failures, non-callable callbacks)."""


class ArgumentValueError(ValueError):
    """A ValueError that pyACL itself raises (e.g. ``bytes_to_ptr`` of a non-bytes object)."""


class ArgumentRuntimeError(RuntimeError):
    """A RuntimeError that pyACL itself raises (e.g. a VDEC/VENC send on a channel desc with no callback)."""


_PASS_THROUGH = (ArgumentTypeError, ArgumentValueError, ArgumentRuntimeError, ThreadFailed)


def _unsigned(mask: int) -> Callable[[object], int]:
    def convert(value: object) -> int:
        if not isinstance(value, int):
            raise TypeError
        return value & mask

    return convert


def _int32(value: object) -> int:
    if isinstance(value, float):
        raise TypeError
    number = operator.index(value)
    if not -(1 << 31) <= number < (1 << 31):
        raise OverflowError
    return number


def _string(value: object) -> str:
    if not isinstance(value, str) or "\x00" in value:
        raise TypeError
    value.encode("utf-8")  # lone surrogates fail here, as in CPython's "s"
    return value


def _double(value: object) -> float:
    """CPython's ``"d"``: a number (``__float__`` or ``__index__``); a string is a TypeError, not parsed."""
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError
    return float(operator.index(value)) if isinstance(value, int) else float(value)  # type: ignore[arg-type]


def _float32(value: object) -> float:
    """CPython's ``"f"``: anything with ``__float__`` (or ``__index__``), rounded to a C float (inf if too big)."""
    if isinstance(value, (str, bytes, bytearray)):
        raise TypeError
    number = float(value) if hasattr(type(value), "__float__") else float(operator.index(value))  # type: ignore[arg-type]
    return ctypes.c_float(number).value


def _int64(value: object) -> int:
    """``L``: a C long long, overflow-checked as CPython does."""
    if isinstance(value, float):
        raise TypeError
    number = operator.index(value)
    if not -(1 << 63) <= number < (1 << 63):
        raise OverflowError
    return number


def _checked(low: int, high: int) -> Callable[[object], int]:
    """CPython's range-checked small ints: ``b`` (an unsigned char, 0..255) and ``h`` (a short)."""

    def convert(value: object) -> int:
        if isinstance(value, float):
            raise TypeError
        number = operator.index(value)
        if not low <= number <= high:
            raise OverflowError
        return number

    return convert


def _uchar(value: object) -> int:
    """``B``: an unsigned char, truncated without a range check (``False`` is 0)."""
    if isinstance(value, float):
        raise TypeError
    return operator.index(value) & 0xFF


_CONVERTERS: dict[str, Callable[[object], object]] = {
    "k": _unsigned(_U64),
    "K": _unsigned(_U64),
    "I": _unsigned(_U32),
    "H": _unsigned(_U16),
    "i": _int32,
    "s": _string,
    "d": _double,
    "f": _float32,
    "L": _int64,
    "l": _int64,  # a C long: 64 bits on Linux
    "B": _uchar,
    "b": _checked(0, 0xFF),
    "h": _checked(-(1 << 15), (1 << 15) - 1),
    "O": lambda value: value,
}


# Formats whose converter returns a plain ``int`` argument unchanged when it lies in this range.
_PLAIN_RANGES: dict[str, tuple[int, int]] = {
    "k": (0, _U64),
    "K": (0, _U64),
    "I": (0, _U32),
    "H": (0, _U16),
    "i": (-(1 << 31), (1 << 31) - 1),
    "L": (-(1 << 63), (1 << 63) - 1),
    "l": (-(1 << 63), (1 << 63) - 1),
    "B": (0, 0xFF),
    "b": (0, 0xFF),
    "h": (-(1 << 15), (1 << 15) - 1),
}


def _plain_test(codes: str, names: list[str]) -> str | None:
    """The common call's shortcut, as one expression over the arguments ``names``: true when each is a plain int in
    its format's range, a plain ASCII str without NUL, or anything for ``O``. Every converter leaves such arguments
    as they are, so the wrapper passes them on without ``parse``. None for a format that always parses. Its text
    holds only ``names`` and ``_PLAIN_RANGES``' numbers."""
    if not codes or not all(c in _PLAIN_RANGES or c in "Os" for c in codes):
        return None
    terms = [
        f"type({a}) is str and {a}.isascii() and '\\x00' not in {a}"
        if c == "s"
        else f"type({a}) is int and {_PLAIN_RANGES[c][0]} <= {a} <= {_PLAIN_RANGES[c][1]}"
        for a, c in zip(names, codes, strict=True)
        if c != "O"
    ]
    return " and ".join(terms) or "True"


def plain_check(fmt: str) -> tuple[int, Callable[[tuple], bool]]:
    """``_plain_test`` as a function of the argument tuple: (how many arguments, the test); -1 for a format that
    always parses."""
    codes = fmt.replace("|", "")
    test = _plain_test(codes, [f"a[{i}]" for i in range(len(codes))])
    if test is None:
        return -1, lambda args: False
    return len(codes), eval(f"lambda a: {test}")


def parser(fmt: str, qualname: str) -> Callable[[tuple, dict], list]:
    """Build the argument parser for a ``PyArg_ParseTuple`` format (``""``: no arguments, extra ones ignored)."""
    ignore_extra = fmt == ""
    required = fmt.index("|") if "|" in fmt else len(fmt)
    codes = fmt.replace("|", "")
    converters = [_CONVERTERS[c] for c in codes]
    most = len(converters)
    message = f"{qualname} args parse failed"

    def parse(args: tuple, kwargs: dict) -> tuple | list:
        n = len(args)
        if kwargs or n < required or (n > most and not ignore_extra):
            raise ArgumentTypeError(message)
        try:
            return [convert(arg) for convert, arg in zip(converters, args, strict=False)]
        except (TypeError, ValueError, OverflowError):
            raise ArgumentTypeError(message) from None

    return parse


class FailureOf:
    """A ``failure`` value taken from the parsed arguments: pyACL functions such as ``set_dataset_tensor_desc``
    return one of their arguments with a failing ret (``FailureOf(lambda args: args[0])``)."""

    def __init__(self, value: Callable[[tuple | list], object]) -> None:
        self.value = value


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # src/openacl/


def warn(message: str) -> None:
    """A warning pyACL itself issues, attributed to the program's line that called the pyACL function (the first
    frame outside openacl), not to a facade body or the ``@api`` wrapper: pyACL's C wrappers have no frames."""
    frame, level = sys._getframe(1), 2  # stacklevel 2: the caller of this function
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, Warning, stacklevel=level)


# The wrapper's code, written out per shape: its arguments unpacked and tested by name, the body called with
# them by position, and its return convention fixed (a loop, a ``*args`` call and a test of ``returns`` on every
# call cost as much as a small body). Its two halves differ only in how the arguments get there.
_WRAPPER = """\
def wrapper(*args, **kwargs):
{tail}"""

# With a common call (``_plain_test``): the arguments are positional-only parameters, which a call binds with no
# tuple to build and unpack; one left at ``_ABSENT`` (never an argument: the module's own) means fewer were given.
# A keyword argument, even one named as a parameter, lands in ``kwargs`` and fails the parse, as in pyACL.
_WRAPPER_PLAIN = """\
def wrapper({params}, /, *args, **kwargs):
    if {last} is not _ABSENT and not args and not kwargs and {test}:
        try:
            value = _body({names})
        except _PASS_THROUGH:
            raise
        except Exception as exc:
            return _failed(exc, ({names}))
        return {success}
    args = _given(({names})) + args
{tail}"""

_TAIL = """\
    args = _parse(args, kwargs)
    try:
        value = _body(*args)
    except _PASS_THROUGH:
        raise
    except Exception as exc:
        return _failed(exc, args)
    return {success}
"""

_SUCCESS = {RET: "0", CODE: "value", VALUE: "value, 0", VALUES: "(*value, 0)", BARE: "value", RAISE: "value"}


class _Absent:
    """A parameter no argument was given for (``_WRAPPER_PLAIN``)."""

    __slots__ = ()


_ABSENT = _Absent()


def _given(values: tuple) -> tuple:
    """The arguments a call of a plain-shaped wrapper gave: its parameters up to the first one left absent."""
    for count, value in enumerate(values):
        if value is _ABSENT:
            return values[:count]
    return values


# The wrappers' file name: inside the package, so ``warn`` and ``openacl check`` look past their frames to the
# program's line (as past pyACL's C wrappers, which have none). A wrapper's function has its body's name, which
# is what ``openacl check`` reads as the pyACL function called.
_WRAPPER_FILE = os.path.join(_PACKAGE, "acl", "<api wrapper>")


@functools.cache
def _wrapper_code(codes: str, returns: str) -> types.CodeType:
    """The code of every wrapper of one shape (format letters and return convention), compiled
    once, when the first wrapper of the shape is first called (``_wrapper``)."""
    names = [f"a{i}" for i in range(len(codes))]
    test = _plain_test(codes, names)
    success = _SUCCESS[returns]
    tail = _TAIL.format(success=success)
    if test is None:
        return _compiled(_WRAPPER.format(tail=tail))
    listed = ", ".join(names) + ","
    return _compiled(
        _WRAPPER_PLAIN.format(
            params=", ".join(f"{name}=_ABSENT" for name in names),
            last=names[-1],
            test=f"({test})",
            names=listed,
            success=success,
            tail=tail,
        )
    )


def _compiled(source: str) -> types.CodeType:
    scope: dict = {"_ABSENT": _ABSENT}  # (a plain shape's defaults; its wrappers get them from ``_wrapper``)
    exec(compile(source, _WRAPPER_FILE, "exec"), scope)  # its text: the templates above, names and numbers
    return scope["wrapper"].__code__


# A wrapper's code until its first call, which puts its shape's code in its place and calls that.
_STUB = _compiled("def wrapper(*args, **kwargs):\n    return _specialized()(*args, **kwargs)\n")


def _wrapper(body: Callable, fmt: str, returns: str, parse: Callable, failed: Callable) -> Callable:
    """``body`` behind pyACL's calling convention (see ``api``): a function with this function's name and globals of
    its own (the body, its parser, its failure path), whose code is its shape's (``_wrapper_code``).

    That code is put in place by the first call, not here: a process declares hundreds of pyACL functions in a few
    dozen shapes and calls few of them, and compiling every shape would add milliseconds to ``import acl``. Two
    threads making a first call at once both put the same code in place."""
    name = body.__name__ if body.__name__.isidentifier() else "wrapper"  # (a lambda's is not)
    shape = (fmt.replace("|", ""), returns)
    scope = {
        "_body": body,
        "_parse": parse,
        "_failed": failed,
        "_PASS_THROUGH": _PASS_THROUGH,
        "_ABSENT": _ABSENT,
        "_given": _given,
    }
    wrapper = types.FunctionType(_STUB.replace(co_name=name, co_qualname=name), scope, name)

    def specialized() -> Callable:
        code = _wrapper_code(*shape).replace(co_name=name, co_qualname=name)
        wrapper.__defaults__ = (_ABSENT,) * code.co_posonlyargcount or None  # before the code: a racing call
        wrapper.__code__ = code  # that sees the new code finds its defaults
        return wrapper

    scope["_specialized"] = specialized
    return wrapper


def api(
    fmt: str,
    returns: str = RET,
    failure: object = 0,
    sub: str | None = None,
    entry: Callable[[Callable], Callable] | None = None,
):
    """Declare a pyACL function: its argument format and its return convention.

    ``entry`` (for a ``RET`` function's hot path): a runtime factory given the finished wrapper, returning
    the function the program calls. That function does the common call in its own frame and hands every other
    call, untouched, to the wrapper (``openacl.runtime.entry``): the common call costs one frame, not the
    wrapper's and a body's. It carries the wrapper's name and attributes; it must test its arguments as the
    wrapper's parse would accept them, and raise nothing the wrapper would have turned into a code (an entry
    that cannot allocate hands the call on, having done nothing).
    """
    if entry is not None and returns != RET:
        raise ValueError("api: entry is for functions that return their code only")

    def decorate(body: Callable) -> Callable:
        module = sub if sub is not None else body.__module__.rpartition(".")[2]
        qualname = f"acl.{body.__name__}" if module == "acl" else f"acl.{module}.{body.__name__}"
        parse = parser(fmt, qualname)

        def fail(code: int, parsed: tuple | list = ()):
            if returns == RAISE:  # no code to return: a number where bytes or an array is expected would mislead
                raise ArgumentValueError(f"{qualname}: {AclCode(code).name}({code})") from None
            if returns == VALUE and isinstance(failure, FailureOf):
                return failure.value(parsed), code
            if returns == VALUE:
                # a fresh {} / [] each time: pyACL builds a new object per call, and a caller may mutate it
                return (copy.copy(failure) if isinstance(failure, (dict, list)) else failure), code
            if returns == VALUES:
                return (*failure, code)  # type: ignore[misc]
            if returns == BARE:
                return failure
            return code  # RET, CODE

        def failed(exc: Exception, parsed: tuple | list):
            """What the call returns (or raises) when its body raised ``exc``; called in its ``except`` block."""
            if isinstance(exc, AclError):
                log.log(exc.level, "%s: %s", qualname, exc)
                _exceptions.record_failure(qualname, exc)
                if returns == RAISE:
                    raise ArgumentValueError(f"{qualname}: {exc.detail or exc}") from None
                return fail(int(exc.code), parsed)
            if isinstance(exc, MemoryError):
                log.error("%s: out of host memory", qualname)
                _exceptions.record_failure(qualname, AclError(AclCode.ACL_ERROR_BAD_ALLOC, "out of host memory"))
                return fail(int(AclCode.ACL_ERROR_BAD_ALLOC), parsed)
            log.exception("%s: internal error", qualname)
            _exceptions.record_failure(qualname, AclError(AclCode.ACL_ERROR_INTERNAL_ERROR))
            return fail(int(AclCode.ACL_ERROR_INTERNAL_ERROR), parsed)

        wrapper = _wrapper(body, fmt, returns, parse, failed)
        functools.update_wrapper(wrapper, body)
        wrapper.acl_name = qualname  # type: ignore[attr-defined]
        wrapper.acl_format = fmt  # type: ignore[attr-defined]  # the PyArg format, for tools and tests
        wrapper.acl_returns = returns  # type: ignore[attr-defined]
        wrapper.acl_failure = failure  # type: ignore[attr-defined]  # what a failed call returns (VALUE, BARE)
        if entry is not None:
            return functools.update_wrapper(entry(wrapper), wrapper)
        return wrapper

    return decorate


def convert_one(code: str, value: object, qualname: str) -> object:
    """One argument parsed with format letter ``code`` later than the tuple itself (pyACL's ``PyArg_Parse`` of an
    ``O`` argument, as ``acl.mdl.set_config_opt`` does once it knows the attribute)."""
    try:
        return _CONVERTERS[code](value)
    except (TypeError, ValueError, OverflowError):
        raise ArgumentTypeError(f"{qualname} args parse failed") from None


def handle_list(value: object, qualname: str, what: str) -> list[int]:
    """A ``list`` of int handles (pyACL's ``O`` + ``PyList_Check``): a tuple or a non-int element is a TypeError."""
    if type(value) is not list:
        if not isinstance(value, list):
            raise ArgumentTypeError(f"{qualname}: argument {what} is not list")
        value = list(value)
    for item in value:
        if type(item) is not int or not 0 <= item <= _U64:  # the common call: plain handles, returned as they are
            break
    else:
        return value
    if not all(isinstance(item, int) for item in value):
        raise ArgumentTypeError(f"{qualname}: argument {what} holds an element that is not an int")
    return [item & _U64 for item in value]


def int_list(value: object, qualname: str, what: str) -> list[int]:
    """A ``list`` of ints (dims, shape ranges' bounds): anything else is pyACL's parse TypeError."""
    if not isinstance(value, list) or not all(
        isinstance(item, int) and -(1 << 63) <= item < (1 << 63) for item in value
    ):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    return [int(item) for item in value]


def require_callable(fn: object) -> None:
    if not callable(fn):
        raise ArgumentTypeError("parameter must be callable")


def malloc_config(cfg: object, qualname: str) -> list[tuple[int, int]]:
    """pyACL's aclrtMallocConfig dict (``{}``: none; ``{"numAttrs": n, "attrs": [{"attr": a, "value": {"moduleId"
    | "deviceId" | "rsv": v}}]}``) as (attribute, value) pairs; anything else is its parse TypeError."""
    if not isinstance(cfg, dict):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    if not cfg:
        return []
    attrs = cfg.get("attrs")
    count = cfg.get("numAttrs", len(attrs) if isinstance(attrs, list) else 0)
    if not isinstance(attrs, list) or not isinstance(count, int) or not 0 <= count <= len(attrs):
        raise ArgumentTypeError(f"{qualname} args parse failed")
    pairs = []
    for item in attrs[:count]:
        value = item.get("value") if isinstance(item, dict) else None
        numbers = [v for v in value.values() if isinstance(v, int)] if isinstance(value, dict) else []
        if len(numbers) != 1 or not isinstance(item.get("attr"), int):  # a value dict means item is a dict
            raise ArgumentTypeError(f"{qualname} args parse failed")
        pairs.append((item["attr"], numbers[0]))
    return pairs
