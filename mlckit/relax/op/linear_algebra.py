"""Linear algebra: ``relax.op.matmul`` and ``relax.op.linear`` (TVM's names and rules).

``matmul(x1, x2, out_dtype=None)`` follows the array API (NumPy's ``matmul``): the last two
dims multiply, the leading (batch) dims broadcast, a 1-D ``x1`` is a row and a 1-D ``x2`` a
column whose unit dim is dropped again::

    lv = R.matmul(x, w)                     # (n, 784) x (784, 128) -> (n, 128)
    lv = R.matmul(a, b, out_dtype="float32")  # float16 inputs, float32 accumulation

``linear(data, weight, bias=None)`` is not an operator of its own: as in TVM it builds
``matmul(data, permute_dims(weight)) + bias``.

Three implementations lower ``matmul`` (see ``mlckit.relax.strategy``; each choice is
logged on ``mlckit.strategy``):

- ``matmul.generic`` (level 10, every target): TVM's te compute, one ``matmul`` block;
- ``matmul.tiled`` (level 15, ``llvm``): the same PrimFunc, scheduled — the output tiled into
  register blocks accumulated in a local buffer, the inner tile vectorized and unrolled —
  for 2-D operands of static shapes that divide into tiles;
- ``matmul`` (level 20, CPU targets; a library call): for large static problems (at least
  ``LIBRARY_MIN_FLOPS`` multiply-adds), ``R.call_dps_packed("mlckit.lib.matmul", ...)``,
  NumPy's BLAS-backed ``np.matmul`` writing into the output.

Three more lower the *transposed form* ``matmul(x, permute_dims(w))`` (``form="transposed_b"``,
chosen by ``relax.transform.FuseTransposeMatmul``; their calls' arguments are ``(x, w)``), so
that a weight is never transposed at run time:

- ``matmul_nt.generic`` (level 10, every target): TVM's ``NT_matmul`` kernel reading
  ``w[j, k]``;
- ``matmul_nt.j_inner`` (level 15, ``llvm``, static 2-D): the same kernel with the output
  columns innermost (independent running sums);
- ``matmul_nt`` (level 20, CPU targets): from ``NT_LIBRARY_MIN_FLOPS`` multiply-adds,
  ``R.call_dps_packed("mlckit.lib.matmul_nt", (x, w))``: ``np.matmul(x, w.T)`` on a view.
"""

from __future__ import annotations

import numpy as np

from mlckit import te
from mlckit.ir.node import node
from mlckit.tir import dtype as dt
from mlckit.tir import expr as tx

from .. import strategy
from ..expr import Call
from ..struct_info import TensorStructInfo
from .op_attrs import Attrs
from .op_common import (
    OpTypeError,
    arg_name,
    as_expr,
    broadcast_shape,
    can_prove_equal,
    dtype_or_void,
    fail,
    shape_text,
    sinfo_dtype,
    tensor_args,
)
from .op_def import def_op

#: The smallest problem (multiply-adds, M * N * K) lowered to the NumPy library call.
LIBRARY_MIN_FLOPS = 64 * 64 * 64


@node
class MatmulAttrs(Attrs):
    """``matmul``: the dtype of the result (``"void"``: the inputs' dtype)."""

    out_dtype: str = "void"


@def_op("relax.matmul", arguments=("x1", "x2"))
def matmul(x1, x2, out_dtype=None) -> Call:
    """The matrix product of ``x1`` and ``x2`` with NumPy's rules (batch dims broadcast;
    1-D operands as in NumPy); ``out_dtype`` casts before multiplying.

    Example::

        lv0 = R.matmul(x, R.permute_dims(w0))        # x: (1, 784), w0: (128, 784)
    """
    return Call(matmul.op, [as_expr(x1, "relax.matmul", "x1"),
                            as_expr(x2, "relax.matmul", "x2")],
                MatmulAttrs(dtype_or_void(out_dtype, "relax.matmul")))


