"""``aclTransTensorDescFormat``: the desc a tensor has in another format, its dims rearranged by that format's rule.

Plain layouts are permutations of one another (NCHW, NHWC, HWCN). The device's fractal layouts split an axis into
blocks: NC1HWC0 is ``[N, ceil(C / C0), H, W, C0]`` and FRACTAL_NZ turns the last two dims ``[m, n]`` into
``[ceil(n / C0), ceil(m / 16), 16, C0]``, with C0 = 32 for 1-byte types and 16 otherwise. A dynamic dim (-1)
stays dynamic where it is split. Any other pair of formats is ``ACL_ERROR_FORMAT_NOT_MATCH``.
"""

from __future__ import annotations

from openacl.dtypes import AclFormat, acl_dtype_size
from openacl.errors import AclCode, AclError
from openacl.op import tensor_desc as _desc

_PLAIN = {AclFormat.ACL_FORMAT_NCHW: "NCHW", AclFormat.ACL_FORMAT_NHWC: "NHWC", AclFormat.ACL_FORMAT_HWCN: "HWCN"}
_BLOCK = 16


def _c0(dtype: int) -> int:
    return 32 if acl_dtype_size(dtype) == 1 else 16


def _blocks(dim: int, size: int) -> int:
    return -1 if dim < 0 else -(-dim // size)


def trans_dims(dims: tuple[int, ...], dtype: int, src: int, dst: int) -> tuple[int, ...]:
    """``dims`` of a ``src``-format tensor, as a ``dst``-format tensor holds them."""
    if src == dst:
        return dims
    if src in _PLAIN and len(dims) == 4:
        axes = dict(zip(_PLAIN[src], dims, strict=True))
        if dst in _PLAIN:
            return tuple(axes[a] for a in _PLAIN[dst])
        if dst == AclFormat.ACL_FORMAT_NC1HWC0:
            c0 = _c0(dtype)
            return axes["N"], _blocks(axes["C"], c0), axes["H"], axes["W"], c0
    if dst == AclFormat.ACL_FORMAT_FRACTAL_NZ and len(dims) >= 2 and src in (*_PLAIN, AclFormat.ACL_FORMAT_ND):
        c0 = _c0(dtype)
        *batch, m, n = dims
        return *batch, _blocks(n, c0), _blocks(m, _BLOCK), _BLOCK, c0
    raise AclError(
        AclCode.ACL_ERROR_FORMAT_NOT_MATCH, f"no rule turns a {len(dims)}-dim format {src} tensor into format {dst}"
    )


def trans_format(handle: int, dst_format: int) -> int:
    """A new desc: the same tensor in ``dst_format`` (the caller destroys it)."""
    src = _desc.get(handle)
    if src.dims == (_desc.UNKNOWN_RANK_DIM,):
        raise AclError(AclCode.ACL_ERROR_INVALID_PARAM, "a desc of unknown rank has no dims to rearrange")
    dims = trans_dims(src.dims, src.dtype, src.format, dst_format)
    made = _desc.create(src.dtype, list(dims), dst_format)
    _desc.get(made).name = src.name
    return made
