"""Tensors and the operations that produce them (``te.Tensor``, ``te.PlaceholderOp``,
``te.ComputeOp``), and ``ProducerLoad``, the expression ``A[i, k]`` reads with.

A ``Tensor`` is one output of an ``Operation``: a placeholder (an input) or a compute
(a value per index).  Indexing a tensor gives an expression usable in compute bodies::

    A = te.placeholder((128, 128), name="A")
    A[i, k]          # ProducerLoad(A, [i, k]), a PrimExpr of A's dtype
    A(*idx)          # the same, from a list of indices
    A.shape          # [128, 128] as PrimExprs; A.shape[0] == 128 holds
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMIndexError, TVMTypeError
from mlckit.ir.node import node
from mlckit.tir import dtype as dt
from mlckit.tir.expr import IterVar, PrimExpr, convert


@node
class ProducerLoad(PrimExpr):
    """``producer[indices]``: reading a te.Tensor inside a compute body (TVM's
    ``tir.ProducerLoad``); ``te.create_prim_func`` turns it into a BufferLoad.

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> load = A[0, 1]
    >>> type(load).__name__, load
    ('ProducerLoad', A[0, 1])
    """

    producer: Any
    indices: list

    def __post_init__(self):
        self.indices = list(self.indices)

    @property
    def dtype(self) -> str:
        return self.producer.dtype

    __hash__ = PrimExpr.__hash__


class Operation:
    """What produces tensors: ``name``, ``tag``, ``attrs`` and ``num_outputs`` outputs.

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> B = te.compute((4, 8), lambda i, j: A[i, j] + 1, name="B")
    >>> isinstance(A.op, te.Operation), isinstance(B.op, te.Operation)
    (True, True)
    """

    def __init__(self, name: str, tag: str = "", attrs: dict | None = None):
        self.name = name
        self.tag = tag
        self.attrs = dict(attrs or {})
        self._outputs: list[Tensor] = []

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    def output(self, index: int) -> Tensor:
        """The ``index``-th output tensor."""
        if not 0 <= index < len(self._outputs):
            raise TVMIndexError(
                f"operation {self.name!r} has {len(self._outputs)} output(s), "
                f"there is no output {index}"
            )
        return self._outputs[index]

    @property
    def input_tensors(self) -> list[Tensor]:
        """The tensors this operation reads, in order of first use."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, tag={self.tag!r})"


class PlaceholderOp(Operation):
    """The operation of ``te.placeholder``: an input with a ``shape`` and a ``dtype``.

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> type(A.op).__name__, A.op.shape, A.op.dtype
    ('PlaceholderOp', [4, 8], 'float32')
    """

    def __init__(self, name: str, shape: list, dtype: str):
        super().__init__(name)
        self.shape = list(shape)
        self.dtype = dtype
        self._outputs = [Tensor(self.shape, dtype, self, 0)]


class ComputeOp(Operation):
    """The operation of ``te.compute``: ``body[i]`` is the value of output ``i`` at the index
    ``axis`` (one IterVar per dimension); a reduction also has ``reduce_axis``.

    >>> from mlckit import te
    >>> A = te.placeholder((4, 8), "float32", name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> B.op
    ComputeOp(name='B', tag='', axis=['i'], reduce_axis=['k'])
    """

    def __init__(self, name: str, tag: str, attrs: dict | None, axis: list, body: list):
        super().__init__(name, tag, attrs)
        self.axis = list(axis)
        self.body = list(body)
        first = self.body[0]
        self.reduce_axis = list(first.axis) if _is_reduce(first) else []
        shape = [iv.dom.extent for iv in self.axis]
        self._outputs = [Tensor(shape, b.dtype, self, i) for i, b in enumerate(self.body)]

    @property
    def input_tensors(self) -> list[Tensor]:
        from .expr_util import post_order

        seen: dict[int, Tensor] = {}
        for b in self.body:
            for e in post_order(b):
                if isinstance(e, ProducerLoad):
                    seen.setdefault(id(e.producer), e.producer)
        return list(seen.values())

    def __repr__(self) -> str:
        return (f"ComputeOp(name={self.name!r}, tag={self.tag!r}, "
                f"axis={[iv.var.name for iv in self.axis]}, "
                f"reduce_axis={[iv.var.name for iv in self.reduce_axis]})")


def _is_reduce(e) -> bool:
    from .reduce import Reduce

    return isinstance(e, Reduce)


class Tensor:
    """A tensor of a tensor expression: one output of ``op``.

    Example::

        A = te.placeholder((n, 4), name="A")
        A.shape, A.dtype, A.ndim, A.name      # [n, 4], "float32", 2, "A"
        A[i, 0] + 1                           # an expression for compute bodies
    """

    def __init__(self, shape: list, dtype: str, op: Operation, value_index: int):
        self._shape = list(shape)
        self.dtype = dtype
        self.op = op
        self.value_index = value_index

    @property
    def shape(self) -> list[PrimExpr]:
        """The extents, as PrimExprs (a fresh list: changing it changes nothing)."""
        return list(self._shape)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def name(self) -> str:
        """The op's name; ``name.v<i>`` for the outputs of a multi-output op (as TVM)."""
        if self.op.num_outputs == 1:
            return self.op.name
        return f"{self.op.name}.v{self.value_index}"

    def __call__(self, *indices) -> ProducerLoad:
        return self._load(list(indices), "(...)")

    def __getitem__(self, key) -> ProducerLoad:
        indices = list(key) if isinstance(key, tuple) else [key]
        return self._load(indices, "[...]")

    def _load(self, indices: list, how: str) -> ProducerLoad:
        if len(indices) == 1 and isinstance(indices[0], (list, tuple)):
            indices = list(indices[0])  # A(idx) with idx a list of indices
        if len(indices) != self.ndim:
            raise TVMIndexError(
                f"tensor {self.name!r} has {self.ndim} dimension(s) (shape "
                f"{_shape_text(self._shape)}) but is indexed with {len(indices)} index(es)"
            )
        converted = [convert(i) for i in indices]
        index_dtype = next((i.dtype for i in converted if isinstance(i, PrimExpr)), None)
        out = []
        for pos, (raw, idx) in enumerate(zip(indices, converted)):
            if isinstance(raw, int) and not isinstance(raw, bool) and index_dtype is not None:
                idx = convert(raw, index_dtype)  # literals follow the other indices' dtype
            if not isinstance(idx, PrimExpr) or not dt.is_int(idx.dtype):
                what = getattr(idx, "dtype", type(raw).__name__)
                raise TVMTypeError(
                    f"tensor {self.name!r}: index {pos} must be an integer expression, "
                    f"got {raw!r} ({what})"
                )
            out.append(idx)
        return ProducerLoad(self, out)

    def __len__(self) -> int:
        raise TVMTypeError(f"len() of te.Tensor {self.name!r} is not defined; use .shape")

    def __iter__(self):
        raise TVMTypeError(f"te.Tensor {self.name!r} is not iterable; use .shape or index it")

    def __repr__(self) -> str:
        return f"Tensor(shape={_shape_text(self._shape)}, op.name={self.op.name})"


def _shape_text(shape: list) -> str:
    return "[" + ", ".join(_dim_text(s) for s in shape) + "]"


def _dim_text(s) -> str:
    value = getattr(s, "value", None)
    if value is not None and not isinstance(s, IterVar):
        return str(value)
    return getattr(s, "name_hint", None) or repr(s)
