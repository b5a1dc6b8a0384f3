"""``acl.blas``: GEMM/GEMV through the operator library's GEMM, checked against numpy, on streams."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import acl
from openacl.errors import AclCode
from tests.conftest import hold_stream
from tests.op.conftest import from_device, to_device

F16, F32, I8, I32 = 1, 0, 2, 3
NUMPY = {F16: np.float16, F32: np.float32, I8: np.int8, I32: np.int32}
N, T = 0, 1
INVALID = AclCode.ACL_ERROR_INVALID_PARAM
UNSUPPORTED = AclCode.ACL_ERROR_UNSUPPORTED_DATA_TYPE
TRANS = [(N, N), (N, T), (T, N), (T, T)]

rng = np.random.default_rng(7)


def values(dtype, shape) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return rng.integers(-8, 8, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(dtype)


def scalar(value, dtype) -> int:
    return to_device(np.array([value], dtype))


def close(actual: np.ndarray, expected: np.ndarray) -> None:
    if actual.dtype.kind == "i":
        np.testing.assert_array_equal(actual, expected)
    else:
        tol = 2e-2 if actual.dtype == np.float16 else 1e-4
        np.testing.assert_allclose(actual.astype(np.float64), expected, rtol=tol, atol=tol)


class Gemm:
    """Matrices for C = alpha * op(A) @ op(B) + beta * C on the device, and numpy's answer."""

    def __init__(self, ta: int, tb: int, dtypes: tuple[int, int, int], m=3, n=4, k=5, alpha=1.5, beta=-0.5):
        self.ta, self.tb, self.m, self.n, self.k = ta, tb, m, n, k
        da, db, dc = (NUMPY[t] for t in dtypes)
        if np.dtype(dc).kind == "i":
            alpha, beta = 3, -2
        self.a = values(da, (k, m) if ta else (m, k))
        self.b = values(db, (n, k) if tb else (k, n))
        self.c = values(dc, (m, n))
        self.dc = dc
        self.pa, self.pb, self.pc = to_device(self.a), to_device(self.b), to_device(self.c)
        self.alpha, self.beta = scalar(alpha, dc), scalar(beta, dc)
        a = self.a.T if ta else self.a
        b = self.b.T if tb else self.b
        self.expected = alpha * (a.astype(np.float64) @ b.astype(np.float64)) + beta * self.c.astype(np.float64)

    def result(self) -> np.ndarray:
        return from_device(self.pc, self.dc, (self.m, self.n))


@pytest.mark.parametrize(("ta", "tb"), TRANS)
@pytest.mark.parametrize("dtypes", [(F16, F16, F16), (F16, F16, F32), (I8, I8, F32), (I8, I8, I32)])
def test_gemm_ex_matches_numpy(stream, ta, tb, dtypes):
    g = Gemm(ta, tb, dtypes)
    ret = acl.blas.gemm_ex(
        ta,
        tb,
        N,
        g.m,
        g.n,
        g.k,
        g.alpha,
        g.pa,
        -1,
        dtypes[0],
        g.pb,
        -1,
        dtypes[1],
        g.beta,
        g.pc,
        -1,
        dtypes[2],
        0,
        stream,
    )
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
    close(g.result(), g.expected)


