"""Patterns and the matcher (see the package docstring for the language)."""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.op import Op

from ..expr import Call, Constant, Expr, TupleGetItem, Var


class DFPattern:
    """A dataflow pattern.  ``p(a, b)`` is a call pattern with ``p`` as the callee, ``p | q``
    matches what either matches, ``p.match(expr)`` tests an expression."""

    def __call__(self, *args: DFPattern, varg_default_wildcard: bool = False) -> CallPattern:
        return CallPattern(self, [_as_pattern(a) for a in args], varg_default_wildcard)

    def __or__(self, other: DFPattern) -> OrPattern:
        return OrPattern(self, _as_pattern(other))

    def match(self, expr: Expr, var2val: dict | None = None) -> bool:
        """Whether ``expr`` matches.  ``var2val`` maps variables to their bound values: a
        variable matches a non-wildcard pattern when its value does (patterns then span
        bindings)."""
        return _Matcher(var2val or {}).match(self, expr)

    def _match(self, m: _Matcher, expr: Expr) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError


class WildcardPattern(DFPattern):
    """Anything (``*`` in TVM's printing)."""

    def _match(self, m, expr):
        return True

    def __repr__(self):
        return "*"


class ExprPattern(DFPattern):
    """Exactly this expression: an operator (``is_op``) or another leaf."""

    def __init__(self, expr):
        self.expr = expr

    def _match(self, m, expr):
        if isinstance(self.expr, Op):
            return isinstance(expr, Op) and expr.name == self.expr.name
        return expr is self.expr

    def __repr__(self):
        return getattr(self.expr, "name", repr(self.expr))


class ConstantPattern(DFPattern):
    """A ``relax.Constant``."""

    def _match(self, m, expr):
        return isinstance(expr, Constant)

    def __repr__(self):
        return "const"


class CallPattern(DFPattern):
    """A call: the callee matches ``op``, the arguments match ``args`` one by one (with
    ``varg_default_wildcard``, further arguments are allowed and match anything)."""

    def __init__(self, op: DFPattern, args: list, varg_default_wildcard: bool = False):
        self.op, self.args, self.varg_default_wildcard = op, list(args), varg_default_wildcard

    def _match(self, m, expr):
        if not isinstance(expr, Call) or not m.match(self.op, expr.op):
            return False
        n = len(self.args)
        if len(expr.args) < n or (len(expr.args) > n and not self.varg_default_wildcard):
            return False
        return all(m.match(p, a) for p, a in zip(self.args, expr.args))

    def __repr__(self):
        return f"{self.op!r}({', '.join(map(repr, self.args))})"


class TupleGetItemPattern(DFPattern):
    """``tuple[index]`` (``index=None``: any index)."""

    def __init__(self, tuple_value: DFPattern, index: int | None = None):
        self.tuple_value, self.index = tuple_value, index

    def _match(self, m, expr):
        return (isinstance(expr, TupleGetItem)
                and (self.index is None or expr.index == self.index)
                and m.match(self.tuple_value, expr.tuple_value))

    def __repr__(self):
        return f"{self.tuple_value!r}[{'*' if self.index is None else self.index}]"


class OrPattern(DFPattern):
    """``left | right``: the left alternative first."""

    def __init__(self, left: DFPattern, right: DFPattern):
        self.left, self.right = left, right

    def _match(self, m, expr):
        saved = m.save()
        if m.match(self.left, expr):
            return True
        m.restore(saved)
        return m.match(self.right, expr)

    def __repr__(self):
        return f"({self.left!r} | {self.right!r})"


def wildcard() -> WildcardPattern:
    """A pattern matching any expression."""
    return WildcardPattern()


def is_op(op_name: str) -> ExprPattern:
    """A pattern for the operator ``op_name``; call it on argument patterns:
    ``is_op("relax.add")(wildcard(), wildcard())``."""
    if not isinstance(op_name, str):
        raise TVMTypeError(f"is_op expects an operator name such as \"relax.add\", got "
                           f"{type(op_name).__name__}")
    try:
        return ExprPattern(Op.get(op_name))
    except Exception as err:  # noqa: BLE001 - re-raised with the pattern's context
        raise TVMValueError(f"is_op({op_name!r}): no such operator ({err})") from None


def is_const() -> ConstantPattern:
    """A pattern matching a constant."""
    return ConstantPattern()


def is_tuple_get_item(tuple_value: DFPattern, index: int | None = None) -> TupleGetItemPattern:
    """A pattern for ``tuple_value[index]`` (any index when ``index`` is None)."""
    return TupleGetItemPattern(_as_pattern(tuple_value), index)


def _as_pattern(p) -> DFPattern:
    if isinstance(p, DFPattern):
        return p
    if isinstance(p, Expr):
        return ExprPattern(p)
    raise TVMTypeError(f"expected a dataflow pattern, got {type(p).__name__} {p!r}")


class _Matcher:
    """One match: ``matched`` records what each sub-pattern matched (a pattern used twice
    must match the same expression), ``bindings`` the variables looked through."""

    def __init__(self, var2val: dict):
        self.var2val = var2val
        self.matched: dict[int, tuple[DFPattern, Expr]] = {}
        self.bindings: dict[Var, Expr] = {}

    def save(self):
        return dict(self.matched), dict(self.bindings)

    def restore(self, saved) -> None:
        self.matched, self.bindings = dict(saved[0]), dict(saved[1])

    def match(self, pattern: DFPattern, expr) -> bool:
        seen = self.matched.get(id(pattern))
        if seen is not None:
            return seen[1] is expr or (isinstance(seen[1], Var) and
                                       self.var2val.get(seen[1]) is expr)
        saved = self.save()
        if pattern._match(self, expr):
            self.matched[id(pattern)] = (pattern, expr)
            return True
        self.restore(saved)
        # a variable bound in the block stands for its value
        if (isinstance(expr, Var) and not isinstance(pattern, WildcardPattern)
                and expr in self.var2val):
            value = self.var2val[expr]
            if pattern._match(self, value):
                self.matched[id(pattern)] = (pattern, value)
                self.bindings[expr] = value
                return True
            self.restore(saved)
        return False


def match_bindings(pattern: DFPattern, expr: Expr, var2val: dict):
    """Match ``pattern`` against ``expr`` looking through ``var2val``; returns
    ``(matched, bindings)`` — the expression each sub-pattern matched (by pattern id) and the
    variables whose bindings the match covers — or None."""
    m = _Matcher(var2val)
    if not m.match(pattern, expr):
        return None
    return m.matched, m.bindings
