"""Round-trip corpus of Relax programs: print → parse → structurally equal, printing stable."""

import pytest

from mlckit.script import from_source
from tests.script.roundtrip import assert_roundtrip

MLP = '''
@I.ir_module
class Module:
    @T.prim_func
    def linear0(X: T.Buffer((T.int64(1), T.int64(784)), "float32"),
                W: T.Buffer((T.int64(128), T.int64(784)), "float32"),
                B: T.Buffer((T.int64(128),), "float32"),
                Z: T.Buffer((T.int64(1), T.int64(128)), "float32")):
        T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
        Y = T.alloc_buffer((T.int64(1), T.int64(128)), "float32")
        for i, j, k in T.grid(T.int64(1), T.int64(128), T.int64(784)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(T.int64(1), T.int64(128)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @T.prim_func
    def relu0(X: T.Buffer((T.int64(1), T.int64(128)), "float32"),
              Y: T.Buffer((T.int64(1), T.int64(128)), "float32")):
        T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
        for i, j in T.grid(T.int64(1), T.int64(128)):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @T.prim_func
    def linear1(X: T.Buffer((T.int64(1), T.int64(128)), "float32"),
                W: T.Buffer((T.int64(10), T.int64(128)), "float32"),
                B: T.Buffer((T.int64(10),), "float32"),
                Z: T.Buffer((T.int64(1), T.int64(10)), "float32")):
        T.func_attr({"global_symbol": "linear1", "tir.noalias": True})
        Y = T.alloc_buffer((T.int64(1), T.int64(10)), "float32")
        for i, j, k in T.grid(T.int64(1), T.int64(10), T.int64(128)):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
        for i, j in T.grid(T.int64(1), T.int64(10)):
            with T.block("Z"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vi, vj] + B[vj]

    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w0: R.Tensor((128, 784), "float32"),
             b0: R.Tensor((128,), "float32"), w1: R.Tensor((10, 128), "float32"),
             b1: R.Tensor((10,), "float32")) -> R.Tensor((1, 10), "float32"):
        cls = Module
        with R.dataflow():
            lv0 = R.call_tir(cls.linear0, (x, w0, b0), out_sinfo=R.Tensor((1, 128), "float32"))
            lv1 = R.call_tir(cls.relu0, (lv0,), out_sinfo=R.Tensor((1, 128), "float32"))
            out = R.call_tir(cls.linear1, (lv1, w1, b1), out_sinfo=R.Tensor((1, 10), "float32"))
            R.output(out)
        return out
'''

MLP_SYMBOLIC = '''
@I.ir_module
class Module:
    @T.prim_func
    def relu(x: T.handle, y: T.handle):
        T.func_attr({"tir.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n, T.int64(128)), "float32")
        Y = T.match_buffer(y, (n, T.int64(128)), "float32")
        for i, j in T.grid(n, T.int64(128)):
            with T.block("Y"):
                vi, vj = T.axis.remap("SS", [i, j])
                Y[vi, vj] = T.max(X[vi, vj], T.float32(0))

    @R.function
    def main(x: R.Tensor(("n", 128), "float32")) -> R.Tensor(("n", 128), "float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv0 = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((n, 128), "float32"))
            gv = lv0
            R.output(gv)
        return gv
'''

RELAX_ONLY = {
    "identity": '''
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    return x
''',
    "dps_packed_by_name": '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), "float32"), w: R.Tensor((128, 784), "float32"),
             b: R.Tensor((128,), "float32")) -> R.Tensor((1, 128), "float32"):
        with R.dataflow():
            lv0 = R.call_dps_packed("env.linear", (x, w, b), out_sinfo=R.Tensor((1, 128), "float32"))
            lv1 = R.call_dps_packed("env.relu", (lv0,), out_sinfo=R.Tensor((1, 128), "float32"))
            R.output(lv1)
        return lv1
''',
    "symbolic_batch": '''
@R.function
def main(x: R.Tensor(("n", 784), "float32")) -> R.Tensor(("n", 128), "float32"):
    n = T.int64()
    with R.dataflow():
        lv0 = R.call_dps_packed("env.linear", (x,), out_sinfo=R.Tensor((n, 128), "float32"))
        R.output(lv0)
    return lv0
