"""TIR buffers: a typed, shaped view of memory (``T.Buffer((128, 128), "float32")``)."""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMIndexError, TVMNotImplementedError, TVMValueError
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
    # a buffer never declared (T.Buffer((16,), data=ptr), as FlattenBuffer leaves them) is
    # equal to one with equal fields over the same data pointer, as in TVM
    _free_eq_by_fields = True

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

    READ, WRITE = 1, 2

    def access_ptr(self, access_mask, ptr_type="handle", content_lanes=1, offset=0,
                   extent=None):
        """The address of the buffer's first element for an extern call, as TVM builds it:
        ``T.tvm_access_ptr(T.type_annotation(dtype), A.data, A.elem_offset + offset, extent,
        mask)`` with ``mask`` 1 for ``"r"``, 2 for ``"w"``, 3 for ``"rw"``; the extent is
        ``strides[0] * shape[0]`` (or the product of the shape) minus ``offset``.

        Example::

            T.call_extern("int32", "tmm16", C.access_ptr("w"), A.access_ptr("r"))
        """
        from .op_extern import tvm_access_ptr, type_annotation

        if isinstance(access_mask, str):
            mask = 0
            for c in access_mask:
                if c not in "rw":
                    raise TVMValueError(f"access_ptr of {self.name!r}: unknown access mask "
                                        f"{access_mask!r} (use 'r', 'w' or 'rw')")
                mask |= self.READ if c == "r" else self.WRITE
            access_mask = mask
        if content_lanes != 1:
            raise TVMNotImplementedError(f"access_ptr of {self.name!r}: content_lanes > 1 "
                                         "(vector pointers) is not supported by mlckit")
        offset = convert(offset)
        if extent is None:
            if not self.shape:
                extent = convert(1)
            elif len(self.strides) == len(self.shape):
                extent = self.strides[0] * self.shape[0] - offset
            else:
                extent = convert(1)
                for dim in self.shape:
                    extent = extent * dim
                extent = extent - offset
        elem_offset = self.elem_offset + offset
        return tvm_access_ptr(type_annotation(self.dtype), self.data, elem_offset,
                              convert(extent), access_mask)


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
            return dt.element_of(i.dtype)  # an int32x4 ramp: the other indices are int32
    return None


@node
class BufferRegion(Node):
    """A rectangular region of a buffer: one Range per dimension.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def copy(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         with T.block("B"):
    ...             vi = T.axis.spatial(4, i)
    ...             b[vi] = a[vi]
    >>> loop = copy.body.block.body
    >>> region = loop.body.block.reads[0]
    >>> type(region).__name__, region.buffer.name, region
    ('BufferRegion', 'a', a[vi])
    """

    buffer: Buffer
    region: list

    @staticmethod
    def full_region(buffer: Buffer) -> BufferRegion:
        return BufferRegion(buffer, [Range(convert(0, s.dtype), s) for s in buffer.shape])


@node
class MatchBufferRegion(Node):
    """``T.match_buffer(source_region, ...)`` inside a block: ``buffer`` views ``source``.

    Made by ``T.match_buffer(A[vi * 4 : vi * 4 + 4], (4,))`` inside a block: the block's
    buffer views a region of an outer buffer::

        with T.block("tile"):
            vi = T.axis.spatial(4, i)
            A_tile = T.match_buffer(A[vi * 4 : vi * 4 + 4], (4,))
    """

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
    """Declare a buffer (TVM's ``tir.decl_buffer``).

    >>> from mlckit import tir
    >>> A = tir.decl_buffer((4, 8), "float32", name="A")
    >>> A.name, A.shape, A.dtype
    ('A', [4, 8], 'float32')
    """
    if isinstance(shape, (int, PrimExpr)):
        shape = [shape]
    dtype = dt.check_dtype(dtype)
    data = data if data is not None else Var(name, "handle")
    if elem_offset is None:
        # as TVM: an offset factor asks for a symbolic offset (a match_buffer of a tile of a
        # bigger buffer starts anywhere in it)
        if offset_factor not in (0, None):
            index_dtype = shape[0].dtype if shape and isinstance(shape[0], PrimExpr) else "int32"
            elem_offset = Var(f"{name}_elem_offset", index_dtype)
        else:
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
