"""The TIR IRBuilder API, with TVM's names (``tvm.script.ir_builder.tir.ir``): this module
gathers it from ``func`` (PrimFuncs, buffers), ``block`` (blocks, block iterators), ``loop``,
``stmt`` (the other statements) and ``scalar`` (scalar types).

These functions build IR imperatively; the TVMScript parser calls the very same functions,
so a script and the equivalent builder calls give structurally equal IR::

    from mlckit.script.ir_builder import IRBuilder
    from mlckit.script.ir_builder import tir as T

    with IRBuilder() as ib:
        with T.prim_func():
            T.func_name("add_one")
            A = T.arg("A", T.Buffer((4,), "float32"))
            B = T.arg("B", T.Buffer((4,), "float32"))
            with T.grid(4) as i:
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    T.buffer_store(B, A[vi] + T.float32(1), [vi])
    func = ib.get()
"""

from __future__ import annotations

from .block import (
    alloc_buffer,
    axis,
    block,
    block_attr,
    init,
    reads,
    sblock,
    sblock_alloc_buffer,
    sblock_attr,
    where,
    writes,
)
from .func import (
    Buffer_,
    BufferProxy,
    arg,
    buffer,
    func_attr,
    func_name,
    func_ret,
    match_buffer,
    prim_func,
)
from .loop import grid, parallel, range_sugar, serial, thread_binding, unroll, vectorized
from .scalar import (
    boolean,
    float16,
    float32,
    float64,
    handle,
    int8,
    int16,
    int32,
    int64,
    meta_var,
    uint8,
    uint16,
    uint32,
    uint64,
    var,
)
from .stmt import (
    Assert,
    Else,
    If,
    Let,
    LetStmt,
    Then,
    While,
    allocate,
    attr,
    buffer_store,
    decl_buffer,
    env_thread,
    evaluate,
    launch_thread,
    let,
)

__all__ = ["Assert", "BufferProxy", "Buffer_", "Else", "If", "Let", "LetStmt", "Then", "While",
           "alloc_buffer", "allocate", "arg", "attr", "axis", "block", "block_attr", "boolean",
           "buffer", "buffer_store", "decl_buffer", "env_thread", "evaluate", "float16",
           "float32", "float64", "func_attr", "func_name", "func_ret", "grid", "handle",
           "init", "int16", "int32", "int64", "int8", "launch_thread", "let", "match_buffer",
           "meta_var", "parallel", "prim_func", "range_sugar", "reads", "sblock",
           "sblock_alloc_buffer", "sblock_attr", "serial", "thread_binding", "uint16", "uint32",
           "uint64", "uint8", "unroll", "var", "vectorized", "where", "writes"]
