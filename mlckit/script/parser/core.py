"""The parser core: walks a script's Python AST and calls the current dialect's handlers.

The dialect ("tir", "relax", "ir") is chosen by the decorator of each function or class
(``@T.prim_func`` has ``dispatch_token = "tir"``).  Handlers live in ``parser/tir_handlers.py``,
``parser/relax_handlers.py`` and ``parser/ir_handlers.py`` and build IR through the IRBuilder.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from typing import Any, NoReturn

from mlckit.ir.diagnostics import DiagnosticError

from . import dispatch
from .evaluator import ExprEvaluator
from .source import Source
from .type_vars import module_type_vars

_MISSING = object()


class VarTable:
    """Names the script has bound, in nested scopes (a loop body, a block, a function)."""

    def __init__(self):
        self.frames: list[dict[str, Any]] = [{}]

    @contextlib.contextmanager
    def with_frame(self) -> Iterator[None]:
        self.frames.append({})
        try:
            yield
        finally:
            self.frames.pop()

    def add(self, name: str, value: Any) -> None:
        self.frames[-1][name] = value

    def get(self, name: str, default: Any = _MISSING) -> Any:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return default

    def exist(self, name: str) -> bool:
        return self.get(name) is not _MISSING

    def merged(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for frame in self.frames:
            out.update(frame)
        return out


class Parser:
    """Parses one script (a function or a class) into IR.

    ``env`` holds the Python values visible around the script (globals, the locals of the
    enclosing function for closures, ``extra_vars``).  Dialect handlers use:

    - ``eval_expr(node)``, ``eval_assign(target, value, bind)`` to evaluate and bind names;
    - ``visit_body(stmts)`` / ``visit(stmt)`` to recurse;
    - ``report_error(node, message)`` to raise a located ``DiagnosticError``;
    - ``var_table`` (with ``with_frame()``) and ``with_dispatch_token(token)``.
    """

    def __init__(self, source: Source, env: dict[str, Any]):
        self.source = source
        self.env = env
        self.var_table = VarTable()
        self.dispatch_token = "default"
        self.evaluator = ExprEvaluator(self)
        # dialect-specific builtins seen before the environment (e.g. tir's `range`)
        self.dialect_builtins: dict[str, dict[str, Any]] = {}
        # free-form per-parse state for dialects (e.g. the symbolic vars of a relax function)
        self.state: dict[str, Any] = {}

    # -- entry -----------------------------------------------------------------------------
    def parse(self) -> Any:
        module = self.source.parse()
        body = [s for s in module.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.ClassDef))]
        self.env.update(module_type_vars(body))
        if not defs:
            first = body[0] if body else module
            self.report_error(first, "expected a function or class decorated with "
                                     "@T.prim_func, @R.function or @I.ir_module")
        return self.visit(defs[-1])

    # -- dispatch --------------------------------------------------------------------------
    @contextlib.contextmanager
    def with_dispatch_token(self, token: str) -> Iterator[None]:
        previous, self.dispatch_token = self.dispatch_token, token
        try:
            yield
        finally:
            self.dispatch_token = previous

    def visit(self, node: ast.AST) -> Any:
        kind = type(node).__name__
        handler = dispatch.get(self.dispatch_token, kind)
        if handler is None:
            where = {"tir": "a TIR function", "relax": "a Relax function",
                     "ir": "an IRModule class"}.get(self.dispatch_token, "TVMScript")
            self.report_error(node, f"{_syntax_name(node)} is not supported in {where}")
        try:
            return handler(self, node)
        except DiagnosticError:
            raise
        except Exception as err:  # noqa: BLE001 - located at the statement that failed
            from .evaluator import _describe

            self.report_error(node, _describe(err))

    def visit_body(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.visit(stmt)

    def decorator_token(self, node: ast.FunctionDef | ast.ClassDef) -> str | None:
        """The dialect of a def or class: the ``dispatch_token`` of one of its decorators."""
        for decorator in node.decorator_list:
            value = self.eval_expr(decorator)
            token = getattr(value, "dispatch_token", None)
            if token is not None:
                return token
        return None

    # -- evaluation ------------------------------------------------------------------------
    def lookup(self, name: str, default: Any = None) -> Any:
        value = self.var_table.get(name)
        if value is not _MISSING:
            return value
        builtins = self.dialect_builtins.get(self.dispatch_token, {})
        if name in builtins:
            return builtins[name]
        if name in self.env:
            return self.env[name]
        import builtins as py_builtins

        return getattr(py_builtins, name, default)

    def namespace(self) -> dict[str, Any]:
        """All visible names as one dict (for evaluating arbitrary Python expressions)."""
        ns = dict(self.env)
        ns.update(self.dialect_builtins.get(self.dispatch_token, {}))
        ns.update(self.var_table.merged())
        return ns

    def eval_expr(self, node: ast.expr) -> Any:
        return self.evaluator.eval(node)

    def eval_assign(self, target: ast.expr, value: Any, bind) -> None:
        """Bind ``value`` to ``target`` (a name, or a tuple/list with at most one starred name),
        calling ``bind(parser, name, value, node)`` for each name; it returns what to store."""
        if isinstance(target, ast.Name):
            self.var_table.add(target.id, bind(self, target.id, value, target))
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            values = self._unpack(target, value)
            for elt, v in zip(target.elts, values):
                if isinstance(elt, ast.Starred):
                    self.eval_assign(elt.value, v, bind)
                else:
                    self.eval_assign(elt, v, bind)
            return
        self.report_error(target, f"cannot assign to {_syntax_name(target)} here")

    def _unpack(self, target: ast.Tuple | ast.List, value: Any) -> list:
        try:
            values = list(value)
        except TypeError:
            self.report_error(target, f"cannot unpack a {type(value).__name__} into "
                                      f"{len(target.elts)} names")
        starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
        n = len(target.elts)
        if not starred:
            if len(values) != n:
                self.report_error(target, f"expected {n} values to unpack, got {len(values)}")
            return values
        s = starred[0]
        after = n - s - 1
        if len(values) < n - 1:
            self.report_error(target, f"expected at least {n - 1} values to unpack, got {len(values)}")
        return values[:s] + [tuple(values[s:len(values) - after])] + values[len(values) - after:]

    # -- errors ----------------------------------------------------------------------------
    def span(self, node: ast.AST):
        return self.source.span(node)

    def report_error(self, node: ast.AST, message: str) -> NoReturn:
        raise DiagnosticError(message, self.span(node), self.source.full_text)


def _syntax_name(node: ast.AST) -> str:
    names = {
        "While": "a while loop", "Try": "try/except", "With": "this `with` statement",
        "AsyncFunctionDef": "async def", "Lambda": "lambda", "Global": "`global`",
        "Nonlocal": "`nonlocal`", "Delete": "`del`", "Raise": "`raise`", "Import": "`import`",
        "ClassDef": "a class definition", "FunctionDef": "a nested function definition",
        "Break": "`break`", "Continue": "`continue`",
    }
    kind = type(node).__name__
    return names.get(kind, f"the statement `{kind}`")
