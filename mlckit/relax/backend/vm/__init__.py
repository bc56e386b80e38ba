"""Relax → VM bytecode, as TVM's ``relax/backend/vm``: ``codegen(builder, lowered_mod)``
fills an ``ExecBuilder`` (``mlckit.runtime.vm``) with one bytecode function per Relax
function of a module lowered by ``relax.build``'s VM pipeline.

Example::

    from mlckit.runtime.vm import ExecBuilder
    eb = ExecBuilder(); codegen(eb, lowered_mod); ex = eb.get()
"""

from mlckit.ffi.registry import register_func

from .codegen_vm import VMCodegenError, codegen

register_func("relax.VMCodeGen", codegen, override=True)

__all__ = ["VMCodegenError", "codegen"]
