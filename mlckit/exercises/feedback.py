"""What ``Exercise.check`` answers: a verdict and its sections, as text and as HTML.

A :class:`Feedback` is built section by section (correctness, structure, speed, an error
from the learner's code) and never raises.  ``str(fb)`` is the terminal form;
``fb._repr_html_()`` the notebook form, which holds the same words.

Example::

    fb = ex.check(answer)
    fb.status                 # "correct", "wrong", "error" or "not answered"
    print(fb)                 # ✗ tensorir.add: wrong …
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

__all__ = ["Feedback", "Section", "gpu_access_view"]

MARKS = {"correct": "✓", "wrong": "✗", "error": "✗", "not answered": "…"}
COLOURS = {"correct": "#1a7f37", "wrong": "#cf222e", "error": "#cf222e", "not answered": "#6e7781"}
HEADLINES = {
    "correct": "correct",
    "wrong": "not right yet",
    "error": "your answer raised an error",
    "not answered": "not answered yet",
}


@dataclass
class Section:
    """One part of the feedback: ``title`` (correctness, structure, speed, error), whether
    it ``ok``, and its ``lines`` of text.  ``html_extra`` is HTML shown only in notebooks
    (the GPU access view)."""

    title: str
    ok: bool
    lines: list[str]
    html_extra: str = ""

    def text(self) -> str:
        mark = "✓" if self.ok else "✗"
        body = "\n".join("    " + line for line in self.lines[1:])
        return f"  {mark} {self.title}: {self.lines[0]}" + (f"\n{body}" if body else "")


@dataclass
class Feedback:
    """The verdict on one answer to ``exercise`` (its name): ``status`` is ``"correct"``,
    ``"wrong"``, ``"error"`` or ``"not answered"``; ``sections`` say why."""

    exercise: str
    status: str = "correct"
    sections: list[Section] = field(default_factory=list)
    note: str = ""
    seconds: float = 0.0  # how long the check took

    @property
    def passed(self) -> bool:
        return self.status == "correct"

    def add(self, title: str, ok: bool, *lines: str, html_extra: str = "") -> Section:
        section = Section(title, ok, list(lines) or [""], html_extra)
        self.sections.append(section)
        if not ok and self.status == "correct":
            self.status = "wrong"
        return section

    def fail(self, title: str, *lines: str) -> Feedback:
        """Record that the answer raised (an error is the whole verdict)."""
        self.add(title, False, *lines)
        self.status = "error"
        return self

    def text(self) -> str:
        head = f"{MARKS[self.status]} {self.exercise}: {HEADLINES[self.status]}"
        if self.note:
            head += f" ({self.note})"
        return "\n".join([head] + [s.text() for s in self.sections])

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        colour = COLOURS[self.status]
        head = (f"<b style='color:{colour}'>{MARKS[self.status]} {html.escape(self.exercise)}: "
                f"{HEADLINES[self.status]}</b>")
        if self.note:
            head += f" <span>({_code(self.note)})</span>"
        rows = []
        for s in self.sections:
            mark = "✓" if s.ok else "✗"
            c = COLOURS["correct" if s.ok else "wrong"]
            first = _code(s.lines[0])
            rest = "".join(f"<pre style='margin:2px 0 2px 1.5em'>{html.escape(line)}</pre>"
                           for line in s.lines[1:])
            rows.append(f"<li><b style='color:{c}'>{mark} {html.escape(s.title)}</b>: "
                        f"{first}{rest}{s.html_extra}</li>")
        items = f"<ul style='margin:4px 0'>{''.join(rows)}</ul>" if rows else ""
        return (f"<div class='mlckit-feedback mlckit-feedback-{self.status.replace(' ', '-')}' "
                f"style='border-left:4px solid {colour};padding:4px 10px'>{head}{items}</div>")


def _code(text: str) -> str:
    """Escaped HTML, with `backticked` names set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def gpu_access_view(func, arrays) -> str:
    """HTML of the GPU access view of ``func`` run on ``arrays``, for a GPU exercise's
    feedback.

    This is the one place where exercise feedback meets the GPU access view
    (``mlckit.notebook.gpu_view``): a GPU exercise's correctness section shows what this
    returns, in notebooks only."""
    from mlckit.notebook.gpu_view import gpu_view

    return gpu_view(func, *arrays)._repr_html_()
