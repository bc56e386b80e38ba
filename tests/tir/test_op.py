"""TIR intrinsics written in scripts: ``T.tvm_storage_sync``."""

from __future__ import annotations

from mlckit.ir import assert_structural_equal
from mlckit.script import from_source
from mlckit.script import tir as T
from mlckit.tir import stmt as S


@T.prim_func
def fetch_then_read(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for tx in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("tile"):
            A_shared = T.alloc_buffer((64,), scope="shared")
            A_shared[tx] = A[tx]
            T.tvm_storage_sync("shared")
            B[tx] = A_shared[63 - tx]


def test_storage_sync_is_an_evaluated_call_of_the_intrinsic():
    body = fetch_then_read.body.block.body.body.block.body
    sync = body.seq[1]
    assert isinstance(sync, S.Evaluate)
    assert sync.value.op.name == "tir.tvm_storage_sync" and sync.value.dtype == "int32"
    assert [a.value for a in sync.value.args] == ["shared"]


def test_storage_sync_prints_as_tvm_and_parses_back():
    text = fetch_then_read.script()
    assert '            T.tvm_storage_sync("shared")\n' in text
    assert_structural_equal(from_source(text), fetch_then_read)


def test_storage_sync_takes_tvm_027s_extra_arguments():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            A[tx] = T.float32(0)
            T.tvm_storage_sync("shared", T.bool(False), -1)

    text = f.script()
    assert '        T.tvm_storage_sync("shared", T.bool(False), -1)' in text
    assert_structural_equal(from_source(text), f)
