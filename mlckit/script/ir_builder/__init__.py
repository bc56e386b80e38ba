"""The IRBuilder: frame-based construction of IR, used by the parser and usable directly.

    from mlckit.script.ir_builder import IRBuilder
    from mlckit.script import tir as T

    with IRBuilder() as ib:
        with T.prim_func():
            ...
    func = ib.get()
"""

from .base import IRBuilder, IRBuilderError, IRBuilderFrame

__all__ = ["IRBuilder", "IRBuilderError", "IRBuilderFrame"]
