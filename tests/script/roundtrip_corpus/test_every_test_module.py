"""Every IR object the test suite defines at module level prints and parses back.

The round-trip corpus files pin the printer's exact text for chosen programs; this test
sweeps wider: it imports each test module, takes every IRModule, PrimFunc and Relax function
it defines at module level, and checks ``parse(print(x)) == x`` — for a Relax module, also
after ``LegalizeOps``, whose generated PrimFuncs (symbolic shapes, ``T.handle`` parameters
bound by ``T.match_buffer``) are the ones learners print most.
"""

from __future__ import annotations

import importlib
import pathlib

import pytest

from mlckit import relax, tir
from mlckit.ir import IRModule
from tests.script.roundtrip import assert_roundtrip

TESTS = pathlib.Path(__file__).resolve().parents[2]
# browser tests need a JupyterLab server at import time; this file would find itself
SKIP_DIRS = {"browser"}


def _test_modules() -> list[str]:
    names = []
    for path in sorted(TESTS.rglob("test_*.py")):
        rel = path.relative_to(TESTS.parent).with_suffix("")
        if SKIP_DIRS & set(rel.parts) or path == pathlib.Path(__file__).resolve():
            continue
        names.append(".".join(rel.parts))
    return names


def _ir_objects(module) -> list[tuple[str, object]]:
    found = []
    for name, value in vars(module).items():
        if isinstance(value, (IRModule, tir.PrimFunc, relax.Function)):
            found.append((name, value))
    return found


def _has_relax(mod: IRModule) -> bool:
    return any(isinstance(f, relax.Function) for f in mod.functions.values())


@pytest.mark.parametrize("module_name", _test_modules())
def test_module_level_ir_prints_and_parses_back(module_name):
    module = importlib.import_module(module_name)
    for name, obj in _ir_objects(module):
        try:
            assert_roundtrip(obj)
            if isinstance(obj, IRModule) and _has_relax(obj):
                assert_roundtrip(relax.transform.LegalizeOps()(obj))
        except Exception as err:  # name the object: the module may define dozens
            raise AssertionError(f"{module_name}.{name} does not round-trip: {err}") from err
