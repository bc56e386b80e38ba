"""Evaluate the Python expressions of a script in the variables it can see.

Names resolve first in the parser's variable table (what the script has bound so far),
then in the captured environment (the globals and locals around the decorated function).
Operators go through the current dialect's table (``dispatch.get_op``), so that ``a and b``
on TIR expressions builds ``T.And`` instead of asking Python for a truth value.  Any other
expression is evaluated by Python itself.  Every error is reported at the sub-expression
that raised it.
"""

from __future__ import annotations

import ast
import difflib
import operator
import types
from typing import TYPE_CHECKING, Any

from mlckit.error import TVMAttributeError, TVMError
from mlckit.ir.diagnostics import DiagnosticError

from . import dispatch

if TYPE_CHECKING:
    from .core import Parser

_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
          ast.Not: operator.not_}
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}

_UNDEFINED = object()


class ExprEvaluator:
    def __init__(self, parser: Parser):
        self.parser = parser

    # -- entry ---------------------------------------------------------------------------
    def eval(self, node: ast.expr) -> Any:
        method = getattr(self, f"eval_{type(node).__name__}", None)
        if method is None:
            return self.eval_python(node)
        try:
            return method(node)
        except DiagnosticError:
            raise
        except Exception as err:  # noqa: BLE001 - any error is the script's, located here
            self.parser.report_error(node, _describe(err))

    def op(self, op_type: type, default):
        return dispatch.get_op(self.parser.dispatch_token, op_type) or default

    # -- names and literals ----------------------------------------------------------------
    def eval_Name(self, node: ast.Name) -> Any:
        value = self.parser.lookup(node.id, _UNDEFINED)
        if value is _UNDEFINED:
            self.parser.report_error(node, f"undefined variable {node.id!r}")
        return value

    def eval_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def eval_Attribute(self, node: ast.Attribute) -> Any:
        value = self.eval(node.value)
        try:
            return getattr(value, node.attr)
        except TVMAttributeError as err:
            if isinstance(value, types.ModuleType):  # a namespace explains (T.block in tirx)
                self.parser.report_error(node, str(err))
            self._no_attribute(node, value)
        except AttributeError:
            self._no_attribute(node, value)

    def _no_attribute(self, node: ast.Attribute, value) -> None:
        """``R.ad``: say what is missing, and the close names that do exist."""
        owner = getattr(value, "__name__", None) or type(value).__name__
        names = [n for n in dir(value) if not n.startswith("_")]
        close = difflib.get_close_matches(node.attr, names, n=3, cutoff=0.6)
        hint = ""
        if close:
            spelled = " or ".join(f"{_prefix(node.value)}{name}" for name in close)
            hint = f"; did you mean {spelled}?"
        self.parser.report_error(node, f"{owner!s} has no attribute {node.attr!r}{hint}")

    # -- containers ------------------------------------------------------------------------
    def _elements(self, elts) -> list:
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.eval(e.value))
            else:
                out.append(self.eval(e))
        return out

    def eval_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self._elements(node.elts))

    def eval_List(self, node: ast.List) -> list:
        return self._elements(node.elts)

    def eval_Dict(self, node: ast.Dict) -> dict:
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v))
            else:
                out[self.eval(k)] = self.eval(v)
        return out

    def eval_Slice(self, node: ast.Slice) -> slice:
        def part(x):
            return None if x is None else self.eval(x)

        return slice(part(node.lower), part(node.upper), part(node.step))

    def eval_Subscript(self, node: ast.Subscript) -> Any:
        value = self.eval(node.value)
        index = self.eval(node.slice)
        custom = dispatch.get_op(self.parser.dispatch_token, ast.Subscript)
        if custom is not None:  # e.g. TIR checks a buffer's indices
            return custom(self.parser, node, value, index)
        return value[index]

    # -- operators -------------------------------------------------------------------------
    def eval_BinOp(self, node: ast.BinOp) -> Any:
        a, b = self.eval(node.left), self.eval(node.right)
        return self.op(type(node.op), _BINARY[type(node.op)])(a, b)

    def eval_UnaryOp(self, node: ast.UnaryOp) -> Any:
        a = self.eval(node.operand)
        return self.op(type(node.op), _UNARY[type(node.op)])(a)

    def eval_BoolOp(self, node: ast.BoolOp) -> Any:
        custom = dispatch.get_op(self.parser.dispatch_token, type(node.op))
        if custom is None:  # Python semantics, short-circuit included
            result = None
            for v in node.values:
                result = self.eval(v)
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        values = [self.eval(v) for v in node.values]
        result = values[0]
        for v in values[1:]:
            result = custom(result, v)
        return result

    def eval_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        result = None
        for op, comparator in zip(node.ops, node.comparators):
            right = self.eval(comparator)
            value = self.op(type(op), _COMPARE[type(op)])(left, right)
            if result is None:
                result = value
            else:
                result = self.op(ast.And, lambda a, b: a and b)(result, value)
            left = right
        return result

    def eval_IfExp(self, node: ast.IfExp) -> Any:
        return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)

    # -- calls -----------------------------------------------------------------------------
    def eval_Call(self, node: ast.Call) -> Any:
        func = self.eval(node.func)
        args = self._elements(node.args)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        try:
            return func(*args, **kwargs)
        except TypeError as err:
            raise _as_written(err, func, node) from None

    # -- everything else: Python itself, with the script's names visible ------------------------
    def eval_python(self, node: ast.expr) -> Any:
        namespace = self.parser.namespace()
        try:
            code = compile(ast.Expression(body=node), self.parser.source.source_name, "eval")
            return eval(code, namespace)  # noqa: S307 - evaluating the user's own script
        except DiagnosticError:
            raise
        except NameError as err:
            self.parser.report_error(node, f"undefined variable {getattr(err, 'name', '')!r}")
        except Exception as err:  # noqa: BLE001
            self.parser.report_error(node, _describe(err))


def _as_written(err: TypeError, func, node: ast.Call) -> TypeError:
    """A wrong-arguments TypeError names the function as Python knows it (``make()``, or
    ``_axis.<locals>.make()`` for a helper); say it as the script wrote it (``T.axis.spatial()``)."""
    text = str(err)
    written = ast.unparse(node.func)
    for name in {getattr(func, "__qualname__", None), getattr(func, "__name__", None)}:
        if name and text.startswith(f"{name}()"):
            return TypeError(f"{written}(){text[len(name) + 2:]}")
    return err


def _describe(err: Exception) -> str:
    text = str(err)
    if isinstance(err, KeyError) and len(err.args) == 1 and isinstance(err.args[0], str):
        text = err.args[0]
    if isinstance(err, (ValueError, TypeError, IndexError, KeyError, TVMError)) and text:
        return text
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _prefix(node: ast.expr) -> str:
    """``R.`` for the ``R`` of ``R.ad`` (the dotted text of the object a name is looked up on)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts)) + "."
