"""The TVMScript parser: a core walking Python's AST plus one handler module per dialect."""

from . import entry  # noqa: F401 - registers the "default" dialect
from .entry import from_source, parse

# Dialect handlers register themselves on import.
from . import ir, relax, tir  # noqa: E402,F401,I001

__all__ = ["from_source", "parse"]
