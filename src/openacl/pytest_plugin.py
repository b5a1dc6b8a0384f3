"""The pytest plugin: ``pytest --openacl-check`` (or ``OPENACL_CHECK=1``, or ``@pytest.mark.openacl_check`` on a
test) fails any test whose program code produced an ``openacl check`` finding, with the finding in the failure text
(a leak, known once the test's fixtures are torn down, is an error at teardown); the ``openacl_clean`` fixture leaves
the process's openacl state clean after a test.

Registered as a ``pytest11`` entry point, so pytest loads it in every session of an environment where openacl is
installed: it imports the runtime only when a test asks for checking or for the fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

_SINCE = pytest.StashKey[int]()
_ENABLED_HERE = pytest.StashKey[bool]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("openacl").addoption(
        "--openacl-check",
        action="store_true",
        help="run every test with openacl check on: a leak, use after free, double free or overrun fails it",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "openacl_check: run this test with openacl check on; a finding fails it")


def _checking(item: pytest.Item) -> bool:
    """Asked for: ``--openacl-check``, the marker, or ``OPENACL_CHECK=1`` (checking the whole process: without the
    plugin's part its findings would only be printed, and pytest shows a passing test's stderr to nobody)."""
    return (
        bool(item.config.getoption("--openacl-check"))
        or os.environ.get("OPENACL_CHECK", "") not in ("", "0")
        or item.get_closest_marker("openacl_check") is not None
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _checking(item):
        return
    from openacl.runtime import checker

    item.stash[_ENABLED_HERE] = not checker.enabled
    checker.enable()
    checker.take_findings()  # what came before this test is not its finding
    item.stash[_SINCE] = checker.mark()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    if _SINCE not in item.stash:
        return
    from openacl.runtime import checker

    report = outcome.get_result()
    if call.when == "teardown":
        checker.report_leaks("the end of the test", since=item.stash[_SINCE])
    found = checker.take_findings()
    if call.when == "teardown" and item.stash[_ENABLED_HERE]:
        checker.enable(False)
    if found:
        text = "\n\n".join(f.render() for f in found)
        report.outcome = "failed"
        report.longrepr = f"{report.longrepr}\n\n{text}" if report.longrepr else f"openacl check found:\n{text}"


@pytest.fixture
def openacl_clean() -> Iterator[None]:
    """After the test: what it left alive is reported (under check), then every device, table and region is reset."""
    yield
    from openacl import process
    from openacl.runtime import checker

    if checker.enabled:
        checker.report_leaks("the end of the test")
    process.reset(force=True)