def matmul_shape(call, dims1: list, dims2: list) -> list | None:
    """The output dims of a matmul of ``dims1`` by ``dims2`` (None when the batch dims
    cannot be broadcast at compile time); errors name the operator and the shapes."""
    prepend, append = len(dims1) == 1, len(dims2) == 1
    full1 = [tx.IntImm("int64", 1)] + list(dims1) if prepend else list(dims1)
    full2 = list(dims2) + [tx.IntImm("int64", 1)] if append else list(dims2)
    red1, red2 = full1[-1], full2[-2]
    if not can_prove_equal(red1, red2) and _provably_different(red1, red2):
        fail(call, f"the reduction dims differ: {arg_name(call, 0)} {shape_text(dims1)} has "
                   f"{_dim(red1)} columns but {arg_name(call, 1)} {shape_text(dims2)} has "
                   f"{_dim(red2)} rows")
    batch = broadcast_shape(call, [full1[:-2], full2[:-2]],
                            [f"the batch dims of {arg_name(call, 0)}",
                             f"the batch dims of {arg_name(call, 1)}"])
    if batch is None:
        return None
    out = list(batch)
    if not prepend:
        out.append(full1[-2])
    if not append:
        out.append(full2[-1])
    return out


def _provably_different(a, b) -> bool:
    from mlckit.arith import Analyzer

    diff = Analyzer().simplify(a - b)
    return isinstance(diff, tx.IntImm) and diff.value != 0


def _dim(d) -> str:
    return str(d.value) if isinstance(d, tx.IntImm) else str(d)


@matmul.infer
def _infer_matmul(call: Call) -> TensorStructInfo:
    s1, s2 = tensor_args(call)
    out_dtype = sinfo_dtype(call.attrs.out_dtype)
    if not out_dtype:
        out_dtype = _binary_dtype(call, s1, s2)
    if s1.ndim == -1 or s2.ndim == -1:
        return TensorStructInfo(None, out_dtype, -1)
    for i, s in enumerate((s1, s2)):
        if s.ndim == 0:
            fail(call, f"operands must not be scalars, but {arg_name(call, i)} is a 0-d tensor; "
                       "use R.multiply to scale a tensor")
    ndim = max(max(s1.ndim, 2), max(s2.ndim, 2)) - (s1.ndim == 1) - (s2.ndim == 1)
    if s1.dims is None or s2.dims is None:
        return TensorStructInfo(None, out_dtype, ndim)
    shape = matmul_shape(call, s1.dims, s2.dims)
    if shape is None:
        return TensorStructInfo(None, out_dtype, ndim)
    return TensorStructInfo(shape, out_dtype)


def _binary_dtype(call: Call, s1, s2) -> str:
    if not s1.dtype or not s2.dtype:
        return ""
    if s1.dtype != s2.dtype:
        fail(call, f"the dtypes of {arg_name(call, 0)} ({s1.dtype}) and {arg_name(call, 1)} "
                   f"({s2.dtype}) must be equal; convert one with R.astype, or give out_dtype "
                   "after converting", OpTypeError)
    return s1.dtype


