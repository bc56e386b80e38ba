"""Tensor manipulation: ``reshape``, ``permute_dims``, ``flatten``, ``expand_dims``,
``squeeze``, ``concat``, ``split``, ``broadcast_to`` (TVM's ``tvm.relax.op`` names, attributes
and struct-info rules; lowered through ``topi``).

    lv = R.reshape(x, (2, -1))             # the -1 is inferred when the call is built
    lv = R.permute_dims(w)                 # reversed dims: (128, 784) -> (784, 128)
    parts = R.split(x, 3, axis=1)          # a tuple of three tensors
"""

from __future__ import annotations

from mlckit import te, topi
from mlckit.arith import Analyzer
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.node import node
from mlckit.tir import expr as tx
from mlckit.tir import op as tir_op

from ..expr import Call, Expr, ShapeExpr, Tuple, TupleGetItem, Var
from ..struct_info import ShapeStructInfo, TensorStructInfo, TupleStructInfo
from .axis_common import int_tuple, normalize_axes, normalize_axis
from .op_attrs import Attrs
from .op_common import (
    OpTypeError,
    arg_name,
    as_expr,
    can_prove_equal,
    check_num_args,
    fail,
    shape_text,
    sinfo_text,
    tensor_arg,
)
from .op_def import def_op


def _unary_tensor(call: Call) -> TensorStructInfo:
    check_num_args(call)
    return tensor_arg(call, 0)


def _product(dims: list) -> tx.PrimExpr:
    prod = tx.IntImm("int64", 1)
    for d in dims:
        prod = prod * d
    return prod


def _provably_unequal(a, b) -> bool:
    diff = Analyzer().simplify(a - b)
    return isinstance(diff, tx.IntImm) and diff.value != 0


def _shape_values(bb, expr: Expr) -> list:
    """The dims a shape argument holds: a ShapeExpr's values, through a bound Var, or its
    struct info's values."""
    if isinstance(expr, Var):
        bound = bb.lookup_binding(expr)
        if isinstance(bound, ShapeExpr):
            expr = bound
    if isinstance(expr, ShapeExpr):
        return list(expr.values)
    return list(expr.struct_info.values)


# -- reshape --------------------------------------------------------------------------------------
def _new_shape_expr(x: Expr, shape) -> Expr:
    """TVM's ``ConvertNewShapeToExpr``: a list of dims (or a ShapeExpr) with at most one -1
    (inferred from ``x``'s shape) and 0s (copied from ``x``'s shape) as a ShapeExpr; any
    other shape expression is used as it is."""
    if isinstance(shape, Expr) and not isinstance(shape, ShapeExpr):
        return shape
    values = list(shape.values) if isinstance(shape, ShapeExpr) else \
        list(shape) if isinstance(shape, (list, tuple)) else [shape]
    dims = [tx.convert(v, "int64") if isinstance(v, int) else tx.convert(v) for v in values]
    infer_at, zeros = -1, []
    for i, d in enumerate(dims):
        if not isinstance(d, tx.PrimExpr) or not d.dtype.startswith(("int", "uint")):
            raise TVMTypeError(f"relax.reshape: the new shape must be integers, got {values!r}")
        if isinstance(d, tx.IntImm) and d.value == 0:
            zeros.append(i)
        elif isinstance(d, tx.IntImm) and d.value == -1:
            if infer_at != -1:
                raise TVMValueError(f"relax.reshape: the new shape {tuple(values)} has more than "
                                    "one -1; at most one dim can be inferred")
            infer_at = i
        elif isinstance(d, tx.IntImm) and d.value < 0:
            raise TVMValueError(f"relax.reshape: the new shape {tuple(values)} has the negative "
                                f"dim {d.value}; dims are positive, except a single -1")
    if infer_at == -1 and not zeros:
        return ShapeExpr(dims)
    sinfo = x.struct_info if isinstance(x, Expr) else None
    if not isinstance(sinfo, TensorStructInfo) or sinfo.dims is None:
        raise TVMValueError(f"relax.reshape: inferring a dim of the new shape {tuple(values)} "
                            f"needs the shape of x, but x is "
                            f"{sinfo_text(sinfo) if sinfo is not None else 'not a tensor'}")
    old = sinfo.dims
    for i in zeros:
        dims[i] = old[i]
    if infer_at != -1:
        known = _product([d for i, d in enumerate(dims) if i != infer_at])
        dims[infer_at] = Analyzer().simplify(tx.floordiv(_product(old), known))
    return ShapeExpr(dims)


