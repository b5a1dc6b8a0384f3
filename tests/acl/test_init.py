"""``acl.init`` / ``acl.finalize`` / ``acl.finalize_reference`` and the JSON configuration file."""

from __future__ import annotations

import json
import logging

import pytest

import acl
from openacl import jsonfile, process
from openacl.errors import AclCode, AclError


def logged(caplog, qualname: str, code: int) -> list[str]:
    head = f"{qualname}: {AclCode(code).name}({code}): "
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(head)]


def nested_objects(depth: int) -> str:
    text = "1"
    for _ in range(depth):
        text = '{"a": ' + text + "}"
    return text


def nested_arrays(depth: int) -> str:
    return '{"a": ' + "[" * depth + "]" * depth + "}"


@pytest.fixture
def config_file(tmp_path):
    def write(text: str | bytes, name: str = "acl.json"):
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return str(path)

    return write


# ----- init -----


def test_init_without_a_path():
    assert acl.init() == 0
    assert process.is_initialized()
    assert process.config == {}


def test_init_with_an_empty_path_means_no_file():
    assert acl.init("") == 0
    assert process.is_initialized()


def test_init_with_a_valid_file(config_file):
    assert acl.init(config_file('{"profiler": {"switch": "off"}}')) == 0
    assert process.config == {"profiler": {"switch": "off"}}


@pytest.mark.parametrize("text", ["", "  \n\t"])
def test_init_with_an_empty_file(config_file, text):
    assert acl.init(config_file(text)) == 0
    assert process.config == {}


def test_dump_section_is_kept_in_config(config_file, tmp_path):
    dump = {
        "dump_path": str(tmp_path),
        "dump_mode": "output",
        "dump_list": [{"model_name": "resnet", "layer": ["conv1", "fc"]}],
    }
    path = config_file(json.dumps({"dump": dump, "unknown_section": [1, 2]}))
    assert acl.init(path) == 0
    assert process.config["dump"] == dump
    assert process.config["unknown_section"] == [1, 2]


def test_init_missing_file(tmp_path, acl_log):
    missing = str(tmp_path / "nope.json")
    assert acl.init(missing) == AclCode.ACL_ERROR_INVALID_FILE
    (line,) = logged(acl_log, "acl.init", 100003)
    assert "nope.json" in line
    assert not process.is_initialized()


def test_init_directory(tmp_path, acl_log):
    assert acl.init(str(tmp_path)) == AclCode.ACL_ERROR_INVALID_FILE
    (line,) = logged(acl_log, "acl.init", 100003)
    assert "not a regular file" in line
    assert not process.is_initialized()


def test_failed_init_leaves_the_process_uninitialized(tmp_path):
    assert acl.init(str(tmp_path / "missing.json")) == 100003
    # Not counted as an init: the next one succeeds, and finalize has nothing to finalize before it.
    assert acl.finalize() == AclCode.ACL_ERROR_REPEAT_FINALIZE
    assert acl.init() == 0
    assert acl.finalize() == 0


def test_file_too_large(config_file, acl_log):
    path = config_file("")
    with open(path, "r+b") as f:
        f.truncate(jsonfile.MAX_CONFIG_BYTES + 1)
    assert acl.init(path) == AclCode.ACL_ERROR_INVALID_FILE_SIZE
    assert logged(acl_log, "acl.init", 100005)
    assert not process.is_initialized()


@pytest.mark.parametrize(
    "text",
    [
        "{",
        '{"a": 1,}',
        "not json",
        "{'single': 'quotes'}",
        '{"a": NaN',
    ],
    ids=["unclosed", "trailing-comma", "word", "single-quotes", "truncated"],
)
def test_invalid_json(config_file, acl_log, text):
    assert acl.init(config_file(text)) == AclCode.ACL_ERROR_PARSE_FILE
    (line,) = logged(acl_log, "acl.init", 100006)
    assert "invalid JSON" in line
    assert not process.is_initialized()


@pytest.mark.parametrize("text", ["[]", "[1, 2]", '"text"', "42", "null", "true"])
def test_top_level_must_be_an_object(config_file, acl_log, text):
    assert acl.init(config_file(text)) == AclCode.ACL_ERROR_PARSE_FILE
    (line,) = logged(acl_log, "acl.init", 100006)
    assert "top level must be a JSON object" in line


def test_not_utf8(config_file, acl_log):
    assert acl.init(config_file(b'{"a": "\xff\xfe"}')) == AclCode.ACL_ERROR_PARSE_FILE
    assert logged(acl_log, "acl.init", 100006)


def test_ten_nested_objects_are_accepted(config_file):
    assert acl.init(config_file(nested_objects(10))) == 0
    assert process.config == json.loads(nested_objects(10))


def test_eleven_nested_objects_are_refused(config_file, acl_log):
    assert acl.init(config_file(nested_objects(11))) == AclCode.ACL_ERROR_PARSE_FILE
    (line,) = logged(acl_log, "acl.init", 100006)
    assert "nests '{' more than 10 deep" in line


def test_ten_nested_arrays_are_accepted(config_file):
    assert acl.init(config_file(nested_arrays(10))) == 0


def test_eleven_nested_arrays_are_refused(config_file, acl_log):
    assert acl.init(config_file(nested_arrays(11))) == AclCode.ACL_ERROR_PARSE_FILE
    (line,) = logged(acl_log, "acl.init", 100006)
    assert "nests '[' more than 10 deep" in line


