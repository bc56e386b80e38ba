"""``tvm_ffi.structural_equal`` / ``structural_hash``: the FFI layer's names for the IR's
structural comparison.

The comparison itself lives with the IR nodes (``mlckit.ir.structural``), which registers it
here as the global functions ``ffi.StructuralEqual`` / ``ffi.StructuralHash``: this lowest
layer only looks them up, so it imports nothing above it.

Example::

    import mlckit.ffi as tvm_ffi
    tvm_ffi.structural_equal(MyModule, ConciseModule)     # True
    tvm_ffi.structural_equal([1, 2, 3], [1, 2, 4])        # False
"""

from __future__ import annotations

from typing import Any

from .registry import get_global_func


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False,
                     skip_tensor_content: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` have the same structure, up to a consistent renaming of
    the variables they define (``map_free_vars``: free variables are matched on first use).

    ``skip_tensor_content`` is accepted for TVM's signature; mlckit compares constants by
    their values (no option skips them).

    >>> import mlckit.ffi as tvm_ffi
    >>> from mlckit import tir
    >>> x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    >>> tvm_ffi.structural_equal(x * 2, y * 2), tvm_ffi.structural_equal(x * 2, y * 2, map_free_vars=True)
    (False, True)
    """
    del skip_tensor_content
    return bool(get_global_func("ffi.StructuralEqual")(lhs, rhs, map_free_vars))


def structural_hash(value: Any, map_free_vars: bool = False,
                    skip_tensor_content: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`: equal values hash equal.

    >>> import mlckit.ffi as tvm_ffi
    >>> from mlckit import tir
    >>> x = tir.Var("x", "int32")
    >>> tvm_ffi.structural_hash(x * 2) == tvm_ffi.structural_hash(x * 2)
    True
    """
    del skip_tensor_content
    return int(get_global_func("ffi.StructuralHash")(value, map_free_vars))
