"""LowerOpaqueBlock: the blocks disappear, leaving loops, allocations and ``if``s.

After ``ConvertBlocksToOpaque`` a block only says *what* it reads and writes; the code that
runs does not need it.  Each block is replaced by its body, its ``T.where`` predicate becomes
an ``if``, and each buffer it allocates becomes an allocation around the body (``Allocate``
+ ``DeclBuffer``, printed ``Y = T.decl_buffer(...)``)::

    # with T.block("root"):                         Y = T.decl_buffer((128, 128))
    Y = T.alloc_buffer((128, 128))                  for i, j, k in T.grid(128, 128, 128):
    for i, j, k in T.grid(128, 128, 128):   ──►         if k == 0:
        with T.block("Y"):                                  Y[i, j] = T.float32(0)
            T.reads(...)                                Y[i, j] = Y[i, j] + A[i, k] * B[k, j]
            if k == 0: ...

As in TVM, a loop of one iteration (without annotations) is dropped, its variable replaced
by its start, and a thread-bound loop (``T.thread_binding``) becomes the launch of its thread
(``T.launch_thread``: an ``AttrStmt`` ``"thread_extent"``).  Loop annotations are kept,
except ``pragma_*`` ones, which become ``T.attr`` statements around the loop, as TVM.  A block that still has
iterators (or a ``T.init()``) is rejected: run ``ConvertBlocksToOpaque`` (after
``LowerInitBlock``) first, as TVM requires.

Example::

    mod = tvm.tir.transform.LowerOpaqueBlock()(mod)
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.error import TVMError
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter

from ._pass import make_pass, post_order_rewrite

__all__ = ["LowerOpaqueBlock", "lower_opaque_block"]


def _is_true(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 1


def _is_one(e) -> bool:
    return isinstance(e, E.IntImm) and e.value == 1


def _lower_loop(node: S.For):
    body = node.body
    if _is_one(node.extent) and not node.annotations:  # a unit loop: its variable is its min
        value = node.min
        if value.dtype != node.loop_var.dtype:
            value = E.Cast(node.loop_var.dtype, value)
        body = node_rewriter(lambda x: value if x is node.loop_var else None)(body)
    if node.kind == S.ForKind.THREAD_BINDING:
        tag = node.thread_binding.thread_tag
        iv = E.IterVar(E.Range(node.min, node.extent), node.loop_var,
                       E.IterVarType.ThreadIndex, tag)
        key = "virtual_thread" if tag.startswith("vthread") else "thread_extent"
        return _wrap_pragmas(node.loop_var, node.annotations,
                             S.AttrStmt(iv, key, node.extent, body))
    if _is_one(node.extent) and not node.annotations:
        return body
    # as TVM: pragma_* annotations become AttrStmts around the loop, the others stay on it
    annotations = node.annotations or {}
    kept = {k: v for k, v in annotations.items() if not k.startswith("pragma_")}
    if body is not node.body or len(kept) != len(annotations):
        node = node.replace(body=body, annotations=kept)
    return _wrap_pragmas(node.loop_var, annotations, node)


def allocation_shape(buf) -> list:
    """The extents to allocate for ``buf``: its shape, each axis but the first widened to
    the ratio of the strides around it when it has strides (a padded row: shape (8, 16),
    strides (17, 1) allocates (8, 17)), as TVM's ``GetBufferAllocationShape``."""
    shape = list(buf.shape)
    for i in range(len(buf.strides) - 1, 0, -1):
        outer, inner = buf.strides[i - 1], buf.strides[i]
        if isinstance(outer, E.IntImm) and isinstance(inner, E.IntImm):
            shape[i] = E.IntImm(shape[i].dtype, outer.value // inner.value)
        else:
            exact = _exact_quotient(outer, inner)
            shape[i] = exact if exact is not None else Analyzer().simplify(E.Div(outer, inner))
    return shape


def _exact_quotient(a, b):
    """``a / b`` when ``a`` is ``b * x`` or ``x * b`` (a padded row's stride): ``x``."""
    if isinstance(a, E.Mul):
        from mlckit.ir.structural import structural_equal

        if structural_equal(a.a, b):
            return a.b
        if structural_equal(a.b, b):
            return a.a
    return None


def _pragmas(annotations: dict) -> list:
    """The ``pragma_*`` annotations as (key, PrimExpr) sorted by key, as TVM lowers them to
    ``AttrStmt`` (a str becomes a StringImm, a Python number a constant)."""
    out = []
    for key in sorted(k for k in (annotations or {}) if k.startswith("pragma_")):
        value = annotations[key]
        if isinstance(value, str):
            value = E.StringImm(value)
        elif not isinstance(value, E.PrimExpr):
            value = E.convert(value)
        out.append((key, value))
    return out


def _wrap_pragmas(node_key, annotations: dict, body):
    for key, value in reversed(_pragmas(annotations)):
        body = S.AttrStmt(node_key, key, value, body)
    return body


def _lower(node):
    if isinstance(node, S.For):
        return _lower_loop(node)
    if not isinstance(node, S.BlockRealize):
        return node
    block = node.block
    if block.iter_vars or block.init is not None:
        raise TVMError(f"LowerOpaqueBlock: block {block.name_hint!r} is not opaque (it has "
                       "iterators or a T.init()); run tir.transform.LowerInitBlock() and "
                       "ConvertBlocksToOpaque() first")
    if block.match_buffers:
        raise TVMError(f"LowerOpaqueBlock: block {block.name_hint!r} has T.match_buffer; run "
                       "tir.transform.LowerMatchBuffer() first")
    body = block.body
    if not _is_true(node.predicate):  # as TVM: inside the allocations
        body = S.IfThenElse(node.predicate, body, None)
    for buf in reversed(block.alloc_buffers):
        body = S.Allocate(buf.data, buf.dtype, allocation_shape(buf), E.IntImm("bool", True),
                          S.DeclBuffer(buf, body), scope=buf.scope)
    # block annotations are dropped, but pragma_* ones become AttrStmts, as in TVM
    return _wrap_pragmas(E.IntImm("int32", 0), block.annotations, body)


def lower_opaque_block(func: PrimFunc) -> PrimFunc:
    """``func`` without blocks (see the module's docstring).

    Example::

        func = lower_opaque_block(convert_blocks_to_opaque(func))
    """
    body = post_order_rewrite(func.body, _lower)
    return func if body is func.body else func.replace(body=body)


def LowerOpaqueBlock() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass replacing every (opaque) block by its body, its allocations and its
    predicate, as ``tvm.tir.transform.LowerOpaqueBlock``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             b[i] = a[i]
    >>> mod = tvm.tir.transform.LowerOpaqueBlock()(tvm.IRModule({"copy": copy}))
    >>> "T.block" in mod.script()
    False
    """
    return make_pass("LowerOpaqueBlock", lower_opaque_block)