''',
    "two_symbolic_vars": '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32"), y: R.Tensor(("m", "n"), "float32")):
    n = T.int64()
    m = T.int64()
    z = R.call_dps_packed("env.matmul", (x, y), out_sinfo=R.Tensor((n, n), "float32"))
    return z
''',
    "call_packed_impure": '''
@R.function(pure=False)
def main(x: R.Tensor((32, 32), "float32")) -> R.Tensor((32, 32), "float32"):
    z = R.call_packed("vm.builtin.copy", x, sinfo_args=R.Tensor((32, 32), "float32"))
    return z
''',
    "call_packed_object": '''
@R.function(pure=False)
def main(x: R.Object) -> R.Object:
    z = R.call_packed("test", x)
    return z
''',
    "two_dataflow_blocks": '''
@R.function(pure=False)
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    with R.dataflow():
        a = R.call_dps_packed("env.relu", (x,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(a)
    b = R.call_packed("env.log", a, sinfo_args=R.Tensor((4,), "float32"))
    with R.dataflow():
        c = R.call_dps_packed("env.relu", (b,), out_sinfo=R.Tensor((4,), "float32"))
        R.output(c)
    return c
''',
    "match_cast": '''
@R.function
def main(x: R.Tensor(ndim=2, dtype="float32")) -> R.Tensor(ndim=2, dtype="float32"):
    n = T.int64()
    m = T.int64()
    y = R.match_cast(x, R.Tensor((n, m), "float32"))
    z = R.call_dps_packed("env.relu", (y,), out_sinfo=R.Tensor((n, m), "float32"))
    return z
''',
    "match_cast_in_dataflow": '''
@R.function
def main(x: R.Tensor("float32", ndim=1)) -> R.Tensor("float32", ndim=1):
    n = T.int64()
    with R.dataflow():
        y = R.match_cast(x, R.Tensor((n,), "float32"))
        z = R.call_dps_packed("env.relu", (y,), out_sinfo=R.Tensor((n,), "float32"))
        R.output(z)
    return z
''',
    "tuples": '''
@R.function
def main(x: R.Tensor((2,), "float32"), y: R.Tensor((3,), "int32")):
    t = (x, y)
    a = t[0]
    b = t[1]
    u = (a, (b, a))
    return u
''',
    "tuple_param": '''
@R.function
def main(t: R.Tuple(R.Tensor((2,), "float32"), R.Shape([2]))) -> R.Shape([2]):
    s = t[1]
    return s
''',
    "shape_values": '''
@R.function
def main(x: R.Tensor(("n",), "float32")) -> R.Shape(ndim=2):
    n = T.int64()
    s = R.shape([n, 4])
    return s
''',
    "shape_of": '''
@R.function
def main(x: R.Tensor(("n", 4), "float32")):
    n = T.int64()
    s = R.shape_of(x)
    return s
''',
    "constants": '''
@R.function
def main(x: R.Tensor((2,), "float32")):
    c = R.const(1.5, "float32")
    d = R.const(3, "int64")
    t = (x, c, d)
    return t
''',
    "prim_values": '''
@R.function
def main(x: R.Prim("int64")) -> R.Prim("int64"):
    p = R.prim_value(T.int64(3))
    t = (x, p)
    return x
''',
    "prim_value_symbolic": '''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    p = R.prim_value(n + 1)
    return p
''',
    "string_and_dtype": '''
@R.function
def main(x: R.Tensor((2,), "float32")):
    s = R.str("hello")
    d = R.dtype("float16")
    t = (s, d)
    return t
''',
    "if_else": '''
@R.function
def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    if c:
        w = R.call_dps_packed("env.relu", (x,), out_sinfo=R.Tensor((4,), "float32"))
        y = R.call_dps_packed("env.relu", (w,), out_sinfo=R.Tensor((4,), "float32"))
    else:
        y = R.call_dps_packed("env.neg", (x,), out_sinfo=R.Tensor((4,), "float32"))
    return y
''',
    "if_on_prim_value": '''
@R.function
def main(c: R.Prim("bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    if c:
        y = R.call_dps_packed("env.relu", (x,), out_sinfo=R.Tensor((4,), "float32"))
    else:
        y = x
    return y
''',
    "calls_between_functions": '''
@I.ir_module
class Module:
    @R.function
    def helper(x: R.Tensor(("n",), "float32")) -> R.Tensor(("n",), "float32"):
        n = T.int64()
        y = R.call_dps_packed("env.relu", (x,), out_sinfo=R.Tensor((n,), "float32"))
        return y

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        cls = Module
        with R.dataflow():
            y = cls.helper(x)
            z = cls.helper(y)
            R.output(z)
        return z
''',
    "print_and_assert": '''
@R.function(pure=False)
def main(x: R.Tensor((), "int32"), c: R.Tensor((), "bool")) -> R.Tensor((), "int32"):
    y = R.print(x, format="x: {}")
    z = R.assert_op(c, x, format="x = {}")
    return x
''',
    "private_function": '''
@I.ir_module
class Module:
    @R.function(private=True)
    def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        y = cls.helper(x)
        return y
''',
    "function_attrs": '''
@R.function
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.func_attr({"num_input": 1, "relax.force_pure": True})
    y = R.call_packed("env.copy", x, sinfo_args=R.Tensor((4,), "float32"))
    return y
''',
    "module_attrs": '''
@I.ir_module
class Module:
    I.module_attrs({"system_lib_prefix": "lib_"})

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x
''',
    "object_prim_shape_params": '''
@R.function
def main(o: R.Object, p: R.Prim("float32"), s: R.Shape(ndim=3), t: R.Tensor(ndim=2)) -> R.Object:
    return o
''',
    "unknown_dtype_tensor": '''
@R.function
def main(x: R.Tensor((2, 3)), y: R.Tensor) -> R.Tensor((2, 3)):
    return x
''',
    "callable_param": '''
@R.function
def main(f: R.Callable([R.Tensor((4,), "float32")], R.Tensor((4,), "float32")),
         x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    y = f(x)
    return y
''',
    "call_pure_packed": '''
@R.function
def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
    with R.dataflow():
        y = R.call_pure_packed("env.sort", x, sinfo_args=R.Tensor((8,), "float32"))
        R.output(y)
    return y
''',
    "scalar_tensor": '''
@R.function
def main(x: R.Tensor((), "float32")) -> R.Tensor((), "float32"):
    return x
''',
    "return_tuple": '''
@R.function
def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")):
    return (x, y)
''',
    "multiple_outputs_call_dps": '''
@R.function
def main(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        t = R.call_dps_packed("env.split", (x,), out_sinfo=[R.Tensor((2,), "float32"),
                                                           R.Tensor((2,), "float32")])
        a = t[0]
        R.output(a)
    return a
''',
    "annotated_binding": '''
@R.function(pure=False)
def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    y: R.Tensor((4,), "float32") = R.call_packed("env.copy", x)
    return y
''',
    "module_with_extern_func": '''
@I.ir_module
class Module:
    my_ext = R.ExternFunc("my_ext")

    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x
''',
    "dataflow_with_shape_symbolic_output": '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32")) -> R.Tensor(("m", "n"), "float32"):
    n = T.int64()
    m = T.int64()
    with R.dataflow():
        lv = R.call_dps_packed("env.transpose", (x,), out_sinfo=R.Tensor((m, n), "float32"))
        gv = lv
        R.output(gv)
    return gv
''',
}


def _parse(text):
    return from_source(text)


@pytest.mark.parametrize("name", sorted(RELAX_ONLY))
def test_relax_program_roundtrips(name):
    assert_roundtrip(_parse(RELAX_ONLY[name]))


@pytest.mark.parametrize("text", [MLP, MLP_SYMBOLIC], ids=["mlp", "mlp_symbolic"])
def test_course_mlp_roundtrips(text):
    assert_roundtrip(_parse(text))
