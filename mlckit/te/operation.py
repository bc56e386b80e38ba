"""Declaring tensor computations: ``te.placeholder``, ``te.compute``, ``te.reduce_axis``,
``te.var``, ``te.size_var``, ``te.const`` (TVM's ``tvm.te`` functions and signatures).

Example (the course's matmul + relu)::

    A = te.placeholder((128, 128), "float32", name="A")
    B = te.placeholder((128, 128), "float32", name="B")
    k = te.reduce_axis((0, 128), "k")
    Y = te.compute((128, 128), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((128, 128), lambda i, j: te.max(Y[i, j], 0), name="C")
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from numbers import Integral

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir import dtype as dt
from mlckit.tir.expr import (
    IntImm,
    IterVar,
    IterVarType,
    PrimExpr,
    Range,
    SizeVar,
    Var,
    convert,
)
from mlckit.tir.expr import const as _tir_const

from .expr_util import post_order
from .reduce import Reduce
from .tag import TagScope
from .tensor import ComputeOp, PlaceholderOp, Tensor


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A scalar variable, e.g. a symbolic size: ``n = te.var("n")``.

    >>> from mlckit import te
    >>> n = te.var("n")
    >>> n, n.dtype
    (n, 'int32')
    """
    return Var(name, dt.check_dtype(dtype))


def size_var(name: str = "size", dtype: str = "int32") -> SizeVar:
    """A variable known to be non-negative (a symbolic size).

    >>> from mlckit import te
    >>> m = te.size_var("m")
    >>> A = te.placeholder((m, 4), "float32", name="A")
    >>> A.shape[0]
    m
    """
    return SizeVar(name, dt.check_dtype(dtype))


def const(value, dtype: str = "int32") -> PrimExpr:
    """A constant of ``dtype`` (``int32`` by default, as TVM's ``te.const``).

    >>> from mlckit import te
    >>> te.const(3), te.const(1.5, "float32")
    (3, T.float32(1.5))
    """
    return _tir_const(value, dtype)


def placeholder(shape, dtype: str | None = None, name: str = "placeholder") -> Tensor:
    """An input tensor of ``shape`` and ``dtype`` (``float32`` by default).

    Example::

        n = te.var("n")
        A = te.placeholder((n, 128), "float16", name="A")
    """
    dtype = "float32" if dtype is None else dtype
    try:
        dtype = dt.check_dtype(dtype)
    except ValueError as err:
        raise TVMValueError(f"te.placeholder {name!r}: {err}") from None
    if dtype in ("handle", "void"):
        raise TVMValueError(f"te.placeholder {name!r}: a tensor cannot hold {dtype!r} elements")
    return PlaceholderOp(name, _shape(shape, f"te.placeholder {name!r}"), dtype).output(0)


def thread_axis(dom=None, tag: str = "", name: str = "") -> IterVar:
    """A thread axis (``te.thread_axis("threadIdx.x")``): an IterVar whose extent an
    ``AttrStmt("thread_extent")`` gives.

    >>> from mlckit import te
    >>> tx = te.thread_axis("threadIdx.x")
    >>> tx.var, tx.thread_tag
    (threadIdx_x, 'threadIdx.x')
    """
    if isinstance(dom, str):
        dom, tag = None, dom
    if not tag:
        raise TVMTypeError("te.thread_axis needs a thread tag, e.g. 'threadIdx.x'")
    if isinstance(dom, (list, tuple)):
        dom = Range(convert(dom[0]), convert(dom[1]) - convert(dom[0]))
    return IterVar(dom, Var(name or tag, "int32"), IterVarType.ThreadIndex, tag)


