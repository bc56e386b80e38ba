"""The TVMScript parser: a core walking Python's AST plus one handler module per dialect.

Importing the dialect modules registers their handlers ("default" is in ``entry``).
"""

from . import entry, ir, relax, tir
from .entry import from_source, parse

__all__ = ["entry", "from_source", "ir", "parse", "relax", "tir"]
