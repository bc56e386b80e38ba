"""The ``I`` namespace of TVMScript: ``from mlckit.script import ir as I``.

``@I.ir_module`` parses a class whose methods are ``@T.prim_func`` / ``@R.function``
definitions into an IRModule; ``with I.ir_module():`` is the IRBuilder frame of a module.
"""

from __future__ import annotations

from typing import Any

from mlckit.error import TVMTypeError
from mlckit.script.ir_builder.ir.frame import IRModuleFrame
from mlckit.script.ir_builder.ir.ir import (  # noqa: F401
    decl_function,
    def_function,
    module_attrs,
    module_global_infos,
)
from mlckit.tir.expr import RangeByBounds as Range  # noqa: F401 - I.Range(begin, end), as printed

from . import parser as _parser  # noqa: F401 - registers the dialect handlers

dispatch_token = "ir"


class _ModuleSpec(IRModuleFrame):
    """What ``I.ir_module(...)`` returns: a class decorator and an IRBuilder frame."""

    dispatch_token = "ir"

    def __init__(self, check_well_formed: bool = True):
        super().__init__()
        self.decorator_kwargs = {"check_well_formed": check_well_formed}

    def __call__(self, cls):
        return _decorate(cls)


def _decorate(cls):
    import inspect

    from mlckit.script.parser.entry import _run, capture_env, default_vars
    from mlckit.script.parser.source import Source

    if not inspect.isclass(cls):
        raise TVMTypeError(f"@I.ir_module decorates a class, got {cls!r}")
    env = default_vars()
    env.update(capture_env(2))
    return _run(Source.from_object(cls), env)


def ir_module(mod=None, *, check_well_formed: bool = True) -> Any:
    """``@I.ir_module`` on a class: parse it into an IRModule.

    Example::

        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                return x

    ``I.ir_module()`` without a class is the IRBuilder frame (``with I.ir_module(): ...``).
    """
    if mod is None:
        return _ModuleSpec(check_well_formed)
    return _decorate(mod)


ir_module.dispatch_token = "ir"
ir_module.decorator_kwargs = {"check_well_formed": True}
