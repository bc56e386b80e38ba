"""Expression printing of the Python code generators: TIR expressions -> Python text.

A mixin of the generator (``codegen._Generator``): it reads the generator's names
(``self.names``) and the flavour.
Each method returns the text and its Python precedence, so parentheses appear only where
needed: ``(i_0 * 32 + i_1) // 4``.

Example::

    # inside the generator
    self.expr_text(BufferLoad(A, [i]) * FloatImm("float32", 0.5))   # "A[i] * np.float32(0.5)"
"""

from __future__ import annotations

from mlckit.tir import dtype as dt
from mlckit.tir.buffer import Buffer
from mlckit.tir.expr import (
    And,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Not,
    Or,
    PrimExpr,
    Select,
    StringImm,
    Var,
)

from .codegen_common import (
    _BINOPS,
    _CMPOPS,
    _NP_BINARY,
    _NP_UNARY,
    EXTERN_INTRINSICS,
    HALF_HELPERS,
    P_AND,
    P_ATOM,
    P_CMP,
    P_COND,
    P_MUL,
    P_NOT,
    P_OR,
    P_UNARY,
    CodegenError,
    float_literal,
    np_scalar,
)


class ExprWriter:
    """Mixin: TIR expressions as Python source (see the module docstring)."""

    # -- expressions -------------------------------------------------------------------------
    def buffer_access(self, buf: Buffer, indices, store: bool = False) -> str:
        if id(buf) in self.scalars:
            return self.scalar_access(buf, indices)
        shaped = self.param_view_access(buf, indices)  # a flat view in its owner's shape
        if shaped is not None:
            return shaped
        name = self.name_of(buf)
        if not indices:
            return f"{name}[()]"
        if self.lane_names is not None and not self.flavour.numpy_vectors:
            return f"{name}[{', '.join(self.lane_index(i, name, d) for d, i in enumerate(indices))}]"
        return f"{name}[{', '.join(self.vector_index(i, store) for i in indices)}]"

    def expr_text(self, e: PrimExpr, store: bool = False) -> str:
        return self.expr(e, 0, weak="store" if store else None)

    def expr(self, e: PrimExpr, min_prec: int, weak=None) -> str:
        text, prec = self.expr_prec(e, weak)
        return f"({text})" if prec < min_prec else text

    def fconst(self, value: float, dtype: str, weak) -> tuple[str, int]:
        """A float constant: a bare literal where it cannot change the computation's dtype
        (stored directly, or in lnumpy beside a non-constant NumPy scalar), else typed."""
        lit = float_literal(value)
        bare = dtype == "float64" or weak == "store" or (
            weak == "sibling" and not self.flavour.typed_float_consts
        )
        if bare:
            return lit, (P_UNARY if lit.startswith("-") else P_ATOM)
        return f"{np_scalar(dtype)}({lit})", P_ATOM

    def expr_prec(self, e, weak=None) -> tuple[str, int]:  # noqa: C901 - one dispatch
        if dt.lanes(e.dtype) > 1:  # a vector (Ramp, Broadcast, float32x4): codegen_vector
            text = self.vector_prec(e, weak)
            if text is not None:
                return text
        if isinstance(e, IntImm):
            if e.dtype == "bool":
                return ("True" if e.value else "False"), P_ATOM
            if e.dtype in ("int32", "int64") or weak:
                return str(e.value), (P_UNARY if e.value < 0 else P_ATOM)
            return f"{np_scalar(e.dtype)}({e.value})", P_ATOM
        if isinstance(e, FloatImm):
            return self.fconst(e.value, e.dtype, weak)
        if isinstance(e, StringImm):
            return repr(e.value), P_ATOM
        if isinstance(e, Var):
            return self.name_of(e), P_ATOM
        if isinstance(e, BufferLoad):
            return self.buffer_access(e.buffer, e.indices), P_ATOM
        cls = type(e)
        if cls in _BINOPS:
            op, prec = _BINOPS[cls]
            wa, wb = _weak_pair(e.a, e.b)
            return f"{self.expr(e.a, prec, wa)} {op} {self.expr(e.b, prec + 1, wb)}", prec
        if cls in (Div, FloorDiv, Mod, FloorMod):
            wa, wb = _weak_pair(e.a, e.b)
            is_int = not dt.is_float(e.dtype)
            if cls is Div:
                if is_int:
                    self.helpers.add("truncdiv")
                    return f"truncdiv({self.expr(e.a, 0)}, {self.expr(e.b, 0)})", P_ATOM
                return f"{self.expr(e.a, P_MUL, wa)} / {self.expr(e.b, P_MUL + 1, wb)}", P_MUL
            if cls is Mod:
                if is_int:
                    self.helpers.add("truncmod")
                    return f"truncmod({self.expr(e.a, 0)}, {self.expr(e.b, 0)})", P_ATOM
                return f"np.fmod({self.expr(e.a, 0)}, {self.expr(e.b, 0)})", P_ATOM
            op = "//" if cls is FloorDiv else "%"
            return f"{self.expr(e.a, P_MUL, wa)} {op} {self.expr(e.b, P_MUL + 1, wb)}", P_MUL
        if cls in (Min, Max):
            wa, wb = _weak_pair(e.a, e.b)
            fn = "min" if cls is Min else "max"
            return f"{fn}({self.expr(e.a, 0, wa)}, {self.expr(e.b, 0, wb)})", P_ATOM
        if cls in _CMPOPS:
            wa, wb = _weak_pair(e.a, e.b)
            return (f"{self.expr(e.a, P_CMP + 1, wa)} {_CMPOPS[cls]} {self.expr(e.b, P_CMP + 1, wb)}",
                    P_CMP)
        if cls is And:
            return f"{self.expr(e.a, P_AND)} and {self.expr(e.b, P_AND + 1)}", P_AND
        if cls is Or:
            return f"{self.expr(e.a, P_OR)} or {self.expr(e.b, P_OR + 1)}", P_OR
        if cls is Not:
            return f"not {self.expr(e.a, P_NOT)}", P_NOT
        if cls is Select:
            return self.select(e.condition, e.true_value, e.false_value, weak)
        if cls is Cast:
            return self.cast(e)
        if cls is Let:
            value = self.expr_text(e.value)
            name = self.bind(e.var, e.var.name_hint, e.var.dtype)
            self.pending.append(f"{name} = {value}")
            return self.expr_prec(e.body, weak)
        if cls is Call:
            return self.call(e, weak)
        raise CodegenError(f"{self.name}: TIR expression {cls.__name__} is not supported")

    def select(self, cond, t, f, weak) -> tuple[str, int]:
        return (f"({self.expr(t, P_COND + 1, weak)} if {self.expr(cond, P_COND + 1)} "
                f"else {self.expr(f, P_COND, weak)})", P_ATOM)

    def cast(self, e: Cast) -> tuple[str, int]:
        if e.value.dtype == e.dtype:
            return self.expr_prec(e.value)
        if (
            e.dtype in ("int32", "int64")
            and e.value.dtype in ("int32", "int64")
            and not has_load(e.value)
        ):
            # index arithmetic on loop variables: Python / Numba integers are wide enough
            return self.expr_prec(e.value)
        return f"{np_scalar(e.dtype)}({self.expr(e.value, 0)})", P_ATOM

    def call(self, e: Call, weak) -> tuple[str, int]:
        op = getattr(e.op, "name", str(e.op))
        short = op[4:] if op.startswith("tir.") else op
        args = e.args
        if short == "if_then_else":
            return self.select(args[0], args[1], args[2], weak)
        if short in _NP_UNARY:
            return f"{_NP_UNARY[short]}({self.expr(args[0], 0)})", P_ATOM
        if short in _NP_BINARY:
            return f"{_NP_BINARY[short]}({self.expr(args[0], 0)}, {self.expr(args[1], 0)})", P_ATOM
        # a vector call's constants are its element's: NumPy broadcasts them over the lanes
        one = self.fconst(1.0, dt.element_of(e.dtype), False)[0] if dt.is_float(e.dtype) else "1"
        if short == "rsqrt":
            return f"{one} / np.sqrt({self.expr(args[0], 0)})", P_MUL
        if short == "sigmoid":
            return f"{one} / ({one} + np.exp(-{self.expr(args[0], P_UNARY)}))", P_MUL
        if short == "exp10":
            ten = self.fconst(10.0, dt.element_of(e.dtype), False)[0]
            return f"np.power({ten}, {self.expr(args[0], 0)})", P_ATOM
        if short in HALF_HELPERS:  # float16 stored as bits (tir.transform.LegalizeHalf)
            self.helpers.add(short)
            self.uses_math = True  # float_to_half rounds with math.frexp
            return f"{short}({self.expr(args[0], 0)})", P_ATOM
        if short == "erf":
            self.uses_math = True
            inner = f"math.erf({self.expr(args[0], 0)})"
            if e.dtype != "float64":
                return f"{np_scalar(e.dtype)}({inner})", P_ATOM
            return inner, P_ATOM
        if short in EXTERN_INTRINSICS:
            return self.extern_expr(e, short)
        raise CodegenError(
            f"{self.name}: the intrinsic {op!r} is not supported by the {self.flavour.name} backend"
        )


def _weak_pair(a, b) -> tuple:
    """A constant operand may be a bare literal when the other operand is not constant."""
    ca = isinstance(a, (IntImm, FloatImm))
    cb = isinstance(b, (IntImm, FloatImm))
    return ("sibling" if ca and not cb else None), ("sibling" if cb and not ca else None)


def has_load(e) -> bool:
    """Whether the expression reads a buffer."""
    if isinstance(e, BufferLoad):
        return True
    if isinstance(e, PrimExpr):
        for name in e.field_names():
            v = getattr(e, name)
            if isinstance(v, PrimExpr) and has_load(v):
                return True
            if isinstance(v, list) and any(has_load(x) for x in v):
                return True
    return False

