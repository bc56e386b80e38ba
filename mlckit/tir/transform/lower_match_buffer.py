"""LowerMatchBuffer: a ``T.match_buffer`` view is replaced by the buffer it views.

``sub_A = T.match_buffer(A[i * 4:i * 4 + 4, j, k * 2:k * 2 + 2], (4, 1, 2))`` names a tile
of ``A``; after this pass the block reads and writes ``A`` itself, each index shifted by the
tile's start, and the view's data pointer, offset and strides become ``A``'s::

    sub_A = T.match_buffer(A[i * 4:i * 4 + 4, j, k * 2:k * 2 + 2], (4, 1, 2))
    for ii, kk in T.grid(4, 2):                         for ii, kk in T.grid(4, 2):
        sub_A[ii, 0, kk] = ...                ──►           A[i * 4 + ii, j, k * 2 + kk] = ...

A view of lower rank matches the source's last axes (the leading ones are taken at their
start).  ``sub_A.elem_offset`` becomes the tile start's element offset in ``A``, and
symbolic strides the source's (row-major from its shape when it has none).  As in TVM, it is
an error when the shape is not the region's extents (leading unit axes aside), when a
constant offset or stride disagrees with the region, when one variable would take two
values, or when a stride is a variable from outside the block (a parameter).

Example::

    mod = tvm.tir.transform.LowerMatchBuffer()(mod)
"""

from __future__ import annotations

from mlckit.arith.analyzer import Analyzer
from mlckit.error import TVMError
from mlckit.ir.transform import FunctionPass
from mlckit.tir import expr as E
from mlckit.tir import stmt as S
from mlckit.tir.buffer import BufferRegion
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import node_rewriter

from ._pass import make_pass, post_order_rewrite

__all__ = ["LowerMatchBuffer", "lower_match_buffer"]


def _strides(buf) -> list:
    if buf.strides:
        return list(buf.strides)
    strides, acc = [], E.convert(1)
    for extent in reversed(buf.shape[1:]):
        strides.insert(0, acc)
        acc = acc * extent
    return [acc, *strides] if buf.shape else []


def _bind(table: dict, var_or_value, value, analyzer: Analyzer, what: str, outer: set):
    """Bind a view's field (a variable, or a constant that must agree) to ``value``."""
    if isinstance(var_or_value, E.Var):
        if id(var_or_value) in outer:
            raise TVMError(f"LowerMatchBuffer: {what} is {var_or_value.name}, a variable "
                           "defined outside the block; it cannot be bound to the view's value "
                           f"{value}")
        bound = table.get(id(var_or_value))
        if bound is not None and not analyzer.can_prove(bound == value):
            raise TVMError(f"LowerMatchBuffer: {what} is {var_or_value.name}, already bound "
                           f"to {bound}, but the view needs {value}")
        table[id(var_or_value)] = value
    elif not analyzer.can_prove(E.convert(var_or_value) == value):
        raise TVMError(f"LowerMatchBuffer: {what} is {var_or_value}, but the region viewed "
                       f"gives {value}")


def _plan(match, analyzer: Analyzer, block_name: str, outer: set):
    """The variable table and the index map of one match_buffer."""
    target, source = match.buffer, match.source.buffer
    region = match.source.region
    lead = len(region) - len(target.shape)
    if lead < 0:
        raise TVMError(f"LowerMatchBuffer: in block {block_name!r}, {target.name!r} has more "
                       f"axes ({len(target.shape)}) than the region of {source.name!r} it views")
    for r in region[:lead]:
        if not analyzer.can_prove(r.extent == 1):
            raise TVMError(f"LowerMatchBuffer: in block {block_name!r}, {target.name!r} leaves "
                           f"out an axis of {source.name!r} whose extent is {r.extent}, not 1")
    table: dict[int, object] = {id(target.data): source.data}
    strides = _strides(source)
    offset = source.elem_offset
    for r, stride in zip(region, strides):
        offset = offset + r.min * stride
    offset = analyzer.simplify(offset)
    where = f"in block {block_name!r}, {target.name!r}'s"
    _bind(table, target.elem_offset, offset, analyzer, f"{where} elem_offset", outer)
    for axis, (mine, theirs) in enumerate(zip(target.strides, strides[lead:])):
        _bind(table, mine, analyzer.simplify(theirs), analyzer, f"{where} stride {axis}", outer)
    for mine, r in zip(target.shape, region[lead:]):
        if isinstance(mine, E.Var):
            table[id(mine)] = r.extent
        elif not analyzer.can_prove(E.convert(mine) == r.extent):
            raise TVMError(f"LowerMatchBuffer: in block {block_name!r}, {target.name!r} has "
                           f"shape {list(target.shape)} but views a region of extents "
                           f"{[x.extent for x in region]} of {source.name!r}")
    return source, region, lead, table


def _lower_block(block: S.Block, outer: set) -> S.Block:
    if not block.match_buffers:
        return block
    analyzer = Analyzer()
    views, table = {}, {}
    for match in block.match_buffers:
        source, region, lead, vars_ = _plan(match, analyzer, block.name_hint, outer)
        views[id(match.buffer)] = (source, region, lead)
        table.update(vars_)

    def indices(view, idx):
        source, region, lead = view
        out = [r.min for r in region[:lead]]
        out += [analyzer.simplify(r.min + i) for r, i in zip(region[lead:], idx)]
        return out

    def rewrite(node):
        if getattr(node, "_is_var", False) and id(node) in table:
            return table[id(node)]
        if isinstance(node, (E.BufferLoad, S.BufferStore)) and id(node.buffer) in views:
            view = views[id(node.buffer)]
            fields = {name: visit(getattr(node, name)) for name in type(node).field_names()
                      if name not in ("buffer", "indices")}
            return node.replace(buffer=view[0], indices=indices(view, visit(node.indices)),
                                **fields)
        if isinstance(node, BufferRegion) and id(node.buffer) in views:
            source, region, lead = views[id(node.buffer)]
            ranges = [E.Range(r.min, 1) for r in region[:lead]]
            ranges += [E.Range(analyzer.simplify(r.min + x.min), x.extent)
                       for r, x in zip(region[lead:], node.region)]
            return BufferRegion(source, ranges)
        return None

    visit = node_rewriter(rewrite)
    return block.replace(match_buffers=[], body=visit(block.body),
                         init=None if block.init is None else visit(block.init),
                         reads=visit(block.reads), writes=visit(block.writes))


def lower_match_buffer(func: PrimFunc) -> PrimFunc:
    """``func`` with every ``T.match_buffer`` view replaced by its source buffer.

    Example::

        func = lower_match_buffer(mod["main"])
    """
    outer = {id(p) for p in func.params}  # a view cannot rebind the function's parameters
    body = post_order_rewrite(func.body,
                              lambda n: _lower_block(n, outer) if isinstance(n, S.Block) else n)
    return func if body is func.body else func.replace(body=body)


def LowerMatchBuffer() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass replacing each block's ``T.match_buffer`` views by the buffers they view, as
    ``tvm.tir.transform.LowerMatchBuffer``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def f(a: T.Buffer((4, 8), "float32")):
    ...     for i in range(4):
    ...         with T.block("row"):
    ...             row = T.match_buffer(a[i, 0:8], (8,), offset_factor=1)
    ...             for j in range(8):
    ...                 row[j] = T.float32(0)
    >>> "a[i, j] = T.float32(0.0)" in tvm.tir.transform.LowerMatchBuffer()(
    ...     tvm.IRModule({"f": f})).script()
    True
    """
    return make_pass("LowerMatchBuffer", lower_match_buffer)
