"""An exercise: a statement, a starting point, a NumPy spec, and ``check(answer)``.

Example::

    ex = exercises.get("tensorir.add")
    ex                      # the statement and the starting point
    ex.hint()               # the first hint; call again for the next
    ex.check(add)           # feedback: correctness, structure, speed
"""

from __future__ import annotations

import html
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mlckit.error import TVMError

from .feedback import Feedback, gpu_access_view
from .kinds import KINDS, program
from .source import describe_error, run_source, unanswered_line

STRICT_ENV = "MLCKIT_EXERCISES_STRICT"


class ExerciseNotSolved(TVMError, AssertionError):
    """A check in solutions mode (``MLCKIT_EXERCISES_STRICT=1``) whose answer is not correct.

    >>> import os
    >>> from mlckit import exercises
    >>> os.environ["MLCKIT_EXERCISES_STRICT"] = "1"
    >>> try:
    ...     exercises.get("tensorir.add").check(None)
    ... except ExerciseNotSolved as err:
    ...     print(str(err).splitlines()[0])
    solutions mode (MLCKIT_EXERCISES_STRICT=1): … tensorir.add: not answered yet (`add` holds no answer yet: put yours there)
    >>> del os.environ["MLCKIT_EXERCISES_STRICT"]
    """

__all__ = ["Exercise", "Hint", "Speed"]


@dataclass
class Speed:
    """A speed goal: the answer runs at least ``goal`` times as fast as ``against`` (the
    ``"reference"`` solution or the ``"start"``ing program), both timed in the same call
    with mlckit's kernel timer at ``size`` (the exercise's first size by default)."""

    goal: float
    against: str = "reference"
    size: dict | None = None  # the size to time at (default: the exercise's first)


@dataclass
class Hint:
    """Hint ``number`` of ``total``."""

    number: int
    total: int
    text: str

    def __str__(self) -> str:
        if self.number == 0:
            return self.text
        return f"Hint {self.number} of {self.total}: {self.text}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<div class='mlckit-hint'><i>{html.escape(str(self))}</i></div>"


