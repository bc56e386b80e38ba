"""``mlckit.nd``: NDArray constructors, as ``tvm.nd``.

Example::

    import mlckit as tvm
    a = tvm.nd.array(np.ones(4, "float32"), tvm.cpu())
"""

from mlckit.runtime.ndarray import NDArray, array, empty, from_dlpack

__all__ = ["NDArray", "array", "empty", "from_dlpack"]
