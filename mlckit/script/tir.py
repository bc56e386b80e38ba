"""The ``T`` namespace of TVMScript: ``from mlckit.script import tir as T``.

``@T.prim_func`` parses a Python function into a TIR PrimFunc::

    @T.prim_func
    def relu(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
        for i in range(128):
            with T.block("B"):
                vi = T.axis.spatial(128, i)
                B[vi] = T.max(A[vi], T.float32(0))

``@T.prim_func(private=True)`` leaves out the ``global_symbol`` attribute.  TVM 0.27's
spellings are accepted here too (``@T.prim_func(s_tir=True)``, ``T.sblock``,
``T.sblock_alloc_buffer``, ``T.sblock_attr``), so that TVMScript printed in either spelling
parses back; ``mlckit.script.tirx`` is the namespace that holds code to TVM 0.27's rules.
Called with no function inside an IRBuilder, ``T.prim_func()`` is the builder frame
(``with T.prim_func(): ...``).  Everything else here is the TIR IRBuilder API
(``T.block``, ``T.grid``, ``T.axis.remap`` …) and the TIR expression helpers (``T.exp``,
``T.max``, ``T.Cast`` …), with TVM's names.
"""

from __future__ import annotations

import inspect
from typing import Any

from mlckit.error import TVMTypeError
from mlckit.ir.op import register_op as _register_op
from mlckit.script.ir_builder.base import IRBuilder
from mlckit.script.ir_builder.tir import *  # noqa: F403 - the TIR IRBuilder API (T.block, T.grid ...)
from mlckit.script.ir_builder.tir import frames as _frames
from mlckit.script.ir_builder.tir.scalar import _scalar as _scalar_type
from mlckit.tir import expr as _E
from mlckit.tir.expr import (  # noqa: F401
    BufferLoad,
    FloatImm,
    IntImm,
    IterVar,
    PrimExpr,
    Range,
    SizeVar,
    StringImm,
)
from mlckit.tir.expr_vector import Broadcast as _Broadcast
from mlckit.tir.expr_vector import Ramp as _Ramp
from mlckit.tir.expr_vector import vscale  # noqa: F401 - T.vscale()
from mlckit.tir.transform.legalize_half import (  # noqa: F401 - what LegalizeHalf prints
    float_to_half,
    half_to_float,
)

from . import parser as _parser  # noqa: F401 - registers the TIR handlers


# -- the decorator / frame --------------------------------------------------------------------
class _PrimFuncSpec(_frames.PrimFuncFrame):
    """What ``T.prim_func(...)`` returns without a function: a decorator (``@T.prim_func(
    private=True)``) and, inside an IRBuilder, the PrimFunc frame (``with T.prim_func():``)."""

    dispatch_token = "tir"

    def __init__(self, private: bool = False, check_well_formed: bool = True,
                 s_tir: bool = False, namespace: str = "tir"):
        super().__init__(is_private=private)
        self.decorator_kwargs = {"private": private, "check_well_formed": check_well_formed,
                                 "s_tir": s_tir}
        self.tir_namespace = namespace
        self.spelling = "tirx" if s_tir or namespace == "tirx" else "tir"

    def __call__(self, func):
        return _decorate(func, depth=1)


def _decorate(func, depth: int):
    from mlckit.script.parser.entry import parse_decorated

    if not inspect.isfunction(func):
        raise TVMTypeError(f"@T.prim_func decorates a function, got {func!r}")
    return parse_decorated(func, "tir", None, None, depth=depth + 1)


def make_prim_func(namespace: str):
    """The ``T.prim_func`` of the ``tir`` or ``tirx`` namespace: the same parser; the namespace
    is recorded so that ``tirx`` can hold its functions to TVM 0.27's rules (blocks need
    ``s_tir=True``) and so that a function prints back in the spelling it was written in."""

    def prim_func(func=None, *, private: bool = False, is_private: bool | None = None,
                  check_well_formed: bool = True, s_tir: bool = False) -> Any:
        """``@T.prim_func`` / ``@T.prim_func(private=True)``: parse a function into a PrimFunc.

        TVM >= 0.24 (``from tvm.script import tirx as T``) writes a function with blocks as
        ``@T.prim_func(s_tir=True)`` and its blocks as ``T.sblock``; both spellings build the
        same PrimFunc, which prints back in the spelling it was written in.

        Example::

            @T.prim_func
            def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
                for i in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i)
                        B[vi] = A[vi] + T.float32(1)

        Without a function, ``T.prim_func()`` is also the IRBuilder frame of a PrimFunc.
        """
        if is_private is not None:
            private = is_private
        if func is not None:
            return _decorate(func, depth=1)
        return _PrimFuncSpec(private, check_well_formed, s_tir, namespace)

    prim_func.dispatch_token = "tir"
    prim_func.decorator_kwargs = {"private": False, "check_well_formed": True, "s_tir": False}
    prim_func.tir_namespace = namespace
    return prim_func


