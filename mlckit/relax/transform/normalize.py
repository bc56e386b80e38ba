"""``Normalize``: bring Relax functions into normal form (as TVM's
``relax.transform.Normalize``).

Normal form (A-normal form) is what ``relax.BlockBuilder`` produces: every call argument is
a leaf (a variable, constant, shape …) or a tuple of leaves, nested calls get bindings of
their own, every expression has its struct info, function bodies and ``If`` branches are
sequences, empty blocks are dropped and neighbouring blocks of one kind merged.  IR built by
hand (``relax.Call(f, [relax.Call(g, [x])])``) may not be normalized; this pass fixes it.

Example::

    mod = relax.transform.Normalize()(mod)
"""

from __future__ import annotations

from mlckit.ir.transform import FunctionPass, PassInfo

from ..block_builder import BlockBuilder
from ..expr import Function


def normalize(func: Function) -> Function:
    """``func`` in normal form (a new function when anything changes).

    Example::

        f = normalize(relax.Function([x], relax.Call(gv, [relax.Call(gv2, [x])])))
    """
    return BlockBuilder().normalize(func)


def Normalize() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass normalizing every Relax function (opt_level 1, as TVM).

    Example::

        mod = Normalize()(mod)
    """
    return FunctionPass(lambda func, mod, ctx: normalize(func), PassInfo(1, "Normalize"))


__all__ = ["Normalize", "normalize"]
