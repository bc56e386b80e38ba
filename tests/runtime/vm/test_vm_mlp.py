"""relax.build + VirtualMachine on the course's MLP modules (results against NumPy)."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

from .mlp_modules import (
    MyModule,
    MyModuleByName,
    MyModuleMixture,
    MyModuleWithExternCall,
    numpy_mlp,
    random_params,
    register_numpy_library,
)

PARAMS = random_params()
ARGS = [PARAMS[k] for k in ("w0", "b0", "w1", "b1")]


@pytest.fixture(scope="module")
def numpy_library():
    register_numpy_library()


@pytest.fixture(scope="module")
def vm_call_tir():
    return relax.VirtualMachine(relax.build(MyModule, target="llvm"), mlckit.cpu())


def _x(n, seed=1):
    return np.random.default_rng(seed).standard_normal((n, 784)).astype("float32")


@pytest.mark.parametrize("n", [1, 7, 64])
def test_call_tir_symbolic_batch(vm_call_tir, n):
    x = _x(n)
    out = vm_call_tir["main"](mlckit.nd.array(x), *ARGS)
    assert isinstance(out, mlckit.nd.NDArray)
    np.testing.assert_allclose(out.numpy(), numpy_mlp(x, PARAMS), rtol=1e-5, atol=1e-5)


def test_numpy_and_ndarray_arguments_agree(vm_call_tir):
    x = _x(3)
    a = vm_call_tir["main"](x, *ARGS).numpy()
    b = vm_call_tir["main"](*[mlckit.nd.array(v) for v in [x, *ARGS]]).numpy()
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n", [1, 7, 64])
def test_call_dps_packed_by_name_resolves_to_prim_funcs(n):
    vm = relax.VirtualMachine(relax.build(MyModuleByName, target="llvm"), mlckit.cpu())
    x = _x(n)
    np.testing.assert_allclose(vm["main"](x, *ARGS).numpy(), numpy_mlp(x, PARAMS), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("n", [1, 7, 64])
def test_extern_calls_to_registered_numpy_functions(numpy_library, n):
    vm = relax.VirtualMachine(relax.build(MyModuleWithExternCall), mlckit.cpu())
    x = _x(n)
    np.testing.assert_allclose(vm["main"](x, *ARGS).numpy(), numpy_mlp(x, PARAMS), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("n", [1, 7, 64])
def test_mixture_of_prim_func_and_library(numpy_library, n):
    vm = relax.VirtualMachine(relax.build(MyModuleMixture, target="llvm"), mlckit.cpu())
    x = _x(n)
    np.testing.assert_allclose(vm["main"](x, *ARGS).numpy(), numpy_mlp(x, PARAMS), rtol=1e-5,
                               atol=1e-5)


def test_bind_params_then_run_with_data_only():
    mod = relax.transform.BindParams("main", {k: mlckit.nd.array(v) for k, v in PARAMS.items()})(
        MyModule)
    assert [p.name_hint for p in mod["main"].params] == ["x"]
    vm = relax.VirtualMachine(relax.build(mod, target="llvm"), mlckit.cpu())
    for n in (1, 5):
        x = _x(n)
        np.testing.assert_allclose(vm["main"](x).numpy(), numpy_mlp(x, PARAMS), rtol=1e-5,
                                   atol=1e-5)
    assert "Constant pool" in vm.exec.stats() and "[128, 784]" in vm.exec.stats()


def test_lnumpy_target_matches():
    vm = relax.VirtualMachine(relax.build(MyModule, target="lnumpy"), mlckit.cpu())
    x = _x(1)
    np.testing.assert_allclose(vm["main"](x, *ARGS).numpy(), numpy_mlp(x, PARAMS), rtol=1e-5,
                               atol=1e-5)


# -- call_packed: side effects outside dataflow, and returned values -------------------------
@I.ir_module
class PackedCalls:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        R.call_packed("test.counter", x, sinfo_args=R.Tuple())
        y = R.call_packed("test.double", x, sinfo_args=R.Tensor((4,), "float32"))
        n = R.call_packed("test.count", sinfo_args=R.Prim("int64"))
        R.call_packed("test.counter", y, sinfo_args=R.Tuple())
        return (y, n)


def test_call_packed_side_effects_and_return_values():
    seen = []
    mlckit.register_func("test.counter", lambda x: seen.append(x.numpy().copy()), override=True)
    mlckit.register_func("test.double", lambda x: mlckit.nd.array(x.numpy() * 2), override=True)
    mlckit.register_func("test.count", lambda: len(seen), override=True)
    vm = relax.VirtualMachine(relax.build(PackedCalls), mlckit.cpu())
    x = np.arange(4, dtype="float32")
    y, n = vm["main"](x)
    np.testing.assert_array_equal(y.numpy(), x * 2)
    assert n == 1
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[1], x * 2)


def test_print_runs_at_call_time(capsys):
    @R.function(pure=False)
    def main(x: R.Tensor((2,), "float32")):
        R.print(x, format="x = {}")
        return x

    vm = relax.VirtualMachine(relax.build(main), mlckit.cpu())
    vm["main"](np.ones(2, "float32"))
    assert "x = [1. 1.]" in capsys.readouterr().out


def test_missing_packed_function_names_the_call_site():
    @I.ir_module
    class Missing:
        @R.function
        def main(x: R.Tensor((2,), "float32")):
            with R.dataflow():
                y = R.call_dps_packed("env.not_registered_anywhere", (x,),
                                      R.Tensor((2,), "float32"))
                R.output(y)
            return y

    vm = relax.VirtualMachine(relax.build(Missing), mlckit.cpu())
    with pytest.raises(mlckit.TVMError, match=r"env.not_registered_anywhere.*called from main"):
        vm["main"](np.ones(2, "float32"))


# -- argument checks at entry ---------------------------------------------------------------
def test_argument_count_error(vm_call_tir):
    with pytest.raises(mlckit.TVMError, match=r"main expects 5 arguments \(x, w0, b0, w1, b1\), got 1"):
        vm_call_tir["main"](_x(1))


def test_rank_error_names_function_and_parameter(vm_call_tir):
    with pytest.raises(ValueError, match=r"main: argument 'x' \(param\[0\]\).*expected 2 "
                                         r"dimensions, got 3"):
        vm_call_tir["main"](np.zeros((1, 1, 784), "float32"), *ARGS)


def test_dtype_error(vm_call_tir):
    with pytest.raises(ValueError, match=r"argument 'w0'.*expected dtype float32, got float64"):
        vm_call_tir["main"](_x(1), ARGS[0].astype("float64"), *ARGS[1:])


def test_static_dimension_error_names_dimension_and_values(vm_call_tir):
    with pytest.raises(ValueError, match=r"argument 'x'.*dimension 1 is 785, expected 784 "
                                         r"\(its shape is \(2, 785\)\)"):
        vm_call_tir["main"](np.zeros((2, 785), "float32"), *ARGS)


@R.function
def add_same_n(x: R.Tensor(("n",), "float32"), y: R.Tensor(("n",), "float32")):
    return x


def test_symbolic_dims_must_agree_across_arguments():
    vm = relax.VirtualMachine(relax.build(add_same_n), mlckit.cpu())
    vm["main"](np.ones(3, "float32"), np.ones(3, "float32"))
    with pytest.raises(ValueError, match=r"main: argument 'y' \(param\[1\]\).*dimension 0 is 5, "
                                         r"but n = 3, bound by argument 'x' \(param\[0\]\) "
                                         r"dimension 0"):
        vm["main"](np.ones(3, "float32"), np.ones(5, "float32"))


# -- match_cast at run time -----------------------------------------------------------------
@I.ir_module
class MatchCastModule:
    @R.function
    def main(x: R.Tensor(ndim=2, dtype="float32")):
        m = T.int64()
        with R.dataflow():
            y = R.match_cast(x, R.Tensor((m, 4), "float32"))
            z = R.match_cast(y, R.Tensor((m, 4), "float32"))
            R.output(z)
        return z


def test_match_cast_passes_and_fails_clearly():
    vm = relax.VirtualMachine(relax.build(MatchCastModule), mlckit.cpu())
    x = np.ones((3, 4), "float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), x)
    with pytest.raises(ValueError, match=r"main: R.match_cast of 'y' does not match its "
                                         r"annotation R.Tensor\(\(m, 4\), \"float32\"\): "
                                         r"dimension 1 is 5, expected 4"):
        vm["main"](np.ones((3, 5), "float32"))


def test_composite_symbolic_shapes_are_computed():
    @I.ir_module
    class Doubling:
        @T.prim_func
        def concat2(x: T.handle, y: T.handle):
            n = T.int64()
            X = T.match_buffer(x, (n,), "float32")
            Y = T.match_buffer(y, (n * T.int64(2),), "float32")
            for i in T.serial(n * T.int64(2)):
                with T.block("Y"):
                    vi = T.axis.spatial(n * T.int64(2), i)
                    Y[vi] = X[vi % n]

        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            n = T.int64()
            cls = Doubling
            with R.dataflow():
                y = R.call_tir(cls.concat2, (x,), R.Tensor((n * 2,), "float32"))
                R.output(y)
            return y

    vm = relax.VirtualMachine(relax.build(Doubling, target="lnumpy"), mlckit.cpu())
    x = np.arange(3, dtype="float32")
    np.testing.assert_array_equal(vm["main"](x).numpy(), np.concatenate([x, x]))


def test_if_branches_and_tuples():
    @R.function
    def main(c: R.Tensor((), "bool"), x: R.Tensor((2,), "float32"),
             y: R.Tensor((2,), "float32")):
        if c:
            z = (x, y)
        else:
            z = (y, x)
        return z[0]

    vm = relax.VirtualMachine(relax.build(main), mlckit.cpu())
    x, y = np.zeros(2, "float32"), np.ones(2, "float32")
    np.testing.assert_array_equal(vm["main"](np.array(True), x, y).numpy(), x)
    np.testing.assert_array_equal(vm["main"](np.array(False), x, y).numpy(), y)


def test_profile_table(vm_call_tir):
    report = vm_call_tir.profile(_x(4), *ARGS)
    names = [r.name for r in report.rows]
    assert {"linear0", "relu0", "linear1"} <= set(names)
    assert all(r.calls >= 1 for r in report.rows)
    text = str(report)
    assert "linear0" in text and "Share" in text and "%" in text
    assert vm_call_tir.profile("main", _x(2), *ARGS).function == "main"