@pytest.mark.parametrize(("ta", "tb"), TRANS)
def test_hgemm_and_s8gemm_match_numpy(stream, ta, tb):
    h = Gemm(ta, tb, (F16, F16, F16))
    lda, ldb = h.a.shape[1], h.b.shape[1]  # the dense leading dimensions are accepted as well as -1
    assert acl.blas.hgemm(ta, tb, N, h.m, h.n, h.k, h.alpha, h.pa, lda, h.pb, ldb, h.beta, h.pc, h.n, 1, stream) == 0
    s = Gemm(ta, tb, (I8, I8, I32))
    assert acl.blas.s8gemm(ta, tb, N, s.m, s.n, s.k, s.alpha, s.pa, -1, s.pb, -1, s.beta, s.pc, -1, 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    close(h.result(), h.expected)
    close(s.result(), s.expected)


class Gemv:
    """y = alpha * op(A) x + beta * y with A stored [m, n]."""

    def __init__(self, trans: int, dtypes: tuple[int, int, int], m=4, n=6):
        da, dx, dy = (NUMPY[t] for t in dtypes)
        alpha, beta = (3, -2) if np.dtype(dy).kind == "i" else (0.75, 2.0)
        self.m, self.n, self.dy = m, n, dy
        self.a = values(da, (m, n))
        op_a = self.a.T if trans else self.a
        self.x = values(dx, (op_a.shape[1],))
        self.y = values(dy, (op_a.shape[0],))
        self.pa, self.px, self.py = to_device(self.a), to_device(self.x), to_device(self.y)
        self.alpha, self.beta = scalar(alpha, dy), scalar(beta, dy)
        self.expected = alpha * (op_a.astype(np.float64) @ self.x.astype(np.float64)) + beta * self.y.astype(np.float64)

    def result(self) -> np.ndarray:
        return from_device(self.py, self.dy, self.y.shape)


@pytest.mark.parametrize("trans", [N, T])
@pytest.mark.parametrize("dtypes", [(F16, F16, F16), (F16, F16, F32), (I8, I8, F32), (I8, I8, I32)])
def test_gemv_ex_matches_numpy(stream, trans, dtypes):
    v = Gemv(trans, dtypes)
    da, dx, dy = dtypes
    ret = acl.blas.gemv_ex(trans, v.m, v.n, v.alpha, v.pa, -1, da, v.px, -1, dx, v.beta, v.py, -1, dy, 0, stream)
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 0
    close(v.result(), v.expected)


@pytest.mark.parametrize("trans", [N, T])
def test_hgemv_and_s8gemv_match_numpy(stream, trans):
    h, s = Gemv(trans, (F16, F16, F16)), Gemv(trans, (I8, I8, I32))
    assert acl.blas.hgemv(trans, h.m, h.n, h.alpha, h.pa, h.n, h.px, 1, h.beta, h.py, 1, 0, stream) == 0
    assert acl.blas.s8gemv(trans, s.m, s.n, s.alpha, s.pa, -1, s.px, -1, s.beta, s.py, -1, 0, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    close(h.result(), h.expected)
    close(s.result(), s.expected)


def test_gemv_ex_reads_incy_for_incx_as_pyacl_does(stream):
    v = Gemv(N, (F16, F16, F16))
    # incx 7 would be refused; pyACL's wrapper hands incy (-1) to C in its place
    assert acl.blas.gemv_ex(N, v.m, v.n, v.alpha, v.pa, -1, F16, v.px, 7, F16, v.beta, v.py, -1, F16, 0, stream) == 0
    assert acl.blas.hgemv(N, v.m, v.n, v.alpha, v.pa, -1, v.px, 7, v.beta, v.py, -1, 0, stream) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    close(v.result(), v.expected)


def test_the_result_appears_when_the_stream_reaches_the_call(stream, gate):
    g = Gemm(N, N, (F16, F16, F32))
    hold_stream(stream, gate)
    assert (
        acl.blas.gemm_ex(
            N, N, N, g.m, g.n, g.k, g.alpha, g.pa, -1, F16, g.pb, -1, F16, g.beta, g.pc, -1, F32, 0, stream
        )
        == 0
    )
    np.testing.assert_array_equal(g.result(), g.c)  # queued behind the held task: C untouched
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    close(g.result(), g.expected)


def test_alpha_and_beta_are_read_when_the_operator_runs(stream, gate):
    g = Gemm(N, N, (F16, F16, F32), alpha=1.0, beta=0.0)
    hold_stream(stream, gate)
    assert (
        acl.blas.gemm_ex(
            N, N, N, g.m, g.n, g.k, g.alpha, g.pa, -1, F16, g.pb, -1, F16, g.beta, g.pc, -1, F32, 0, stream
        )
        == 0
    )
    other = np.array([2.0], np.float32).tobytes()
    assert acl.rt.memcpy(g.alpha, 4, acl.util.bytes_to_ptr(other), 4, 1) == 0  # before the stream gets there
    gate.set()
    assert acl.rt.synchronize_stream(stream) == 0
    close(g.result(), 2.0 * (g.a.astype(np.float64) @ g.b.astype(np.float64)))


def test_handles_run_with_execute_with_handle(stream):
    g = Gemm(T, N, (I8, I8, I32))
    handle, ret = acl.blas.create_handle_for_gemm_ex(T, N, N, g.m, g.n, g.k, I8, I8, I32, 0)
    assert ret == 0 and handle != 0
    sizes = [g.a.nbytes, g.b.nbytes, g.c.nbytes, 4, 4]
    ins = [acl.create_data_buffer(p, s) for p, s in zip((g.pa, g.pb, g.pc, g.alpha, g.beta), sizes, strict=True)]
    assert acl.op.execute_with_handle(handle, ins, [ins[2]], stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    close(g.result(), g.expected)
    assert acl.op.destroy_handle(handle) is None
    for make in (
        lambda: acl.blas.create_handle_for_hgemm(N, T, N, 2, 3, 4, 0),
        lambda: acl.blas.create_handle_for_s8gemm(N, N, N, 2, 3, 4, 1),
        lambda: acl.blas.create_handle_for_gemv_ex(T, 2, 3, F16, F16, F32, 0),
        lambda: acl.blas.create_handle_for_hgemv(N, 2, 3, 0),
        lambda: acl.blas.create_handle_for_s8gemv(T, 2, 3, 0),
    ):
        handle, ret = make()
        assert ret == 0 and handle != 0
        assert acl.op.destroy_handle(handle) is None


def test_gemv_handle_takes_x_and_y_as_columns(stream):
    v = Gemv(T, (F16, F16, F16))
    handle, ret = acl.blas.create_handle_for_hgemv(T, v.m, v.n, 0)
    assert ret == 0
    ptrs = (v.pa, v.px, v.py, v.alpha, v.beta)
    ins = [acl.create_data_buffer(p, s) for p, s in zip(ptrs, (v.a.nbytes, v.x.nbytes, v.y.nbytes, 2, 2), strict=True)]
    assert acl.op.execute_with_handle(handle, ins, [ins[2]], stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    close(v.result(), v.expected)


def test_bad_arguments_return_codes_and_queue_nothing(stream, caplog):
    g = Gemm(N, N, (F16, F16, F16))

    def call(ta=N, tb=N, tc=N, m=g.m, n=g.n, k=g.k, lda=-1, dtypes=(F16, F16, F16), ctype=0, a=g.pa, alpha=g.alpha):
        return acl.blas.gemm_ex(
            ta,
            tb,
            tc,
            m,
            n,
            k,
            alpha,
            a,
            lda,
            dtypes[0],
            g.pb,
            -1,
            dtypes[1],
            g.beta,
            g.pc,
            -1,
            dtypes[2],
            ctype,
            stream,
        )

    assert call(tc=T) == INVALID
    assert call(ta=2) == INVALID  # ACL_TRANS_NZ: fractal layouts are not read
    assert call(m=0) == INVALID
    assert call(k=-3) == INVALID
    assert call(lda=2) == INVALID
    assert call(ctype=5) == INVALID
    assert call(dtypes=(F32, F32, F32)) == UNSUPPORTED
    assert call(dtypes=(I8, F16, I32)) == UNSUPPORTED
    assert call(a=0) == INVALID
    assert call(a=g.pa + 8) == INVALID  # A's 30 bytes run past its allocation
    assert call(alpha=12345) == INVALID  # not memory openacl knows
    assert call(k=g.k + 1) == INVALID  # B is smaller than [k + 1, n]
    messages = [r.getMessage() for r in caplog.records]
    assert any("transC 1" in m for m in messages)
    assert any(m.startswith("acl.blas.gemm_ex: ") and ": A (30 bytes): " in m for m in messages)
    assert any(m.startswith("acl.blas.gemm_ex: ") and ": alpha (2 bytes): " in m for m in messages)
    assert acl.blas.create_handle_for_gemm_ex(N, N, N, 2, 3, 4, F16, F16, I32, 0) == (0, UNSUPPORTED)
    assert acl.blas.create_handle_for_hgemv(3, 2, 3, 0) == (0, INVALID)
    assert acl.blas.s8gemv(N, 0, 3, g.alpha, g.pa, -1, g.pb, -1, g.beta, g.pc, -1, 0, stream) == INVALID
    assert acl.blas.hgemm(N, N, N, 1, 1, 1, g.alpha, g.pa, -1, g.pb, -1, g.beta, g.pc, -1, 0, 0xDEAD) == INVALID
    assert acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(g.result(), g.c)  # nothing ran


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("gemm_ex", (0,) * 18),
        ("gemv_ex", (0,) * 16 + (0,)),
        ("hgemm", (0, 0, 0, 1, 1, 1, "alpha", 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        ("s8gemv", (0.5,) + (0,) * 12),
        ("create_handle_for_hgemv", (0, 1, 1)),
        ("create_handle_for_s8gemm", (0, 0, 0, 1, 1, 1, 2**40)),
    ],
)
def test_unparsable_arguments_raise_type_error(name, args):
    with pytest.raises(TypeError, match=f"acl.blas.{name} args parse failed"):
        getattr(acl.blas, name)(*args)


def test_many_threads_share_one_compiled_gemm(ctx):
    """Four threads, each with its own stream and matrices: every result is its own."""
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            assert acl.rt.set_context(ctx) == 0
            s, ret = acl.rt.create_stream()
            assert ret == 0
            for _ in range(5):
                g = Gemm(N, T, (F16, F16, F32))
                args = (g.alpha, g.pa, -1, F16, g.pb, -1, F16, g.beta, g.pc, -1, F32, 0, s)
                assert acl.blas.gemm_ex(N, T, N, g.m, g.n, g.k, *args) == 0
                assert acl.rt.synchronize_stream(s) == 0
                close(g.result(), g.expected)
            assert acl.rt.destroy_stream(s) == 0
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
