"""``mlckit.target``: where code is compiled for, as ``tvm.target``.

Example::

    import mlckit as tvm
    target = tvm.target.Target("llvm --num-cores=1", host="llvm")
    target.kind.name              # 'llvm'
    with target:
        tvm.target.Target.current()   # the target of the enclosing ``with``
"""

from .target import Target, TargetKind, list_kinds

__all__ = ["Target", "TargetKind", "list_kinds"]
