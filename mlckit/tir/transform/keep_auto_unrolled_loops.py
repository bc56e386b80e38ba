"""KeepAutoUnrolledLoops: the loops auto-unrolling picks stay loops, marked ``T.unroll``.

``meta_schedule`` annotates a kernel's outer loop with ``pragma_auto_unroll_max_step`` (0,
16, 64 or 512 steps) and ``pragma_unroll_explicit=1``; ``UnrollLoop`` then writes out every
inner loop whose statements run at most that many times.  TVM's LLVM builds a 500-statement
body in milliseconds; Numba types and lowers each statement in Python, and a 64-step unroll
of a vectorized matmul tile (600 lines of source) takes 20 s to compile where the loop takes
1.5 s.  So ``numba_cpu`` runs this pass (mlckit's own) before TVM's pipeline: each
``pragma_unroll_explicit`` becomes 0, TVM's non-explicit mode, in which ``UnrollLoop`` marks
the loops it picks ``T.unroll`` instead of copying their bodies, and LLVM unrolls them as it
unrolls any small constant loop.  A loop the schedule itself unrolls (``sch.unroll``) is
still written out.

Before::

    for i_0 in T.parallel(16, annotations={"pragma_auto_unroll_max_step": 64,
                                           "pragma_unroll_explicit": 1}):

After::

    for i_0 in T.parallel(16, annotations={"pragma_auto_unroll_max_step": 64,
                                           "pragma_unroll_explicit": 0}):

Example::

    mod = tvm.tir.transform.KeepAutoUnrolledLoops()(mod)
"""

from __future__ import annotations

from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm
from mlckit.tir.function import PrimFunc

from ._pass import make_pass, post_order_rewrite

__all__ = ["KeepAutoUnrolledLoops", "keep_auto_unrolled_loops"]

_EXPLICIT = "pragma_unroll_explicit"


def keep_auto_unrolled_loops(func: PrimFunc) -> PrimFunc:
    """``func`` with every ``pragma_unroll_explicit`` loop annotation (or ``T.attr``) 0;
    ``func`` itself when it has none that is not.

    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(A: T.Buffer((64,), "float32")):
    ...     for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 64,
    ...                                       "pragma_unroll_explicit": 1}):
    ...         for j in range(16):
    ...             A[i * 16 + j] = A[i * 16 + j] + T.float32(1)
    >>> keep_auto_unrolled_loops(f).body.annotations["pragma_unroll_explicit"]
    0
    """

    def implicit(node):
        if isinstance(node, S.For) and _explicit(node.annotations.get(_EXPLICIT)):
            return node.replace(annotations={**node.annotations, _EXPLICIT: 0})
        if isinstance(node, S.AttrStmt) and node.attr_key == _EXPLICIT and _explicit(node.value):
            return node.replace(value=IntImm("int32", 0))
        return node

    body = post_order_rewrite(func.body, implicit)
    return func if body is func.body else func.replace(body=body)


def _explicit(value) -> bool:
    return bool(getattr(value, "value", value))


def KeepAutoUnrolledLoops():  # noqa: N802 - a pass, named as TVM's are
    """The pass leaving auto-unrolled loops as ``T.unroll`` loops (see the module's docstring).

    >>> import mlckit as tvm
    >>> tvm.tir.transform.KeepAutoUnrolledLoops().info.name
    'KeepAutoUnrolledLoops'
    """
    return make_pass("KeepAutoUnrolledLoops", keep_auto_unrolled_loops)
