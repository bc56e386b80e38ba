"""The guide's examples run as written: each page of docs/ with ``>>>`` examples is a doctest.

A page runs top to bottom in one namespace, as a reader would type it.  Two things are not
compared: the ``# from ... import ...`` header lines of printed code (they name the package the
reader imported) and, where a page writes ``...``, what an example prints there.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p.name for p in DOCS.glob("*.md") if ">>> " in p.read_text())
HEADER = re.compile(r"^# from \S+ import .*\n", re.M)


class _Checker(doctest.OutputChecker):
    def check_output(self, want, got, optionflags):
        return super().check_output(HEADER.sub("", want), HEADER.sub("", got), optionflags)


def test_the_written_pages_have_examples():
    assert {"tvmscript.md", "scheduling.md", "passes.md", "vm_and_backends.md"} <= set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_guide_page_examples_run(page):
    text = (DOCS / page).read_text()
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {"__name__": f"guide_{page[:-3]}"}, page, str(DOCS / page), 0)
    assert test.examples, page
    runner = doctest.DocTestRunner(checker=_Checker(),
                                   optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {page} failed"
