"""What the hot calls' entries share (``acl._args.api``'s ``entry``).

An entry is the function a program calls for one of the calls made thousands of times a second
(``launch_callback``, ``synchronize_stream``, ``execute_v2``): it does the common call in its own frame and hands
every other call, untouched, to the facade's wrapper (its parse, checks, codes and log lines). Its parameters
default to ``NOT_GIVEN``, so a call with fewer arguments reaches the wrapper with exactly the ones given.
"""

from __future__ import annotations

from collections.abc import Callable


class _NotGiven:
    """An argument the entry's caller left out."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<not given>"


NOT_GIVEN = _NotGiven()


def hand_on(whole: Callable[..., int], given: tuple, args: tuple, kwargs: dict) -> int:
    """``whole`` called as the program called the entry: ``given`` (the entry's parameters, ``NOT_GIVEN`` for the
    ones left out, which only trailing ones can be), then ``args`` and ``kwargs``."""
    return whole(*[value for value in given if value is not NOT_GIVEN], *args, **kwargs)
