"""TVMScript for mlckit: ``from mlckit.script import ir as I, tir as T, relax as R``.

TVM's other spellings work too: ``@tvm.script.ir_module`` (the same as ``@I.ir_module``),
``tvm.script.from_source(text)``, ``from tvm.script.parser import tir as T`` and the newer
``tvm.script.tirx`` (TVM >= 0.24's ``T``: ``@T.prim_func(s_tir=True)``, ``T.sblock``).  The
dialect modules are imported on first use, so ``import mlckit`` stays light.
"""

from __future__ import annotations

import importlib

__all__ = ["from_source", "ir", "ir_module", "parse", "parser", "relax", "tir", "tirx"]



def __getattr__(name: str):
    if name in ("ir", "tir", "relax", "tirx", "parser"):
        return importlib.import_module(f"mlckit.script.{name}")
    if name in ("from_source", "parse"):
        from .parser import entry

        return getattr(entry, name)
    if name == "ir_module":
        return importlib.import_module("mlckit.script.ir").ir_module
    raise AttributeError(f"module 'mlckit.script' has no attribute {name!r}")
