"""Device storage layouts of CANN dumps, converted back to the model's layout (and forth, for tests and tools).

An NPU stores many tensors in its own layouts; a dump header gives the stored ``format`` and ``shape`` and the
model's ``original_shape``. :func:`to_original` turns the stored array into the original format and shape.
Stored shapes carry their block sizes, so nothing is guessed: ``NC1HWC0`` is ``(N, C1, H, W, C0)`` with
``C1 = ceil(C / C0)``, ``FRACTAL_Z`` (conv weights) is ``(C1*H*W, N1, N0, C0)`` with ``N1 = ceil(N / N0)``,
``FRACTAL_NZ`` (matrices) is ``(..., W1, H1, H0, W0)`` for an ``(..., H, W)`` matrix with ``H1 = ceil(H / H0)``,
``W1 = ceil(W / W0)``; ``NC1HWC0_C04`` (the first convolution's input) is ``NC1HWC0`` with ``C0 = 4``;
``FRACTAL_Z_3D`` (Conv3D weights) is ``(D*C1*H*W, N1, N0, C0)``, ``FRACTAL_Z`` with the depth outermost, as GE's
DHWCN-to-FRACTAL_Z_3D transfer lays it out. Padding added to fill a block is dropped. CANN's block is 16
elements, except ``C0`` of 8-bit dtypes, which is 32 (one 32-byte block): :func:`default_c0` says which, for
:func:`from_original`.

Plain permutations (NCHW, NHWC, HWCN, CHWN, NCDHW, NDHWC, DHWCN) convert between each other; ND is the
identity. Any other format is :class:`LayoutError` (a ``ValueError``): such a tensor is reported, never compared
as if it were in the golden layout.
"""

from __future__ import annotations

import math

import numpy as np

from openacl.dtypes import FORMAT_NAMES

__all__ = [
    "LayoutError",
    "default_c0",
    "format_number",
    "from_original",
    "original_layout",
    "permute",
    "to_layout",
    "to_original",
]

_NUMBERS = {name: number for number, name in FORMAT_NAMES.items()}
#: Axis letters of the plain formats that are permutations of each other.
_PLAIN = {"NCHW": "NCHW", "NHWC": "NHWC", "HWCN": "HWCN", "CHWN": "CHWN", "NCDHW": "NCDHW", "NDHWC": "NDHWC",
          "DHWCN": "DHWCN"}  # fmt: skip
BLOCK = 16


class LayoutError(ValueError):
    """A stored layout that cannot be converted to the one asked for (unknown format, shapes that disagree)."""


def format_number(name: str) -> int:
    """The ``OutputFormat`` number of a format name such as ``"NCHW"`` (``FORMAT_`` prefix allowed)."""
    key = name.upper().removeprefix("FORMAT_")
    if key not in _NUMBERS:
        raise LayoutError(f"unknown format {name!r}")
    return _NUMBERS[key]


def _name(number: int) -> str:
    return FORMAT_NAMES.get(number, f"format {number}")


def default_c0(dtype: np.dtype) -> int:
    """CANN's C0 for a dtype: 32 bytes' worth for 8-bit types (32), else 16 elements."""
    return 32 if np.dtype(dtype).itemsize == 1 else BLOCK


def original_layout(stored_format: int, original_format: int | None = None) -> str:
    """The format name :func:`to_original` returns a tensor in: ``original_format``, else the one the stored
    layout comes from (see :func:`to_original`; a plain one itself)."""
    if original_format is not None and original_format in FORMAT_NAMES:
        return FORMAT_NAMES[original_format]
    natural = {name: natural for name, (_, natural) in _CONVERTERS.items()}
    name = _name(stored_format)
    return natural.get(name, name)


def to_layout(array: np.ndarray, source: str, target: str) -> np.ndarray:
    """``array`` in ``source`` moved to ``target`` when both are plain formats of the same axes; else as it is."""
    if source != target and source in _PLAIN and target in _PLAIN and sorted(source) == sorted(target):
        return permute(array, source, target)
    return array


def permute(array: np.ndarray, source: str, target: str) -> np.ndarray:
    """``array`` in plain format ``source`` (e.g. ``"NHWC"``) transposed to ``target`` (e.g. ``"NCHW"``)."""
    if sorted(source) != sorted(target) or array.ndim != len(source):
        raise LayoutError(f"cannot permute a {array.ndim}-D {source} tensor to {target}")
    return np.transpose(array, [source.index(axis) for axis in target])