@def_op("relax.reshape", arguments=("x", "shape"))
def reshape(x, shape) -> Call:
    """``x``'s elements in row-major order, in the new ``shape``; one dim may be -1
    (inferred) and a 0 copies ``x``'s dim (as TVM).

    Example::

        lv = R.reshape(x, (2, -1))        # x: (2, 3, 4) -> (2, 12)
    """
    x = as_expr(x, "relax.reshape", "x")
    return Call(reshape.op, [x, _new_shape_expr(x, shape)])


@reshape.infer
def _infer_reshape(call: Call) -> TensorStructInfo:
    check_num_args(call)
    data = tensor_arg(call, 0)
    target = call.args[1].struct_info
    if not isinstance(target, ShapeStructInfo):
        fail(call, f"requires shape to be a shape (R.shape([...]) or a tuple of ints), but it "
                   f"is {sinfo_text(target)}", OpTypeError)
    if target.values is not None and data.dims is not None:
        old, new = _product(data.dims), _product(target.values)
        if _provably_unequal(old, new):
            fail(call, f"cannot reshape x {shape_text(data.dims)} ({_text(old)} elements) to "
                       f"{shape_text(target.values)} ({_text(new)} elements)")
    shape = call.args[1]
    if isinstance(shape, Var) and target.values is not None:
        return TensorStructInfo(ShapeExpr(target.values), data.dtype)
    return TensorStructInfo(shape, data.dtype)


def _text(e) -> str:
    e = Analyzer().simplify(e)
    return str(e.value) if isinstance(e, tx.IntImm) else str(e)


@reshape.legalize
def _lower_reshape(bb, call: Call):
    return bb.call_te(topi.reshape, call.args[0], _shape_values(bb, call.args[1]),
                      primfunc_name_hint="reshape")


# -- permute_dims ---------------------------------------------------------------------------------
@node
class PermuteDimsAttrs(Attrs):
    """``permute_dims``: output dim ``i`` is input dim ``axes[i]`` (None: reversed)."""

    axes: tuple | None = None


@def_op("relax.permute_dims", arguments=("x",))
def permute_dims(x, axes=None) -> Call:
    """``x`` with its dims permuted by ``axes`` (reversed when None), as ``np.transpose``.

    Example::

        lv = R.permute_dims(w)                 # (128, 784) -> (784, 128)
        lv = R.permute_dims(x, [0, 2, 1])      # (2, 3, 4) -> (2, 4, 3)
    """
    return Call(permute_dims.op, [as_expr(x, "relax.permute_dims", "x")],
                PermuteDimsAttrs(int_tuple(axes, "relax.permute_dims", "axes")))


@permute_dims.infer
def _infer_permute_dims(call: Call) -> TensorStructInfo:
    data = _unary_tensor(call)
    axes = call.attrs.axes
    if axes is None and data.ndim == -1:
        return TensorStructInfo(None, data.dtype, -1)
    if axes is not None and data.ndim != -1 and len(axes) != data.ndim:
        fail(call, f"axes={list(axes)} must list all {data.ndim} dims of x "
                   f"{sinfo_text(data)} once")
    if data.ndim == -1:
        return TensorStructInfo(None, data.dtype, len(axes))
    order = normalize_axes(call, data.ndim, axes, "axes") if axes is not None else \
        list(range(data.ndim - 1, -1, -1))
    if order == list(range(data.ndim)):
        return data
    if data.dims is None:
        return TensorStructInfo(None, data.dtype, data.ndim)
    return TensorStructInfo([data.dims[a] for a in order], data.dtype)


