"""Tensor intrinsics: a computation's description paired with a faster implementation.

A ``TensorIntrin`` holds two PrimFuncs with the same buffer parameters:

- ``desc`` says *what* is computed, in ordinary TIR (a 16x16x16 matmul as three loops);
  ``sch.tensorize`` looks for a block that computes exactly this;
- ``impl`` says *how*: usually one ``T.call_extern`` of a micro-kernel or hardware
  instruction, reading and writing the same buffers.

Intrinsics live in a global table under a name (TVM's ``tir.TensorIntrin.register`` /
``tir.TensorIntrin.get``).

Example::

    TensorIntrin.register("tmm16", tmm16_desc, tmm16_impl)
    sch.tensorize(block, "tmm16")
"""

from __future__ import annotations

from mlckit.error import TVMTypeError, TVMValueError
from mlckit.tir.function import PrimFunc
from mlckit.tir.stmt import BlockRealize

_TABLE: dict[str, TensorIntrin] = {}


class TensorIntrin:
    """A tensor intrinsic: ``desc`` (the computation) and ``impl`` (its implementation).
    ``sch.tensorize`` replaces a block computing ``desc`` by ``impl``; register the pair
    under a name with :meth:`register`.

    >>> from mlckit import tir
    >>> from mlckit.script import tir as T
    >>> @T.prim_func
    ... def add4_desc(a: T.handle, b: T.handle):
    ...     A = T.match_buffer(a, (4,), "float32")
    ...     B = T.match_buffer(b, (4,), "float32")
    ...     with T.block("root"):
    ...         T.reads(A[0:4], B[0:4])
    ...         T.writes(B[0:4])
    ...         for i in range(4):
    ...             with T.block(""):
    ...                 vi = T.axis.spatial(4, i)
    ...                 B[vi] = B[vi] + A[vi]
    >>> @T.prim_func
    ... def add4_impl(a: T.handle, b: T.handle):
    ...     A = T.match_buffer(a, (4,), "float32")
    ...     B = T.match_buffer(b, (4,), "float32")
    ...     with T.block("root"):
    ...         T.reads(A[0:4], B[0:4])
    ...         T.writes(B[0:4])
    ...         T.evaluate(T.call_extern("add4", B.access_ptr("rw"), A.access_ptr("r"),
    ...                                  dtype="int32"))
    >>> intrin = tir.TensorIntrin(add4_desc, add4_impl)
    >>> [intrin.desc.buffer_map[p].name for p in intrin.desc.params]
    ['A', 'B']
    """

    def __init__(self, desc: PrimFunc, impl: PrimFunc):
        for role, func in (("description", desc), ("implementation", impl)):
            if not isinstance(func, PrimFunc):
                raise TVMTypeError(f"TensorIntrin: the {role} must be a tir.PrimFunc, got "
                                   f"{type(func).__name__}")
            if not isinstance(func.body, BlockRealize):
                raise TVMValueError(
                    f"TensorIntrin: the body of the {role} must be one block (`with "
                    f"T.block(\"root\"):` holding T.reads / T.writes of its buffers)")
            missing = [p.name_hint for p in func.params if p not in func.buffer_map]
            if missing:
                raise TVMValueError(
                    f"TensorIntrin: every parameter of the {role} must be a buffer "
                    f"(T.match_buffer); {', '.join(missing)} is not")
        if len(desc.params) != len(impl.params):
            raise TVMValueError(
                f"TensorIntrin: the description has {len(desc.params)} buffer parameters, the "
                f"implementation {len(impl.params)}: they must correspond one to one")
        for i, (dp, ip) in enumerate(zip(desc.params, impl.params)):
            db, ib = desc.buffer_map[dp], impl.buffer_map[ip]
            if db.dtype != ib.dtype or len(db.shape) != len(ib.shape):
                raise TVMValueError(
                    f"TensorIntrin: parameter {i} is {db.dtype}{_dims(db)} in the description "
                    f"but {ib.dtype}{_dims(ib)} in the implementation")
        self.desc = desc
        self.impl = impl

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False) -> None:
        """Register the intrinsic ``name`` (an error if taken, unless ``override``).

        Example::

            TensorIntrin.register("tmm16", tmm16_desc, tmm16_impl)
        """
        if not isinstance(name, str):
            raise TVMTypeError(f"TensorIntrin.register: the name must be a string, got {name!r}")
        intrin = TensorIntrin(desc, impl)
        if name in _TABLE and not override:
            raise TVMValueError(f"TensorIntrin {name!r} is already registered; pass "
                                "override=True to replace it")
        _TABLE[name] = intrin

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> TensorIntrin | None:
        """The intrinsic registered as ``name`` (None if missing and ``allow_missing``)."""
        intrin = _TABLE.get(name)
        if intrin is None and not allow_missing:
            known = ", ".join(sorted(_TABLE)) or "none yet"
            raise TVMValueError(f"no TensorIntrin is registered as {name!r} (registered: "
                                f"{known}); register one with TensorIntrin.register(name, "
                                "desc, impl)")
        return intrin

    def __repr__(self) -> str:
        return f"TensorIntrin(desc={self.desc.attrs.get('global_symbol', '?')!r})"


def _dims(buf) -> str:
    return "[" + ", ".join(str(getattr(s, "value", s)) for s in buf.shape) + "]"


__all__ = ["TensorIntrin"]
