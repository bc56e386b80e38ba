"""ThreadBindingsToLoops: a GPU schedule's thread-bound loops as plain CPU loops.

TIR's meaning is sequential: a loop bound to ``threadIdx.x`` is still a loop, and the
barriers a GPU needs only make the parallel execution agree with it.  So a GPU schedule run
as loops gives its reference result.  This pass (mlckit's own: TVM runs GPU schedules on a
GPU only) turns each thread-bound loop into a serial one, and with ``parallel=True`` the
outermost ``blockIdx`` loop of each kernel into a ``T.parallel`` one: thread blocks are
independent, and each has its own shared buffers.  numba_cuda runs a GPU-lowered PrimFunc
this way on a machine without a GPU.

Before::

    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            B[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2)

After (``parallel=True``)::

    for bx in T.parallel(8):
        for tx in range(128):
            B[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2)

Example::

    cpu_mod = tvm.tir.transform.ThreadBindingsToLoops()(mod)
"""

from __future__ import annotations

from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import pre_order_visit

from ._pass import make_pass, post_order_rewrite

__all__ = ["ThreadBindingsToLoops", "thread_bindings_to_loops"]


def thread_bindings_to_loops(func: PrimFunc, parallel: bool = True) -> PrimFunc:
    """``func`` with thread-bound loops made plain loops (the outermost ``blockIdx`` loop of
    each kernel parallel when ``parallel``); ``func`` itself when it binds none.

    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(A: T.Buffer((256,), "float32")):
    ...     for bx in T.thread_binding(2, thread="blockIdx.x"):
    ...         for tx in T.thread_binding(128, thread="threadIdx.x"):
    ...             A[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2)
    >>> print(thread_bindings_to_loops(double).script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def double(A: T.Buffer((256,), "float32")):
        for bx in T.parallel(2):
            for tx in range(128):
                A[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2.0)
    """

    # each kernel's outermost bound loop: a blockIdx one runs its blocks in parallel
    parallel_vars: set[int] = set()

    def outermost(node):
        if isinstance(node, S.For) and node.kind == S.ForKind.THREAD_BINDING:
            tag = node.thread_binding.thread_tag if node.thread_binding is not None else ""
            if parallel and tag.startswith("blockIdx"):
                parallel_vars.add(id(node.loop_var))
            return False  # inside the kernel: no loop below is outermost
        return True

    def plain(node):
        if isinstance(node, S.For) and node.kind == S.ForKind.THREAD_BINDING:
            kind = S.ForKind.PARALLEL if id(node.loop_var) in parallel_vars else S.ForKind.SERIAL
            return node.replace(kind=kind, thread_binding=None)
        return node

    pre_order_visit(func.body, outermost)
    body = post_order_rewrite(func.body, plain)
    return func if body is func.body else func.replace(body=body)


def ThreadBindingsToLoops(parallel: bool = True):  # noqa: N802 - a pass, named as TVM's are
    """The pass running a GPU schedule's thread-bound loops as CPU loops (see the module's
    docstring).

    >>> import mlckit as tvm
    >>> tvm.tir.transform.ThreadBindingsToLoops().info.name
    'ThreadBindingsToLoops'
    """
    return make_pass("ThreadBindingsToLoops",
                     lambda func: thread_bindings_to_loops(func, parallel))