@permute_dims.legalize
def _lower_permute_dims(bb, call: Call):
    axes = list(call.attrs.axes) if call.attrs.axes is not None else None
    return bb.call_te(topi.transpose, call.args[0], axes)


# -- flatten ----------------------------------------------------------------------------------
@def_op("relax.flatten", arguments=("x",))
def flatten(x) -> Call:
    """``x`` as a 1-D tensor. ``lv = R.flatten(x)``  # (2, 3, 4) -> (24,).

    >>> from mlckit import relax
    >>> from mlckit.relax import analysis
    >>> from mlckit.script import relax as R
    >>> x = relax.Var("x", relax.TensorStructInfo([2, 4], "float32"))
    >>> relax.op.flatten(x).struct_info
    R.Tensor((8,), dtype="float32")
    """
    return Call(flatten.op, [as_expr(x, "relax.flatten", "x")])


@flatten.infer
def _infer_flatten(call: Call) -> TensorStructInfo:
    data = _unary_tensor(call)
    if data.ndim == -1:
        return TensorStructInfo(None, data.dtype, 1)
    if data.ndim == 0:
        return TensorStructInfo([1], data.dtype)
    if data.ndim == 1:
        return data
    if data.dims is None:
        return TensorStructInfo(None, data.dtype, 1)
    return TensorStructInfo([Analyzer().simplify(_product(data.dims))], data.dtype)


@flatten.legalize
def _lower_flatten(bb, call: Call):
    return bb.call_te(topi.reshape, call.args[0], call.struct_info.dims)


# -- expand_dims ------------------------------------------------------------------------------
@node
class ExpandDimsAttrs(Attrs):
    """``expand_dims``: the positions of the new unit dims in the output."""

    axis: tuple = ()


@def_op("relax.expand_dims", arguments=("x",))
def expand_dims(x, axis) -> Call:
    """``x`` with unit dims inserted so that they sit at ``axis`` in the output.

    Example::

        lv = R.expand_dims(x, [0, -1])         # (3, 4) -> (1, 3, 4, 1)
    """
    return Call(expand_dims.op, [as_expr(x, "relax.expand_dims", "x")],
                ExpandDimsAttrs(int_tuple(axis, "relax.expand_dims", "axis")))


@expand_dims.infer
def _infer_expand_dims(call: Call) -> TensorStructInfo:
    data = _unary_tensor(call)
    axes = call.attrs.axis
    if not axes:
        return data
    if data.ndim == -1:
        return TensorStructInfo(None, data.dtype, -1)
    out_ndim = data.ndim + len(axes)
    new = normalize_axes(call, out_ndim, axes)
    if data.dims is None:
        return TensorStructInfo(None, data.dtype, out_ndim)
    it = iter(data.dims)
    return TensorStructInfo([tx.IntImm("int64", 1) if i in new else next(it)
                             for i in range(out_ndim)], data.dtype)


@expand_dims.legalize
def _lower_expand_dims(bb, call: Call):
    out_dims = call.struct_info.dims
    new = {a % len(out_dims) for a in call.attrs.axis}

    def expand_dims(data):  # noqa: F811 - names the PrimFunc, as TVM
        kept = [i for i in range(len(out_dims)) if i not in new]
        shape = [tx.IntImm("int64", 1) if i in new else data.shape[kept.index(i)]
                 for i in range(len(out_dims))]
        return te.compute(shape, lambda *idx: data(*[idx[i] for i in kept]),
                          name="expand_dims")

    return bb.call_te(expand_dims, call.args[0], primfunc_name_hint="expand_dims")