# -- implementations ----------------------------------------------------------------------------
def te_matmul(a: te.Tensor, b: te.Tensor, out_dtype: str = "void", call=None,
              transpose_b: bool = False) -> te.Tensor:
    """The te compute of ``matmul`` (TVM's legalization): one ``matmul`` block reducing over
    ``k``, batch dims of size 1 read at index 0.  ``transpose_b``: ``b`` is given with its
    last two dims swapped and read as ``b[..., j, k]`` (TVM's ``NT_matmul`` block, the
    kernel of ``FuseTransposeMatmul``)."""
    shape1, shape2 = list(a.shape), list(b.shape)
    if transpose_b:
        shape2[-2:] = shape2[-1], shape2[-2]
    b_dims = list(shape2)  # b's dims as the product sees them
    prepend, append = len(shape1) == 1, len(shape2) == 1
    if prepend:
        shape1.insert(0, tx.IntImm(shape1[0].dtype, 1))
    if append:
        shape2.append(tx.IntImm(shape2[0].dtype, 1))
    out_shape = matmul_shape(call, list(a.shape), b_dims) if call is not None else None
    if out_shape is None:
        raise OpTypeError("relax.matmul: cannot legalize a matmul whose batch dims are only "
                          "known to broadcast at run time; give them equal or unit sizes")
    a_larger = len(shape1) > len(shape2)
    offset = abs(len(shape1) - len(shape2))
    n_batch = len(out_shape) - (2 - prepend - append)

    def rule(*idx):
        k = te.reduce_axis((0, shape1[-1]), name="k")
        a_idx, b_idx = [], []
        for i in range(offset):
            (a_idx if a_larger else b_idx).append(idx[i])
        for i in range(offset, n_batch):
            da = shape1[i if a_larger else i - offset]
            db = shape2[i if not a_larger else i - offset]
            if isinstance(da, tx.IntImm) and isinstance(db, tx.IntImm) and da.value == db.value:
                a_idx.append(idx[i])
                b_idx.append(idx[i])
            else:  # a size-1 batch dim is read at 0 (broadcast)
                a_idx.append(0 if _is_one(da) else idx[i])
                b_idx.append(0 if _is_one(db) else idx[i])
        if not prepend:
            a_idx.append(idx[-2 + append])
        a_idx.append(k.var)
        if transpose_b:
            b_idx.append(idx[-1])
        b_idx.append(k.var)
        if not append and not transpose_b:
            b_idx.append(idx[-1])
        lhs, rhs = a(*a_idx), b(*b_idx)
        if out_dtype != "void":
            lhs, rhs = lhs.astype(out_dtype), rhs.astype(out_dtype)
        return te.sum(lhs * rhs, axis=k)

    return te.compute(out_shape, rule, name="NT_matmul" if transpose_b else "matmul")


def _is_one(d) -> bool:
    return isinstance(d, tx.IntImm) and d.value == 1


@matmul.legalize
def _matmul_generic(bb, call: Call):
    x1, x2 = call.args
    for i, arg in enumerate((x1, x2)):
        if not arg.struct_info.dtype:
            fail(call, f"cannot be legalized: the dtype of {arg_name(call, i)} is unknown; "
                       "give it one with R.match_cast", OpTypeError)
    out_dtype = call.attrs.out_dtype

    def matmul(a, b):  # noqa: F811 - the PrimFunc is named after the te function, as TVM
        return te_matmul(a, b, out_dtype, call)

    return bb.call_te(matmul, x1, x2, primfunc_name_hint="matmul")


# -- the scheduled implementation for llvm ----------------------------------------------------
def _static_2d(call: Call) -> tuple[int, int, int] | None:
    """``(M, N, K)`` when both operands are 2-D with constant dims, else None."""
    s1, s2 = (a.struct_info for a in call.args)
    if s1.ndim != 2 or s2.ndim != 2 or s1.dims is None or s2.dims is None:
        return None
    dims = [*s1.dims, *s2.dims]
    if not all(isinstance(d, tx.IntImm) for d in dims):
        return None
    (m, k), (_, n) = [d.value for d in s1.dims], [d.value for d in s2.dims]
    return m, n, k


def _tiles(m: int, n: int) -> tuple[int, int] | None:
    """The register tile ``(rows, cols)``: the largest of (4, 2, 1) rows and (32, 16, 8)
    columns dividing the output (so the schedule needs no bounds predicates); one row when
    ``m`` is odd (a single input row: a vector-matrix product)."""
    ti = next((t for t in (4, 2, 1) if m % t == 0), None)
    tj = next((t for t in (32, 16, 8) if n % t == 0), None)
    return None if ti is None or tj is None else (ti, tj)


def _tileable(call: Call) -> bool:
    mnk = _static_2d(call)
    return mnk is not None and _tiles(mnk[0], mnk[1]) is not None and \
        dt.is_float(call.struct_info.dtype)


