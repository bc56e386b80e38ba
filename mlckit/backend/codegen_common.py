"""What the Python code generators share: the flavours, names, literals and precedence.

``codegen.py`` walks statements, ``codegen_expr.py`` prints expressions,
``codegen_local.py`` keeps small "local" buffers in scalar variables,
``codegen_vector.py`` writes lowered TIR's vector stores lane by lane and
``codegen_flat.py`` prints flat views of the parameters in their own shape where that
helps LLVM; this module holds the data they all read.

Example::

    from mlckit.backend.codegen_common import NUMBA
    NUMBA.prange          # True: parallel loops become prange
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass

from mlckit.error import TVMNotImplementedError
from mlckit.tir import dtype as dt
from mlckit.tir.expr import EQ, GE, GT, LE, LT, NE, Add, BufferLoad, Call, Let, Mul, PrimExpr, Sub
from mlckit.tir.expr_vector import lanes_of
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt_functor import post_order_visit


class CodegenError(TVMNotImplementedError):
    """The PrimFunc uses a construct this backend cannot turn into Python."""


@dataclass(frozen=True)
class Flavour:
    """How a backend wants its Python written."""

    name: str
    typed_float_consts: bool = False  # always np.float32(c) (numba) vs. only where needed
    prange: bool = False  # parallel loops -> prange
    njit_helpers: bool = False  # helper functions decorated with @njit(cache=True)
    # a one-element "local" buffer (a register, what ScalarizeLocalBuffers and
    # PromoteInvariantElements make) is printed as a Python scalar: LLVM keeps it in a
    # register, where a Numba array lives in memory
    scalar_registers: bool = False
    # lowered TIR's flat views of constant-shape parameters are printed in the parameter's
    # own shape in vector lanes and prange bodies (C[C_i, C_j + 1]): codegen_flat
    flat_params: bool = False
    # ... and everywhere the split of the flat index is exact, the leading dimension may be
    # symbolic (numba_cuda: a reshape in a kernel is a call and a stack frame per thread; on
    # the CPU the flat index runs faster: LLVM sees constant strides)
    nd_param_views: bool = False
    # a parameter's whole flat view printed as ``flat_view(A)`` (numba_cpu.views), not
    # ``A.reshape((16384,))``: the same array, fewer instructions for Numba to compile
    flat_view: bool = False
    # vector TIR (T.Ramp / T.Broadcast after VectorizeLoop) as whole NumPy arrays and slices;
    # otherwise lane by lane (codegen_vector)
    numpy_vectors: bool = False
    # ... or as LLVM vector values where the store is arithmetic on ramps and broadcasts
    # (``C_1[ramp(i, 1, 16)] = ...``, numba_cpu.vectors); lane by lane otherwise
    llvm_vectors: bool = False
    # np.empty's dtype as NumPy's type (np.float32), not its name (lnumpy's, as the course
    # writes it): Numba then compiles np.empty once for every size (np_dtype_text)
    dtype_types: bool = False
    # a buffer the kernel allocates as a workspace, ``workspace_alloc`` where it is
    # allocated and ``workspace_free`` where its scope ends (numba_cpu.workspace, TVM's
    # TVMBackendAllocWorkspace), not ``np.empty``: the kernel then needs no Numba runtime
    # (kernels with parallel loops keep ``np.empty``, which Numba hoists out of them)
    workspaces: bool = False


LNUMPY = Flavour("lnumpy", numpy_vectors=True)
NUMBA = Flavour("numba", typed_float_consts=True, prange=True, njit_helpers=True,
                scalar_registers=True, flat_params=True, flat_view=True, llvm_vectors=True,
                dtype_types=True, workspaces=True)



def is_index_arithmetic(e) -> bool:
    """Whether ``e`` is integer arithmetic on variables and constants (no loads, no calls)."""
    pure = True

    def check(x):
        nonlocal pure
        if isinstance(x, (BufferLoad, Call, Let)) or (isinstance(x, PrimExpr) and lanes_of(x) > 1):
            pure = False

    post_order_visit(e, check)
    return pure and dt.is_int(e.dtype)



# -- helpers emitted into the generated source when used ----------------------------------
HELPERS = {
    "truncdiv": (
        "def truncdiv(a, b):\n"
        '    """Integer division rounding toward zero (TIR\'s Div on integers)."""\n'
        "    q = abs(a) // abs(b)\n"
        "    return q if (a >= 0) == (b >= 0) else -q\n"
    ),
    "truncmod": (
        "def truncmod(a, b):\n"
        '    """Remainder with the sign of a (TIR\'s Mod on integers)."""\n'
        "    return a - truncdiv(a, b) * b\n"
    ),
    "address": (
        "def address(a, offset):\n"
        '    """The address of element ``offset`` of the memory of ``a`` (T.tvm_access_ptr)."""\n'
        "    a = np.asarray(a)\n"
        "    return int(a.ctypes.data) + int(offset) * a.itemsize\n"
    ),
    # float16 on a CPU (tir.transform.LegalizeHalf): stored as uint16 bits, computed in float32
    "half_to_float": (
        "def half_to_float(h):\n"
        '    """The float32 that the float16 bits h (a uint16) encode."""\n'
        "    bits = np.int32(h)\n"
        "    exponent = (bits >> 10) & 0x1F\n"
        "    mantissa = bits & 0x3FF\n"
        "    if exponent == 0x1F:\n"
        "        value = np.inf if mantissa == 0 else np.nan\n"
        "    elif exponent == 0:  # zero or subnormal: mantissa * 2**-24\n"
        "        value = mantissa * 5.9604644775390625e-08\n"
        "    else:\n"
        "        value = (1024 + mantissa) * 2.0 ** (exponent - 25)\n"
        "    return np.float32(-value if bits & 0x8000 else value)\n"
    ),
    "float_to_half": (
        "def float_to_half(x):\n"
        '    """The bits (a uint16) of the float16 nearest to x, ties to even, as a cast."""\n'
        "    v = float(x)\n"
        "    sign = 0x8000 if math.copysign(1.0, v) < 0.0 else 0\n"
        "    a = abs(v)\n"
        "    if a != a:  # NaN\n"
        "        return np.uint16(0x7E00)\n"
        "    if a >= 65520.0:  # rounds to infinity\n"
        "        return np.uint16(sign | 0x7C00)\n"
        "    if a < 6.103515625e-05:  # below 2**-14: subnormal, in units of 2**-24\n"
        "        scaled, base = a * 16777216.0, 0\n"
        "    else:  # a = m * 2**e, 0.5 <= m < 1: exponent e + 14, mantissa 2048 m - 1024\n"
        "        m, e = math.frexp(a)\n"
        "        scaled, base = m * 2048.0, ((e + 14) << 10) - 1024\n"
        "    bits = int(math.floor(scaled))\n"
        "    rest = scaled - bits\n"
        "    if rest > 0.5 or (rest == 0.5 and bits % 2 == 1):\n"
        "        bits += 1\n"
        "    return np.uint16(sign | (base + bits))\n"
    ),
}
HELPER_DEPS = {"truncmod": ("truncdiv",)}
HALF_HELPERS = ("half_to_float", "float_to_half")

