"""Broadcasting binary operators (TVM's ``tvm.relax.op`` binary family).

Arithmetic ``add, subtract, multiply, divide, floor_divide, power, maximum, minimum, mod,
floor_mod`` and comparisons ``equal, not_equal, less, less_equal, greater, greater_equal``
(bool results).  Each is one entry: ``_binary(name, topi_function, ...)`` registers the
constructor ``relax.op.<name>(x1, x2)``, NumPy broadcasting inference (symbolic dims: ``n``
against ``1`` is ``n``; ``n`` against ``m`` gives a result of unknown shape, known rank, as
TVM) and the generic lowering through ``topi.<name>`` (a scalar constant argument is
inlined into the PrimFunc, as TVM does).

Example::

    lv = bb.emit(relax.op.add(x, y))            # x: (4, 1), y: (3,)  ->  (4, 3)
    lv = R.less(x, y)                            # R.Tensor((4, 3), dtype="bool")
"""

from __future__ import annotations

from mlckit import topi

from ..expr import Call, Expr
from .op_common import as_expr, infer_broadcast, scalar_const
from .op_def import RelaxOperator, def_op


def _lower_binary(te_func):
    """The generic lowering: ``bb.call_te(te_func, x1, x2)``, with a scalar constant (``x2``
    first, as TVM) inlined."""

    def lower(bb, call: Call):
        arg0 = call.args[0]
        arg1 = scalar_const(call.args[1])
        if isinstance(arg1, Expr):
            arg0 = scalar_const(arg0)
        return bb.call_te(te_func, arg0, arg1)

    lower.__name__ = f"call_te_{te_func.__name__}"
    return lower


def _binary(name: str, te_func, formula: str, comparison: bool = False) -> RelaxOperator:
    full = f"relax.{name}"

    def construct(x1, x2) -> Call:
        return Call(operator.op, [as_expr(x1, full, "x1"), as_expr(x2, full, "x2")])

    construct.__name__ = construct.__qualname__ = name
    result = "bool " if comparison else ""
    construct.__doc__ = (f"``{formula}`` element-wise, with NumPy broadcasting (a {result}"
                         f"tensor; TVM's ``relax.op.{name}``).\n\n"
                         f"Example::\n\n    lv = R.{name}(x, y)\n")
    operator = def_op(full, arguments=("x1", "x2"))(construct)
    operator.infer(lambda call: infer_broadcast(call, "bool" if comparison else None))
    operator.legalize(_lower_binary(te_func))
    return operator


# -- arithmetic -------------------------------------------------------------------------------------
add = _binary("add", topi.add, "x1 + x2")
subtract = _binary("subtract", topi.subtract, "x1 - x2")
multiply = _binary("multiply", topi.multiply, "x1 * x2")
divide = _binary("divide", topi.divide, "x1 / x2")
floor_divide = _binary("floor_divide", topi.floor_divide, "floor(x1 / x2)")
power = _binary("power", topi.power, "x1 ** x2")
maximum = _binary("maximum", topi.maximum, "max(x1, x2)")
minimum = _binary("minimum", topi.minimum, "min(x1, x2)")
mod = _binary("mod", topi.mod, "x1 % x2 (truncated)")
floor_mod = _binary("floor_mod", topi.floor_mod, "x1 - floor(x1 / x2) * x2")

# -- comparisons ------------------------------------------------------------------------------------
equal = _binary("equal", topi.equal, "x1 == x2", comparison=True)
not_equal = _binary("not_equal", topi.not_equal, "x1 != x2", comparison=True)
less = _binary("less", topi.less, "x1 < x2", comparison=True)
less_equal = _binary("less_equal", topi.less_equal, "x1 <= x2", comparison=True)
greater = _binary("greater", topi.greater, "x1 > x2", comparison=True)
greater_equal = _binary("greater_equal", topi.greater_equal, "x1 >= x2", comparison=True)

__all__ = ["add", "divide", "equal", "floor_divide", "floor_mod", "greater", "greater_equal",
           "less", "less_equal", "maximum", "minimum", "mod", "multiply", "not_equal", "power",
           "subtract"]
