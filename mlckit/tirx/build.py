"""``tirx.build`` (TVM >= 0.24) and ``tir.build`` (TVM v0.23): compile the PrimFuncs of a
module for a target, with TVM's signature ``build(mod, target=None, pipeline="default")``.

The result is the runtime module of :func:`mlckit.build`: ``lib(a, b, c)`` calls the only
(or ``"main"``) function, ``lib["name"](...)`` any of them, and
``lib.time_evaluator("main", tvm.cpu())`` times one.

Example::

    lib = tvm.tirx.build(MyModule, target="llvm")
    lib(a_nd, b_nd, c_nd)
"""

from __future__ import annotations

from mlckit.driver.build import build as _build_funcs
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir.module import IRModule
from mlckit.ir.transform import Pass
from mlckit.runtime.module import Module
from mlckit.target import Target
from mlckit.tir.function import PrimFunc


def build(mod, target=None, pipeline="default") -> Module:
    """Compile ``mod`` (a PrimFunc or an IRModule of PrimFuncs) for ``target``.

    ``target``: a string (``"llvm"``, ``"cuda"``, a tag), a dict (``{"kind": "llvm"}``) or a
    Target; ``None`` means the target of the enclosing ``with Target(...)``, else ``"llvm"``.
    ``pipeline``: ``"default"`` or ``None`` (mlckit's backends lower TensorIR themselves), or
    a Pass run on the module first (e.g. a ``tvm.transform.Sequential`` of TIR passes).

    Example::

        lib = tvm.tir.build(sch.mod, target="llvm")
        lib(a_nd, b_nd, c_nd)
    """
    if isinstance(mod, PrimFunc):
        mod = IRModule({"main": mod})
    if not isinstance(mod, IRModule):
        raise TVMTypeError(f"tirx.build expects a PrimFunc or an IRModule, got "
                           f"{type(mod).__name__}")
    if target is None:
        target = Target.current() or "llvm"
    if isinstance(pipeline, Pass):
        mod = pipeline(mod)
    elif pipeline not in (None, "default"):
        raise TVMValueError(f"tirx.build: pipeline {pipeline!r} is not known; mlckit takes "
                            "\"default\", None or a Pass to run on the module first")
    return _build_funcs(mod, target)
