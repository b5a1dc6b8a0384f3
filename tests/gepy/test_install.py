"""``openacl.install()`` makes GE-PY's module names resolve to openacl.gepy, without a ``ge`` on disk."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import openacl
import openacl.gepy
from openacl.gepy import SUBMODULES


@pytest.mark.parametrize("name", SUBMODULES)
def test_every_ge_module_is_the_openacl_module(name):
    alias = importlib.import_module(f"ge.{name}")
    assert alias is importlib.import_module(f"openacl.gepy.{name}")
    assert alias.__spec__.name == f"openacl.gepy.{name}"  # the real module keeps its own spec


def test_from_imports_resolve():
    from ge.es.all import Add
    from ge.graph import Tensor
    from ge.graph.types import DataType
    from ge.session import Session

    from openacl.gepy.es import all as es_all

    assert Add is es_all.Add and DataType.DT_INT64 == 9
    assert Tensor.__module__ == "openacl.gepy.graph.tensor" and Session.__name__ == "Session"


def test_install_twice_adds_one_finder():
    openacl.install()
    openacl.install()
    assert sum(type(f).__name__ == "_AliasFinder" for f in sys.meta_path) == 1


def test_a_name_outside_gepy_is_not_found():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ge.offline_compile")


@pytest.mark.subprocess
def test_ge_is_not_importable_without_install():
    result = subprocess.run([sys.executable, "-c", "import ge"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "No module named 'ge'" in result.stderr


@pytest.mark.subprocess
def test_install_does_not_load_gepy_until_imported():
    code = (
        "import openacl, sys; openacl.install(); print('openacl.gepy' in sys.modules); import ge.session; "
        "print('openacl.gepy.session' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "True"], result.stderr
