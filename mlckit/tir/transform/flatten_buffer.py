"""FlattenBuffer: every multi-dimensional buffer becomes a flat one, indexed by one offset.

After ``LowerOpaqueBlock`` the loops still index ``Y[i, j]``; memory is flat, so TVM
rewrites each access to a single row-major offset, and each allocation to one extent::

    Y = T.decl_buffer((128, 128))                    C_1 = T.Buffer((16384,), data=C.data)
    for i, j in T.grid(128, 128):            ──►     Y = T.allocate([16384], "float32", "global")
        C[i, j] = T.max(Y[i, j], 0)                      for i, j in T.grid(128, 128):
                                                         C_1[i * 128 + j] = T.max(Y_1[i * 128 + j], 0)

As TVM's pass does:

- a parameter ``C: T.Buffer((128, 128))`` keeps its signature (it checks the caller's
  array); the body uses a flat view of the same data, undeclared
  (``C_1 = T.Buffer((16384,), data=C.data)``, as TVM 0.23 prints it; TVM 0.27 declares it);
- ``DeclBuffer`` statements are stripped, as TVM 0.23 does: an allocation's buffer is a view
  of its data (``Y_1 = T.Buffer((16384,), data=Y)``);
- an ``Allocate`` takes the flat shape of the ``DeclBuffer`` right inside it when that
  declares the same buffer, else the product of its extents;
- a buffer with ``strides`` is indexed with them (``B[i, j]`` with strides ``[17, 1]`` →
  ``B[i * 17 + j]``, extent ``shape[0] * strides[0]``); one with ``axis_separators`` keeps one
  axis per group (``[2, 3, 5, 7]`` separated at 2 → ``[6, 35]``); an ``elem_offset`` is
  added to the index;
- a ``bool`` buffer is backed by ``int8``: loads are cast to bool, stored values to int8;
- in a block, its allocations and the regions it reads and writes are flattened too (a
  region becomes the span from its first element to its last).

Offsets are simplified (``arith.Analyzer``).

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

__all__ = ["FlattenBuffer", "declare_buffer_views", "flatten_buffer"]


def _separators(buf: Buffer) -> list[int]:
    seps = [int(getattr(s, "value", s)) for s in buf.axis_separators]
    if seps != sorted(set(seps)) or any(not 0 < s < len(buf.shape) for s in seps):
        raise TVMError(f"FlattenBuffer: buffer {buf.name!r} of rank {len(buf.shape)} has "
                       f"axis_separators {seps}: they must increase, each between 1 and "
                       f"{len(buf.shape) - 1}")
    return seps


def _groups(buf: Buffer) -> list[list[int]]:
    """The input axes that make each output axis."""
    bounds = [0, *_separators(buf), len(buf.shape)]
    return [list(range(a, b)) for a, b in zip(bounds, bounds[1:]) if b > a]


class _Flattener:
    def __init__(self):
        self.flat: dict[int, Buffer] = {}
        self.analyzer = Analyzer()

    def buffer(self, buf: Buffer) -> Buffer:
        """The flat buffer of ``buf`` (``buf`` itself when it is flat already)."""
        hit = self.flat.get(id(buf))
        if hit is not None:
            return hit
        groups = _groups(buf) if buf.shape else [[]]
        dtype = "int8" if buf.dtype == "bool" else buf.dtype
        if len(groups) == len(buf.shape) and not buf.strides and dtype == buf.dtype:
            hit = buf
        else:
            if buf.strides:
                shape = [buf.strides[g[0]] * buf.shape[g[0]] for g in groups]
            else:
                shape = []
                for g in groups:
                    extent = E.convert(1)
                    for d in g:
                        extent = extent * buf.shape[d]
                    shape.append(extent)
            seps = [type(buf.axis_separators[0])(*(
                [buf.axis_separators[0].dtype, k] if isinstance(buf.axis_separators[0],
                                                                E.IntImm) else [k]))
                    for k in range(1, len(groups))] if buf.axis_separators else []
            hit = buf.replace(shape=[self.analyzer.simplify(s) for s in shape], strides=[],
                              axis_separators=seps, dtype=dtype)
        self.flat[id(buf)] = hit
        return hit

    def offset(self, buf: Buffer, indices: list) -> list:
        if len(indices) != len(buf.shape):
            raise TVMError(f"FlattenBuffer: buffer {buf.name!r} has {len(buf.shape)} "
                           f"dimension(s) but is indexed with {len(indices)}")
        out = []
        for g in _groups(buf) if buf.shape else []:
            off = None
            for d in g:
                if buf.strides:
                    term = indices[d] * buf.strides[d]
                    off = term if off is None else off + term
                else:
                    off = indices[d] if off is None else off * buf.shape[d] + indices[d]
            out.append(off)
        if not out:
            out = [E.IntImm(getattr(buf.elem_offset, "dtype", "int32"), 0)]
        if buf.elem_offset is not None and not (isinstance(buf.elem_offset, E.IntImm)
                                                and buf.elem_offset.value == 0):
            out[-1] = out[-1] + buf.elem_offset
        return [self.analyzer.simplify(o) for o in out]

    def region(self, region: BufferRegion) -> BufferRegion:
        flat = self.buffer(region.buffer)
        if flat is region.buffer:
            return region
        firsts = self.offset(region.buffer, [r.min for r in region.region])
        lasts = self.offset(region.buffer, [r.min + r.extent - 1 for r in region.region])
        return BufferRegion(flat, [E.Range(a, self.analyzer.simplify(b - a + 1))
                                   for a, b in zip(firsts, lasts)])

    def access(self, node):
        flat = self.buffer(node.buffer)
        if flat is node.buffer:
            return node
        return node.replace(buffer=flat, indices=self.offset(node.buffer, node.indices))

    def __call__(self, node):
        if isinstance(node, S.Block):
            if node.match_buffers:
                raise TVMError(f"FlattenBuffer: block {node.name_hint!r} still has "
                               "T.match_buffer; run tir.transform.LowerMatchBuffer() first")
            allocs = [self.buffer(b) for b in node.alloc_buffers]
            reads = [self.region(r) for r in node.reads]
            writes = [self.region(r) for r in node.writes]
            if all(a is b for a, b in zip(allocs + reads + writes,
                                          node.alloc_buffers + node.reads + node.writes)):
                return node
            return node.replace(alloc_buffers=allocs, reads=reads, writes=writes)
        if isinstance(node, E.BufferLoad):
            if node.buffer.dtype == "bool":  # read from the int8 backing array
                return E.Cast("bool", self.access(node))
            return self.access(node)
        if isinstance(node, S.BufferStore):
            if node.buffer.dtype == "bool":
                return self.access(node).replace(value=E.Cast("int8", node.value))
            return self.access(node)
        return node


def _flatten_allocates(stmt, flattener: _Flattener):
    """Before the rewrite (which drops them): each Allocate takes the flat shape of the
    DeclBuffer right inside it that declares the same buffer."""
    extents = {}

    def visit(node):
        if isinstance(node, S.Allocate) and len(node.extents) != 1:
            decl = node.body if isinstance(node.body, S.DeclBuffer) else None
            buf = decl.buffer if decl is not None else None
            if buf is not None and buf.data is node.buffer_var and buf.dtype == node.dtype \
                    and len(buf.shape) == len(node.extents):
                extents[id(node)] = flattener.buffer(buf).shape
            else:
                total = E.convert(1)
                for e in node.extents:
                    total = total * e
                extents[id(node)] = [flattener.analyzer.simplify(total)]
        return node

    post_order_rewrite(stmt, visit)
    return extents


def flatten_buffer(func: PrimFunc) -> PrimFunc:
    """``func`` with every buffer access flattened to one row-major offset.

    Example::

        func = flatten_buffer(lower_opaque_block(func))
    """
    flattener = _Flattener()
    extents = _flatten_allocates(func.body, flattener)
    originals = {}

    def rewrite(node):
        if isinstance(node, S.DeclBuffer):  # stripped, as TVM 0.23 does (0.27 keeps them)
            return node.body
        if isinstance(node, S.Allocate):
            old = originals.get(id(node.buffer_var))
            changes = {}
            if old is not None and id(old) in extents:
                changes["extents"] = extents[id(old)]
            if node.dtype == "bool":
                changes["dtype"] = "int8"
            return node.replace(**changes) if changes else node
        return flattener(node)

    def index_allocates(node):
        if isinstance(node, S.Allocate):
            originals[id(node.buffer_var)] = node
        return node

    post_order_rewrite(func.body, index_allocates)
    body = post_order_rewrite(func.body, rewrite)
    if body is func.body:
        return func
    # the parameters keep their shapes; the body reads them through flat views of the same
    # data, left undeclared as TVM 0.23 leaves them (TVM 0.27 declares them, printed
    # `A_1 = A.view(16384)`); code generators declare them (declare_buffer_views)
    return func.replace(body=body)


def declare_buffer_views(func: PrimFunc) -> PrimFunc:
    """``func`` with each buffer that is used but declared nowhere (a flat view
    ``T.Buffer((16384,), data=A.data)`` that FlattenBuffer leaves) declared by a ``DeclBuffer``
    where its data pointer is defined: at the top for a parameter's data, inside the
    ``Allocate`` of a ``T.allocate``.  For code generators, which declare every array they
    index; the computation is unchanged.

    Example::

        src = generate(declare_buffer_views(tvm.lower(mod)["main"]))
    """
    declared: set[int] = set()
    used: dict[int, list] = {}  # id(data var) -> the undeclared buffers over it

    def note(buf):
        if id(buf) not in declared:
            group = used.setdefault(id(buf.data), [])
            if all(b is not buf for b in group):
                group.append(buf)

    def scan(node):
        if isinstance(node, S.DeclBuffer):
            declared.add(id(node.buffer))
        elif isinstance(node, S.Block):
            declared.update(id(b) for b in node.alloc_buffers)
            declared.update(id(m.buffer) for m in node.match_buffers)
        return node

    def scan_uses(node):
        if isinstance(node, (E.BufferLoad, S.BufferStore, BufferRegion)):
            note(node.buffer)
        return node

    declared.update(id(b) for b in (func.buffer_map or {}).values())
    post_order_rewrite(func.body, scan)
    post_order_rewrite(func.body, scan_uses)
    if not used:
        return func

    def wrap(body, bufs):
        for buf in reversed(bufs):
            body = S.DeclBuffer(buf, body)
        return body

    def insert(node):
        if isinstance(node, S.Allocate) and id(node.buffer_var) in used:
            return node.replace(body=wrap(node.body, used.pop(id(node.buffer_var))))
        return node

    body = post_order_rewrite(func.body, insert)
    top = [b for p in (func.buffer_map or {}).values() for b in used.pop(id(p.data), [])]
    return func.replace(body=wrap(body, top))


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
