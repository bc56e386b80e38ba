"""Bad TIR scripts, as learners write them: each is refused at parse time, at the marked
line, saying what is wrong — or, where TVM only warns, warned about at that line.  The
scripts TVM accepts that look close to them stay accepted."""

import warnings

import numpy as np
import pytest

import mlckit
from mlckit.ir.diagnostics import DiagnosticWarning
from mlckit.script import from_source

from .common import LEAKS, marked_line, refused_script, script

HEAD = '@T.prim_func\ndef f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):\n'


def body(text: str) -> str:
    """A PrimFunc f(A: (4, 4), B: (4,)) with ``text`` (indented by 4) as its body."""
    return HEAD + script(text).replace("\n", "\n    ").join(["    ", ""]).rstrip() + "\n"


CASES = [
    # (id, script, phrases the message must hold)
    ("block_iterator_defined_twice_by_remap", body("""
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vi = T.axis.remap("SS", [i, j])  # <-
                A[vi, vi] = T.float32(0)
        """), ["block iterator 'vi' is already defined", "block 'C'"]),
    ("block_iterator_defined_twice_by_axis", body("""
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vi = T.axis.spatial(4, j)  # <-
                A[vi, vi] = T.float32(0)
        """), ["block iterator 'vi' is already defined (line 5)"]),
    ("loop_variable_reassigned", body("""
        for i in range(3):
            i = i + 1  # <-
            B[i] = T.float32(0)
        """), ["cannot assign to the loop variable 'i'", "i2 = i + 1"]),
    ("loop_variable_incremented", body("""
        for i in range(3):
            i += 1  # <-
            B[i] = T.float32(0)
        """), ["cannot assign to the loop variable 'i'"]),
    ("grid_variable_reassigned", body("""
        for i, j in T.grid(4, 2):
            j = j * 2  # <-
            A[i, j] = T.float32(0)
        """), ["cannot assign to the loop variable 'j'"]),
    ("let_variable_rebound", body("""
        for i in range(4):
            x = B[i] * T.float32(2)
            x = x + T.float32(1)  # <-
            B[i] = x
        """), ["'x' is already defined in this scope (line 4)"]),
    ("buffer_allocated_twice_under_one_name", body("""
        Y = T.alloc_buffer((4,), "float32")
        Y = T.alloc_buffer((8,), "float32")  # <-
        for i in range(4):
            B[i] = Y[i]
        """), ["'Y' is already defined in this scope"]),
    ("parameter_rebound_by_match_buffer", script("""
        @T.prim_func
        def f(a: T.handle):
            a = T.match_buffer(a, (4,), "float32")  # <-
            for i in range(4):
                a[i] = T.float32(0)
        """), ["'a' is already defined in this scope"]),
    ("init_inside_a_loop_of_the_block", body("""
        for i, k in T.grid(4, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                for x in range(1):
                    with T.init():  # <-
                        B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        """), ["T.init() must be directly inside `with T.block('B')`", "inside a loop"]),
    ("init_inside_an_if_of_the_block", body("""
        for i, k in T.grid(4, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                if vi > 0:
                    with T.init():  # <-
                        B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        """), ["T.init() must be directly inside", "inside an if"]),
    ("init_given_twice", body("""
        for i, k in T.grid(4, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                with T.init():  # <-
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        """), ["block 'B' already has a T.init()"]),
    ("init_outside_any_block", body("""
        for i in range(4):
            with T.init():  # <-
                B[i] = T.float32(0)
        """), ["T.init() must be used inside a `with T.block"]),
    ("lambda_bound_to_a_name", body("""
        double = lambda x: x * 2  # <-
        for i in range(4):
            B[i] = B[double(i)]
        """), ["cannot bind a lambda to 'double'"]),
    ("nested_function_definition", body("""
        def double(x):  # <-
            return x * 2
        for i in range(4):
            B[i] = T.float32(0)
        """), ["nested function definition ('double')"]),
    ("float_index_in_a_load", body("""
        for i in range(4):
            B[i] = B[T.float32(1)]  # <-
        """), ["index 0 of buffer 'B' is a float32", "must be integers"]),
    ("float_index_in_a_store", body("""
        for i in range(4):
            A[i, T.float32(0)] = T.float32(1)  # <-
        """), ["index 1 of buffer 'A' is a float32"]),
    ("python_float_index", body("""
        for i in range(4):
            B[i] = B[1.5]  # <-
        """), ["index 0 of buffer 'B' is a float"]),
    ("loop_variable_times_a_float_as_index", body("""
        for i in range(4):
            B[i] = B[i * 0.5]  # <-
        """), ["of buffer 'B' is a float32"]),
    ("boolean_index", body("""
        for i in range(4):
            B[i] = B[i > 1]  # <-
        """), ["index 0 of buffer 'B' is a bool"]),
    ("undefined_variable", body("""
        for i in range(4):
            B[i] = C[i]  # <-
        """), ["undefined variable 'C'"]),
    ("undefined_function", body("""
        for i in range(4):
            B[i] = relu(B[i])  # <-
        """), ["undefined variable 'relu'"]),
    ("remap_kinds_longer_than_its_loops", body("""
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SSR", [i, j])  # <-
                A[vi, vj] = T.float32(0)
        """), ["'SSR' is longer than the loops"]),
    ("remap_kinds_shorter_than_its_loops", body("""
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("S", [i, j])  # <-
                A[vi, vj] = T.float32(0)
        """), ["'S' is shorter than the loops"]),
    ("remap_unknown_kind", body("""
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("TT", [i, j])  # <-
                A[vi, vj] = T.float32(0)
        """), ["unknown iterator kind 'T'"]),
    ("remap_of_an_expression", body("""
        for i, j in T.grid(2, 2):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i + j, j])  # <-
                A[vi, vj] = T.float32(0)
        """), ["T.axis.remap binds loop variables only"]),
    ("axis_without_its_binding", body("""
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(i)  # <-
                B[vi] = T.float32(0)
        """), ["T.axis.spatial() missing 1 required positional argument: 'binding'"]),
    ("axis_binding_outside_its_domain", body("""
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(4, i)  # <-
                B[vi] = T.float32(0)
        """), ["outside its domain [0, 4)"]),
    ("two_loop_variables_for_one_range", body("""
        for i, j in range(0, 4):  # <-
            A[i, j] = T.float32(0)
        """), ["expected 2 values to unpack, got 1"]),
    ("loop_over_a_non_loop", body("""
        for i in T.evaluate(0):  # <-
            B[i] = T.float32(0)
        """), ["a TIR loop must iterate over one of"]),
    ("with_of_a_non_frame", body("""
        with T.evaluate(0):  # <-
            B[0] = T.float32(0)
        """), ["a `with` statement in TIR needs a frame"]),
    ("return_in_a_prim_func", body("""
        return B  # <-
        """), ["`return` is not supported in a TIR function"]),
    ("parameter_without_annotation", script("""
        @T.prim_func
        def f(A):  # <-
            T.evaluate(0)
        """), ["the parameter 'A' needs a type annotation"]),
    ("too_many_indices_on_a_load", body("""
        for i in range(4):
            B[i] = B[i, 0]  # <-
        """), ["buffer 'B' has 1 dimension(s) but is indexed with 2"]),
    ("too_few_indices_on_a_store", body("""
        for i in range(4):
            A[i] = T.float32(0)  # <-
        """), ["buffer 'A' has 2 dimension(s) but is indexed with 1"]),
    ("store_into_a_scalar_parameter", script("""
        @T.prim_func
        def f(n: T.int32):
            n[0] = 1  # <-
        """), ["only buffers can be assigned with [...]"]),
    ("store_into_a_strided_slice", body("""
        B[0:4:2] = T.float32(0)  # <-
        """), ["at indices of 2 lane(s): the lanes must match", "T.Broadcast"]),
    ("reads_given_twice", body("""
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                T.reads(B[vi])
                T.reads(B[vi])  # <-
                B[vi] = T.float32(0)
        """), ["block 'C' already has T.reads"]),
    ("writes_given_twice", body("""
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                T.writes(B[vi])
                T.writes(B[vi])  # <-
                B[vi] = T.float32(0)
        """), ["block 'C' already has T.writes"]),
    ("predicate_given_twice", body("""
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                T.where(i < 4)
                T.where(i < 3)  # <-
                B[vi] = T.float32(0)
        """), ["block 'C' already has a T.where predicate"]),
    ("reads_outside_a_block", body("""
        T.reads(B[0:4])  # <-
        """), ["T.reads must be used inside a `with T.block(...)`"]),
    ("for_else", body("""
        for i in range(4):  # <-
            B[i] = T.float32(0)
        else:
            B[0] = T.float32(1)
        """), ["for ... else is not supported"]),
    ("chained_assignment", body("""
        for i in range(4):
            x = y = B[i]  # <-
            B[i] = x
        """), ["chained assignments"]),
    ("unknown_dtype_in_a_parameter", script("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float33")):  # <-
            T.evaluate(0)
        """), ["unknown dtype 'float33'"]),
    ("range_with_a_negative_step", body("""
        for i in range(3, 0, -1):  # <-
            B[i] = T.float32(0)
        """), ["range() in TIR needs a positive literal step, got -1"]),
    ("class_without_a_decorator", script("""
        class Module:  # <-
            @T.prim_func
            def f(A: T.Buffer((4,), "float32")):
                T.evaluate(0)
        """), ["needs a TVMScript decorator"]),
    ("annotated_binding_of_a_non_type", body("""
        for i in range(4):
            x: B = B[i]  # <-
            B[i] = x
        """), ["the annotation of a TIR binding must be a type"]),
]


@pytest.mark.parametrize("text, phrases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_tir_script_is_refused_at_its_line(text, phrases):
    refused_script(text, *phrases)


WARNED = [
    # (id, script, phrases): TVM builds these and warns ("Casting in BufferStore may lose
    # precision"); so does mlckit, at the line
    ("float_value_into_an_int_buffer", script("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
            for i in range(4):
                B[i] = A[i]  # <-
        """), ["buffer 'B' is int32 but the value is float32", "T.Cast(\"int32\", ...)"]),
    ("python_float_into_an_int_buffer", script("""
        @T.prim_func
        def f(B: T.Buffer((4,), "int32")):
            for i in range(4):
                B[i] = 0.5  # <-
        """), ["buffer 'B' is int32 but the value is float32"]),
]


