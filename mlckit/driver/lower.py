"""``tvm.lower``: a PrimFunc or IRModule through the TIR lowering pipeline, to read.

The result is TIR as TVM lowers it: no blocks, ``T.init()`` turned into an ``if``, buffers
allocated where they are used, … (see :mod:`mlckit.tir.pipeline` for the passes run).
It prints as TVMScript and, on the CPU, still builds and runs.

Example::

    lowered = tvm.lower(mm_relu)
    print(lowered.script())
"""

from __future__ import annotations

from mlckit.error import TVMTypeError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import Pass
from mlckit.tir.function import PrimFunc
from mlckit.tir.pipeline import get_tir_pipeline

__all__ = ["lower"]


def lower(inp, name: str = "main", tir_pipeline="default") -> IRModule:
    """``inp`` (a PrimFunc or an IRModule of PrimFuncs) lowered by the TIR pipeline
    ``tir_pipeline`` (a name of ``tir.get_tir_pipeline`` or a Pass); a PrimFunc is named
    by its ``global_symbol``, else ``name``.

    >>> import mlckit as tvm
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def total(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
    ...     for k in range(4):
    ...         with T.block("S"):
    ...             vk = T.axis.reduce(4, k)
    ...             with T.init():
    ...                 s[0] = T.float32(0)
    ...             s[0] = s[0] + a[vk]
    >>> print(tvm.lower(total)["total"].script())
    # from tvm.script import tir as T
    <BLANKLINE>
    @T.prim_func
    def total(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
        for k in range(4):
            if k == 0:
                s[0] = T.float32(0.0)
            s[0] = s[0] + a[k]
    """
    if isinstance(inp, PrimFunc):
        symbol = (inp.attrs or {}).get("global_symbol", name)
        mod = IRModule({str(symbol): inp})
    elif isinstance(inp, IRModule):
        mod = inp
    else:
        raise TVMTypeError(f"tvm.lower expects a tir.PrimFunc or an IRModule, got "
                           f"{type(inp).__name__} (a te schedule? make a PrimFunc with "
                           "te.create_prim_func first)")
    pipeline = tir_pipeline if isinstance(tir_pipeline, Pass) else get_tir_pipeline(tir_pipeline)
    return pipeline(mod)
