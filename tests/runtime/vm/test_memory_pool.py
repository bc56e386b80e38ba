"""The VM reuses planned storage across calls, never while a tensor carved out of it lives."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.runtime.vm import builtins
from mlckit.runtime.vm.executable import DataType, ShapeTuple

from .mlp_modules import MyModule, numpy_mlp, random_params

PARAMS = random_params()
ARGS = [PARAMS[k] for k in ("w0", "b0", "w1", "b1")]


@pytest.fixture(scope="module")
def vm():
    return relax.VirtualMachine(relax.build(MyModule, target="llvm"), mlckit.cpu())


def _x(n, seed):
    return np.random.default_rng(seed).standard_normal((n, 784)).astype("float32")


def test_repeated_calls_allocate_no_new_storage(vm):
    vm["main"](_x(2, 0), *ARGS)
    allocated = vm._storage_bytes
    for seed in range(1, 5):
        vm["main"](_x(2, seed), *ARGS)  # each result dropped at once
    assert vm._storage_bytes == allocated


def test_a_result_kept_by_the_caller_is_not_overwritten_by_the_next_call(vm):
    x1, x2 = _x(4, 11), _x(4, 12)
    first = vm["main"](x1, *ARGS)
    second = vm["main"](x2, *ARGS)
    np.testing.assert_allclose(first.numpy(), numpy_mlp(x1, PARAMS), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second.numpy(), numpy_mlp(x2, PARAMS), rtol=1e-5, atol=1e-5)


def test_a_slice_of_a_dropped_result_still_keeps_its_storage(vm):
    x1, x2 = _x(3, 21), _x(3, 22)
    row = vm["main"](x1, *ARGS).numpy()[1]  # the NDArray is gone, a view of its memory lives
    vm["main"](x2, *ARGS)
    np.testing.assert_allclose(row, numpy_mlp(x1, PARAMS)[1], rtol=1e-5, atol=1e-5)


class _FakeVM:
    device = None

    def __init__(self):
        self._storage_bytes = 0
        self._storage_pool = {}


def test_two_storages_asked_for_before_any_tensor_are_distinct():
    fake = _FakeVM()
    a = builtins.alloc_storage(fake, ShapeTuple([64]))
    b = builtins.alloc_storage(fake, ShapeTuple([64]))
    assert a is not b


def test_a_storage_is_reused_once_nothing_refers_to_it():
    fake = _FakeVM()
    a = builtins.alloc_storage(fake, ShapeTuple([64]))
    t = builtins.alloc_tensor(a, 0, ShapeTuple([4, 4]), DataType("float32"))
    assert builtins.alloc_storage(fake, ShapeTuple([64])) is not a  # t and a are alive
    first_id = id(a)
    del a
    assert builtins.alloc_storage(fake, ShapeTuple([64])) is not None  # t keeps the first busy
    del t
    again = builtins.alloc_storage(fake, ShapeTuple([64]))
    assert id(again) == first_id
    assert fake._storage_bytes == 2 * 64


def test_the_same_view_is_carved_out_of_a_storage_each_time():
    storage = builtins.Storage(64)
    t1 = builtins.alloc_tensor(storage, 0, ShapeTuple([2, 8]), DataType("float32"))
    t2 = builtins.alloc_tensor(storage, 0, ShapeTuple([2, 8]), DataType("float32"))
    assert t1 is t2 and t1.shape == (2, 8) and t1.dtype == np.float32
    with pytest.raises(MemoryError, match="needs 128 bytes at offset 0, but the storage has 64"):
        builtins.alloc_tensor(storage, 0, ShapeTuple([4, 8]), DataType("float32"))


def test_tensors_carved_at_aligned_offsets_are_64_byte_aligned_and_keep_the_storage_busy():
    fake = _FakeVM()
    storage = builtins.alloc_storage(fake, ShapeTuple([256]))
    t = builtins.alloc_tensor(storage, 64, ShapeTuple([4, 4]), DataType("float32"))
    assert storage.buffer.ctypes.data % 64 == 0 and t.ctypes.data % 64 == 0
    row = t[1]  # a user's view of a tensor: its base is the storage's owner too
    del t
    assert storage.in_use()
    del row
    assert not storage.in_use()
