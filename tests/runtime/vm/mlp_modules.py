"""The MLC course's "End-to-End Model Execution" modules, with a symbolic batch size."""

import numpy as np

from mlckit.script import from_source
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T

# The course's module as a notebook cell holds it (the notebook-tool tests feed this text to
# %%relax); the kernels below are its PrimFuncs, reused by the other modules of this file.
MLP_SOURCE = '''
@I.ir_module
class MyModule:
    @T.prim_func
    def linear0(x: T.handle, w: T.Buffer((T.int64(128), T.int64(784)), "float32"),
                b: T.Buffer((T.int64(128),), "float32"), z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(784)), "float32")
        Z = T.match_buffer(z, (n, T.int64(128)), "float32")
        Y = T.alloc_buffer((n, T.int64(128)), "float32")
        for i, j, k in T.grid(n, T.int64(128), T.int64(784)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * w[vj, vk]
        for i, j in T.grid(n, T.int64(128)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + b[vj]

    @T.prim_func
    def relu0(x: T.handle, y: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(128)), "float32")
        Y = T.match_buffer(y, (n, T.int64(128)), "float32")
        for i, j in T.grid(n, T.int64(128)):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(x: T.handle, w: T.Buffer((T.int64(10), T.int64(128)), "float32"),
                b: T.Buffer((T.int64(10),), "float32"), z: T.handle):
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(128)), "float32")
        Z = T.match_buffer(z, (n, T.int64(10)), "float32")
        Y = T.alloc_buffer((n, T.int64(10)), "float32")
        for i, j, k in T.grid(n, T.int64(10), T.int64(128)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * w[vj, vk]
        for i, j in T.grid(n, T.int64(10)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + b[vj]

    @R.function
    def main(x: R.Tensor(("n", 784), "float32"),
             w0: R.Tensor((128, 784), "float32"), b0: R.Tensor((128,), "float32"),
             w1: R.Tensor((10, 128), "float32"), b1: R.Tensor((10,), "float32")):
        n = T.int64()
        cls = MyModule
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((n, 128), "float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((n, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((n, 10), "float32"))
            R.output(out)
        return out'''

MyModule = from_source(MLP_SOURCE)
linear0, relu0, linear1 = (MyModule[name] for name in ("linear0", "relu0", "linear1"))


@I.ir_module
class MyModuleByName:
    """call_dps_packed("linear0", ...): resolved to the module's PrimFuncs by name."""

    # the kernels defined above, as the module's functions
    linear0 = linear0
    relu0 = relu0
    linear1 = linear1

    @R.function
    def main(x: R.Tensor(("n", 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        n = T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), R.Tensor((n, 128), dtype="float32"))
            lv1 = R.call_dps_packed("relu0", (lv0,), R.Tensor((n, 128), dtype="float32"))
            out = R.call_dps_packed("linear1", (lv1, w1, b1), R.Tensor((n, 10), dtype="float32"))
            R.output(out)
        return out


@I.ir_module
class MyModuleWithExternCall:
    """Only registered library functions (env.linear, env.relu)."""

    @R.function
    def main(x: R.Tensor(("n", 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        n = T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w0, b0), R.Tensor((n, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((n, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((n, 10), dtype="float32"))
            R.output(out)
        return out


@I.ir_module
class MyModuleMixture:
    """A PrimFunc (call_tir) mixed with registered library functions."""

    linear0 = linear0  # the kernel defined above, as the module's function

    @R.function
    def main(x: R.Tensor(("n", 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")):
        n = T.int64()
        cls = MyModuleMixture
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), R.Tensor((n, 128), dtype="float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), R.Tensor((n, 128), dtype="float32"))
            out = R.call_dps_packed("env.linear", (lv1, w1, b1), R.Tensor((n, 10), dtype="float32"))
            R.output(out)
        return out


def register_numpy_library():
    """env.linear / env.relu as NumPy functions (destination-passing, NDArray arguments)."""
    import mlckit

    @mlckit.register_func("env.linear", override=True)
    def linear(x, w, b, out):
        np.add(np.asarray(x) @ np.asarray(w).T, np.asarray(b), out=np.asarray(out))

    @mlckit.register_func("env.relu", override=True)
    def relu(x, out):
        np.maximum(np.asarray(x), 0, out=np.asarray(out))


def numpy_mlp(x, p):
    """The NumPy reference of the course."""
    h = np.maximum(x @ p["w0"].T + p["b0"], 0)
    return h @ p["w1"].T + p["b1"]


def random_params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w0": rng.standard_normal((128, 784)).astype("float32") * 0.05,
            "b0": rng.standard_normal(128).astype("float32"),
            "w1": rng.standard_normal((10, 128)).astype("float32") * 0.1,
            "b1": rng.standard_normal(10).astype("float32")}
