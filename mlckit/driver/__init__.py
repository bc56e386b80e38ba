"""The driver: ``build`` (TIR -> runtime Module) and ``compile`` (TIR or Relax), as ``tvm.driver``."""

from .build import BenchmarkResult, Executable, Module, build, compile, register_backend
from .lower import lower

__all__ = ["BenchmarkResult", "Executable", "Module", "build", "compile", "lower", "register_backend"]
