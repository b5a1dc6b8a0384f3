"""Single-operator programs written like Ascend's samples run unmodified under ``openacl run``."""

from __future__ import annotations

from tests.conformance.test_examples import ROOT, run

PROGRAMS = ROOT / "tests" / "conformance" / "programs"


def test_single_op_add_sample_runs_unmodified(tmp_path):
    result = run("run", str(PROGRAMS / "single_op_add.py"), str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[SingleOp] Add success" in result.stdout
    assert "[SingleOp] ArgMaxV2 success" in result.stdout
    assert "argmax of the sum: 10" in result.stdout
    assert "single operator sample passed" in result.stdout


def test_blas_gemm_sample_runs_unmodified(tmp_path):
    result = run("run", str(PROGRAMS / "blas_gemm.py"), str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "[CBLAS] gemm_ex success" in result.stdout
    assert "[CBLAS] s8gemm by handle success" in result.stdout
    assert "cblas sample passed" in result.stdout
