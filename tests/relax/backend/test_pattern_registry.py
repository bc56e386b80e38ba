"""relax.backend's registry: registered patterns are found by name and by prefix, later
registrations first (TVM's priority order)."""

import pytest

from mlckit import relax
from mlckit.error import TVMError
from mlckit.relax.backend import get_pattern, get_patterns_with_prefix, register_patterns
from mlckit.relax.backend.patterns import make_fused_bias_activation_pattern
from mlckit.relax.transform import FusionPattern


def test_numpy_patterns_are_registered_highest_priority_first():
    assert [p.name for p in get_patterns_with_prefix("numpy")] == [
        "numpy.matmul_transposed_bias_relu", "numpy.matmul_transposed_bias",
        "numpy.matmul_transposed", "numpy.matmul_bias_relu", "numpy.matmul_bias",
        "numpy.matmul"]


def test_importing_cublas_registers_tvms_cublas_names():
    import mlckit.relax.backend.cuda.cublas  # noqa: F401

    pattern = relax.backend.get_pattern("cublas.matmul_transposed_bias_relu")
    assert isinstance(pattern, FusionPattern)
    assert set(pattern.annotation_patterns) == {"lhs", "rhs", "root", "bias"}
    assert len(get_patterns_with_prefix("cublas")) == 8


def test_register_and_find_a_pattern():
    pat, ann = make_fused_bias_activation_pattern("relax.nn.conv2d", with_bias=True,
                                                  activation="relax.nn.relu")
    register_patterns([("mytest.conv2d_bias_relu", pat, ann)])
    found = get_pattern("mytest.conv2d_bias_relu")
    assert found.pattern is pat and found.annotation_patterns == ann
    assert get_pattern("mytest.nothing") is None


def test_registering_something_else_is_rejected():
    with pytest.raises(TVMError, match="cannot register a str"):
        register_patterns(["mytest.x"])