# -- squeeze ----------------------------------------------------------------------------------
@node
class SqueezeAttrs(Attrs):
    """``squeeze``: the unit dims to remove (None: all of them)."""

    axis: tuple | None = None


@def_op("relax.squeeze", arguments=("x",))
def squeeze(x, axis=None) -> Call:
    """``x`` without the unit dims ``axis`` (every unit dim when None).

    Example::

        lv = R.squeeze(x, [1])                 # (3, 1, 4) -> (3, 4)
    """
    return Call(squeeze.op, [as_expr(x, "relax.squeeze", "x")],
                SqueezeAttrs(int_tuple(axis, "relax.squeeze", "axis")))


@squeeze.infer
def _infer_squeeze(call: Call) -> TensorStructInfo:
    data = _unary_tensor(call)
    axes = call.attrs.axis
    if axes is not None and len(axes) == 0:
        return data
    if data.ndim == -1:
        return TensorStructInfo(None, data.dtype, -1)
    dims = data.dims
    if axes is None:
        if dims is None:
            return TensorStructInfo(None, data.dtype, -1)
        if any(not isinstance(d, tx.IntImm) for d in dims):
            return TensorStructInfo(None, data.dtype, -1)  # a symbolic dim may be 1
        return TensorStructInfo([d for d in dims if d.value != 1], data.dtype)
    drop = normalize_axes(call, data.ndim, axes)
    if dims is None:
        return TensorStructInfo(None, data.dtype, data.ndim - len(drop))
    for a in drop:
        d = dims[a]
        if isinstance(d, tx.IntImm) and d.value != 1:
            fail(call, f"cannot squeeze axis {a} of x {shape_text(dims)}: its size is "
                       f"{d.value}, not 1")
    return TensorStructInfo([d for i, d in enumerate(dims) if i not in drop], data.dtype)


@squeeze.legalize
def _lower_squeeze(bb, call: Call):
    axis = list(call.attrs.axis) if call.attrs.axis is not None else None
    return bb.call_te(topi.squeeze, call.args[0], axis)


# -- concat -----------------------------------------------------------------------------------
@node
class ConcatAttrs(Attrs):
    """``concat``: the axis to join along (None: the inputs are 1-D)."""

    axis: int | None = 0


@def_op("relax.concat", arguments=("tensors",))
def concat(tensors, axis=0) -> Call:
    """The tensors joined along ``axis``; they agree on every other dim.

    Example::

        lv = R.concat((x, y), axis=1)          # (2, 3) and (2, 4) -> (2, 7)
    """
    if isinstance(tensors, (list, tuple)):
        tensors = Tuple([as_expr(t, "relax.concat", "tensors") for t in tensors])
    axis = None if axis is None else int_tuple(axis, "relax.concat", "axis")[0]
    return Call(concat.op, [as_expr(tensors, "relax.concat", "tensors")], ConcatAttrs(axis))


def tuple_tensor_sinfos(call: Call, i: int = 0) -> list[TensorStructInfo]:
    """The tensor struct infos of the tuple argument ``i`` (an error naming the op when it
    is not a tuple of tensors)."""
    sinfo = call.args[i].struct_info
    if not isinstance(sinfo, TupleStructInfo):
        fail(call, f"requires {arg_name(call, i)} to be a tuple of tensors, but it is "
                   f"{sinfo_text(sinfo)}", OpTypeError)
    for j, f in enumerate(sinfo.fields):
        if not isinstance(f, TensorStructInfo):
            fail(call, f"requires {arg_name(call, i)} to hold tensors, but field {j} is "
                       f"{sinfo_text(f)}", OpTypeError)
    return list(sinfo.fields)


