"""TIR's vectors in generated kernels: ``ramp``, ``broadcast`` and LLVM vector values.

After ``tir.transform.VectorizeLoop`` a vectorized loop is one store of vectors::

    C_1[T.Ramp(i * 64, 1, 16)] = C_1[T.Ramp(i * 64, 1, 16)] + T.Broadcast(a, 16) * B_1[T.Ramp(j, 1, 16)]

and the kernel Numba compiles says the same::

    C_1[ramp(i * 64, 1, 16)] = C_1[ramp(i * 64, 1, 16)] + broadcast(a, 16) * B_1[ramp(j, 1, 16)]

An array indexed by a ``ramp`` gives a :class:`Vec`, which Numba keeps as one LLVM vector
value (``<16 x float>``), as TVM's LLVM codegen does with ``float32x16``: ``+``, ``-``,
``*``, ``/``, ``max`` and ``min`` are single vector instructions.  Written lane by lane
instead (16 scalar statements, for LLVM's SLP vectorizer to pack again), the same store
costs Numba 16 times the typing and lowering: a vectorized tuning candidate compiled about
three times slower.

``ramps(base, stride, lanes, rows, row_stride)`` are the lanes of a tile: ``rows`` ramps of
``lanes`` lanes each, ``row_stride`` apart (what meta_schedule's fused vectorized loops
index: ``r // 8 * 64 + r % 8`` over 64 lanes is ``ramps(base, 1, 8, 8, 64)``).

The strides and lane counts are constants of the source (Numba sees them as literals).

Example::

    import numpy as np
    from numba import njit
    from mlckit.backend.numba_cpu.vectors import broadcast, ramp

    @njit
    def scale(A):              # A: float32[64], C-contiguous
        for i in range(4):
            A[ramp(i * 16, 1, 16)] = A[ramp(i * 16, 1, 16)] * broadcast(np.float32(2), 16)
"""

from __future__ import annotations

import operator

from llvmlite import ir
from numba.core import types
from numba.core.datamodel import models, register_default
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import intrinsic

from .views import _arrayobj

__all__ = ["RampIndex", "Vec", "broadcast", "ramp", "ramps"]

_I32 = ir.IntType(32)


class Vec(types.Type):
    """A vector of ``lanes`` values of the number type ``dtype``: one LLVM vector value."""

    def __init__(self, dtype, lanes: int):
        self.dtype, self.lanes = dtype, lanes
        super().__init__(name=f"vec({dtype} x {lanes})")


class RampIndex(types.Type):
    """The lanes an array is indexed at: ``rows`` ramps of ``lanes`` lanes (``stride``
    apart within a ramp, ``row_stride`` between ramps) from a base known at run time."""

    def __init__(self, stride: int, lanes: int, rows: int = 1, row_stride: int = 0):
        self.stride, self.lanes, self.rows, self.row_stride = stride, lanes, rows, row_stride
        name = f"ramp({stride}, {lanes})" if rows == 1 else \
            f"ramps({stride}, {lanes}, {rows}, {row_stride})"
        super().__init__(name=name)

    @property
    def total(self) -> int:
        return self.lanes * self.rows


@register_default(Vec)
class _VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        element = dmm.lookup(fe_type.dtype).get_value_type()
        super().__init__(dmm, fe_type, ir.VectorType(element, fe_type.lanes))


@register_default(RampIndex)
class _RampModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):  # the base: the first lane's index
        super().__init__(dmm, fe_type, dmm.lookup(types.intp).get_value_type())


def _number(t) -> bool:
    return isinstance(t, (types.Float, types.Integer)) and not isinstance(t, types.Boolean)


def _literal(t):
    return t.literal_value if isinstance(t, types.IntegerLiteral) else None


# -- making indices and vectors -------------------------------------------------------------
def _base_index(context, builder, sig, args):
    """A ramp index is its first lane's index (the strides are in its type)."""
    return context.cast(builder, args[0], sig.args[0], types.intp)