prim_func = make_prim_func("tir")


# -- expression node constructors (no constant folding, as TVM's classes) -----------------------------
def _node2(cls):
    def make(a, b, span=None):
        a, b = _E._match(a, b)
        return cls(a, b)

    make.__name__ = cls.__name__
    make.__doc__ = f"The ``{cls.__name__}`` node: {cls.__doc__}."
    return make


Add, Sub, Mul, Div, Mod = (_node2(c) for c in (_E.Add, _E.Sub, _E.Mul, _E.Div, _E.Mod))
FloorDiv, FloorMod, Min, Max = (_node2(c) for c in (_E.FloorDiv, _E.FloorMod, _E.Min, _E.Max))
EQ, NE, LT, LE, GT, GE = (_node2(c) for c in (_E.EQ, _E.NE, _E.LT, _E.LE, _E.GT, _E.GE))


def And(a, b, span=None):  # noqa: N802 - TVM's name
    """The ``And`` node: ``a and b``."""
    return _E.And(_E.convert(a), _E.convert(b))


def Or(a, b, span=None):  # noqa: N802 - TVM's name
    """The ``Or`` node: ``a or b``."""
    return _E.Or(_E.convert(a), _E.convert(b))


def Not(a, span=None):  # noqa: N802 - TVM's name
    """The ``Not`` node: ``not a``."""
    return _E.Not(_E.convert(a))


def Cast(dtype: str, value, span=None):  # noqa: N802 - TVM's name
    """The ``Cast`` node: ``value`` converted to ``dtype`` (not folded)."""
    return _E.Cast(dtype, _E.convert(value))


def Select(condition, true_value, false_value, span=None):  # noqa: N802 - TVM's name
    """``condition ? true_value : false_value`` evaluating both sides."""
    t = _E.convert(true_value)
    f = _E.convert(false_value, getattr(t, "dtype", None))
    t = _E.convert(t, getattr(f, "dtype", None))
    return _E.Select(_E.convert(condition), t, f)


def Ramp(base, stride, lanes, span=None):  # noqa: N802 - TVM's name
    """The vector ``base, base + stride, …`` of ``lanes`` lanes: ``A[T.Ramp(i * 4, 1, 4)]``."""
    return _Ramp(base, stride, lanes)


def Broadcast(value, lanes, span=None):  # noqa: N802 - TVM's name
    """``value`` in each of ``lanes`` lanes: ``T.Broadcast(T.float32(0), 4)``."""
    return _Broadcast(value, lanes)


def reinterpret(dtype: str, value, span=None):
    """The bits of ``value`` read as ``dtype`` (``T.reinterpret("float32", x_int32)``), TVM's
    ``tir.reinterpret`` intrinsic; no mlckit backend runs it yet."""
    return _E.Call(dtype, _register_op("tir.reinterpret"), [_E.convert(value)])


def _vector_types() -> dict:
    """``T.float32x4`` … : the vector dtypes, each like ``T.float32`` (``T.float32x4()`` is a
    new variable, ``T.float32x4(x)`` a conversion)."""
    return {f"{base}x{n}": _scalar_type(f"{base}x{n}")
            for base in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                         "uint64", "float16", "float32", "float64", "bool")
            for n in (2, 3, 4, 8, 16, 32, 64)}


globals().update(_vector_types())
void = _scalar_type("void")  # x: T.void = T.call_extern("void", "f"): a call returning nothing


def Var(name: str, dtype: str = "int32"):  # noqa: N802 - TVM's tir.Var
    """A variable: ``T.Var("n", "int32")``."""
    return _E.Var(name, dtype)


def ceildiv(a, b) -> PrimExpr:
    """``ceil(a / b)`` for integers: ``(a + b - 1) // b``."""
    return _E.floordiv(_E.sub(_E.add(a, b), 1), b)


def infinity(dtype: str) -> PrimExpr:
    """Positive infinity of a float dtype."""
    return _E.const(float("inf"), dtype)


def iter_var(v, dom, iter_type: str, thread_tag: str) -> IterVar:
    """An IterVar (``T.iter_var(v, T.Range(0, 4), "DataPar", "")``)."""
    kinds = {"DataPar": 0, "ThreadIndex": 1, "CommReduce": 2, "Ordered": 3, "Opaque": 4}
    if isinstance(v, str):
        v = _E.Var(v, "int32")
    return IterVar(dom, v, kinds[iter_type], thread_tag)


def is_builder_active() -> bool:
    """True inside ``with IRBuilder():`` (where ``T.prim_func()`` is a frame)."""
    return IRBuilder.is_in_scope()


def __getattr__(name: str):
    # only names T does not have: say which was meant (T.grd -> T.grid)
    from mlckit.error import did_you_mean

    raise AttributeError(f"module 'T' (mlckit.script.tir) has no attribute {name!r}"
                         + did_you_mean(name, globals()))
