"""Bad TIR scripts: each raises mlckit.DiagnosticError at the offending line, saying what
is wrong and why.  Scripts are strings, so line numbers count from their first line."""

import textwrap

import pytest

import mlckit
from mlckit.script import from_source


def error_of(text: str) -> mlckit.DiagnosticError:
    with pytest.raises(mlckit.DiagnosticError) as err:
        from_source(textwrap.dedent(text).lstrip("\n"))
    return err.value


CASES = [
    # (id, script, line, phrase)
    ("undefined_variable", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = B[i]
        """, 4, "undefined variable 'B'"),
    ("remap_kinds_longer_than_loops", """
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SSR", [i, j])
                    A[vi, vj] = T.float32(0)
        """, 5, "iterator-kind string 'SSR' is longer than the loops"),
    ("remap_unknown_kind", """
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi, vj = T.axis.remap("SX", [i, j])
                    A[vi, vj] = T.float32(0)
        """, 5, "unknown iterator kind 'X'"),
    ("remap_of_a_non_loop_variable", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), n: T.int32):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.remap("S", [n])
                    A[vi] = T.float32(0)
        """, 5, "not the variable of an enclosing loop"),
    ("binding_out_of_domain", """
        @T.prim_func
        def f(A: T.Buffer((128,), "float32")):
            for i in range(256):
                with T.block("A"):
                    vi = T.axis.spatial(128, i)
                    A[vi] = T.float32(0)
        """, 5, "outside its domain [0, 128)"),
    ("too_many_indices_on_load", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                B[i] = A[i, 0]
        """, 4, "buffer 'A' has 1 dimension(s) but is indexed with 2"),
    ("too_few_indices_on_store", """
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i in range(4):
                A[i] = T.float32(0)
        """, 4, "buffer 'A' has 2 dimension(s) but is indexed with 1"),
    ("init_outside_a_block", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.init():
                    A[i] = T.float32(0)
        """, 4, "T.init() must be used inside a `with T.block"),
    ("reads_outside_a_block", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            T.reads(A[0:4])
            for i in range(4):
                A[i] = T.float32(0)
        """, 3, "T.reads must be used inside a `with T.block"),
    ("where_outside_a_block", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                T.where(i < 2)
                A[i] = T.float32(0)
        """, 4, "T.where must be used inside a `with T.block"),
    ("unknown_dtype", """
        @T.prim_func
        def f(A: T.Buffer((4,), "flaot32")):
            T.evaluate(0)
        """, 2, "unknown dtype 'flaot32'"),
    ("loop_variable_used_inside_a_block", """
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    A[vi, j] = T.float32(0)
        """, 6, "the loop variable 'j' (defined outside any block) is used inside block 'A'"),
    ("buffer_used_outside_its_block", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            with T.block("outer"):
                tmp = T.alloc_buffer((4,))
                T.evaluate(0)
            for i in range(4):
                A[i] = tmp[i]
        """, 7, "undefined variable 'tmp'"),
    ("duplicate_init", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.reduce(4, i)
                    with T.init():
                        A[0] = T.float32(0)
                    with T.init():
                        A[0] = T.float32(0)
                    A[0] = A[0] + T.float32(1)
        """, 8, "already has a T.init()"),
    ("duplicate_reads", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    T.reads(A[vi])
                    T.reads(A[vi])
                    A[vi] = T.float32(0)
        """, 7, "already has T.reads"),
    ("loop_over_a_python_list", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in [0, 1, 2]:
                A[i] = T.float32(0)
        """, 3, "a TIR loop must iterate over one of: range, T.serial, T.grid"),
    ("parameter_without_annotation", """
        @T.prim_func
        def f(A):
            T.evaluate(0)
        """, 2, "the parameter 'A' needs a type annotation"),
    ("undefined_symbolic_size", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            n = T.int32()
            for i in range(n):
                A[0] = T.float32(0)
        """, 4, "the variable 'n' is used but never defined"),
    ("return_in_tir", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            return A
        """, 3, "`return` is not supported in a TIR function"),
    ("axis_outside_the_top_of_a_block", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)
        """, 4, "must be defined at the top of a `with T.block"),
    ("with_on_a_non_frame", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            with 3:
                A[0] = T.float32(0)
        """, 3, "a `with` statement in TIR needs a frame"),
    ("store_to_a_non_buffer", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), n: T.int32):
            n[0] = T.float32(0)
        """, 3, "only buffers can be assigned with [...]"),
    ("match_buffer_of_a_non_parameter", """
        @T.prim_func
        def f(a: T.handle):
            b = T.handle()
            B = T.match_buffer(b, (4,))
            T.evaluate(0)
        """, 4, "is not a parameter of the function"),
    ("if_on_a_string", """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            if "yes":
                A[0] = T.float32(0)
        """, 3, "an if condition must be a boolean expression"),
]


@pytest.mark.parametrize("script,line,phrase", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_script_is_reported_at_its_line(script, line, phrase):
    err = error_of(script)
    assert phrase in err.message
    assert err.line == line


def test_error_text_shows_the_source_line_and_a_caret():
    err = error_of("""
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = B[i]
        """)
    text = str(err)
    assert "error: undefined variable 'B'" in text
    assert "4 |         A[i] = B[i]" in text
    caret_line = text.splitlines()[-1]
    assert caret_line.strip() == "| ^" or caret_line.rstrip().endswith("^")
    assert caret_line.index("^") == text.splitlines()[-2].index("B[i]")


def test_error_in_a_decorated_function_points_at_the_file_line():
    from mlckit.script import tir as T

    with pytest.raises(mlckit.DiagnosticError) as err:
        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            for i, j in T.grid(4, 4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    A[vi, j] = T.float32(0)  # the offending line

    import inspect

    lines, start = inspect.getsourcelines(test_error_in_a_decorated_function_points_at_the_file_line)
    offending = start + next(n for n, text in enumerate(lines) if "the offending line" in text)
    assert err.value.line == offending
    assert __file__.endswith(err.value.span.source_name.split("/")[-1])


def test_a_module_parsed_without_the_well_formed_check_spares_its_functions():
    # as TVM: @I.ir_module(check_well_formed=False) parses an undefined size, for a pass's
    # own error to be tested
    mod = from_source('''
@I.ir_module(check_well_formed=False)
class Mod:
    @T.prim_func
    def main(A: T.Buffer((4,), "float32")):
        n = T.int32()
        for i in range(n):
            A[0] = T.float32(0)
''')
    assert mod["main"].body.extent.name_hint == "n"
