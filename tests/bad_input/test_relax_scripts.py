"""Bad Relax scripts: each is refused when the module is parsed (TVM runs well-formedness on
``@I.ir_module``), at the marked line — a call that does not fit its PrimFunc included, so
that nothing ill-formed reaches the VM.  Close valid modules stay accepted and run."""

import numpy as np
import pytest

import mlckit
from mlckit import relax
from mlckit.script import from_source

from .common import refused_script, script

KERNELS = '''
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
            C: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] + B[vi]

    @T.prim_func
    def dyn_add(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        for i in range(n):
            with T.block("C"):
                vi = T.axis.spatial(n, i)
                C[vi] = A[vi] + B[vi]

    @T.prim_func
    def split(A: T.Buffer((4,), "float32"), B: T.Buffer((2,), "float32"),
              C: T.Buffer((2,), "float32")):
        for i in range(2):
            with T.block("B"):
                vi = T.axis.spatial(2, i)
                B[vi] = A[vi]
                C[vi] = A[vi + 2]
'''


def module(main: str) -> str:
    """The kernels above plus ``main`` (a Relax function, indented as a method)."""
    text = script(main)
    return KERNELS.lstrip("\n") + "\n" + "".join("    " + line + "\n" for line in text.splitlines())


CASES = [
    ("call_tir_with_one_input_too_many", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, y, x), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["R.call_tir passes 3 inputs to 'add', which takes 3 parameters (A, B, C)",
               "at most 2 inputs"]),
    ("call_tir_with_one_input_too_few", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["out_sinfo describes 1 output, but 'add' has 2 output parameters (B, C)"]),
    ("call_tir_out_sinfo_of_another_shape", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((8,), "float32"))  # <-
            return z
        """), ["out_sinfo R.Tensor((8,), \"float32\") does not fit output parameter 'C' of 'add'",
               "dimension 0 is 8, the buffer's is 4"]),
    ("call_tir_out_sinfo_of_another_dtype", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), "float16"))  # <-
            return z
        """), ["output parameter 'C' of 'add'", "the dtype is float16, the buffer's is float32"]),
    ("call_tir_out_sinfo_of_another_rank", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4, 1), "float32"))  # <-
            return z
        """), ["the rank is 2, the buffer's is 1"]),
    ("call_tir_int32_input_to_a_float32_kernel", module("""
        @R.function
        def main(x: R.Tensor((4,), "int32"), y: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["input 0 of R.call_tir is R.Tensor((4,), \"int32\"), but parameter 'A' of 'add' "
               "is R.Tensor((4,), \"float32\")"]),
    ("call_tir_input_of_another_shape", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((5,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["input 1 of R.call_tir is R.Tensor((5,), \"float32\"), but parameter 'B'"]),
    ("call_tir_input_of_another_rank", module("""
        @R.function
        def main(x: R.Tensor((2, 2), "float32"), y: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["input 0 of R.call_tir is R.Tensor((2, 2), \"float32\")"]),
    ("call_tir_symbolic_inputs_that_disagree", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((5,), "float32")):
            cls = Module
            z = R.call_tir(cls.dyn_add, (x, y), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["input 1 of R.call_tir is R.Tensor((5,), \"float32\"), but parameter 'B' of "
               "'dyn_add' is R.Tensor((n,), \"float32\")"]),
    ("call_tir_symbolic_output_of_another_size", module("""
        @R.function
        def main(x: R.Tensor(("m",), "float32")):
            cls = Module
            z = R.call_tir(cls.dyn_add, (x, x), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["output parameter 'C' of 'dyn_add'", "(n = m, from the inputs)",
               "dimension 0 is 4, the buffer's is m"]),
    ("call_tir_one_out_sinfo_for_two_outputs", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.split, (x,), out_sinfo=R.Tensor((2,), "float32"))  # <-
            return z
        """), ["out_sinfo describes 1 output, but 'split' has 2 output parameters (B, C)"]),
    ("call_tir_of_a_relax_function", module("""
        @R.function
        def helper(x: R.Tensor((4,), "float32")):
            return x

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.helper, (x,), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["R.call_tir calls 'helper', which is a Function, not a PrimFunc"]),
    ("call_tir_of_a_name", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            z = R.call_tir("add", (x, x), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["R.call_tir expects a GlobalVar of a PrimFunc (e.g. cls.add)"]),
    ("call_of_a_function_not_in_the_module", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.mul, (x, x), out_sinfo=R.Tensor((4,), "float32"))  # <-
            return z
        """), ["has no attribute 'mul'"]),
    ("undefined_variable", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            z = R.add(x, w)  # <-
            return z
        """), ["undefined variable 'w'"]),
    ("dataflow_variable_used_after_its_block", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.add(x, x)
                z = R.add(y, x)
                R.output(z)
            w = R.add(y, z)  # <-
            return w
        """), ["DataflowVar 'y' is used outside the dataflow block", "R.output"]),
    ("impure_call_in_a_dataflow_block", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.call_packed("env.log", x, sinfo_args=R.Tensor((4,), "float32"))  # <-
                R.output(y)
            return y
        """), ["non-pure call in dataflow block: R.call_packed(\"env.log\", ...)"]),
    ("impure_call_in_a_pure_function", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.call_packed("env.log", x, sinfo_args=R.Tensor((4,), "float32"))  # <-
            return y
        """), ["annotated as pure but contains an impure call", "pure=False"]),
    ("if_in_a_dataflow_block", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32"), c: R.Tensor((), "bool")):
            with R.dataflow():
                if c:  # <-
                    y = R.add(x, x)
                else:
                    y = x
                R.output(y)
            return y
        """), ["`if` is not allowed inside a dataflow block"]),
    ("parameter_without_annotation", module("""
        @R.function
        def main(x):  # <-
            return x
        """), ["parameter 'x' needs a struct info annotation"]),
    ("add_of_two_dtypes", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "int32")):
            z = R.add(x, y)  # <-
            return z
        """), ["relax.add: the dtypes of x1 (float32) and x2 (int32) must be equal"]),
    ("matmul_of_disagreeing_shapes", module("""
        @R.function
        def main(x: R.Tensor((2, 3), "float32"), y: R.Tensor((4, 5), "float32")):
            z = R.matmul(x, y)  # <-
            return z
        """), ["relax.matmul: the reduction dims differ"]),
    ("output_outside_a_dataflow_block", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, x)
            R.output(y)  # <-
            return y
        """), ["R.output should appear inside a dataflow block"]),
]