@intrinsic
def ramp(typingctx, base, stride, lanes):
    """The lanes ``base, base + stride, ..., base + (lanes - 1) * stride`` (TIR's
    ``T.Ramp``), to index a 1-D array with; ``stride`` and ``lanes`` are constants."""
    stride_, lanes_ = _literal(stride), _literal(lanes)
    if not isinstance(base, types.Integer) or stride_ is None or lanes_ is None or lanes_ < 1:
        return None
    return RampIndex(stride_, lanes_)(base, stride, lanes), _base_index


@intrinsic
def ramps(typingctx, base, stride, lanes, rows, row_stride):
    """``rows`` ramps of ``lanes`` lanes, the ramp ``r`` starting at ``base + r *
    row_stride``: lane ``k`` is ``base + k // lanes * row_stride + k % lanes * stride``."""
    consts = [_literal(t) for t in (stride, lanes, rows, row_stride)]
    if not isinstance(base, types.Integer) or None in consts or consts[1] < 1 or consts[2] < 1:
        return None
    return RampIndex(*consts)(base, stride, lanes, rows, row_stride), _base_index


@intrinsic
def broadcast(typingctx, value, lanes):
    """``value`` in each of ``lanes`` lanes (TIR's ``T.Broadcast``)."""
    lanes_ = _literal(lanes)
    if not _number(value) or lanes_ is None or lanes_ < 1:
        return None
    vec = Vec(value, lanes_)

    def codegen(context, builder, sig, args):
        return _splat(builder, args[0], lanes_)

    return vec(value, lanes), codegen


def _splat(builder, scalar, lanes: int):
    one = builder.insert_element(ir.VectorType(scalar.type, 1)(ir.Undefined), scalar, _I32(0))
    return builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(_I32, lanes), [0] * lanes))


def _concat(builder, parts: list):
    """One vector of the vectors ``parts`` (a power of two of them, of one length), in order."""
    while len(parts) > 1:
        mask = ir.Constant(ir.VectorType(_I32, 2 * parts[0].type.count),
                           list(range(2 * parts[0].type.count)))
        parts = [builder.shuffle_vector(a, b, mask) for a, b in zip(parts[0::2], parts[1::2])]
    return parts[0]


# -- array[ramp]: loads and stores ----------------------------------------------------------
@infer_global(operator.getitem)
class _VecLoad(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) != 2:
            return None
        ary, index = args
        if isinstance(ary, types.Array) and ary.ndim == 1 and isinstance(index, RampIndex) \
                and _number(ary.dtype):
            return signature(Vec(ary.dtype, index.total), ary, index)
        return None


@infer_global(operator.setitem)
class _VecStore(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) != 3:
            return None
        ary, index, value = args
        if isinstance(ary, types.Array) and ary.ndim == 1 and ary.mutable \
                and isinstance(index, RampIndex) and isinstance(value, Vec) \
                and value.dtype == ary.dtype and value.lanes == index.total:
            return signature(types.none, ary, index, value)
        return None


def _element_pointer(builder, aryty, array, base, offset: int):
    """The address of element ``base + offset`` of the 1-D ``array`` (its struct)."""
    at = builder.add(base, ir.Constant(base.type, offset)) if offset else base
    if aryty.layout == "C":
        return builder.gep(array.data, [at], inbounds=True)
    step = builder.extract_value(array.strides, 0)  # a strided 1-D array: bytes
    byte = builder.gep(builder.bitcast(array.data, ir.IntType(8).as_pointer()),
                       [builder.mul(at, step)], inbounds=True)
    return builder.bitcast(byte, array.data.type)


@lower_builtin(operator.getitem, types.Array, RampIndex)
def _load(context, builder, sig, args):
    aryty, index = sig.args
    array, base = _arrayobj().make_array(aryty)(context, builder, args[0]), args[1]
    element = context.get_data_type(aryty.dtype)
    align = context.get_abi_sizeof(element)
    rows = []
    for r in range(index.rows):
        first = r * index.row_stride
        if index.stride == 1 and aryty.layout == "C":
            ptr = _element_pointer(builder, aryty, array, base, first)
            vec_ptr = builder.bitcast(ptr, ir.VectorType(element, index.lanes).as_pointer())
            rows.append(builder.load(vec_ptr, align=align))
        elif index.stride == 0:
            ptr = _element_pointer(builder, aryty, array, base, first)
            rows.append(_splat(builder, builder.load(ptr, align=align), index.lanes))
        else:
            row = ir.VectorType(element, index.lanes)(ir.Undefined)
            for k in range(index.lanes):
                ptr = _element_pointer(builder, aryty, array, base, first + k * index.stride)
                row = builder.insert_element(row, builder.load(ptr, align=align), _I32(k))
            rows.append(row)
    if len(rows) & (len(rows) - 1):  # not a power of two: lane by lane
        whole = ir.VectorType(element, index.total)(ir.Undefined)
        for r, row in enumerate(rows):
            for k in range(index.lanes):
                whole = builder.insert_element(whole, builder.extract_element(row, _I32(k)),
                                               _I32(r * index.lanes + k))
        return whole
    return _concat(builder, rows)