@concat.infer
def _infer_concat(call: Call) -> TensorStructInfo:
    check_num_args(call)
    fields = tuple_tensor_sinfos(call)
    if not fields:
        fail(call, "needs at least one tensor to concatenate; the tuple is empty")
    dtypes = {f.dtype for f in fields if f.dtype}
    if len(dtypes) > 1:
        fail(call, f"all tensors must have the same dtype, got {sorted(dtypes)}", OpTypeError)
    dtype = "" if any(not f.dtype for f in fields) else fields[0].dtype
    ndims = {f.ndim for f in fields if f.ndim != -1}
    if len(ndims) > 1:
        fail(call, f"all tensors must have the same rank, got shapes "
                   f"{', '.join(sinfo_text(f) for f in fields)}")
    ndim = ndims.pop() if ndims else (-1 if call.attrs.axis is not None else 1)
    if ndim == -1:
        return fields[0] if len(fields) == 1 else TensorStructInfo(None, dtype, -1)
    axis = normalize_axis(call, ndim, call.attrs.axis if call.attrs.axis is not None else 0)
    if len(fields) == 1:
        return fields[0]
    if any(f.dims is None for f in fields):
        return TensorStructInfo(None, dtype, ndim)
    shapes = [f.dims for f in fields]
    known = True
    for d in range(ndim):
        if d == axis:
            continue
        for s in shapes[1:]:
            if _provably_unequal(s[d], shapes[0][d]):
                fail(call, f"the tensors must agree on every dim but axis {axis}; dim {d} "
                           f"differs: {', '.join(shape_text(s) for s in shapes)}")
            if not can_prove_equal(s[d], shapes[0][d]):
                known = False
    if not known:
        return TensorStructInfo(None, dtype, ndim)
    first = shapes[0][axis]
    if all(can_prove_equal(s[axis], first) and type(s[axis]) is type(first) for s in shapes):
        joined = first * tx.IntImm("int64", len(shapes))
    else:
        joined = tx.IntImm("int64", 0)
        for s in shapes:
            joined = joined + s[axis]
    out = list(shapes[0])
    out[axis] = Analyzer().simplify(joined)
    return TensorStructInfo(out, dtype)


def tuple_fields(bb, expr: Expr) -> list:
    """The fields of a tuple argument: a Tuple's fields (through bound Vars), or one
    ``TupleGetItem`` binding per field."""
    t = expr
    while isinstance(t, Var):
        bound = bb.lookup_binding(t)
        if not isinstance(bound, (Tuple, Var)):
            break
        t = bound
    if isinstance(t, Tuple):
        return list(t.fields)
    n = len(expr.struct_info.fields)
    return [bb.emit(TupleGetItem(expr, i)) for i in range(n)]


@concat.legalize
def _lower_concat(bb, call: Call):
    axis = call.attrs.axis if call.attrs.axis is not None else 0
    return bb.call_te(topi.concatenate, tuple_fields(bb, call.args[0]), axis,
                      primfunc_name_hint="concatenate")


# -- split ------------------------------------------------------------------------------------
@node
class SplitAttrs(Attrs):
    """``split``: a number of equal sections, or the indices to cut at; the axis."""

    indices_or_sections: object = 1
    axis: int = 0