def reduce_axis(dom, name: str = "rv", thread_tag: str = "") -> IterVar:
    """A reduction axis over ``dom``, a ``(lo, hi)`` pair or a ``tir.Range``.

    Example::

        k = te.reduce_axis((0, A.shape[1]), name="k")
        te.sum(A[i, k], axis=k)
    """
    if isinstance(dom, Range):
        rng = dom
    elif isinstance(dom, (list, tuple)) and len(dom) == 2:
        lo, hi = dom
        hi = convert(hi)
        lo = convert(lo, hi.dtype if isinstance(hi, PrimExpr) else None)
        for bound in (lo, hi):
            if not isinstance(bound, PrimExpr) or not dt.is_int(bound.dtype):
                raise TVMTypeError(
                    f"te.reduce_axis {name!r}: the bounds must be integers, got {dom!r}"
                )
        # TVM's Range(begin, end): the extent is ``end`` itself when ``begin`` is zero
        extent = hi if isinstance(lo, IntImm) and lo.value == 0 else hi - lo
        rng = Range(lo, extent)
    else:
        raise TVMTypeError(
            f"te.reduce_axis {name!r}: dom must be a (lo, hi) pair or a tir.Range, got {dom!r}"
        )
    axis = IterVar(rng, Var(name, rng.extent.dtype), IterVarType.CommReduce, thread_tag)
    _REDUCTION_VARS[axis.var] = axis
    return axis


def compute(shape, fcompute: Callable, name: str = "compute", tag: str = "",
            attrs: dict | None = None, varargs_names: list | None = None):
    """A tensor of ``shape`` whose element at index ``(i, j, ...)`` is
    ``fcompute(i, j, ...)``; a tuple of tensors when ``fcompute`` returns a tuple.

    The index variables are named after the lambda's parameters (``lambda i, j``); with
    ``lambda *i`` they are ``i0, i1, ...`` as in TVM.

    Example::

        B = te.compute(A.shape, lambda *i: te.max(A(*i), 0), name="relu")
    """
    where = f"te.compute {name!r}"
    scope = TagScope.get_current()
    if scope is not None:
        if tag != "":
            raise TVMValueError(f"{where}: tag={tag!r} inside te.tag_scope({scope.tag!r})")
        tag = scope.tag
    dims = _shape(shape, where)
    arg_names = _index_names(fcompute, len(dims), varargs_names, where)
    axis = [IterVar(Range(IntImm(s.dtype, 0), s), Var(n, s.dtype), IterVarType.DataPar)
            for n, s in zip(arg_names, dims)]
    result = fcompute(*[iv.var for iv in axis])
    bodies = list(result) if isinstance(result, (list, tuple)) else [result]
    if not bodies:
        raise TVMValueError(f"{where}: fcompute returned no value")
    bodies = [_body(b, where) for b in bodies]
    _check_reductions(bodies, where)
    op = ComputeOp(name, tag, attrs, axis, bodies)
    outputs = tuple(op.output(i) for i in range(op.num_outputs))
    return outputs[0] if len(outputs) == 1 else outputs


# -- checks ------------------------------------------------------------------------------
def _shape(shape, where: str) -> list:
    if isinstance(shape, (PrimExpr, Integral)):
        shape = (shape,)
    if not isinstance(shape, (list, tuple)):
        raise TVMTypeError(f"{where}: shape must be a tuple of sizes, got {type(shape).__name__}")
    dims = []
    for s in shape:
        if isinstance(s, float) and s.is_integer():
            s = int(s)
        if isinstance(s, bool):
            s = None
        d = convert(s)
        if not isinstance(d, PrimExpr) or not dt.is_int(d.dtype):
            raise TVMTypeError(f"{where}: every dimension must be an integer, got {s!r} in {shape!r}")
        if isinstance(d, IntImm) and d.value < 0:
            raise TVMValueError(f"{where}: dimension {d.value} in {shape!r} is negative")
        dims.append(d)
    return dims


def _index_names(fcompute, ndim: int, varargs_names, where: str) -> list[str]:
    """The index variables' names, from fcompute's parameters (TVM's rules)."""
    if not callable(fcompute):
        raise TVMTypeError(f"{where}: fcompute must be a function of the indices, "
                           f"got {type(fcompute).__name__}")
    spec = inspect.getfullargspec(fcompute)
    if spec.varkw is not None or spec.kwonlyargs or spec.defaults:
        raise TVMTypeError(f"{where}: fcompute may take only positional index parameters "
                           "(no defaults, keyword-only or **kwargs)")
    args = list(spec.args)
    if inspect.ismethod(fcompute):
        args = args[1:]
    if spec.varargs is None:
        if len(args) != ndim:
            raise TVMValueError(
                f"{where}: the shape has {ndim} dimension(s) but fcompute takes {len(args)} "
                f"index parameter(s) ({', '.join(args) or 'none'}); give it one per dimension "
                "or use lambda *i"
            )
        return args
    rest = ndim - len(args)
    if rest < 0:
        raise TVMValueError(
            f"{where}: the shape has {ndim} dimension(s) but fcompute takes at least "
            f"{len(args)} index parameter(s)"
        )
    if varargs_names is not None:
        if len(varargs_names) != rest:
            raise TVMValueError(f"{where}: {len(varargs_names)} varargs_names for {rest} "
                                "dimension(s) taken by *args")
        return args + list(varargs_names)
    return args + [f"i{i}" for i in range(rest)]


