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

from ._pass import make_pass

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

    def visit(s, in_kernel: bool):
        if isinstance(s, S.For):
            if s.kind == S.ForKind.THREAD_BINDING:
                tag = s.thread_binding.thread_tag if s.thread_binding is not None else ""
                outer = not in_kernel and tag.startswith("blockIdx") and parallel
                kind = S.ForKind.PARALLEL if outer else S.ForKind.SERIAL
                return s.replace(kind=kind, thread_binding=None, body=visit(s.body, True))
            body = visit(s.body, in_kernel)
            return s if body is s.body else s.replace(body=body)
        if isinstance(s, S.BlockRealize):
            block = s.block
            init = visit(block.init, in_kernel) if block.init is not None else None
            body = visit(block.body, in_kernel)
            if body is block.body and init is block.init:
                return s
            return s.replace(block=block.replace(body=body, init=init))
        changes = {}
        for name in s.field_names():
            v = getattr(s, name)
            if isinstance(v, S.Stmt):
                nv = visit(v, in_kernel)
            elif isinstance(v, list) and v and all(isinstance(x, S.Stmt) for x in v):
                nv = [visit(x, in_kernel) for x in v]
                nv = v if all(a is b for a, b in zip(nv, v)) else nv
            else:
                continue
            if nv is not v:
                changes[name] = nv
        return s.replace(**changes) if changes else s

    body = visit(func.body, False)
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