def schedule_tiled(sch) -> None:
    """Tile the ``matmul`` block (i by 4 or 2, j by 32/16/8), accumulate each tile over k in a
    ``local`` buffer written back after the k loop, vectorize the tile's columns and unroll its
    rows (the idea of ``benchmarks/matmul.py``'s ``schedule_local``)."""
    block = sch.get_block("matmul")
    i, j, k = sch.get_loops(block)
    m, n = (int(sch.get(loop).extent.value) for loop in (i, j))
    ti, tj = _tiles(m, n)
    i0, i1 = sch.split(i, factors=[None, ti])
    j0, j1 = sch.split(j, factors=[None, tj])
    sch.reorder(i0, j0, k, i1, j1)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, j0)
    sch.vectorize(j1)
    sch.unroll(i1)
    sch.decompose_reduction(block, k)  # last, as TVM requires: its update block cannot be
    # vectorized or unrolled afterwards (no T.init(): not a complete or reduction block)


@matmul.implement("matmul.tiled", level=15, targets="llvm", condition=_tileable,
                  schedule=schedule_tiled)
def _matmul_tiled(bb, call: Call):
    return _matmul_generic(bb, call)


# -- the library implementation ---------------------------------------------------------------
def _large(call: Call) -> bool:
    """A static problem of at least ``LIBRARY_MIN_FLOPS`` multiply-adds."""
    s1, s2 = (a.struct_info for a in call.args)
    out = call.struct_info
    dims = [*(s1.dims or [None]), *(s2.dims or [None]), *(out.dims or [None])]
    if not all(isinstance(d, tx.IntImm) for d in dims):
        return False
    k = s1.dims[-1].value
    size = int(np.prod([d.value for d in out.dims], dtype=np.int64)) if out.dims else 1
    return size * k >= LIBRARY_MIN_FLOPS


def numpy_matmul(x1, x2, out) -> None:
    """``mlckit.lib.matmul``: ``out[...] = np.matmul(x1, x2)`` (cast to ``out``'s dtype)."""
    result = np.asarray(out)
    a, b = np.asarray(x1), np.asarray(x2)
    if a.dtype == result.dtype == b.dtype:
        np.matmul(a, b, out=result)
    else:
        result[...] = np.matmul(a.astype(result.dtype), b.astype(result.dtype))


strategy.register_library("relax.matmul", "matmul", numpy_matmul, level=20, targets="cpu",
                          condition=_large, vm_arrays=True)


# -- the transposed form: matmul(x, permute_dims(w)) reading w in place -----------------------
#: The smallest transposed-form problem (M * N * K) lowered to NumPy: the kernel reading ``w``
#: row by row reduces along k one product after another (no reassociation: not vectorized),
#: so BLAS wins from a few thousand multiply-adds on.
NT_LIBRARY_MIN_FLOPS = 16 * 16 * 16


def _nt_large(call: Call) -> bool:
    """A static transposed-form problem of at least ``NT_LIBRARY_MIN_FLOPS`` multiply-adds
    (``call.args`` are ``(x, w)``; the product is ``x @ w^T``)."""
    s1, s2 = (a.struct_info for a in call.args)
    out = call.struct_info
    dims = [*(s1.dims or [None]), *(s2.dims or [None]), *(out.dims or [None])]
    if not all(isinstance(d, tx.IntImm) for d in dims):
        return False
    size = int(np.prod([d.value for d in out.dims], dtype=np.int64)) if out.dims else 1
    return size * s1.dims[-1].value >= NT_LIBRARY_MIN_FLOPS


@strategy.register("relax.matmul", "matmul_nt.generic", level=10, form="transposed_b")
def _matmul_nt_generic(bb, call: Call):
    """TVM's ``NT_matmul``: ``x @ w^T`` in one block reading ``w[..., j, k]``."""
    x, w = call.args
    out_dtype = call.attrs.out_dtype
    shape2 = list(w.struct_info.dims)
    shape2[-2:] = shape2[-1], shape2[-2]

    def nt_matmul(a, b):
        return te_matmul(a, b, out_dtype, _matmul_call(call, shape2), transpose_b=True)

    return bb.call_te(nt_matmul, x, w, primfunc_name_hint="NT_matmul")