def test_braces_and_brackets_are_counted_separately(config_file):
    # Ten of each interleaved: twenty levels in all, at most ten of either kind.
    text = "1"
    for _ in range(9):
        text = '{"a": [' + text + "]}"
    text = '{"a": [' + text + "]}"
    assert text.count("{") == 10 and text.count("[") == 10
    assert acl.init(config_file(text)) == 0


def test_brackets_inside_strings_do_not_count(config_file):
    text = json.dumps({"a": "{" * 50 + "[" * 50, "b": '\\"{{{{{{{{{{{{{{{{"'})
    assert acl.init(config_file(text)) == 0
    assert process.config["a"] == "{" * 50 + "[" * 50


@pytest.mark.parametrize("opener", ["[", "{"])
def test_nesting_bomb_is_refused_fast_without_recursion_error(config_file, acl_log, opener):
    path = config_file(opener * 100_000)
    assert acl.init(path) == AclCode.ACL_ERROR_PARSE_FILE
    (line,) = logged(acl_log, "acl.init", 100006)
    assert "more than 10 deep" in line
    assert not any("internal error" in r.getMessage() for r in acl_log.records)


def test_check_nesting_directly():
    jsonfile.check_nesting("[" * 10 + "]" * 10)
    jsonfile.check_nesting("[]" * 1000)  # depth goes back down
    with pytest.raises(AclError) as info:
        jsonfile.check_nesting("[" * 11)
    assert info.value.code == AclCode.ACL_ERROR_PARSE_FILE
    with pytest.raises(AclError):
        jsonfile.check_nesting("{" * 3, limit=2)


def test_read_config_directly(config_file):
    assert jsonfile.read_config(config_file('{"dump": {"dump_path": "x"}}')) == {"dump": {"dump_path": "x"}}
    with pytest.raises(AclError) as info:
        jsonfile.read_config(config_file("[]"))
    assert info.value.code == AclCode.ACL_ERROR_PARSE_FILE


def test_init_with_a_nul_in_the_path_is_a_parse_failure():
    with pytest.raises(TypeError, match=r"^acl\.init args parse failed$"):
        acl.init("acl\x00.json")


# ----- reference counting -----


def test_second_init_returns_repeat_initialize(monkeypatch, acl_log):
    monkeypatch.setenv("ASCEND_GLOBAL_LOG_LEVEL", "0")  # acl.init rereads the level; keep warnings
    assert acl.init() == 0
    assert acl.init() == AclCode.ACL_ERROR_REPEAT_INITIALIZE
    (line,) = logged(acl_log, "acl.init", 100002)
    (record,) = [r for r in acl_log.records if r.getMessage() == line]
    assert record.levelno == logging.WARNING
    assert process.is_initialized()


def test_repeat_init_does_not_reread_the_config(config_file):
    assert acl.init(config_file('{"first": {"dump_path": "first"}}', "a.json")) == 0
    assert acl.init(config_file('{"dump": {"dump_path": 5}}', "b.json")) == 100002
    assert process.config == {"first": {"dump_path": "first"}}


def test_finalize_reference_counts_down():
    assert acl.init() == 0
    assert acl.init() == 100002
    assert acl.init() == 100002
    assert acl.finalize_reference() == (2, 0)
    assert process.is_initialized()
    assert acl.finalize_reference() == (1, 0)
    assert process.is_initialized()
    assert acl.finalize_reference() == (0, 0)
    assert not process.is_initialized()


def test_finalize_reference_without_init(acl_log):
    assert acl.finalize_reference() == (0, AclCode.ACL_ERROR_REPEAT_FINALIZE)
    assert logged(acl_log, "acl.finalize_reference", 100037)


def test_one_finalize_clears_every_reference():
    assert acl.init() == 0
    assert acl.init() == 100002
    assert acl.finalize() == 0
    assert not process.is_initialized()
    assert acl.finalize_reference() == (0, 100037)


def test_finalize_twice(acl_log):
    assert acl.init() == 0
    assert acl.finalize() == 0
    assert acl.finalize() == AclCode.ACL_ERROR_REPEAT_FINALIZE
    (line,) = logged(acl_log, "acl.finalize", 100037)
    assert "without a matching acl.init" in line


def test_finalize_without_init(acl_log):
    assert acl.finalize() == AclCode.ACL_ERROR_REPEAT_FINALIZE
    assert logged(acl_log, "acl.finalize", 100037)


def test_finalize_clears_the_config(config_file):
    assert acl.init(config_file('{"profiler": {"switch": "on"}}')) == 0
    assert acl.finalize() == 0
    assert process.config == {}


def test_init_after_finalize_reads_the_new_config(config_file):
    assert acl.init(config_file('{"dump": {"dump_path": "/"}}', "a.json")) == 0
    assert acl.finalize() == 0
    assert acl.init(config_file('{"dump": {"dump_path": "/tmp"}}', "b.json")) == 0
    assert process.config["dump"] == {"dump_path": "/tmp"}


def test_finalize_resets_every_open_device():
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    ptr, ret = acl.rt.malloc(64, 0)
    assert ret == 0
    assert acl.rt.memset_async(ptr, 64, 1, 64, stream) == 0
    assert acl.finalize() == 0
    assert acl.rt.get_device() == (0, AclCode.ACL_ERROR_RT_CONTEXT_NULL)
    assert acl.rt.free(ptr) == AclCode.ACL_ERROR_INVALID_PARAM
    assert acl.rt.stream_get_id(stream)[1] == AclCode.ACL_ERROR_INVALID_PARAM


def test_runtime_calls_do_not_require_init(ctx):
    assert not process.is_initialized()
    assert acl.rt.create_stream()[1] == 0
