"""Parser entry points: ``parse(program)``, ``from_source(text)`` and decorator helpers.

A dialect decorator (``T.prim_func``, ``R.function``, ``I.ir_module``) is built with
``script_decorator(token, ...)``: applied to a function or class it captures the Python
names around it and parses its source; applied inside an ``@I.ir_module`` class body it
returns the function untouched, because the module parses the whole class.
"""

from __future__ import annotations

import ast
import functools
import importlib
import linecache
import sys
import types
from typing import Any

from mlckit.ir.diagnostics import DiagnosticError

from . import dispatch
from .core import Parser
from .source import Source


def _run(source: Source, env: dict[str, Any]) -> Any:
    """Parse; a DiagnosticError is re-raised without the parser's internal frames."""
    try:
        return Parser(source, env).parse()
    except DiagnosticError as err:
        raise err.with_traceback(None) from None


def default_vars() -> dict[str, Any]:
    """Names every script sees: the dialect modules and mlckit itself."""
    import numpy

    import mlckit
    from mlckit.script import ir as I  # noqa: E741

    R = _Deferred("mlckit.script.relax")  # noqa: N806  (Relax is imported when a script uses R)

    try:
        from mlckit.script import tir as T
    except ModuleNotFoundError as err:  # the TIR dialect is optional while it is being built
        if err.name != "mlckit.script.tir":
            raise
        T = None  # noqa: N806

    return {"I": I, "T": T, "R": R, "tvm": mlckit, "mlckit": mlckit, "np": numpy, "numpy": numpy}


class _Deferred(types.ModuleType):
    """A module imported at its first attribute: ``R.function`` in a script imports Relax, a
    TIR-only script never does (``import mlckit`` leaves Relax for its first use)."""

    def __getattr__(self, attr: str):
        return getattr(importlib.import_module(self.__name__), attr)

    def __dir__(self):
        return dir(importlib.import_module(self.__name__))


def capture_env(depth: int) -> dict[str, Any]:
    """Globals and locals of the frame ``depth`` levels above the caller (closures!)."""
    frame = sys._getframe(depth + 1)
    env = dict(frame.f_globals)
    env.update(frame.f_locals)
    return env


def in_class_body(depth: int) -> bool:
    """True when the frame ``depth`` levels above the caller is executing the body of a class
    decorated with ``ir_module``, which parses the whole class.

    As in TVM, a ``@T.prim_func`` in a plain class is parsed on its own, at once.
    """
    frame = sys._getframe(depth + 1)
    if "__qualname__" not in frame.f_locals or "__module__" not in frame.f_locals:
        return False
    # a decorated class body's code starts at its first decorator line
    code = frame.f_code
    for lineno in range(code.co_firstlineno, frame.f_lineno):
        line = linecache.getline(code.co_filename, lineno).strip()
        if not line:
            return True  # no source to look at: assume a module class, as before
        if line.startswith("class "):
            return False
        if line.startswith("@") and "ir_module" in line:
            return True
    return False


def parse(program: Any, extra_vars: dict[str, Any] | None = None) -> Any:
    """Parse a decorated function or class (or TVMScript text) into IR.

    >>> import mlckit as tvm
    >>> func = tvm.script.parse('''
    ... @T.prim_func
    ... def zero(a: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         a[i] = T.float32(0)
    ... ''')
    >>> type(func).__name__
    'PrimFunc'
    """
    source = Source.from_string(program) if isinstance(program, str) else Source.from_object(program)
    env = default_vars()
    env.update(extra_vars or {})
    return _run(source, env)


def from_source(text: str, extra_vars: dict[str, Any] | None = None) -> Any:
    """Parse TVMScript from a string.

    Example::

        mod = from_source('''
        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer((4,), "float32")):
                for i in range(4):
                    A[i] = A[i] + T.float32(1)
        ''')
    """
    return parse(text, extra_vars)


