"""Named tensor intrinsics, as ``tvm.tir.tensor_intrin``: importing a target's module
registers its intrinsics with :class:`~mlckit.tir.TensorIntrin` under TVM's names, so code
that does ``from tvm.tir.tensor_intrin.hexagon import VRMPY_u8u8i32_INTRIN`` and then
``sch.tensorize(block, VRMPY_u8u8i32_INTRIN)`` runs.

mlckit runs no vendor instruction: each implementation is the description's loop nest
written out, so a tensorized kernel computes what the description says, on any backend.

Example::

    from mlckit.tir.tensor_intrin.hexagon import VRMPY_u8u8i32_INTRIN
    sch.tensorize(block, VRMPY_u8u8i32_INTRIN)
"""