def _nt_small_2d(call: Call) -> bool:
    """A static 2-D ``x @ w^T`` of float dtype (the scheduled kernel's domain)."""
    s1, s2 = (a.struct_info for a in call.args)
    return (s1.ndim == 2 and s2.ndim == 2 and s1.dims is not None and s2.dims is not None
            and all(isinstance(d, tx.IntImm) for d in (*s1.dims, *s2.dims))
            and dt.is_float(call.struct_info.dtype))


def schedule_nt_j_inner(sch) -> None:
    """Put the output columns innermost (``i, k, j``) with the initialization hoisted: each
    output of a row is its own running sum, so the products of one ``k`` step are independent
    (the generic ``i, j, k`` order waits for each addition before the next)."""
    block = sch.get_block("NT_matmul")
    i, j, k = sch.get_loops(block)
    sch.reorder(k, j)
    sch.decompose_reduction(block, k)


@strategy.register("relax.matmul", "matmul_nt.j_inner", level=15, form="transposed_b",
                   targets="llvm", condition=_nt_small_2d, schedule=schedule_nt_j_inner)
def _matmul_nt_j_inner(bb, call: Call):
    """``NT_matmul`` with the loops reordered by ``schedule_nt_j_inner`` (llvm)."""
    return _matmul_nt_generic(bb, call)


def _matmul_call(call: Call, shape2: list) -> Call:
    """A plain matmul call of ``x`` by a tensor of ``shape2`` (for shape rules and errors)."""
    from ..expr import Var

    w_t = Var("w_t", TensorStructInfo(shape2, call.args[1].struct_info.dtype))
    return Call(matmul.op, [call.args[0], w_t], call.attrs)


def numpy_matmul_nt(x, w, out) -> None:
    """``mlckit.lib.matmul_nt``: ``out[...] = x @ w^T`` — ``np.matmul`` of a transposed view
    of ``w`` (no copy: BLAS reads it transposed)."""
    if (type(x) is np.ndarray and type(w) is np.ndarray and type(out) is np.ndarray
            and w.ndim == 2 and x.ndim >= 2 and x.dtype == w.dtype == out.dtype
            and out.flags.c_contiguous):
        np.matmul(x, w.T, out=out)  # the VM's common case: one BLAS call, nothing else
        return
    result = np.asarray(out)
    a, b = np.asarray(x), np.swapaxes(np.asarray(w), -1, -2)
    if a.dtype == result.dtype == b.dtype:
        np.matmul(a, b, out=result)
    else:
        result[...] = np.matmul(a.astype(result.dtype), b.astype(result.dtype))


strategy.register_library("relax.matmul", "matmul_nt", numpy_matmul_nt, level=20,
                          targets="cpu", condition=_nt_large, form="transposed_b",
                          vm_arrays=True)


# -- linear -----------------------------------------------------------------------------------------
def linear(data, weight, bias=None, out_dtype=None):
    """``data @ weight.T + bias`` (PyTorch's ``nn.Linear``), built as TVM builds it:
    ``matmul(data, permute_dims(weight))`` plus ``bias`` when given.

    Example::

        y = relax.op.linear(x, w, b)      # x: (n, 784), w: (128, 784), b: (128,)
    """
    from .binary import add
    from .manipulate import permute_dims

    out = matmul(data, permute_dims(weight, axes=None), out_dtype=out_dtype)
    return add(out, bias) if bias is not None else out


__all__ = ["LIBRARY_MIN_FLOPS", "MatmulAttrs", "NT_LIBRARY_MIN_FLOPS", "linear", "matmul",
           "matmul_shape", "numpy_matmul", "numpy_matmul_nt", "schedule_tiled", "te_matmul"]
