"""``AnnotateTIROpPattern``: give every PrimFunc its fusion pattern (as TVM's
``relax.transform.AnnotateTIROpPattern``).

Each PrimFunc gets the attribute ``op_pattern``: its ``OpPatternKind`` as an int (see
``mlckit.relax.analysis.tir_op_pattern_kind``). A PrimFunc that already has a non-zero
``op_pattern`` keeps it (a hand-written kernel can declare itself). ``FuseOps`` reads the
attribute; a PrimFunc without one is opaque to it.

Example::

    mod = relax.transform.AnnotateTIROpPattern()(mod)
    mod["dense"].attrs["op_pattern"]      # 4, kOutEWiseFusable
    mod["relu"].attrs["op_pattern"]       # 0, kElemWise
"""

from __future__ import annotations

from mlckit.ir.transform import FunctionPass, PassInfo
from mlckit.tir.function import PrimFunc

from ..analysis.tir_op_pattern_kind import analyze_op_pattern_kind


def annotate_op_pattern(func: PrimFunc) -> PrimFunc:
    """``func`` with its ``op_pattern`` attribute (unchanged when it has a non-zero one).

    Example::

        annotate_op_pattern(mod["relu"]).attrs["op_pattern"]     # 0
    """
    if func.attrs.get("op_pattern"):
        return func
    return func.with_attr("op_pattern", int(analyze_op_pattern_kind(func)))


def AnnotateTIROpPattern() -> FunctionPass:  # noqa: N802 - TVM's name
    """The pass annotating every PrimFunc of a module with ``op_pattern``.

    Example::

        mod = AnnotateTIROpPattern()(mod)
    """
    return FunctionPass(lambda func, mod, ctx: annotate_op_pattern(func),
                        PassInfo(0, "AnnotateTIROpPattern"), func_type=PrimFunc)


__all__ = ["AnnotateTIROpPattern", "annotate_op_pattern"]