@pytest.mark.parametrize("text, phrases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_relax_script_is_refused_at_its_line(text, phrases):
    refused_script(text, *phrases)


def test_an_ill_formed_module_built_without_the_parser_is_refused_by_relax_build():
    """``relax.build`` checks well-formedness too (a BlockBuilder module has no lines)."""
    from mlckit.ir import IRModule
    from mlckit.relax import BlockBuilder, TensorStructInfo, Var
    from mlckit.relax.op import call_tir

    kernels = from_source(KERNELS)
    bb = BlockBuilder()
    x = Var("x", TensorStructInfo([4], "int32"))
    with bb.function("main", [x]):
        add = kernels.get_global_var("add")
        out = bb.emit(call_tir(add, [x, x], TensorStructInfo([4], "float32")))
        bb.emit_func_output(out)
    mod = bb.get()
    mod = IRModule({**{gv: f for gv, f in kernels.functions.items()}, **mod.functions})
    from .common import refused

    refused(lambda: relax.build(mod, "llvm"), "input 0 of R.call_tir is R.Tensor((4,), \"int32\")",
            kind=mlckit.DiagnosticError)


ACCEPTED = [
    ("call_tir_of_a_symbolic_kernel_with_static_inputs", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.dyn_add, (x, x), out_sinfo=R.Tensor((4,), "float32"))
            return z
        """)),
    ("call_tir_of_a_symbolic_kernel_with_symbolic_inputs", module("""
        @R.function
        def main(x: R.Tensor(("m",), "float32")):
            m = T.int64()
            cls = Module
            z = R.call_tir(cls.dyn_add, (x, x), out_sinfo=R.Tensor((m,), "float32"))
            return z
        """)),
    ("call_tir_with_two_outputs", module("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            z = R.call_tir(cls.split, (x,), out_sinfo=[R.Tensor((2,), "float32"),
                                                       R.Tensor((2,), "float32")])
            return z
        """)),
]


@pytest.mark.parametrize("text", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_close_valid_module_is_accepted_and_runs(text):
    mod = from_source(text)
    vm = relax.VirtualMachine(relax.build(mod, "llvm"), mlckit.cpu())
    x = np.arange(4, dtype="float32")
    out = vm["main"](x)
    if isinstance(out, tuple):
        np.testing.assert_array_equal(np.concatenate([o.numpy() for o in out]), x)
    else:
        np.testing.assert_array_equal(out.numpy(), x + x)
