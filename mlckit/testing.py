"""``mlckit.testing``: the checks TVM's ``tvm.testing`` offers learners.

Example::

    import mlckit as tvm
    tvm.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-5)
"""

from __future__ import annotations

import numpy as np

__all__ = ["assert_allclose"]


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7, verbose: bool = True):
    """Check that two arrays (NumPy arrays, ``tvm.runtime.tensor``s or nested lists) are equal
    within ``atol + rtol * |desired|``, as ``np.testing.assert_allclose`` — but, as in TVM,
    with an absolute tolerance too (1e-7 by default) and the shapes compared first.

    >>> import numpy as np
    >>> import mlckit as tvm
    >>> tvm.testing.assert_allclose(tvm.nd.array(np.ones(3, "float32")), [1, 1, 1.0000001], rtol=1e-5)
    >>> try:
    ...     tvm.testing.assert_allclose(np.ones(3), np.ones(4))
    ... except AssertionError:
    ...     print("shapes differ")
    shapes differ
    """
    actual, desired = np.asanyarray(actual), np.asanyarray(desired)
    if actual.shape != desired.shape:
        raise AssertionError(f"assert_allclose: the shapes differ: actual {actual.shape}, "
                             f"desired {desired.shape}")
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)
