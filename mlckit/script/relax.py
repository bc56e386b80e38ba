"""The ``R`` namespace of TVMScript: ``from mlckit.script import relax as R``.

Decorators and struct-info annotations::

    @R.function
    def main(x: R.Tensor(("n", 784), "float32")) -> R.Tensor(("n", 10), "float32"): ...

and the IRBuilder API, usable directly (``with R.function(): R.arg(...)``), plus the Relax
intrinsics (``R.call_tir``, ``R.call_dps_packed``, ``R.call_packed``, ``R.print`` …).
Operators defined later in ``mlckit.relax.op`` (``R.add`` …) are found here too.
"""

from __future__ import annotations

import importlib
from typing import Any

from mlckit.relax.expr import ExternFunc, TupleGetItem  # noqa: F401 - R.TupleGetItem, R.ExternFunc
from mlckit.relax.op.base import (  # noqa: F401
    assert_op,
    call_dps_packed,
    call_packed,
    call_pure_packed,
    call_tir,
    null_value,
    print,
    shape_of,
)
from mlckit.script.ir_builder.relax.frame import FunctionFrame
from mlckit.script.ir_builder.relax.ir import (  # noqa: F401
    Else,
    If,
    Then,
    arg,
    const,
    dataflow,
    dtype,
    emit,
    emit_match_cast,
    emit_var_binding,
    func_attr,
    func_name,
    func_ret_struct_info,
    func_ret_value,
    match_cast,
    output,
    prim_value,
    shape,
    str,
    tuple,
)
from mlckit.script.ir_builder.relax.struct_info import (  # noqa: F401
    Callable,
    Object,
    Prim,
    Shape,
    Tensor,
    Tuple,
)

from . import parser as _parser  # noqa: F401 - registers the dialect handlers

dispatch_token = "relax"


class _FunctionSpec(FunctionFrame):
    """What ``R.function(...)`` returns: a decorator (``@R.function(pure=False)``) and, used
    in ``with``, an IRBuilder function frame (``with R.function(): ...``)."""

    dispatch_token = "relax"

    def __init__(self, pure: bool = True, private: bool = False, check_well_formed: bool = True):
        super().__init__(is_pure=pure, is_private=private)
        self.decorator_kwargs = {"pure": pure, "private": private,
                                 "check_well_formed": check_well_formed}

    def __call__(self, func):
        return _decorate(func)


def _decorate(func):
    from mlckit.script.parser.entry import _run, capture_env, default_vars, in_class_body
    from mlckit.script.parser.source import Source

    if in_class_body(2):  # inside @I.ir_module: the module parses the whole class
        func.__mlckit_token__ = "relax"
        return func
    env = default_vars()
    env.update(capture_env(2))
    return _run(Source.from_object(func), env)


def function(f=None, *, pure: bool = True, private: bool = False, check_well_formed: bool = True,
             is_pure: bool | None = None, is_private: bool | None = None) -> Any:
    """``@R.function`` / ``@R.function(pure=False, private=True)``: parse a Relax function.

    Without a function, ``R.function()`` is also the IRBuilder frame
    (``with R.function(): R.func_name("f"); x = R.arg("x", R.Tensor((4,), "float32")) …``);
    ``is_pure`` / ``is_private`` are TVM's IRBuilder spellings of ``pure`` / ``private``.
    """
    if is_pure is not None:
        pure = is_pure
    if is_private is not None:
        private = is_private
    if f is None:
        return _FunctionSpec(pure, private, check_well_formed)
    return _decorate(f)


function.dispatch_token = "relax"
function.decorator_kwargs = {"pure": True, "private": False, "check_well_formed": True}


def __getattr__(name: str):
    # Relax operators (R.add, R.matmul …) live in mlckit.relax.op, possibly added later.
    op = importlib.import_module("mlckit.relax.op")
    if hasattr(op, name):
        return getattr(op, name)
    from mlckit.error import did_you_mean

    raise AttributeError(f"module 'R' (mlckit.script.relax) has no attribute {name!r}"
                         + did_you_mean(name, __dir__()))


def __dir__() -> list[str]:
    """The namespace's own names and the operators (``R.add`` …), for completion and for
    "did you mean" suggestions."""
    op = importlib.import_module("mlckit.relax.op")
    return sorted(set(globals()) | {n for n in dir(op) if not n.startswith("_")})
