"""UnrollLoop: a ``T.unroll`` loop becomes one copy of its body per iteration.

``sch.unroll(j_1)`` only marks the loop; this pass writes the copies out, the loop variable
replaced by each value (as in TVM, the indices are not simplified here: ``Simplify`` after it
turns ``x + 0`` into ``x``)::

    for j_1 in T.unroll(4):                         Y[T.Add(i * 4, 0)] = ...
        Y[i * 4 + j_1] = ...               ──►      Y[i * 4 + 1] = ...
                                                    Y[i * 4 + 2] = ...
                                                    Y[i * 4 + 3] = ...

Only loops marked unrolled with a constant extent are unrolled (TVM's default
``auto_max_step=0``).  Variables and buffers defined inside the body get fresh copies, so
every copy defines its own.

Example::

    mod = tvm.tir.transform.UnrollLoop()(mod)
"""

from __future__ import annotations

from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter

from ._pass import make_pass, post_order_rewrite

__all__ = ["UnrollLoop", "unroll_loop"]


def _defined_inside(body) -> set[int]:
    """The ids of the variables and buffers ``body`` defines (loop variables, allocations)."""
    found: set[int] = set()

    def visit(node):
        for name in getattr(type(node), "_def_fields", ()):
            value = getattr(node, name)
            for v in (value if isinstance(value, list) else [value]):
                found.add(id(v))
                if hasattr(v, "data"):  # a buffer's data pointer is defined with it
                    found.add(id(v.data))
        return node

    post_order_rewrite(body, visit)
    return found


def _unroll(node):
    if not (isinstance(node, S.For) and node.kind == S.ForKind.UNROLLED
            and isinstance(node.extent, E.IntImm) and isinstance(node.min, E.IntImm)):
        return node
    defined = _defined_inside(node.body)
    copies = []
    for step in range(node.extent.value):
        value = E.IntImm(node.loop_var.dtype, node.min.value + step)
        copy = node_rewriter(
            lambda x, value=value: value if x is node.loop_var else None,
            copy=lambda x: id(x) in defined)
        copies.append(copy(node.body))
    return S.stmt_seq(*copies) if copies else S.Evaluate(0)


def unroll_loop(func: PrimFunc) -> PrimFunc:
    """``func`` with every ``T.unroll`` loop written out.

    Example::

        func = unroll_loop(func)
    """
    body = post_order_rewrite(func.body, _unroll)
    return func if body is func.body else func.replace(body=body)


def UnrollLoop() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass writing out the loops marked ``T.unroll``, as ``tvm.tir.transform.UnrollLoop``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((2,), "float32")):
    ...     for i in T.unroll(2):
    ...         a[i] = T.float32(0)
    >>> print(tvm.tir.transform.UnrollLoop()(tvm.IRModule({"f": f}))["f"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def f(a: T.Buffer((2,), "float32")):
        a[0] = T.float32(0.0)
        a[1] = T.float32(0.0)
    """
    return make_pass("UnrollLoop", unroll_loop)
