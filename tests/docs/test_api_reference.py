"""The API reference's promises: every public name has a docstring with a tiny example, the
doctests among them pass, and every name docs/tvm_names.md lists has a docstring.

``python docs/_ext/apiref.py`` prints the names without an example, by file.
"""

from __future__ import annotations

import doctest
import importlib
import sys
from pathlib import Path

import pytest

import mlckit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "docs" / "_ext"))
import apiref  # noqa: E402


def _modules_with_doctests() -> list[str]:
    """The modules whose source holds ``>>> `` (found by reading files, importing nothing:
    some imports, numba.cuda's, must happen only when a test chooses how)."""
    package = Path(mlckit.__file__).parent
    names = []
    for path in sorted(package.rglob("*.py")):
        if ">>> " in path.read_text():
            parts = path.relative_to(package.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.parametrize("module", _modules_with_doctests())
def test_docstring_examples_run(module):
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(mod, module) if t.examples]
    assert tests, f"{module} mentions '>>> ' but holds no doctest"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {module} failed"


def test_every_public_name_has_an_example():
    missing = sorted(f"{n.package}.{n.name}" for n in apiref.missing_examples())
    assert not missing, f"public names without a docstring example: {missing}"


def test_a_docstring_example_is_a_doctest_or_a_code_block():
    def with_doctest():
        """Add.

        >>> 1 + 1
        2
        """

    def with_block():
        """Add::

            add(1, 1)
        """

    def prose_only():
        """Add two numbers."""

    assert apiref.has_example(with_doctest) and apiref.has_example(with_block)
    assert not apiref.has_example(prose_only)


def test_names_listed_in_tvm_names_have_docstrings():
    listed = apiref.listed_names(REPO / "docs" / "tvm_names.md")
    assert "tvm.tir.Schedule" in listed or "tir.Schedule" in listed
    without = set(apiref.listed_without_docstring(REPO / "docs" / "tvm_names.md"))
    assert not without, sorted(without)


def test_names_in_tvm_names_are_read_through_braces_and_calls():
    assert apiref._expand("tvm.script.{ir, tir}") == ["tvm.script.ir", "tvm.script.tir"]
    assert apiref._expand("tvm.compile(mod, target)") == ["tvm.compile"]
    assert apiref._resolve("tvm.tir.Schedule") is mlckit.tir.Schedule


def test_each_object_is_described_on_one_page_only():
    names = apiref.api_names()
    first = apiref.canonical(names)
    schedule = first[id(mlckit.tir.Schedule)]
    assert (schedule.package, schedule.name) == ("tvm.tir", "Schedule")
    assert len({id(n.obj) for n in names}) == len(first)
