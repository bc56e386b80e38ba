"""The driver: ``build`` (TIR -> runtime Module), as ``tvm.driver``."""

from .build import BenchmarkResult, Module, build, register_backend

__all__ = ["BenchmarkResult", "Module", "build", "register_backend"]