def _check(stored: tuple[int, ...], expected: tuple[int, ...], what: str) -> None:
    if stored != expected:
        raise LayoutError(f"{what}: stored shape {list(stored)} does not fit the original (expected {list(expected)})")


def _nc1hwc0_to_nchw(array: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    if array.ndim != 5 or len(original) != 4:
        raise LayoutError(f"NC1HWC0 needs a 5-D stored and a 4-D original shape, got {array.shape} and {original}")
    n, c1, h, w, c0 = array.shape
    _check((n, c1, h, w), (original[0], math.ceil(original[1] / c0), original[2], original[3]), "NC1HWC0")
    return array.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, : original[1]]


def _ndc1hwc0_to_ncdhw(array: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    if array.ndim != 6 or len(original) != 5:
        raise LayoutError(f"NDC1HWC0 needs a 6-D stored and a 5-D original shape, got {array.shape} and {original}")
    n, d, c1, h, w, c0 = array.shape
    _check((n, d, c1, h, w), (original[0], original[2], math.ceil(original[1] / c0), original[3], original[4]),
           "NDC1HWC0")  # fmt: skip
    return array.transpose(0, 2, 5, 1, 3, 4).reshape(n, c1 * c0, d, h, w)[:, : original[1]]


def _fractal_z_to_nchw(array: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    if array.ndim != 4 or len(original) != 4:
        raise LayoutError(f"FRACTAL_Z needs 4-D stored and original shapes, got {array.shape} and {original}")
    n, c, h, w = original
    c1hw, n1, n0, c0 = array.shape
    c1 = math.ceil(c / c0)
    _check((c1hw, n1), (c1 * h * w, math.ceil(n / n0)), "FRACTAL_Z")
    blocks = array.reshape(c1, h, w, n1, n0, c0).transpose(3, 4, 0, 5, 1, 2)
    return blocks.reshape(n1 * n0, c1 * c0, h, w)[:n, :c]


def _fractal_z_3d_to_ncdhw(array: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    if array.ndim != 4 or len(original) != 5:
        raise LayoutError(f"FRACTAL_Z_3D needs a 4-D stored and a 5-D original shape, got {array.shape} and {original}")
    n, c, d, h, w = original
    dc1hw, n1, n0, c0 = array.shape
    c1 = math.ceil(c / c0)
    _check((dc1hw, n1), (d * c1 * h * w, math.ceil(n / n0)), "FRACTAL_Z_3D")
    blocks = array.reshape(d, c1, h, w, n1, n0, c0).transpose(4, 5, 1, 6, 0, 2, 3)
    return blocks.reshape(n1 * n0, c1 * c0, d, h, w)[:n, :c]


def _fractal_nz_to_nd(array: np.ndarray, original: tuple[int, ...]) -> np.ndarray:
    if array.ndim < 4 or not original:
        raise LayoutError(f"FRACTAL_NZ needs at least a 4-D stored shape, got {array.shape} for {original}")
    matrix = (1, *original) if len(original) == 1 else original
    *batch, rows, cols = matrix
    w1, h1, h0, w0 = array.shape[-4:]
    _check(tuple(array.shape[:-4]), tuple(batch), "FRACTAL_NZ batch")
    _check((w1, h1), (math.ceil(cols / w0), math.ceil(rows / h0)), "FRACTAL_NZ")
    axes = len(batch)
    order = [*range(axes), axes + 1, axes + 2, axes, axes + 3]  # (..., H1, H0, W1, W0)
    full = array.transpose(order).reshape(*batch, h1 * h0, w1 * w0)[..., :rows, :cols]
    return full.reshape(original)


#: Each device layout's reader and the plain format it gives back.
_CONVERTERS = {
    "NC1HWC0": (_nc1hwc0_to_nchw, "NCHW"),
    "NC1HWC0_C04": (_nc1hwc0_to_nchw, "NCHW"),  # C0 is read from the stored shape
    "NDC1HWC0": (_ndc1hwc0_to_ncdhw, "NCDHW"),
    "FRACTAL_Z": (_fractal_z_to_nchw, "NCHW"),
    "FRACTAL_Z_3D": (_fractal_z_3d_to_ncdhw, "NCDHW"),
    "FRACTAL_NZ": (_fractal_nz_to_nd, "ND"),
}


def to_original(
    array: np.ndarray, stored_format: int, original_shape: tuple[int, ...] | None, original_format: int | None = None
) -> np.ndarray:
    """``array`` (stored in ``stored_format``) in ``original_format`` with ``original_shape``.

    ``original_format`` defaults to the format the device layout comes from (NCHW for NC1HWC0, NC1HWC0_C04 and
    FRACTAL_Z, NCDHW for NDC1HWC0 and FRACTAL_Z_3D, ND for FRACTAL_NZ). A plain or ND array whose
    ``original_shape`` is missing or equal to its shape comes back as it is. ``LayoutError`` for a format it
    does not know or shapes that disagree.
    """
    name = _name(stored_format)
    original = tuple(original_shape) if original_shape else None
    if name in ("ND", *_PLAIN):
        if original is not None and original != array.shape:
            if math.prod(original) != array.size:
                raise LayoutError(f"{name}: stored shape {list(array.shape)} does not hold original {list(original)}")
            array = array.reshape(original)
        if original_format is not None and name in _PLAIN and _name(original_format) in _PLAIN:
            return permute(array, _PLAIN[name], _PLAIN[_name(original_format)])
        return array
    if original is None:
        raise LayoutError(f"a {name} tensor needs its original shape, and the header has none")
    if name not in _CONVERTERS:
        raise LayoutError(f"stored format {name} cannot be converted")
    convert, natural = _CONVERTERS[name]
    target = _name(original_format) if original_format is not None else natural
    if target in _PLAIN and natural in _PLAIN and target != natural and len(original) == len(target):
        # the original shape is in `target` order (NHWC, say): convert in `natural` order, then permute
        natural_shape = tuple(original[target.index(axis)] for axis in natural)
        return permute(convert(array, natural_shape), natural, target)
    return convert(array, original)


def _pad_axis(array: np.ndarray, axis: int, multiple: int) -> np.ndarray:
    extra = -array.shape[axis] % multiple
    if not extra:
        return array
    widths = [(0, 0)] * array.ndim
    widths[axis] = (0, extra)
    return np.pad(array, widths)


def from_original(array: np.ndarray, stored_format: int, *, c0: int | None = None, block: int = BLOCK) -> np.ndarray:
    """``array`` (NCHW, NCDHW, or ND for FRACTAL_NZ) stored in ``stored_format``, padded with zeros as CANN pads.

    The inverse of :func:`to_original` (what a device would dump); ``c0`` defaults to :func:`default_c0` (4 for
    NC1HWC0_C04).
    """
    name = _name(stored_format)
    c0 = c0 or (4 if name == "NC1HWC0_C04" else default_c0(array.dtype))
    if name in ("NC1HWC0", "NC1HWC0_C04"):
        padded = _pad_axis(array, 1, c0)
        n, c, h, w = padded.shape
        return np.ascontiguousarray(padded.reshape(n, c // c0, c0, h, w).transpose(0, 1, 3, 4, 2))
    if name == "NDC1HWC0":
        padded = _pad_axis(array, 1, c0)
        n, c, d, h, w = padded.shape
        return np.ascontiguousarray(padded.reshape(n, c // c0, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))
    if name == "FRACTAL_Z":
        padded = _pad_axis(_pad_axis(array, 0, block), 1, c0)
        n, c, h, w = padded.shape
        blocks = padded.reshape(n // block, block, c // c0, c0, h, w).transpose(2, 4, 5, 0, 1, 3)
        return np.ascontiguousarray(blocks.reshape(c // c0 * h * w, n // block, block, c0))
    if name == "FRACTAL_Z_3D":
        padded = _pad_axis(_pad_axis(array, 0, block), 1, c0)
        n, c, d, h, w = padded.shape
        blocks = padded.reshape(n // block, block, c // c0, c0, d, h, w).transpose(4, 2, 5, 6, 0, 1, 3)
        return np.ascontiguousarray(blocks.reshape(d * (c // c0) * h * w, n // block, block, c0))
    if name == "FRACTAL_NZ":
        matrix = array.reshape(1, -1) if array.ndim == 1 else array
        padded = _pad_axis(_pad_axis(matrix, -1, block), -2, block)
        *batch, rows, cols = padded.shape
        tiles = padded.reshape(*batch, rows // block, block, cols // block, block)
        axes = len(batch)
        order = [*range(axes), axes + 2, axes, axes + 1, axes + 3]  # (..., W1, H1, H0, W0)
        return np.ascontiguousarray(tiles.transpose(order))
    if name in ("ND", *_PLAIN):
        return array
    raise LayoutError(f"stored format {name} cannot be produced")
