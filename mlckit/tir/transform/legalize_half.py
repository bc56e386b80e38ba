"""LegalizeHalf: float16 stored in 16 bits and computed in float32 (loads widen, stores narrow).

Numba has no float16 on a CPU, and most CPUs have no half-precision arithmetic; TVM's LLVM
target computes a ``float16`` expression in ``float32`` and rounds it back to 16 bits where
it is stored (as its ``BF16ComputeLegalize`` + ``BF16StorageLegalize`` passes do for
bfloat16).  ``LegalizeHalf`` does the same for float16, as the last pass ``numba_cpu`` runs
before it prints the kernel:

- a ``float16`` buffer becomes a ``uint16`` buffer of the same shape (the kernel is called
  with ``array.view(np.uint16)``: the same memory);
- a load from it becomes ``half_to_float(A[i])`` (the float32 its bits encode), a store
  ``C[i] = float_to_half(value)`` (the nearest float16, ties to even, as a cast);
- every other ``float16`` value (a constant, a variable, an intrinsic's result) is float32,
  and ``T.Cast("float16", x)`` rounds: ``half_to_float(float_to_half(x))``.

Before and after, in TVMScript::

    C[vi] = A[vi] * B[vi] + T.float16(1.5)            # A, B, C: float16
    # after: A, B, C are uint16
    C[vi] = T.float_to_half(T.half_to_float(A[vi]) * T.half_to_float(B[vi]) + T.float32(1.5))

An expression rounds once, where it is stored, so a result may differ from NumPy's float16
arithmetic (which rounds after every operation) in the last bit.

Example::

    mod = tvm.tir.transform.LegalizeHalf()(mod)   # a function without float16 is unchanged
"""

from __future__ import annotations

from mlckit.ir.op import register_op
from mlckit.tir import dtype as dt
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import BufferLoad, Call, Cast, FloatImm, Var
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt import Allocate, BufferStore
from mlckit.tir.stmt_functor import node_rewriter, post_order_visit

from ._pass import make_pass

__all__ = ["FLOAT_TO_HALF", "HALF_TO_FLOAT", "LegalizeHalf", "float_to_half", "half_to_float",
           "legalize_half", "uses_half"]

HALF, STORAGE, COMPUTE = "float16", "uint16", "float32"

# the two conversions (the bits of a float16 as a float32 and back), printed by numba_cpu as
# calls of its helpers of the same names
HALF_TO_FLOAT = register_op("half_to_float", num_inputs=1)
FLOAT_TO_HALF = register_op("float_to_half", num_inputs=1)


def half_to_float(bits):
    """``T.half_to_float(A[i])``: the float32 the float16 bits ``bits`` (uint16) encode."""
    return Call(dt.with_lanes(COMPUTE, dt.lanes(bits.dtype)), HALF_TO_FLOAT, [bits])


def float_to_half(value):
    """``T.float_to_half(x)``: the bits (uint16) of the float16 nearest to ``x`` (float32,
    ties to even)."""
    return Call(dt.with_lanes(STORAGE, dt.lanes(value.dtype)), FLOAT_TO_HALF, [value])


def _is_half(dtype) -> bool:
    """float16 or a vector of float16 (lowered TIR: ``float16x8``)."""
    return isinstance(dtype, str) and dt.element_of(dtype) == HALF


def uses_half(func: PrimFunc) -> bool:
    """Whether ``func`` has a float16 buffer, variable or value anywhere."""
    def half(x) -> bool:
        return _is_half(getattr(x, "dtype", None))

    if any(map(half, [*func.params, *func.buffer_map.values()])):
        return True
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if half(n) else None)
    return bool(found)


def legalize_half(func: PrimFunc) -> PrimFunc:
    """``func`` with float16 stored as uint16 and computed in float32 (see the module doc);
    ``func`` itself when it has no float16.

    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(A: T.Buffer((4,), "float16")):
    ...     for i in range(4):
    ...         A[i] = A[i] * T.float16(2)
    >>> print(legalize_half(double).body)
    for i in range(4):
        A = T.Buffer((4,), "uint16")
        A[i] = T.float_to_half(T.half_to_float(A[i]) * T.float32(2.0))
    """
    if not uses_half(func):
        return func
    def widen(value):
        """A float32 value rounded to float16 precision: a cast's result."""
        return half_to_float(float_to_half(value))

    def rewrite(x):
        """The new node for ``x`` if ``x`` is a float16 construct, else None."""
        if isinstance(x, BufferLoad) and x.buffer.dtype == HALF:
            return half_to_float(BufferLoad(go(x.buffer), go(x.indices)))
        if isinstance(x, BufferStore) and x.buffer.dtype == HALF:
            return x.replace(buffer=go(x.buffer), value=float_to_half(go(x.value)),
                             indices=go(x.indices))
        if isinstance(x, Buffer) and x.dtype == HALF:
            return x.replace(dtype=STORAGE, data=go(x.data), shape=go(x.shape))
        if isinstance(x, Allocate) and x.dtype == HALF:
            return x.replace(dtype=STORAGE, buffer_var=go(x.buffer_var), body=go(x.body),
                             extents=go(x.extents), condition=go(x.condition))
        if isinstance(x, FloatImm) and x.dtype == HALF:
            return FloatImm(COMPUTE, x.value)
        if isinstance(x, Var) and _is_half(x.dtype):
            return x.replace(dtype=dt.with_lanes(COMPUTE, dt.lanes(x.dtype)))
        if isinstance(x, Cast):
            value = go(x.value)
            if _is_half(x.dtype):
                if not dt.is_float(value.dtype):
                    value = Cast(dt.with_lanes(COMPUTE, dt.lanes(x.dtype)), value)
                return widen(value)
            return x.replace(value=value) if value is not x.value else x
        if isinstance(x, Call) and _is_half(x.dtype):
            return x.replace(dtype=dt.with_lanes(COMPUTE, dt.lanes(x.dtype)), args=go(x.args))
        return None

    go = node_rewriter(rewrite)
    return func.replace(params=go(func.params), buffer_map=go(func.buffer_map),
                        body=go(func.body))


def LegalizeHalf():  # noqa: N802 - a pass, named as TVM names its passes
    """The pass storing float16 as uint16 bits and computing it in float32 (see the module's
    docstring): TVM's ``BF16ComputeLegalize`` + ``BF16StorageLegalize``, for float16.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def double(A: T.Buffer((4,), "float16")):
    ...     for i in range(4):
    ...         A[i] = A[i] * T.float16(2)
    >>> after = tvm.tir.transform.LegalizeHalf()(tvm.IRModule({"main": double}))["main"]
    >>> after.buffer_map[after.params[0]].dtype
    'uint16'
    """
    return make_pass("LegalizeHalf", legalize_half)
