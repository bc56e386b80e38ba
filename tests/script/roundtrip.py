"""Shared check for the round-trip corpus: parse(print(x)) == x and printing is stable."""

from mlckit.ir import assert_structural_equal
from mlckit.script import from_source


def assert_roundtrip(obj) -> str:
    """Print ``obj``, parse the text back, compare structurally, and check the printer is a
    fixed point (print . parse . print == print).  Returns the printed text."""
    text = obj.script()
    parsed = from_source(text)
    assert_structural_equal(parsed, obj)
    assert parsed.script() == text, "printing is not stable:\n" + text + "\n---\n" + parsed.script()
    return text
