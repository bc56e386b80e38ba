"""What every refused input must satisfy: a TVMError subclass, a message naming the user's
thing (and the line, for scripts), and no text from mlckit's or a library's insides."""

from __future__ import annotations

import re
import textwrap
import warnings

import pytest

import mlckit

# text that means an internal error or a library leaked into a learner's message
LEAKS = re.compile(r"numba\.|nopython|TypingError|Traceback|<locals>|\b0x[0-9a-fA-F]{4,}|File \"|"
                   r"site-packages|IRBuilderError|NoneType object")

MARK = "# <-"  # a script marks the line its error must point at with this comment


def script(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def marked_line(text: str) -> int:
    lines = [k for k, line in enumerate(text.splitlines(), 1) if MARK in line]
    assert len(lines) == 1, "a bad script marks exactly one line with '# <-'"
    return lines[0]


def refused(action, *phrases: str, kind: type = mlckit.TVMError) -> mlckit.TVMError:
    """Run ``action``; it must raise ``kind`` (a TVMError) whose message holds ``phrases``
    and nothing internal.  Returns the error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", mlckit.ir.diagnostics.DiagnosticWarning)
        with pytest.raises(mlckit.TVMError) as info:
            action()
    err = info.value
    assert isinstance(err, kind), f"{type(err).__name__} is not a {kind.__name__}"
    text = str(err)
    for phrase in phrases:
        assert phrase in text, f"{phrase!r} not in the message:\n{text}"
    leak = LEAKS.search(text)
    assert leak is None, f"internal text {leak.group(0)!r} in the message:\n{text}"
    return err


def refused_script(text: str, *phrases: str) -> mlckit.DiagnosticError:
    """``text`` (TVMScript) is refused at its marked line."""
    from mlckit.script import from_source

    err = refused(lambda: from_source(text), *phrases, kind=mlckit.DiagnosticError)
    assert err.line == marked_line(text), f"reported at line {err.line}:\n{err}"
    assert f":{err.line}:" in str(err)
    return err
