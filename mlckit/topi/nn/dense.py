"""Dense layers and batched matrix multiply (TVM's ``topi.nn.matmul``, ``topi.nn.dense``).

``dense(data, weight)`` is ``data @ weight.T`` with ``weight`` laid out ``(out, in)``, as in
TVM: the compute is ``T_matmul_NT`` (tagged ``dense``), and ``weight`` is marked a
layout-free placeholder (``create_prim_func`` records it in ``layout_free_buffers``).
"""

from __future__ import annotations

from mlckit import te
from mlckit.error import TVMValueError
from mlckit.tir.expr import IntImm, Var

from ..broadcast import add
from ..math import cast
from ..utils import check_tensor, shape_text

_NAMES = {(True, True): "T_matmul_TT", (True, False): "T_matmul_TN",
          (False, True): "T_matmul_NT", (False, False): "T_matmul_NN"}


def matmul(tensor_a: te.Tensor, tensor_b: te.Tensor, bias: te.Tensor | None = None,
           out_dtype: str | None = None, transpose_a: bool = False,
           transpose_b: bool = False) -> te.Tensor:
    """The (batched) matrix product of ``tensor_a`` and ``tensor_b``, either transposed
    first, plus an optional 1-D ``bias``; leading batch dimensions broadcast.

    Example::

        C = topi.nn.matmul(X, W)                     # (n, k) x (k, m): T_matmul_NN
        D = topi.nn.matmul(X, W, transpose_b=True)   # (n, k) x (m, k): T_matmul_NT
    """
    a = check_tensor("nn.matmul", tensor_a, "first input")
    b = check_tensor("nn.matmul", tensor_b, "second input")
    if a.ndim < 2 or b.ndim < 2:
        raise TVMValueError(f"topi.nn.matmul: both inputs need at least 2 dimensions, got "
                            f"{a.name!r} {shape_text(a.shape)} and {b.name!r} "
                            f"{shape_text(b.shape)}")
    if bias is not None and bias.ndim != 1:
        raise TVMValueError(f"topi.nn.matmul: the bias must be 1-D, got {shape_text(bias.shape)}")
    out_dtype = a.dtype if out_dtype is None else out_dtype
    reduce_a, in_dim = (a.shape[-2:] if transpose_a else a.shape[-2:][::-1])
    out_dim, reduce_b = (b.shape[-2:] if transpose_b else b.shape[-2:][::-1])
    if not isinstance(reduce_a, Var) and not isinstance(reduce_b, Var) and \
            int(reduce_a) != int(reduce_b):
        raise TVMValueError(
            f"topi.nn.matmul: the reduction dimensions differ ({int(reduce_a)} vs "
            f"{int(reduce_b)}): {a.name!r} {shape_text(a.shape)}, {b.name!r} "
            f"{shape_text(b.shape)}, transpose_a={transpose_a}, transpose_b={transpose_b}"
        )
    batch = _batch_dims(a, b)
    k = te.reduce_axis((0, reduce_a), name="k")

    def rule(*indices):
        bi_a = _batch_index(indices[-a.ndim:-2], a.shape[:-2])
        bi_b = _batch_index(indices[-b.ndim:-2], b.shape[:-2])
        i, j = indices[-2:]
        a_idx = (*bi_a, k, i) if transpose_a else (*bi_a, i, k)
        b_idx = (*bi_b, j, k) if transpose_b else (*bi_b, k, j)
        return te.sum(a[a_idx].astype(out_dtype) * b[b_idx].astype(out_dtype), axis=k)

    name = _NAMES[(transpose_a, transpose_b)]
    tag = "dense" if (transpose_a, transpose_b) == (False, True) else "matmul"
    mat = te.compute((*batch, in_dim, out_dim), rule, name=name, tag=tag,
                     attrs={"layout_free_placeholders": [b]})
    if bias is not None:
        mat = add(mat, bias if bias.dtype == out_dtype else cast(bias, out_dtype))
    return mat


def dense(data: te.Tensor, weight: te.Tensor, bias: te.Tensor | None = None,
          out_dtype: str | None = None) -> te.Tensor:
    """``data @ weight.T (+ bias)`` with ``weight`` of shape ``(out_features, in_features)``.

    Example::

        X = te.placeholder((1, 784), name="X")
        W = te.placeholder((128, 784), name="W")
        Y = topi.nn.dense(X, W)                      # (1, 128), compute T_matmul_NT
    """
    return matmul(data, weight, bias, out_dtype, False, True)


def _batch_dims(a: te.Tensor, b: te.Tensor) -> list:
    """The broadcast batch dimensions (TVM's rule: a 1 takes the other side's size)."""
    dims_a, dims_b = a.shape[:-2], b.shape[:-2]
    n = max(len(dims_a), len(dims_b))
    dims_a = [IntImm("int32", 1)] * (n - len(dims_a)) + dims_a
    dims_b = [IntImm("int32", 1)] * (n - len(dims_b)) + dims_b
    out = []
    for left, right in zip(dims_a, dims_b):
        static = not isinstance(left, Var) and not isinstance(right, Var)
        if static and int(left) != 1 and int(right) != 1 and int(left) != int(right):
            raise TVMValueError(f"topi.nn.matmul: the batch dimensions differ: "
                                f"{shape_text(a.shape[:-2])} vs {shape_text(b.shape[:-2])}")
        out.append(right if not isinstance(left, Var) and int(left) == 1 else left)
    return out


def _batch_index(indices, dims) -> list:
    return [i if isinstance(d, Var) or int(d) != 1 else 0 for i, d in zip(indices, dims)]
