"""T.call_extern, T.call_packed, Buffer.access_ptr: built, printed and parsed as TVM does."""

import pytest

import mlckit
from mlckit import tir
from mlckit.error import TVMTypeError, TVMValueError
from mlckit.ir import assert_structural_equal
from mlckit.script import tir as T


@T.prim_func
def impl(a: T.handle, c: T.handle) -> None:
    sa = T.int32()
    A = T.match_buffer(a, (16, 16), "float32", offset_factor=16, strides=[sa, 1])
    C = T.match_buffer(c, (16,), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(A[0:16, 0:16])
        T.writes(C[0:16])
        T.evaluate(T.call_extern("rowsum", C.access_ptr("w"), A.access_ptr("r"), sa,
                                 dtype="int32"))


EXPECTED = '''# from tvm.script import tir as T

@T.prim_func
def impl(a: T.handle, c: T.handle):
    A = T.match_buffer(a, (16, 16), strides=("sa", 1), offset_factor=16)
    C = T.match_buffer(c, (16,), offset_factor=1)
    with T.block("root"):
        T.reads(A[0:16, 0:16])
        T.writes(C[0:16])
        T.call_extern("int32", "rowsum", T.tvm_access_ptr(T.type_annotation("float32"), C.data, C.elem_offset, 16, 2), T.tvm_access_ptr(T.type_annotation("float32"), A.data, A.elem_offset, A.strides[0] * 16, 1), A.strides[0])'''


def test_call_extern_prints_dtype_first_and_access_ptr_expanded_as_tvm():
    assert impl.script().strip() == EXPECTED


def test_call_extern_script_round_trips():
    assert_structural_equal(mlckit.script.from_source(impl.script()), impl)


def test_dtype_keyword_and_positional_spellings_are_the_same_call():
    x = tir.Var("x", "float32")
    a = T.call_extern("tanhf", x, dtype="float32")
    b = T.call_extern("float32", "tanhf", x)
    assert_structural_equal(a, b)
    assert a.dtype == "float32" and a.op.name == "tir.call_extern"
    assert [str(getattr(v, "value", v)) for v in a.args[:1]] == ["tanhf"]


def test_offset_factor_gives_a_symbolic_elem_offset():
    buf = tir.decl_buffer((16, 16), "float32", "A", offset_factor=16)
    assert isinstance(buf.elem_offset, tir.Var) and buf.elem_offset.name_hint == "A_elem_offset"
    assert tir.decl_buffer((16,), "float32", "B").elem_offset.value == 0


def test_access_ptr_extent_and_mask():
    buf = tir.decl_buffer((4, 8), "float32", "A")
    ptr = buf.access_ptr("rw", offset=8)
    assert ptr.op.name == "tir.tvm_access_ptr" and ptr.dtype == "handle"
    ptype, data, offset, extent, mask = ptr.args
    assert ptype.op.name == "tir.type_annotation" and ptype.dtype == "float32"
    assert data is buf.data
    assert [offset.value, extent.value, mask.value] == [8, 24, 3]


def test_access_ptr_rejects_an_unknown_mask():
    with pytest.raises(TVMValueError, match="unknown access mask 'x'"):
        tir.decl_buffer((4,), "float32", "A").access_ptr("x")


def test_call_packed_prints_as_tvm():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        with T.block("root"):
            T.evaluate(T.call_packed("env.print", A.data, 8))

    assert 'T.call_packed("env.print", A.data, 8)' in f.script()
    assert_structural_equal(mlckit.script.from_source(f.script()), f)


def test_extern_name_must_be_a_string():
    with pytest.raises(TVMTypeError, match="the function name must be a string"):
        tir.call_extern("int32", 3)


def test_register_extern_twice_needs_override():
    def one():
        return 1

    tir.register_extern("test_op_extern.one", one, override=True)
    with pytest.raises(TVMValueError, match="already registered; pass override=True"):
        tir.register_extern("test_op_extern.one", lambda: 2)