@lower_builtin(operator.setitem, types.Array, RampIndex, Vec)
def _store(context, builder, sig, args):
    aryty, index, _ = sig.args
    array, base, value = _arrayobj().make_array(aryty)(context, builder, args[0]), args[1], args[2]
    element = context.get_data_type(aryty.dtype)
    align = context.get_abi_sizeof(element)
    for r in range(index.rows):
        first = r * index.row_stride
        lanes = list(range(r * index.lanes, (r + 1) * index.lanes))
        if index.stride == 1 and aryty.layout == "C":
            row = value if index.rows == 1 else builder.shuffle_vector(
                value, value, ir.Constant(ir.VectorType(_I32, index.lanes), lanes))
            ptr = _element_pointer(builder, aryty, array, base, first)
            builder.store(row, builder.bitcast(ptr, ir.VectorType(element, index.lanes)
                                               .as_pointer()), align=align)
            continue
        for k, lane in enumerate(lanes):  # lane by lane, in order: the last one stays
            ptr = _element_pointer(builder, aryty, array, base, first + k * index.stride)
            builder.store(builder.extract_element(value, _I32(lane)), ptr, align=align)
    return context.get_dummy_value()


# -- arithmetic on vectors -------------------------------------------------------------------
def _same_vectors(args) -> bool:
    return len(args) == 2 and isinstance(args[0], Vec) and args[0] == args[1]


_ARITHMETIC = {  # operator: (float instruction, integer instruction or None)
    operator.add: ("fadd", "add"),
    operator.sub: ("fsub", "sub"),
    operator.mul: ("fmul", "mul"),
    operator.truediv: ("fdiv", None),  # TIR's integer division is floor division: lanes
}


def _arithmetic(op, float_instr, int_instr):
    @infer_global(op)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            if _same_vectors(args) and (int_instr or isinstance(args[0].dtype, types.Float)):
                return signature(args[0], *args)
            return None

    @lower_builtin(op, Vec, Vec)
    def _lower(context, builder, sig, args):
        instr = float_instr if isinstance(sig.args[0].dtype, types.Float) else int_instr
        return getattr(builder, instr)(*args)


for _op, (_f, _i) in _ARITHMETIC.items():
    _arithmetic(_op, _f, _i)


@infer_global(operator.neg)
class _Negate(AbstractTemplate):
    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], Vec):
            return signature(args[0], *args)
        return None


@lower_builtin(operator.neg, Vec)
def _negate(context, builder, sig, args):
    if isinstance(sig.args[0].dtype, types.Float):
        return builder.fneg(args[0])
    return builder.neg(args[0])


def _extremum(fn, pick_first_when: str):
    """``max``/``min`` of two vectors, lane by lane, as TVM's codegen writes ``T.max``:
    ``a > b ? a : b`` (``a < b ? a : b``)."""

    @infer_global(fn)
    class _Template(AbstractTemplate):
        def generic(self, args, kws):
            return signature(args[0], *args) if _same_vectors(args) else None

    @lower_builtin(fn, Vec, Vec)
    def _lower(context, builder, sig, args):
        a, b = args
        dtype = sig.args[0].dtype
        if isinstance(dtype, types.Float):
            pick = builder.fcmp_ordered(pick_first_when, a, b)
        elif dtype.signed:
            pick = builder.icmp_signed(pick_first_when, a, b)
        else:
            pick = builder.icmp_unsigned(pick_first_when, a, b)
        return builder.select(pick, a, b)


_extremum(max, ">")
_extremum(min, "<")
