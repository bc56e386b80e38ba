"""FlattenBuffer: every multi-dimensional buffer becomes a flat one, indexed by one offset.

After ``LowerOpaqueBlock`` the loops still index ``Y[i, j]``; memory is flat, so TVM
rewrites each access to a single row-major offset, and each allocation to one extent::

    Y = T.decl_buffer((128, 128))                    Y = T.decl_buffer((16384,))
    for i, j in T.grid(128, 128):            ──►     for i, j in T.grid(128, 128):
        C[i, j] = T.max(Y[i, j], 0)                      C_1[i * 128 + j] = T.max(Y[i * 128 + j], 0)

A parameter ``C: T.Buffer((128, 128))`` keeps its signature; the body uses a flat view of
the same data, declared at its top (``C_1 = T.decl_buffer((16384,), data=C.data)``; TVM 0.27
prints ``C_1 = C.view(16384)``).  Offsets
are simplified (``arith.Analyzer``).  Buffers with explicit strides use them; buffers
with ``axis_separators`` are rejected (TVM flattens them to several axes: not supported).
Inside an opaque block (after ``ConvertBlocksToOpaque``) its allocations and the regions it
reads and writes are flattened too (a region becomes the span from its first element to its
last); a block with iterators is rejected.

Example::

    mod = tvm.tir.transform.FlattenBuffer()(mod)
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.error import TVMError
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import Buffer, BufferRegion
from mlckit.tir.function import PrimFunc

from ._pass import make_pass, post_order_rewrite

__all__ = ["FlattenBuffer", "flatten_buffer"]


def _product(shape):
    total = E.convert(1)
    for s in shape:
        total = total * s
    return total


class _Flattener:
    def __init__(self):
        self.flat: dict[int, Buffer] = {}
        self.analyzer = Analyzer()

    def buffer(self, buf: Buffer) -> Buffer:
        if len(buf.shape) == 1 and not buf.strides:
            return buf
        if buf.axis_separators:
            raise TVMError(f"FlattenBuffer: buffer {buf.name!r} has axis_separators "
                           f"{buf.axis_separators}: flattening to several axes is not supported")
        hit = self.flat.get(id(buf))
        if hit is None:
            extent = (self.analyzer.simplify(_product(buf.shape)) if not buf.strides
                      else self.analyzer.simplify(buf.strides[0] * buf.shape[0]))
            hit = buf.replace(shape=[extent], strides=[])
            self.flat[id(buf)] = hit
        return hit

    def offset(self, buf: Buffer, indices: list):
        if len(indices) == 1 and not buf.strides:
            return list(indices)
        if buf.strides:
            off = E.convert(0)
            for idx, stride in zip(indices, buf.strides):
                off = off + idx * stride
        else:
            off = indices[0]
            for idx, extent in zip(indices[1:], buf.shape[1:]):
                off = off * extent + idx
        return [self.analyzer.simplify(off)]

    def region(self, region: BufferRegion) -> BufferRegion:
        flat = self.buffer(region.buffer)
        if flat is region.buffer:
            return region
        first = self.offset(region.buffer, [r.min for r in region.region])[0]
        last = self.offset(region.buffer, [r.min + r.extent - 1 for r in region.region])[0]
        return BufferRegion(flat, [E.Range(first, self.analyzer.simplify(last - first + 1))])

    def __call__(self, node):
        if isinstance(node, S.Block):
            if node.iter_vars:
                raise TVMError(f"FlattenBuffer: block {node.name_hint!r} has iterators; run "
                               "tir.transform.ConvertBlocksToOpaque() first")
            allocs = [self.buffer(b) for b in node.alloc_buffers]
            reads = [self.region(r) for r in node.reads]
            writes = [self.region(r) for r in node.writes]
            if all(a is b for a, b in zip(allocs + reads + writes,
                                          node.alloc_buffers + node.reads + node.writes)):
                return node
            return node.replace(alloc_buffers=allocs, reads=reads, writes=writes)
        if isinstance(node, E.BufferLoad):
            flat = self.buffer(node.buffer)
            if flat is node.buffer:
                return node
            return node.replace(buffer=flat, indices=self.offset(node.buffer, node.indices))
        if isinstance(node, S.BufferStore):
            flat = self.buffer(node.buffer)
            if flat is node.buffer:
                return node
            return node.replace(buffer=flat, indices=self.offset(node.buffer, node.indices))
        if isinstance(node, S.DeclBuffer):
            flat = self.buffer(node.buffer)
            return node if flat is node.buffer else node.replace(buffer=flat)
        if isinstance(node, S.Allocate) and len(node.extents) > 1:
            return node.replace(extents=[self.analyzer.simplify(_product(node.extents))])
        return node


def flatten_buffer(func: PrimFunc) -> PrimFunc:
    """``func`` with every buffer access flattened to one row-major offset.

    Example::

        func = flatten_buffer(lower_opaque_block(func))
    """
    flattener = _Flattener()
    body = post_order_rewrite(func.body, flattener)
    if body is func.body:
        return func
    # the parameters keep their shapes; the body reads them through flat views, declared
    # first (TVM 0.27 prints these `A_1 = A.view(16384)`)
    views = [flattener.flat[id(b)] for b in (func.buffer_map or {}).values()
             if id(b) in flattener.flat]
    root = body.block if isinstance(body, S.BlockRealize) else None
    inner = root.body if root is not None else body  # inside a root block, as TVMScript puts it
    for flat in reversed(views):
        inner = S.DeclBuffer(flat, inner)
    body = body.replace(block=root.replace(body=inner)) if root is not None else inner
    return func.replace(body=body)


def FlattenBuffer() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass flattening multi-dimensional buffers to one dimension, as
    ``tvm.tir.transform.FlattenBuffer``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def add1(a: T.Buffer((4, 8), "float32"), b: T.Buffer((4, 8), "float32")):
    ...     for i, j in T.grid(4, 8):
    ...         b[i, j] = a[i, j] + T.float32(1)
    >>> mod = tvm.tir.transform.FlattenBuffer()(tvm.IRModule({"add1": add1}))
    >>> "b_1[i * 8 + j] = a_1[i * 8 + j] + T.float32(1.0)" in mod.script()
    True
    """
    return make_pass("FlattenBuffer", flatten_buffer)
