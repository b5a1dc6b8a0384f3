"""The vendor code table: exact numbers, messages for every code, the GE formula, and the exception types."""

from __future__ import annotations

import logging
import pickle

import pytest

from openacl.errors import (
    MESSAGES,
    AclCode,
    AclError,
    CodedError,
    GeError,
    GeStatus,
    code_name,
    ge_status_code,
    message,
)

SPEC_NUMBERS = {
    "ACL_ERROR_INVALID_PARAM": 100000,
    "ACL_ERROR_UNINITIALIZE": 100001,
    "ACL_ERROR_REPEAT_INITIALIZE": 100002,
    "ACL_ERROR_REPEAT_FINALIZE": 100037,
    "ACL_ERROR_DUMP_NOT_RUN": 100045,
    "ACL_ERROR_RT_CONTEXT_NULL": 107002,
    "ACL_ERROR_RT_STREAM_CONTEXT": 107003,
    "ACL_ERROR_RT_STREAM_SUBSCRIBE": 107011,
    "ACL_ERROR_RT_THREAD_SUBSCRIBE": 107012,
    "ACL_ERROR_RT_STREAM_NO_CB_REG": 107015,
    "ACL_ERROR_RT_INTERNAL_ERROR": 507000,
    "ACL_ERROR_RT_REPORT_TIMEOUT": 507012,
    "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT": 507046,
    "ACL_ERROR_RT_EVENT_SYNC_TIMEOUT": 507047,
    "ACL_ERROR_FAILURE": 500001,
    "ACL_ERROR_GE_PARAM_INVALID": 145000,
    "ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT": 545601,
}

RANGE_ENDS = {
    "ACL_ERROR_RT_CAPTURE_DEPENDENCY": 107024,
    "ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING": 107045,
    "ACL_ERROR_RT_LINK_TYPE_NOT_SUPPORTED": 207021,
    "ACL_ERROR_RT_KERNEL_UNREGISTERING": 507024,
    "ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW": 507045,
    "ACL_ERROR_RT_DEVICE_MEM_ERROR": 507053,
    "ACL_ERROR_RT_SUSPECT_REMOTE_ERROR": 507057,
    "ACL_ERROR_RT_AICPU_INFO_LOAD_RSP_ERR": 507902,
    "ACL_ERROR_RT_CCU_EXCEPTION": 507916,
    "ACL_ERROR_GE_REDEPLOYING": 545602,
}

# name -> (modid, value) for GE inner codes: runtime=1 (host), type=1, level=0, sysid=8.
GE_FIELDS = {
    "PARAM_INVALID": (0, 1),
    "INTERNAL_ERROR": (0, 4),
    "END_OF_SEQUENCE": (0, 7),
    "UNSUPPORTED": (0, 100),
    "GE_CLI_GE_NOT_INITIALIZED": (1, 11),
    "GE_SESS_INIT_FAILED": (3, 0),
    "GE_SESS_ALREADY_RUNNING": (3, 1),
    "GE_SESSION_NOT_EXIST": (3, 5),
    "GE_SESSION_MANAGER_NOT_INIT": (3, 6),
    "GE_GRAPH_ALREADY_RUNNING": (4, 1),
    "GE_GRAPH_GRAPH_NOT_EXIST": (4, 2),
    "GE_GRAPH_GRAPH_ALREADY_EXIST": (4, 3),
    "GE_GRAPH_PARAM_NULLPTR": (4, 8),
    "GE_GRAPH_GRAPH_NODE_NULL": (4, 36),
    "GE_GRAPH_UNSUPPORTED": (4, 41),
    "GE_GRAPH_OPTIONS_INVALID": (4, 51),
    "GE_GRAPH_NOT_BUILT": (4, 55),
}


@pytest.mark.parametrize(("name", "number"), sorted({**SPEC_NUMBERS, **RANGE_ENDS}.items()))
def test_acl_code_numbers(name: str, number: int) -> None:
    assert AclCode[name] == number
    assert AclCode(number).name == name


def test_success_aliases() -> None:
    assert AclCode.ACL_SUCCESS == 0
    assert AclCode.ACL_ERROR_NONE is AclCode.ACL_SUCCESS
    assert AclCode(0).name == "ACL_SUCCESS"


