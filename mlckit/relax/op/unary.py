"""Element-wise unary operators (TVM's ``tvm.relax.op`` unary family).

Each is one entry ``_unary(name, topi_function, require_float)``: the constructor
``relax.op.<name>(x)``, the inference (the input's struct info; ``require_float`` refuses an
input whose dtype is known and not a float, as TVM), and the generic lowering
``bb.call_te(topi.<name>, x)`` into a PrimFunc named ``tir_<name>`` (TVM's prefix, which
keeps the names apart from libc's).  ``isfinite``/``isinf``/``isnan`` return bool tensors;
``clip(x, min, max)`` takes two scalars.

Example::

    lv = R.exp(x)                     # R.Tensor((n, 4), dtype="float32")
    lv = R.clip(x, 0.0, 6.0)
"""

from __future__ import annotations

from mlckit import topi
from mlckit.error import TVMTypeError

from ..expr import Call, PrimValue
from .op_common import as_expr, check_num_args, fail, infer_unary, tensor_arg
from .op_def import RelaxOperator, def_op


def _unary(name: str, te_func, require_float: bool, what: str,
           check: bool = False) -> RelaxOperator:
    full = f"relax.{name}"

    def construct(x) -> Call:
        return Call(operator.op, [as_expr(x, full, "x")])

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"{what} of each element of ``x`` (TVM's ``relax.op.{name}``)."
                         f"\n\nExample::\n\n    lv = R.{name}(x)\n")
    operator = def_op(full, arguments=("x",))(construct)
    operator.infer(lambda call: infer_unary(call, require_float, "bool" if check else None))
    hint = f"tir_{name}"
    operator.legalize(lambda bb, call: bb.call_te(te_func, call.args[0], primfunc_name_hint=hint))
    return operator


def _square(x):
    return topi.multiply(x, x)  # TVM's ``lambda x: x * x`` on a te.Tensor


abs = _unary("abs", topi.abs, False, "The absolute value")  # noqa: A001 - TVM's name
acos = _unary("acos", topi.acos, True, "The arc cosine")
asin = _unary("asin", topi.asin, True, "The arc sine")
atan = _unary("atan", topi.atan, True, "The arc tangent")
ceil = _unary("ceil", topi.ceil, False, "The ceiling")
cos = _unary("cos", topi.cos, True, "The cosine")
cosh = _unary("cosh", topi.cosh, True, "The hyperbolic cosine")
exp = _unary("exp", topi.exp, True, "The exponential")
floor = _unary("floor", topi.floor, False, "The floor")
log = _unary("log", topi.log, True, "The natural logarithm")
negative = _unary("negative", topi.negative, False, "The negation")
round = _unary("round", topi.round, False, "The nearest integer")  # noqa: A001 - TVM's name
rsqrt = _unary("rsqrt", topi.rsqrt, True, "The reciprocal square root")
sigmoid = _unary("sigmoid", topi.sigmoid, True, "The logistic sigmoid")
sign = _unary("sign", topi.sign, False, "The sign (-1, 0 or 1)")
sin = _unary("sin", topi.sin, True, "The sine")
sinh = _unary("sinh", topi.sinh, True, "The hyperbolic sine")
square = _unary("square", _square, False, "The square")
sqrt = _unary("sqrt", topi.sqrt, True, "The square root")
tan = _unary("tan", topi.tan, True, "The tangent")
tanh = _unary("tanh", topi.tanh, True, "The hyperbolic tangent")
trunc = _unary("trunc", topi.trunc, False, "The integer part")
isfinite = _unary("isfinite", topi.isfinite, False, "Whether finite", check=True)
isinf = _unary("isinf", topi.isinf, False, "Whether infinite", check=True)
isnan = _unary("isnan", topi.isnan, False, "Whether NaN", check=True)


# -- erf: float16 is computed in float32 (as TVM's legalization) ------------------------------------
@def_op("relax.erf", arguments=("x",))
def erf(x) -> Call:
    """The Gauss error function of each element (TVM's ``relax.op.erf``).

    Example::

        lv = R.erf(x)
    """
    return Call(erf.op, [as_expr(x, "relax.erf", "x")])


erf.infer(lambda call: infer_unary(call, require_float=True))


@erf.legalize
def _lower_erf(bb, call: Call):
    def te_erf(x):
        if x.dtype == "float16":
            return topi.cast(topi.erf(topi.cast(x, "float32")), "float16")
        return topi.erf(x)

    return bb.call_te(te_erf, call.args[0], primfunc_name_hint="erf")


# -- clip: two scalar bounds --------------------------------------------------------------------------
@def_op("relax.clip", arguments=("x", "min", "max"))
def clip(x, min, max) -> Call:  # noqa: A002 - TVM's names
    """Each element of ``x`` limited to ``[min, max]`` (TVM's ``relax.op.clip``); the
    bounds are scalars (Python numbers or ``R.prim_value``).

    Example::

        lv = R.clip(x, 0.0, 6.0)          # relu6
    """
    args = [as_expr(x, "relax.clip", "x"), as_expr(min, "relax.clip", "min"),
            as_expr(max, "relax.clip", "max")]
    for name, arg in zip(("min", "max"), args[1:]):
        if not isinstance(arg, PrimValue):
            raise TVMTypeError(f"relax.clip: {name} must be a scalar (a number or "
                               f"R.prim_value), got {type(arg).__name__}")
    return Call(clip.op, args)


@clip.infer
def _infer_clip(call: Call):
    check_num_args(call)
    for i in (1, 2):
        if not isinstance(call.args[i], PrimValue):
            fail(call, f"argument {('min', 'max')[i - 1]} must be a PrimValue")
    return tensor_arg(call, 0)


clip.legalize(lambda bb, call: bb.call_te(topi.clip, *call.args, primfunc_name_hint="tir_clip"))

__all__ = ["abs", "acos", "asin", "atan", "ceil", "clip", "cos", "cosh", "erf", "exp", "floor",
           "isfinite", "isinf", "isnan", "log", "negative", "round", "rsqrt", "sigmoid", "sign",
           "sin", "sinh", "sqrt", "square", "tan", "tanh", "trunc"]
