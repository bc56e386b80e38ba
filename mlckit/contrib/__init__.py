"""Helpers around the compiler, with TVM's names: ``utils.tempdir``, ``clang.create_llvm``."""

from . import clang, utils

__all__ = ["clang", "utils"]