@pytest.mark.parametrize("text, phrases", [c[1:] for c in WARNED], ids=[c[0] for c in WARNED])
def test_lossy_store_is_warned_at_its_line_and_still_built(text, phrases):
    with pytest.warns(DiagnosticWarning) as record:
        func = from_source(text)
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith("warning: ")
    assert f":{marked_line(text)}:" in message
    for phrase in phrases:
        assert phrase in message
    assert LEAKS.search(message) is None
    assert isinstance(func, mlckit.tir.PrimFunc)


def test_lossy_store_truncates_as_a_cast_does():
    with pytest.warns(DiagnosticWarning):
        func = from_source(WARNED[0][1])
    a = np.array([1.7, -2.5, 3.2, 0.9], "float32")
    b = np.zeros(4, "int32")
    mlckit.build(func, "lnumpy")(a, b)
    np.testing.assert_array_equal(b, a.astype("int32"))


ACCEPTED = [
    # (id, script): close to the bad scripts above, and accepted by TVM — so here too
    ("init_written_after_the_update", body("""
        for i, k in T.grid(4, 4):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]
                with T.init():
                    B[vi] = T.float32(0)
        """)),
    ("same_iterator_names_in_two_blocks", body("""
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                B[vi] = T.float32(0)
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                B[vi] = B[vi] + T.float32(1)
        """)),
    ("same_let_name_in_two_loop_bodies", body("""
        for i in range(4):
            x = B[i] * T.float32(2)
            B[i] = x
        for j in range(4):
            x = B[j] + T.float32(1)
            B[j] = x
        """)),
    ("python_value_bound_again_to_the_same_value", body("""
        n = 4
        n = 4
        for i in range(n):
            B[i] = T.float32(0)
        """)),
    ("index_cast_to_an_integer", body("""
        for i in range(4):
            B[i] = B[T.Cast("int32", T.float32(1))]
        """)),
    ("float_value_into_a_float16_buffer", script("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float16")):
            for i in range(4):
                B[i] = A[i]
        """)),
]


@pytest.mark.parametrize("text", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_close_valid_script_is_accepted_without_warning(text):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert isinstance(from_source(text), mlckit.tir.PrimFunc)
