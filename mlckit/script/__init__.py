"""TVMScript for mlckit: ``from mlckit.script import ir as I, tir as T, relax as R``.

The dialect modules are imported on first use, so ``import mlckit`` stays light.
"""

from __future__ import annotations

import importlib

__all__ = ["from_source", "parse", "ir", "tir", "relax"]


def __getattr__(name: str):
    if name in ("ir", "tir", "relax"):
        return importlib.import_module(f"mlckit.script.{name}")
    if name in ("from_source", "parse"):
        from .parser import entry

        return getattr(entry, name)
    raise AttributeError(f"module 'mlckit.script' has no attribute {name!r}")
