"""numba_cpu.entry: kernels compiled without a CPython wrapper, called through one shared
entry per number of arguments."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import from_dtype, njit, types

from mlckit.backend import numba_cpu
from mlckit.backend.numba_cpu import entry as entry_module
from mlckit.backend.numba_cpu.entry import (
    bind,
    enter_through_entry,
    entry,
    has_wrapper,
    native_address,
)
from mlckit.script import from_source


def _without_wrapper(pyfunc, arity: int):
    """``pyfunc`` jitted as mlckit compiles a kernel: no CPython wrapper, entered through
    the entry of ``arity`` arguments."""
    dispatcher = njit(pyfunc)
    compiler = dispatcher._compiler
    customize = compiler._customize_flags

    def flags_without_wrapper(flags):
        flags = customize(flags)
        flags.no_cpython_wrapper = True
        return flags

    compiler._customize_flags = flags_without_wrapper
    enter_through_entry(dispatcher, arity)
    return dispatcher


def _axpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_a_kernel_without_its_wrapper_runs_through_the_entry(dtype):
    f = _without_wrapper(_axpy, 4)
    scalar = from_dtype(np.dtype(dtype))
    array = types.Array(scalar, 1, "C")
    run = f.compile((scalar, array, array, array))
    rng = np.random.default_rng(0)
    x, y = (rng.integers(-50, 50, 100).astype(dtype) for _ in range(2))
    out = np.zeros(100, dtype)
    run(np.dtype(dtype).type(3), x, y, out)
    np.testing.assert_array_equal(out, 3 * x + y)
    assert run.func is entry(4) and run.args == (native_address(f.overloads[f.signatures[0]]),)


def test_numbas_dispatcher_still_calls_the_version_through_the_entry():
    f = _without_wrapper(_axpy, 4)
    x = np.arange(8, dtype="float64")
    out = np.zeros(8)
    f(2.0, x, x, out)  # compiled at the call, then entered: no null function called
    np.testing.assert_array_equal(out, 3 * x)
    f(1.0, x, x, out)  # the version found again
    np.testing.assert_array_equal(out, 2 * x)
    assert len(f.signatures) == 1


def test_an_exception_in_the_kernel_is_raised_by_the_entry():
    def checked(x):
        if x[0] < 0:
            raise ValueError("negative first element")
        x[0] += 1

    f = _without_wrapper(checked, 1)
    run = f.compile((types.Array(types.float64, 1, "C"),))
    x = np.array([1.0])
    run(x)
    assert x[0] == 2.0
    with pytest.raises(ValueError, match="negative first element"):
        run(np.array([-1.0]))


@pytest.fixture
def fresh_entries(tmp_path, monkeypatch):
    """Entries as in a new process with an empty cache (``tmp_path``): none loaded, no
    kernel seen; this process's entry modules are put back afterwards."""
    monkeypatch.setenv("MLCKIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(entry_module, "_ENTRIES", {})
    monkeypatch.setattr(entry_module, "_SEEN", collections.Counter())
    for name in [m for m in sys.modules if m.startswith("mlckit_numba_entry_")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path


def test_an_entry_is_one_dispatcher_per_arity_and_its_module_is_in_the_cache(fresh_entries):
    tmp_path = fresh_entries
    three = entry(3)
    assert entry(3) is three and entry(2) is not three
    [module] = (tmp_path / "numba").glob("entry_3_*/entry.py")
    assert "def enter(kernel, a0, a1, a2):\n    call_compiled(kernel, (a0, a1, a2))" in \
        module.read_text()
    assert "@njit(cache=True, _nrt=False)" in module.read_text()


def test_an_entry_is_compiled_in_memory_where_the_cache_cannot_be_written(fresh_entries,
                                                                         monkeypatch):
    tmp_path = fresh_entries
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("MLCKIT_CACHE_DIR", str(blocked))  # a file: no folder under it
    f = _without_wrapper(_axpy, 4)
    f.compile((types.float64,) + (types.Array(types.float64, 1, "C"),) * 3)
    x = np.ones(4)
    out = np.zeros(4)
    bind(native_address(f.overloads[f.signatures[0]]), 4)(1.0, x, x, out)
    np.testing.assert_array_equal(out, 2 * x)
    assert entry(4).py_func.__code__.co_filename == "<entry 4>"


def test_a_kernel_of_one_and_of_no_argument():
    f = _without_wrapper(lambda x: x.fill(7), 1)
    x = np.zeros(3, "int32")
    f.compile((types.Array(types.int32, 1, "C"),))(x)
    np.testing.assert_array_equal(x, 7)

    def nothing():
        pass

    g = _without_wrapper(nothing, 0)
    assert g.compile(())() is None


def shifted(k: int, n: int):
    """``B = A * s + k`` over ``n`` elements: kernels of the same argument types."""
    return from_source(f"""
@T.prim_func
def shifted(A: T.Buffer(({n},), "float32"), s: T.float32, B: T.Buffer(({n},), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = A[vi] * s + T.float32({k})
""")


def test_kernels_of_repeating_argument_types_are_compiled_without_their_wrapper(
        fresh_entries):
    a = np.linspace(-1, 1, 37, dtype="float32")
    built = []
    for k in range(4):  # argument types no other test uses: (float32[37], float32, float32[37])
        f = numba_cpu.build(shifted(k, 37), cache=False)
        b = np.zeros(37, "float32")
        f(a, 2.5, b)
        np.testing.assert_allclose(b, a * np.float32(2.5) + k, rtol=1e-6)
        cres = f.dispatcher.overloads[f.dispatcher.signatures[0]]
        assert f.address == native_address(cres)
        built.append((f, has_wrapper(cres)))
    # the first two keep their wrappers; the third has the entry compiled, as the next
    assert [wrapped for _f, wrapped in built] == [True, True, False, False]
    assert built[0][0]._run is built[0][0].dispatcher
    third = built[2][0]
    assert third._run.func is entry(3) and third._run.args == (third.address,)
    assert "# called through numba_cpu.entry, shared by kernels of the same argument types" \
        in third.source


def test_a_second_process_loads_the_entry_from_the_cache_for_its_first_kernel(tmp_path):
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from mlckit.backend import numba_cpu
        from mlckit.backend.numba_cpu.entry import entry, has_wrapper
        from tests.backend.numba_cpu.test_entry import shifted
        wrapped = []
        for k in map(int, sys.argv[1:]):
            f = numba_cpu.build(shifted(k, 41))
            b = np.zeros(41, "float32")
            f(np.ones(41, "float32"), 3.0, b)
            assert (b == 3 + k).all()
            wrapped.append(has_wrapper(f.dispatcher.overloads[f.dispatcher.signatures[0]]))
        print(wrapped, sum(entry(3).stats.cache_hits.values()))
    """)
    env = dict(os.environ, MLCKIT_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    first, second = (subprocess.run([sys.executable, "-c", script, *ks], env=env,
                                    capture_output=True, text=True, check=True).stdout.strip()
                     for ks in (["0", "1", "2"], ["3"]))
    assert first == "[True, True, False] 0"  # the third kernel compiled the entry
    assert second == "[False] 1"  # a new kernel, its entry loaded from the disk cache
