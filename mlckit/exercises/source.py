"""Running exercise code (starting points, reference solutions, learners' strings) so that
TVMScript can read its source, and telling an unanswered answer from an answer.

Example::

    ns = run_source("def f(x):\\n    return x + 1\\n", "<exercise tensorir.add>")
    unanswered_line(some_function)     # 3: the line of a ``...`` still left in, or None
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import traceback

import numpy as np

from mlckit.error import TVMError

__all__ = ["decorate", "describe_error", "namespace", "run_source", "unanswered_line"]


def namespace() -> dict:
    """The names exercise code may use without importing them (as the course imports
    them: ``tvm``, ``T``, ``R``, ``I``, ``tir``, ``relax``, ``te``, ``np`` …)."""
    import mlckit
    from mlckit import meta_schedule, relax, te, tir, topi
    from mlckit.ir import IRModule
    from mlckit.script import ir as I
    from mlckit.script import relax as R
    from mlckit.script import tir as T

    return {"tvm": mlckit, "T": T, "R": R, "I": I, "tir": tir, "relax": relax, "te": te,
            "topi": topi, "ms": meta_schedule, "np": np, "IRModule": IRModule}


_counter = [0]


def run_source(source: str, label: str, ns: dict | None = None) -> dict:
    """Execute ``source`` in ``ns`` (a fresh :func:`namespace` when None) under a file
    name of its own that ``linecache`` knows, so the TVMScript parser can read it back."""
    _counter[0] += 1
    filename = f"<{label} #{_counter[0]}>"
    text = textwrap.dedent(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = namespace() if ns is None else ns
    exec(compile(text, filename, "exec"), ns)  # noqa: S102 - exercise code is the point
    return ns


def decorate(obj, decorator: str, name: str):
    """Parse an undecorated function or class as if ``@decorator`` stood above it (the
    starting points leave it off, so that their ``...`` can run).  Its lines keep their
    numbers, so that an error points at the line the learner wrote."""
    try:
        lines, first = inspect.getsourcelines(obj)
    except (OSError, TypeError):
        from mlckit.error import TVMValueError

        raise TVMValueError(f"cannot read the source of {obj.__name__}: define it in a "
                            "file or a notebook cell") from None
    indent = len(lines[0]) - len(lines[0].lstrip())
    text = "".join(line[indent:] if line[:indent].isspace() else line for line in lines)
    if text.lstrip().startswith("@"):
        head = ""  # decorated after all: parse it as it is
    else:
        head = "\n" * max(first - 2, 0) + f"@{decorator}\n"
    ns = dict(namespace())
    ns.update(getattr(obj, "__globals__", None) or vars(inspect.getmodule(obj) or object()))
    return run_source(head + text, name, ns)[obj.__name__]


def _source_of(obj) -> str | None:
    if isinstance(obj, str):
        return obj
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        return None


def _helpers(func) -> list:
    """The functions ``func`` names that were written in the same file or cell, the
    methods of such classes included."""
    here = func.__code__.co_filename
    out = []
    for name in func.__code__.co_names:
        obj = func.__globals__.get(name)
        candidates = [obj] if inspect.isfunction(obj) else (
            [m for m in vars(obj).values() if inspect.isfunction(m)]
            if inspect.isclass(obj) else [])
        out += [f for f in candidates if f.__code__.co_filename == here and f is not func]
    return out


def unanswered_line(answer, _depth: int = 0) -> int | None:
    """The line (in the answer's file or notebook cell) of a ``...`` the learner has not
    replaced yet; None when there is none or the source cannot be read.  A function's
    helpers written beside it (the mutator class a ``rewrite`` uses) count too."""
    if inspect.isfunction(answer) and _depth == 0:
        for helper in _helpers(answer):
            line = unanswered_line(helper, 1)
            if line is not None:
                return line
    source = _source_of(answer)
    if source is None:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            return node.lineno + _first_line(answer) - 1
    return None


def _first_line(obj) -> int:
    """The line where ``obj``'s source starts in its file or notebook cell (1 for text)."""
    if isinstance(obj, str):
        return 1
    try:
        return inspect.getsourcelines(obj)[1] or 1
    except (OSError, TypeError):
        return 1


def describe_error(err: BaseException) -> list[str]:
    """The lines a learner reads for an error their answer raised: TVM's message as it is
    (it says where), any other error with the line of the learner's code that raised it."""
    if isinstance(err, TVMError):
        return str(err).strip().splitlines() or [type(err).__name__]
    lines = [f"{type(err).__name__}: {err}"]
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if "/mlckit/" not in f.filename.replace("\\", "/")]
    if frames:
        f = frames[-1]
        lines.append(f"at line {f.lineno}: {f.line or ''}".rstrip())
    return lines