def _body(value, where: str) -> PrimExpr:
    if isinstance(value, Tensor):
        raise TVMTypeError(f"{where}: fcompute returned the tensor {value.name!r} itself; "
                           f"return an element of it, e.g. {value.name}[i, j]")
    body = convert(value)
    if not isinstance(body, PrimExpr):
        raise TVMTypeError(f"{where}: fcompute must return an expression, got "
                           f"{type(value).__name__}")
    return body


def _check_reductions(bodies: list, where: str) -> None:
    """A Reduce is the whole of a body; all bodies reduce alike or none does; a reduction
    axis appears only inside a reduction over it, and every reduction axis is used."""
    reduces = [b for b in bodies if isinstance(b, Reduce)]
    if reduces and len(reduces) != len(bodies):
        raise TVMValueError(f"{where}: when one output is a reduction, all outputs must be "
                            "(the values of one te.comm_reducer over tuples)")
    first = reduces[0] if reduces else None
    for r in reduces[1:]:
        if r.combiner is not first.combiner or r.source != first.source or r.axis != first.axis:
            raise TVMValueError(f"{where}: the outputs reduce differently; several reduction "
                                "outputs must come from one call of a tuple reducer")
    for b in bodies:
        inner = b.source + [b.condition] + b.init if isinstance(b, Reduce) else [b]
        nested = next((e for x in inner for e in post_order(x) if isinstance(e, Reduce)), None)
        if nested is not None:
            raise TVMValueError(
                f"{where}: a reduction ({_reducer_name(nested)}) must be the whole value of "
                "the compute, not part of a larger expression; compute it in its own "
                "te.compute and use that tensor"
            )
        _check_no_stray_axis(b, where)
    if first is not None:
        _check_every_axis_used(first, where)


def _check_no_stray_axis(body, where: str) -> None:
    """Refuse a reduction-axis variable outside a reduction over that axis."""
    reducing = isinstance(body, Reduce)
    allowed = {id(iv.var) for iv in body.axis} if reducing else set()
    for e in body.source + [body.condition] if reducing else [body]:
        for v in post_order(e):
            if isinstance(v, Var) and id(v) not in allowed and v in _REDUCTION_VARS:
                raise TVMValueError(
                    f"{where}: the reduction axis {v.name!r} is used outside a reduction over "
                    f"it; use it inside te.sum/te.max/te.min(..., axis={v.name})"
                )


def _check_every_axis_used(reduce: Reduce, where: str) -> None:
    """Refuse a reduction axis the reduced value does not depend on (a likely slip: the
    reduction would only repeat one value)."""
    exprs = reduce.source + [reduce.condition]
    exprs += [e for iv in reduce.axis for e in (iv.dom.min, iv.dom.extent)]
    used = {id(v) for e in exprs for v in post_order(e) if isinstance(v, Var)}
    for iv in reduce.axis:
        if id(iv.var) not in used:
            raise TVMValueError(
                f"{where}: the reduction axis {iv.var.name!r} is not used by the reduced "
                "expression, so the reduction would only repeat one value; index with it or "
                "leave it out of axis="
            )


# The variables of te.reduce_axis, to tell them from symbolic sizes in compute bodies.
_REDUCTION_VARS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _reducer_name(r: Reduce) -> str:
    """How the user wrote the reduction, for messages (``te.sum`` for a sum)."""
    return f"te.{getattr(r.combiner, 'reducer_name', 'sum')}"


__all__ = ["compute", "const", "placeholder", "reduce_axis", "size_var", "var"]
