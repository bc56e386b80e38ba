"""Reductions: ``te.sum``, ``te.max``, ``te.min`` and custom ``te.comm_reducer``s.

A reducer called with ``axis=`` (reduction axes from ``te.reduce_axis``) builds a
``Reduce`` expression, which must be the whole body of a ``te.compute``::

    k = te.reduce_axis((0, 128), name="k")
    Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")

Called with plain expressions it combines them at once, so ``te.max(x, 0)`` is the
elementwise maximum (``T.max(x, T.float32(0))``), as in TVM.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.node import Node, node
from mlckit.tir import op as tir_op
from mlckit.tir.expr import IntImm, IterVar, IterVarType, PrimExpr, Var, const, convert

from .expr_util import substitute


@node
class CommReducer(Node):
    """A commutative reducer: ``result`` combines ``lhs`` and ``rhs`` (lists of Vars, one
    per value reduced together); ``identity_element`` starts the reduction (TVM's
    ``tir.CommReducer``).

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> B.op.body[0].combiner
    T.comm_reducer(lambda x, y: x + y, [T.float32(0.0)])
    """

    lhs: list
    rhs: list
    result: list
    identity_element: list

    _def_fields = ("lhs", "rhs")

    def __call__(self, a: list, b: list) -> list:
        """The combined values of ``a`` and ``b`` (lists as long as ``lhs``)."""
        vmap = dict(zip(self.lhs, a))
        vmap.update(zip(self.rhs, b))
        return [substitute(r, vmap) for r in self.result]


@node
class Reduce(PrimExpr):
    """The reduction of ``source`` over ``axis`` with ``combiner``, counting only the
    points where ``condition`` holds; the value is output ``value_index`` of the combiner
    (TVM's ``tir.Reduce``).  Only the top of a ``te.compute`` body may be a Reduce.

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> type(B.op.body[0]).__name__, B.op.body[0].source
    ('Reduce', [A[i, k]])
    """

    combiner: CommReducer
    source: list
    axis: list
    condition: PrimExpr
    value_index: int
    init: list = None  # type: ignore[assignment]

    def __post_init__(self):
        self.source = list(self.source)
        self.axis = list(self.axis)
        self.init = list(self.init or [])

    @property
    def dtype(self) -> str:
        return self.source[self.value_index].dtype

    __hash__ = PrimExpr.__hash__


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> Callable:
    """Make a reducer from ``fcombine(x, y)`` and ``fidentity(dtype)`` (TVM's
    ``te.comm_reducer``).

    Example (a product reduction)::

        prod = te.comm_reducer(lambda x, y: x * y, lambda t: tir.const(1, t), name="prod")
        B = te.compute((n,), lambda i: prod(A[i, k], axis=k), name="B")

    For several values reduced together (an argmax), ``fcombine`` takes and returns
    tuples, ``fidentity`` takes one dtype per value, and the reducer returns a tuple.
    """
    code = fcombine.__code__
    if code.co_argcount != 2:
        raise TVMValueError(
            f"te.comm_reducer({name!r}): fcombine must take two arguments (the running value "
            f"and the next one), it takes {code.co_argcount}"
        )

    def make_reduce(expr, axis, where, init):
        axes = _reduction_axes(name, axis)
        multi = isinstance(expr, (list, tuple))
        exprs = [_value(name, e) for e in (expr if multi else [expr])]
        dtypes = [e.dtype for e in exprs]
        lname, rname = code.co_varnames[:2]
        if multi:
            lhs = [Var(f"{lname}_{i}", t) for i, t in enumerate(dtypes)]
            rhs = [Var(f"{rname}_{i}", t) for i, t in enumerate(dtypes)]
            result = list(fcombine(lhs, rhs))
            identity = list(fidentity(*dtypes))
        else:
            lhs, rhs = [Var(lname, dtypes[0])], [Var(rname, dtypes[0])]
            result = [fcombine(lhs[0], rhs[0])]
            identity = [fidentity(dtypes[0])]
        result = [convert(r, t) for r, t in zip(result, dtypes)]
        identity = [convert(v, t) for v, t in zip(identity, dtypes)]
        combiner = CommReducer(lhs, rhs, result, identity)
        combiner.reducer_name = name  # for error messages; not part of the structure
        condition = IntImm("bool", True) if where is None else convert(where)
        if not isinstance(condition, PrimExpr) or condition.dtype != "bool":
            raise TVMTypeError(f"te.{name}: where= must be a boolean expression, got {where!r}")
        inits = []
        if init is not None:
            inits = [convert(v, t) for v, t in zip(init if multi else [init], dtypes)]
        outputs = tuple(Reduce(combiner, exprs, axes, condition, i, inits)
                        for i in range(len(exprs)))
        return outputs if multi else outputs[0]

    def reducer(*args, **kwargs):
        if "axis" in kwargs or (len(args) > 1 and _looks_like_axes(args[1])):
            params = dict(zip(("expr", "axis", "where", "init"), args))
            extra = set(kwargs) - {"expr", "axis", "where", "init"}
            if extra or len(args) > 4 or set(params) & set(kwargs):
                raise TVMTypeError(
                    f"te.{name} takes (expr, axis, where=None, init=None), "
                    f"got {len(args)} positional argument(s) and {sorted(kwargs)}"
                )
            params.update(kwargs)
            if "expr" not in params:
                raise TVMTypeError(f"te.{name}: the expression to reduce is missing")
            return make_reduce(params["expr"], params["axis"], params.get("where"),
                               params.get("init"))
        values = [a for a in args if a is not None]
        if kwargs or len(values) < 2:
            raise TVMTypeError(
                f"te.{name} needs axis=<te.reduce_axis> to reduce over an axis, or two or more "
                f"expressions to combine at once (te.{name}(a, b)); got {len(values)} "
                f"expression(s)"
            )
        result = values[0]
        for v in values[1:]:
            result = fcombine(result, v)
        return result

    reducer.__name__ = name
    reducer.__doc__ = (
        f"``te.{name}(expr, axis=k, where=None, init=None)``: the {name} of ``expr`` over the "
        f"reduction axes ``k``; ``te.{name}(a, b)`` combines ``a`` and ``b`` at once."
    )
    return reducer


def _looks_like_axes(value) -> bool:
    if isinstance(value, IterVar):
        return True
    return isinstance(value, (list, tuple)) and builtins.any(isinstance(v, IterVar) for v in value)


def _reduction_axes(name: str, axis) -> list:
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if not axes:
        raise TVMValueError(f"te.{name}: axis= is empty; give at least one te.reduce_axis")
    for a in axes:
        if not isinstance(a, IterVar) or a.iter_type != IterVarType.CommReduce:
            what = a.var.name if isinstance(a, IterVar) else repr(a)
            raise TVMValueError(
                f"te.{name}: axis {what} is not a reduction axis; create the axes a reduction "
                f"runs over with te.reduce_axis((lo, hi), name=...)"
            )
    for k, a in enumerate(axes):
        # TVM accepts a repeated axis and loops over it twice (the sum counted extent times)
        if builtins.any(b is a for b in axes[:k]):
            raise TVMValueError(
                f"te.{name}: the reduction axis {a.var.name} appears twice in axis="
                f"{[b.var.name for b in axes]}; each axis is reduced over once, so give it "
                f"once (for a reduction over two ranges, make a second te.reduce_axis)")
    return axes


def _value(name: str, expr) -> PrimExpr:
    value = convert(expr)
    if not isinstance(value, PrimExpr):
        raise TVMTypeError(
            f"te.{name}: can only reduce a scalar expression, got {type(expr).__name__}"
            + (" (index the tensor, e.g. A[i, k])" if hasattr(expr, "op") else "")
        )
    return value


sum = comm_reducer(lambda x, y: x + y, lambda t: const(0, t), name="sum")  # noqa: A001
min = comm_reducer(lambda x, y: tir_op.min(x, y), tir_op.max_value, name="min")  # noqa: A001
max = comm_reducer(lambda x, y: tir_op.max(x, y), tir_op.min_value, name="max")  # noqa: A001

_REDUCER_EXAMPLE = """{what} over ``axis`` (TVM's ``te.{name}``), inside a ``te.compute``.

>>> from mlckit import te
>>> A = te.placeholder((4, 8), "float32", name="A")
>>> k = te.reduce_axis((0, 8), name="k")
>>> B = te.compute((4,), lambda i: te.{name}(A[i, k], axis=k), name="B")
>>> B.op.body[0].combiner
T.comm_reducer(lambda x, y: {combine}, [T.float32({identity})])
"""
sum.__doc__ = _REDUCER_EXAMPLE.format(what="The sum", name="sum", combine="x + y", identity="0.0")
min.__doc__ = _REDUCER_EXAMPLE.format(what="The minimum", name="min", combine="T.min(x, y)",
                                      identity="340282346638528859811704183484516925440.0")
max.__doc__ = _REDUCER_EXAMPLE.format(what="The maximum", name="max", combine="T.max(x, y)",
                                      identity="-340282346638528859811704183484516925440.0")
