"""TIR buffers: a typed, shaped view of memory (``T.Buffer((128, 128), "float32")``)."""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMIndexError, TVMNotImplementedError
from mlckit.ir.node import Node, node

from . import dtype as dt
from .expr import BufferLoad, PrimExpr, Range, Var, convert


@node
class Buffer(Node):
    """A multi-dimensional buffer.

    Example::

        A = decl_buffer((128, 128), "float32", "A")
        A[i, j]          # BufferLoad
        A[0:4, j]        # BufferRegion (for T.reads / T.writes)
    """

    data: Var
    dtype: str
    shape: list
    strides: list
    elem_offset: Any
    name: str
    scope: str = "global"
    data_alignment: int = 64
    offset_factor: int = 1
    buffer_type: str = ""
    axis_separators: list = None  # type: ignore[assignment]

    _is_var = True
    _eq_ignore = ("name",)

    def __post_init__(self):
        self.dtype = dt.check_dtype(self.dtype)
        self.shape = [convert(s) for s in self.shape]
        self.strides = [convert(s) for s in (self.strides or [])]
        self.elem_offset = convert(self.elem_offset)
        self.axis_separators = list(self.axis_separators or [])

    __hash__ = object.__hash__

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _indices(self, key) -> list:
        key = key if isinstance(key, tuple) else (key,)
        flat = []
        for k in key:
            if isinstance(k, (list, tuple)) and not isinstance(k, Node):
                flat.extend(k)
            else:
                flat.append(k)
        if len(flat) != len(self.shape):
            raise TVMIndexError(
                f"buffer {self.name!r} has {len(self.shape)} dimension(s) but is indexed "
                f"with {len(flat)} index(es)"
            )
        return flat

    def __getitem__(self, key):
        indices = self._indices(key)
        if any(isinstance(i, slice) for i in indices):
            return BufferRegion(self, [self._range(i, d) for i, d in zip(indices, self.shape)])
        index_dtype = _index_dtype(indices)
        return BufferLoad(self, [convert(i, index_dtype) for i in indices])

    def _range(self, index, dim) -> Range:
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise TVMIndexError(f"buffer {self.name!r}: slices with a step are not supported")
            start = convert(0 if index.start is None else index.start)
            stop = dim if index.stop is None else index.stop
            return Range(start, _simplified_extent(start, stop))
        index = convert(index)
        return Range(index, convert(1, index.dtype))

    def vload(self, indices, dtype=None) -> BufferLoad:
        return BufferLoad(self, [convert(i) for i in indices])

    def vstore(self, indices, value):
        from .stmt import BufferStore

        return BufferStore(self, convert(value, self.dtype), [convert(i) for i in indices])

    def access_ptr(self, *args, **kwargs):
        raise TVMNotImplementedError("access_ptr is not supported by mlckit")


def _simplified_extent(start, stop):
    """``stop - start``, folded to a constant when the two differ by one (``vi*4+4 - vi*4``
    is 4), as TVM's ``Buffer.__getitem__`` simplifies it.  A ``stop`` written as
    ``start + extent`` (how the printer writes a region) gives that extent back unchanged, so
    that printing and parsing a region are inverses."""
    from mlckit.ir.structural import structural_equal

    from .analysis.block_access_region import Linear
    from .expr import Add

    if isinstance(stop, Add) and isinstance(start, PrimExpr) and structural_equal(stop.a, start):
        return stop.b

    extent = convert(stop - start, getattr(start, "dtype", None))
    stop = convert(stop, getattr(start, "dtype", None))
    if isinstance(start, PrimExpr) and isinstance(stop, PrimExpr) and isinstance(extent, PrimExpr):
        diff = Linear.of(stop).sub(Linear.of(start))
        if diff.is_const():
            return convert(diff.const, extent.dtype)
    return extent


def _index_dtype(indices) -> str | None:
    for i in indices:
        if isinstance(i, PrimExpr):
            return i.dtype
    return None


@node
class BufferRegion(Node):
    """A rectangular region of a buffer: one Range per dimension."""

    buffer: Buffer
    region: list

    @staticmethod
    def full_region(buffer: Buffer) -> BufferRegion:
        return BufferRegion(buffer, [Range(convert(0, s.dtype), s) for s in buffer.shape])


@node
class MatchBufferRegion(Node):
    """``T.match_buffer(source_region, ...)`` inside a block: ``buffer`` views ``source``."""

    buffer: Buffer
    source: BufferRegion

    _def_fields = ("buffer",)


def decl_buffer(
    shape,
    dtype="float32",
    name="buffer",
    data=None,
    strides=None,
    elem_offset=None,
    scope="global",
    data_alignment=-1,
    offset_factor=0,
    buffer_type="",
    axis_separators=None,
) -> Buffer:
    """Declare a buffer (TVM's ``tir.decl_buffer``)."""
    if isinstance(shape, (int, PrimExpr)):
        shape = [shape]
    dtype = dt.check_dtype(dtype)
    data = data if data is not None else Var(name, "handle")
    if elem_offset is None:
        elem_offset = convert(0)
    return Buffer(
        data,
        dtype,
        list(shape),
        list(strides or []),
        elem_offset,
        name,
        scope,
        64 if data_alignment in (-1, None) else data_alignment,
        1 if offset_factor in (0, None) else offset_factor,
        buffer_type,
        axis_separators,
    )
