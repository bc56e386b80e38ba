"""The TVMScript parser: a core walking Python's AST plus one handler module per dialect
(``ir_handlers``, ``tir_handlers``, ``relax_handlers``; "default" is in ``entry``).

As in TVM, ``mlckit.script.parser.{ir, tir, relax}`` are also the namespaces scripts use:
``from mlckit.script.parser import tir as T`` (and TVM >= 0.24's ``tirx``).
"""

import importlib

from . import entry, ir_handlers, tir_handlers  # relax_handlers: at first use (dispatch)
from .entry import from_source, parse

__all__ = ["entry", "from_source", "ir", "parse", "relax", "tir", "tirx"]


def __getattr__(name: str):
    if name in ("ir", "tir", "relax", "tirx"):  # the namespaces sit above the parser: found late
        return importlib.import_module(f"mlckit.script.{name}")
    raise AttributeError(f"module 'mlckit.script.parser' has no attribute {name!r}")
