"""``mlckit.target``: where code is compiled for, as ``tvm.target``.

Example::

    import mlckit as tvm
    target = tvm.target.Target("llvm --num-cores=1", host="llvm")
    target.kind.name              # 'llvm'
    with target:
        tvm.target.Target.current()   # the target of the enclosing ``with``

    # TVM 0.27's forms: a dict, a JSON string, a tag, a present device
    tvm.target.Target({"kind": "llvm", "num-cores": 1})
    tvm.target.Target('{"kind": "cuda", "arch": "sm_80"}')
    tvm.target.Target("nvidia/geforce-rtx-3090")
    tvm.target.Target.from_device(tvm.cpu())
"""

from .detect import register_device_target_detector
from .target import Target, TargetKind, list_kinds, list_tags, register_tag

__all__ = ["Target", "TargetKind", "list_kinds", "list_tags", "register_device_target_detector",
           "register_tag"]