RESERVED = set(keyword.kwlist) | {
    "np", "math", "prange", "njit", "range", "min", "max", "abs", "int", "float", "bool",
    "len", "print", "None", "True", "False", "truncdiv", "truncmod", "AssertionError",
    "address", "call_packed", "objmode", "half_to_float", "float_to_half",
    "workspace_alloc", "workspace_free",
}

# intrinsics of extern calls, written by codegen_extern
EXTERN_INTRINSICS = ("call_extern", "call_pure_extern", "tvm_access_ptr", "address_of",
                     "type_annotation", "tvm_call_packed")

# Python operator precedence (higher binds tighter).
P_COND, P_OR, P_AND, P_NOT, P_CMP, P_ADD, P_MUL, P_UNARY, P_ATOM = 0, 1, 2, 3, 4, 6, 7, 8, 10

_BINOPS = {Add: ("+", P_ADD), Sub: ("-", P_ADD), Mul: ("*", P_MUL)}
_CMPOPS = {EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">="}

# Unary intrinsics that are a NumPy ufunc of the same or another name.
_NP_UNARY = {
    "exp": "np.exp", "exp2": "np.exp2", "log": "np.log", "log2": "np.log2",
    "log10": "np.log10", "log1p": "np.log1p", "sqrt": "np.sqrt", "tanh": "np.tanh",
    "fabs": "np.abs", "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc",
    "round": "np.rint", "nearbyint": "np.rint", "sin": "np.sin", "cos": "np.cos",
    "tan": "np.tan", "asin": "np.arcsin", "acos": "np.arccos", "atan": "np.arctan",
    "sinh": "np.sinh", "cosh": "np.cosh", "isnan": "np.isnan", "isinf": "np.isinf",
    "isfinite": "np.isfinite",
}
_NP_BINARY = {
    "pow": "np.power", "atan2": "np.arctan2", "fmod": "np.fmod", "hypot": "np.hypot",
    "copysign": "np.copysign", "nextafter": "np.nextafter",
}


def func_name(func: PrimFunc, default: str = "main") -> str:
    """The Python name of a PrimFunc: its ``global_symbol``, else ``default``."""
    name = func.attrs.get("global_symbol") if func.attrs else None
    return _sanitize(str(name or default))


def _sanitize(name: str) -> str:
    name = re.sub(r"\W", "_", name) or "v"
    if name[0].isdigit():
        name = "_" + name
    return name


def np_dtype_text(dtype: str, as_type: bool = False) -> str:
    """The ``dtype=`` of an ``np.empty`` in generated code: its name (``"float32"``, as the
    course writes it) or, ``as_type``, NumPy's type (``np.float32``).  Why the type for
    Numba: it types ``np.empty((1024,), dtype="float32")`` with the shape as a constant and
    compiles NumPy's ``empty`` again for every size (40-150 ms each: most tuning candidates
    have a buffer of their own size); with ``np.float32`` the shape is an integer, and one
    compile serves every size."""
    if as_type:
        return np_scalar(dtype)
    return '"bool"' if dtype == "bool" else f'"{dtype}"'


def np_scalar(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def float_literal(value: float) -> str:
    if math.isnan(value):
        return "np.nan"
    if math.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(float(value))