@def_op("relax.split", arguments=("x",))
def split(x, indices_or_sections, axis: int = 0) -> Call:
    """``x`` cut along ``axis`` into ``indices_or_sections`` parts (the last is shorter when
    the size does not divide), or at the given indices; a tuple of tensors.

    Example::

        parts = R.split(x, 3, axis=1)          # (2, 9) -> three (2, 3)
        parts = R.split(x, [2, 5], axis=1)     # (2, 9) -> (2, 2), (2, 3), (2, 4)
    """
    op = "relax.split"
    if isinstance(indices_or_sections, (int, tx.IntImm)) and \
            not isinstance(indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise TVMValueError(f"{op}: the number of sections must be positive, got {sections}")
        value = sections
    else:
        value = int_tuple(indices_or_sections, op, "indices_or_sections")
    return Call(split.op, [as_expr(x, op, "x")],
                SplitAttrs(value, int_tuple(axis, op, "axis")[0]))


@split.infer
def _infer_split(call: Call):
    data = _unary_tensor(call)
    spec = call.attrs.indices_or_sections
    axis = normalize_axis(call, data.ndim, call.attrs.axis) if data.ndim != -1 else -1
    n_out = spec if isinstance(spec, int) else len(spec) + 1
    if n_out == 1:
        return data
    if data.dims is None:
        return TupleStructInfo([TensorStructInfo(None, data.dtype, data.ndim)] * n_out)
    size = data.dims[axis]
    ana = Analyzer()
    if isinstance(spec, int):
        part = ana.simplify(tx.floordiv(size + (spec - 1), spec))
        lengths = [part] * (spec - 1) + [ana.simplify(size - part * (spec - 1))]
    else:
        bounds = [0, *spec, size]
        lengths = []
        for left, right in zip(bounds, bounds[1:]):
            left = tir_op.min(tir_op.max(tx.convert(left, "int64"), 0), size)
            right = tir_op.min(tir_op.max(tx.convert(right, "int64"), 0), size)
            lengths.append(ana.simplify(tir_op.max(right - left, 0)))
    fields = []
    for length in lengths:
        dims = list(data.dims)
        dims[axis] = length
        fields.append(TensorStructInfo(dims, data.dtype))
    return TupleStructInfo(fields)


@split.legalize
def _lower_split(bb, call: Call):
    spec = call.attrs.indices_or_sections
    return bb.call_te(topi.split, call.args[0], spec if isinstance(spec, int) else list(spec),
                      call.attrs.axis)


# -- broadcast_to -----------------------------------------------------------------------------
@def_op("relax.broadcast_to", arguments=("x", "shape"))
def broadcast_to(x, shape) -> Call:
    """``x`` broadcast to ``shape`` (NumPy's rules).

    Example::

        lv = R.broadcast_to(b, (4, 128))       # (128,) -> (4, 128)
    """
    if isinstance(shape, (list, tuple)):
        shape = ShapeExpr(list(shape))
    return Call(broadcast_to.op, [as_expr(x, "relax.broadcast_to", "x"),
                                  as_expr(shape, "relax.broadcast_to", "shape")])


@broadcast_to.infer
def _infer_broadcast_to(call: Call) -> TensorStructInfo:
    check_num_args(call)
    data = tensor_arg(call, 0)
    target = call.args[1].struct_info
    if not isinstance(target, ShapeStructInfo):
        fail(call, f"requires shape to be a shape, but it is {sinfo_text(target)}",
             OpTypeError)
    if data.ndim != -1 and target.ndim != -1 and target.ndim < data.ndim:
        fail(call, f"cannot broadcast x {sinfo_text(data)} to a shape of rank {target.ndim}: "
                   f"the target needs at least {data.ndim} dims")
    if data.dims is not None and target.values is not None:
        old, new = data.dims, target.values
        for i in range(1, len(old) + 1):
            o, t = old[-i], new[-i]
            if isinstance(o, tx.IntImm) and o.value == 1:
                continue
            if _provably_unequal(o, t):
                fail(call, f"cannot broadcast x {shape_text(old)} to {shape_text(new)}: dim "
                           f"{len(old) - i} of x is {_text(o)} but the target has {_text(t)}")
    return TensorStructInfo(call.args[1], data.dtype)


@broadcast_to.legalize
def _lower_broadcast_to(bb, call: Call):
    return bb.call_te(topi.broadcast_to, call.args[0], _shape_values(bb, call.args[1]),
                      primfunc_name_hint="broadcast_to")


__all__ = ["ConcatAttrs", "ExpandDimsAttrs", "PermuteDimsAttrs", "SplitAttrs", "SqueezeAttrs",
           "broadcast_to", "concat", "expand_dims", "flatten", "permute_dims", "reshape",
           "split", "squeeze", "tuple_fields", "tuple_tensor_sinfos"]