def parse_definitions(text: str, extra_vars: dict[str, Any] | None = None,
                      dialect: str | None = None, source_name: str = "<string>",
                      first_line: int = 1, full_text: str | None = None) -> dict[str, Any]:
    """Parse every top-level def and class of ``text``, in order: ``{name: IR object}``.

    This is what a notebook cell of TVMScript needs (``%%relax`` / ``%%tir``): a decorated
    def or class is parsed in the dialect of its decorator; an undecorated def is parsed in
    ``dialect`` ("relax" or "tir"; None: a decorator is required).  Each definition sees
    the ones parsed before it by name.  ``first_line`` is the line of ``text``'s first line
    in what the learner sees, and ``full_text`` that whole text, so errors point at it.

    Example::

        defs = parse_definitions('''
        def main(x: R.Tensor((4,), "float32")):
            return x
        ''', dialect="relax")
        defs["main"]                      # a relax.Function
    """
    source = Source(text, source_name, first_line, full_text if full_text is not None else text)
    env = default_vars()
    env.update(extra_vars or {})
    try:
        module = source.parse()
        probe = Parser(source, env)
        body = [s for s in module.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        for stmt in body:
            is_docstring = (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                            and isinstance(stmt.value.value, str))
            if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Pass)) and not is_docstring:
                probe.report_error(stmt, "only TVMScript definitions (an @I.ir_module class, "
                                         "@R.function or @T.prim_func defs) can be parsed here")
        defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        if not defs:
            probe.report_error(body[0] if body else module,
                               "expected a function or class to parse (TVMScript)")
        results: dict[str, Any] = {}
        for node in defs:
            parser = Parser(source, {**env, **results})
            token = parser.decorator_token(node)
            if token is None and dialect is not None and isinstance(node, ast.FunctionDef):
                with parser.with_dispatch_token(dialect):
                    results[node.name] = parser.visit(node)
            else:
                results[node.name] = parser.visit(node)
        return results
    except DiagnosticError as err:
        raise err.with_traceback(None) from None


def parse_decorated(obj: Any, token: str, finish=None, kwargs: dict | None = None,
                    depth: int = 1) -> Any:
    """What a dialect decorator does with the function or class ``obj`` it decorates.

    ``depth`` counts the frames from the caller of ``parse_decorated`` up to the user's code
    applying the decorator (1: the caller was called from it).  In a class body (an
    ``@I.ir_module`` being defined) ``obj`` is returned marked with ``token``, since the module
    parses the whole class; otherwise it is parsed with the names visible where it is defined.
    """
    if in_class_body(depth + 1):
        obj.__mlckit_token__ = token
        return obj
    env = default_vars()
    env.update(capture_env(depth + 1))
    result = _run(Source.from_object(obj), env)
    return finish(result, dict(kwargs or {})) if finish else result


def script_decorator(token: str, finish=None, **defaults):
    """Make a dialect decorator usable as ``@deco`` and ``@deco(key=value)``.

    ``finish(result, kwargs)`` post-processes what the parser built (e.g. sets attributes).
    The decorator (and the one ``@deco(...)`` returns) carries ``dispatch_token`` and
    ``decorator_kwargs`` so that the parser knows the dialect and options of a def.
    """

    def make(kwargs):
        def decorate(obj):
            return parse_decorated(obj, token, finish, kwargs, depth=1)

        decorate.dispatch_token = token
        decorate.decorator_kwargs = kwargs
        return decorate

    plain = make(dict(defaults))

    @functools.wraps(plain)
    def decorator(obj=None, **kwargs):
        if obj is None:
            return make({**defaults, **kwargs})
        return parse_decorated(obj, token, finish, dict(defaults), depth=1)

    decorator.dispatch_token = token
    decorator.decorator_kwargs = dict(defaults)
    return decorator


# -- the "default" dialect: top-level defs pick their dialect from their decorator -----------
@dispatch.register("default", "FunctionDef")
@dispatch.register("default", "ClassDef")
def _visit_decorated(parser: Parser, node: ast.FunctionDef | ast.ClassDef) -> Any:
    token = parser.decorator_token(node)
    if token is None or not dispatch.has(token, type(node).__name__):
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        parser.report_error(node, f"the {kind} {node.name!r} needs a TVMScript decorator: "
                                  "@T.prim_func, @R.function or @I.ir_module")
    with parser.with_dispatch_token(token):
        return parser.visit(node)


@dispatch.register("default", "Pass")
def _visit_pass(parser: Parser, node: ast.Pass) -> None:
    return None


@dispatch.register("default", "Expr")
def _visit_docstring(parser: Parser, node: ast.Expr) -> None:
    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return None  # a docstring
    parser.report_error(node, "an expression statement is not supported here")