@dataclass(eq=False)
class Exercise:
    """One exercise.  ``kind`` says what an answer is (see ``mlckit.exercises.kinds``).

    ``inputs`` are ``(name, shape, dtype)`` (a shape may name a size: ``("n", 4)``),
    ``outputs`` likewise; ``sizes`` the shapes to test (each a dict of sizes); ``spec``
    the NumPy function from the inputs to the output(s); ``program`` the TVMScript the
    learner transforms (sizes written ``{n}``), defining ``program_name``; ``start`` the
    learner's starting point, defining ``answer_name``; ``solution`` the reference
    solution, defining it too; ``setup`` code both run first; ``structure`` checks
    ``(answer, reference) -> messages``; ``hints`` in the order they unlock."""

    name: str
    title: str
    statement: str
    kind: str
    answer_name: str
    start: str
    solution: str
    spec: Callable
    inputs: list
    outputs: list
    sizes: list = field(default_factory=lambda: [{}])
    seeds: tuple = (0, 1)
    program: str = ""
    program_name: str = "before"
    setup: str = ""
    structure: list = field(default_factory=list)
    speed: Speed | None = None
    hints: list = field(default_factory=list)
    int_inputs: bool = False
    structure_uses_reference: bool = True  # False: checks get None (tuning is costly)
    _shown: int = 0
    _reference: dict = field(default_factory=dict, repr=False)
    _answer: object = field(default=None, repr=False)

    # --- shapes and inputs ---------------------------------------------------------

    @property
    def input_names(self) -> list[str]:
        return [name for name, _, _ in self.inputs]

    @property
    def output_names(self) -> list[str]:
        return [name for name, _, _ in self.outputs]

    @staticmethod
    def shape(shape, size: dict) -> tuple:
        return tuple(size[d] if isinstance(d, str) else d for d in shape)

    def output_shapes(self, arrays) -> list:
        size = self._size_of(arrays)
        return [(self.shape(shape, size), dtype) for _, shape, dtype in self.outputs]

    def _size_of(self, arrays) -> dict:
        for size in self.sizes:  # the tested size these inputs have
            if [self.shape(s, size) for _, s, _ in self.inputs] == [a.shape for a in arrays]:
                return size
        size = {}
        for (_, shape, _), a in zip(self.inputs, arrays):
            for d, n in zip(shape, a.shape):
                if isinstance(d, str):
                    size[d] = n
        return size

    def random_inputs(self, size: dict, seed: int) -> list:
        rng = np.random.default_rng(seed)
        out = []
        for _, shape, dtype in self.inputs:
            shape = self.shape(shape, size)
            if self.int_inputs or not np.issubdtype(np.dtype(dtype), np.floating):
                out.append(rng.integers(-4, 5, size=shape).astype(dtype))
            else:
                out.append(rng.uniform(-1, 1, size=shape).astype(dtype))
        return out

    def expected(self, arrays) -> list:
        result = self.spec(*arrays)
        return list(result) if isinstance(result, (list, tuple)) else [result]

    # --- the learner's side ----------------------------------------------------------

    def hint(self) -> Hint:
        """The next hint (one more each call); after the last, says there are no more."""
        if not self.hints:
            return Hint(0, 0, "this exercise has no hints")
        if self._shown >= len(self.hints):
            return Hint(0, len(self.hints), f"no more hints: all {len(self.hints)} are shown")
        self._shown += 1
        return Hint(self._shown, len(self.hints), self.hints[self._shown - 1])

    def reset_hints(self) -> None:
        self._shown = 0

    def solution_object(self):
        """The reference solution, run: the object called ``answer_name``."""
        return run_source(self.setup + "\n" + self.solution,
                          f"solution of {self.name}")[self.answer_name]

    def start_program(self):
        """The program the learner transforms, at the first size (schedule-like kinds)."""
        return program(self, self.sizes[0])

    def _is_start(self, answer) -> bool:
        """Whether a module answer is still the starting point (a Relax starting point
        cannot hold a ``...``: its functions are parsed as they are defined)."""
        from mlckit.ir import IRModule
        from mlckit.ir.structural import structural_equal

        if not isinstance(answer, IRModule):
            return False
        start = run_source(self.setup + "\n" + self.start, f"start of {self.name}")
        return structural_equal(answer, start[self.answer_name])

    def _unanswered(self, answer) -> str | None:
        """Why ``answer`` is no answer yet, or None when it is one."""
        if answer is None or (isinstance(answer, str) and not answer.strip()):
            return f"`{self.answer_name}` holds no answer yet: put yours there"
        if isinstance(answer, (list, tuple)) and any(a is Ellipsis for a in answer):
            return "replace the `...` in the list with your answer"
        line = unanswered_line(answer) if not isinstance(answer, (list, tuple)) else None
        if line is not None:
            return f"replace the `...` on line {line} with your answer"
        if self._is_start(answer):
            return "it is still the starting point: fill it in"
        return None

    def check(self, answer) -> Feedback:
        """Feedback on ``answer``: never raises for anything the answer does.

        In solutions mode (the environment variable ``MLCKIT_EXERCISES_STRICT=1``, set when
        the instructor notebooks run under nbval) an answer that is not correct raises
        :class:`ExerciseNotSolved` instead, so that the notebook run fails on it."""
        fb = self._feedback(answer)
        if os.environ.get(STRICT_ENV) == "1" and fb.status != "correct":
            raise ExerciseNotSolved(f"solutions mode ({STRICT_ENV}=1): {fb}")
        return fb

    def _feedback(self, answer) -> Feedback:
        fb = Feedback(self.name)
        note = self._unanswered(answer)
        if note:
            fb.status, fb.note = "not answered", note
            return fb
        started = time.perf_counter()
        self._answer = answer
        made_first = self._check_numbers(fb, answer)
        if fb.status == "error":
            return fb
        self._check_structure(fb, made_first)
        if self.speed is not None and fb.status == "correct":
            self._check_speed(fb, made_first)
        fb.seconds = time.perf_counter() - started
        return fb

    # --- the checks -----------------------------------------------------------------

    def _check_numbers(self, fb: Feedback, answer):
        """Run the answer on random inputs of every size (and seed) against the spec; the
        answer made for the first size, or None after an error."""
        kind = KINDS[self.kind]
        made_first = None
        runs = []
        for size in self.sizes:
            for seed in self.seeds:
                arrays = self.random_inputs(size, seed)
                try:
                    # a stochastic schedule samples anew for every seed
                    if seed == self.seeds[0] or self.kind == "stochastic":
                        made = kind.make(self, answer, size, seed)
                    made_first = made if made_first is None else made_first
                    got = kind.run(self, made, [a.copy() for a in arrays])
                except Exception as err:  # noqa: BLE001 - the learner's error is feedback
                    fb.fail("error", *describe_error(err))
                    return None
                shapes = ", ".join(f"{n} {a.shape}" for n, a in zip(self.input_names, arrays))
                wrong = _compare(self, got, arrays)
                if wrong:
                    fb.add("correctness", False, wrong[0],
                           f"inputs: {shapes}, {arrays[0].dtype}, random seed {seed}", *wrong[1:])
                    self._gpu_view(fb, made, arrays)
                    return made_first
                if shapes not in runs:
                    runs.append(shapes)
        section = fb.add("correctness", True,
                         f"equal to the NumPy spec on {len(self.sizes) * len(self.seeds)} "
                         f"random inputs ({'; '.join(runs)})")
        self._gpu_view(fb, made_first, self.random_inputs(self.sizes[0], self.seeds[0]), section)
        return made_first

    def reference(self, size: dict | None = None):
        """The reference solution made for ``size`` (the first size): cached."""
        size = self.sizes[0] if size is None else size
        key = tuple(sorted(size.items()))
        if key not in self._reference:
            self._reference[key] = KINDS[self.kind].make(self, self.solution_object(), size,
                                                         self.seeds[0])
        return self._reference[key]

    def _check_structure(self, fb: Feedback, made) -> None:
        if not self.structure:
            return
        messages = []
        try:
            reference = self.reference() if self.structure_uses_reference else None
            for check in self.structure:
                messages += check(made, reference)
        except Exception as err:  # noqa: BLE001 - a broken answer may not have the shape
            messages = describe_error(err)
        messages = list(dict.fromkeys(messages))  # two checks may see the same thing
        if messages:
            fb.add("structure", False, *messages)
        else:
            fb.add("structure", True, "as the exercise asks")

    def _check_speed(self, fb: Feedback, made) -> None:
        from mlckit.notebook.kernel_timer import KernelTimer

        from .kinds import _prim_func

        size = self.speed.size or self.sizes[0]
        base = self.reference(size) if self.speed.against == "reference" else program(self, size)
        timer = KernelTimer(seed=0, repeat=3, min_repeat_ms=5)
        try:
            if size != self.sizes[0]:
                made = KINDS[self.kind].make(self, self._answer, size, self.seeds[0])
            pair = (_prim_func(made), _prim_func(base))
            # alternate and keep the best of two: a busy machine slows one run, not all
            times = [[timer.measure(f).seconds for f in pair] for _ in range(2)]
            mine, theirs = (min(t[i] for t in times) for i in range(2))
        except Exception as err:  # noqa: BLE001
            fb.add("speed", False, *describe_error(err))
            return
        ratio = theirs / mine
        what = "the reference schedule" if self.speed.against == "reference" else "the naive kernel"
        text = (f"{ratio:.2f}× the speed of {what} ({_ms(mine)} against {_ms(theirs)}); "
                f"the goal is {self.speed.goal:g}×")
        fb.add("speed", ratio >= self.speed.goal, text)

    def _gpu_view(self, fb: Feedback, made, arrays, section=None) -> None:
        """GPU exercises show the GPU access view of the answer (notebooks only)."""
        if self.kind != "gpu" or made is None:
            return
        from .kinds import _prim_func

        outputs = [np.zeros(s, d) for s, d in self.output_shapes(arrays)]
        try:
            view = gpu_access_view(_prim_func(made), [*arrays, *outputs])
        except TVMError as err:  # the view is extra: the verdict stands, and says why not
            view = f"<p>(no GPU access view: {html.escape(str(err).splitlines()[0])})</p>"
        (section or fb.sections[-1]).html_extra = view

    # --- display --------------------------------------------------------------------

    def text(self) -> str:
        hints = f"{len(self.hints)} hint{'s' if len(self.hints) != 1 else ''} (ex.hint())"
        goal = f"\nSpeed goal: {self.speed.goal:g}× {self.speed.against}." if self.speed else ""
        return (f"{self.name}: {self.title}\n\n{self.statement}{goal}\n\nStarting point:\n"
                f"{self.start.strip()}\n\nCheck with ex.check({self.answer_name}); {hints}.")

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        goal = (f"<p><b>Speed goal</b>: {self.speed.goal:g}× {self.speed.against}</p>"
                if self.speed else "")
        return (f"<div class='mlckit-exercise'><h4>{html.escape(self.name)}: "
                f"{html.escape(self.title)}</h4><p>{html.escape(self.statement)}</p>{goal}"
                f"<p>Starting point:</p><pre>{html.escape(self.start.strip())}</pre>"
                f"<p>Check with <code>ex.check({self.answer_name})</code>; "
                f"{len(self.hints)} hints (<code>ex.hint()</code>).</p></div>")


def _compare(ex: Exercise, got: list, arrays: list) -> list[str] | None:
    from .checks import compare_outputs

    expected = ex.expected(arrays)
    names = ex.output_names or [f"output {i}" for i in range(len(expected))]
    if len(got) != len(expected):
        return [f"the answer gives {len(got)} outputs, expected {len(expected)}"]
    return compare_outputs(names, got, expected)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"