def test_ge_status_numbers() -> None:
    assert GeStatus.SUCCESS == 0
    assert GeStatus.GE_SESSION_MANAGER_NOT_INIT == 1343238150
    assert GeStatus.FAILED == 4294967295
    assert GeStatus.PARAM_INVALID == 1343225857


def test_ge_table_follows_formula() -> None:
    assert set(GE_FIELDS) == {s.name for s in GeStatus} - {"SUCCESS", "FAILED"}
    for name, (modid, value) in GE_FIELDS.items():
        assert GeStatus[name] == ge_status_code(1, 1, 0, 8, modid, value), name
    assert ge_status_code(0b11, 0b11, 0b111, 0xFF, 0b11111, 0xFFF) == GeStatus.FAILED
    assert ge_status_code(0, 0, 0, 0, 0, 0) == GeStatus.SUCCESS


@pytest.mark.parametrize("fields", [(4, 0, 0, 0, 0, 0), (0, 0, 8, 0, 0, 0), (0, 0, 0, 0, 0, 4096), (0, 0, 0, -1, 0, 0)])
def test_ge_formula_rejects_overflow(fields: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        ge_status_code(*fields)


def test_every_code_has_a_message() -> None:
    for code in list(AclCode) + list(GeStatus):
        text = MESSAGES[int(code)]
        assert text and "\n" not in text
        assert message(code) == text
    assert set(MESSAGES) == {int(c) for c in AclCode} | {int(c) for c in GeStatus}


def test_tables_share_only_zero() -> None:
    assert {int(c) for c in AclCode} & {int(c) for c in GeStatus} == {0}


def test_unknown_code() -> None:
    assert message(123) == "unknown error code 123"
    assert code_name(123) == "123"


def test_code_name() -> None:
    assert code_name(507012) == "ACL_ERROR_RT_REPORT_TIMEOUT"
    assert code_name(1343238150) == "GE_SESSION_MANAGER_NOT_INIT"
    assert code_name(AclCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT) == "ACL_ERROR_RT_STREAM_SYNC_TIMEOUT"


def test_acl_error_str() -> None:
    err = AclError(AclCode.ACL_ERROR_RT_REPORT_TIMEOUT, "no callback within 50 ms")
    assert type(err.code) is int
    assert err.code == 507012
    assert str(err) == "ACL_ERROR_RT_REPORT_TIMEOUT(507012): report timeout: no callback within 50 ms"
    assert str(AclError(100000)) == "ACL_ERROR_INVALID_PARAM(100000): invalid parameter"
    assert str(AclError(42)) == "42(42): unknown error code 42"


def test_ge_error_str() -> None:
    err = GeError(GeStatus.GE_SESSION_MANAGER_NOT_INIT)
    assert err.code == 1343238150
    assert str(err) == "GE_SESSION_MANAGER_NOT_INIT(1343238150): session manager has not been initialized"
    assert str(GeError(0, "ok")) == "SUCCESS(0): success: ok"


def test_acl_and_ge_errors_share_one_base_that_carries_the_code_and_the_line() -> None:
    acl_err, ge_err = AclError(100000, "bad handle"), GeError(GeStatus.PARAM_INVALID, "null graph")
    for err in (acl_err, ge_err):
        assert isinstance(err, CodedError)
        assert (err.code, err.detail) == (int(err.code), err.detail)
    assert not isinstance(acl_err, GeError) and not isinstance(ge_err, AclError)
    assert str(CodedError(100000, "x")) == "100000(100000): invalid parameter: x"  # the base knows no code table
    # a code both tables hold is named by the raiser's own table first
    assert str(AclError(0)).startswith("ACL_SUCCESS(0)") and str(GeError(0)).startswith("SUCCESS(0)")


def test_level_default_and_override() -> None:
    assert AclError(100000).level == logging.ERROR
    assert GeError(GeStatus.FAILED).level == logging.ERROR
    assert AclError(507012, level=logging.INFO).level == logging.INFO


@pytest.mark.parametrize(
    "err",
    [
        AclError(507012, "timeout", level=logging.INFO),
        AclError(100001),
        GeError(GeStatus.PARAM_INVALID, "null graph", level=logging.WARNING),
    ],
)
def test_pickle_round_trip(err: AclError | GeError) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(err, protocol=protocol))
        assert type(back) is type(err)
        assert (back.code, back.detail, back.level) == (err.code, err.detail, err.level)
        assert str(back) == str(err)
