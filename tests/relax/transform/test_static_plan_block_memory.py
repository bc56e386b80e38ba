"""StaticPlanBlockMemory: storage reuse without overlapping lifetimes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mlckit
from mlckit import relax
from mlckit.ir import GlobalVar, IRModule
from mlckit.relax import (
    Call,
    DataflowBlock,
    DataflowVar,
    Function,
    SeqExpr,
    TensorStructInfo,
    Tuple,
    Var,
    VarBinding,
)
from mlckit.relax.op import call_tir
from mlckit.relax.transform import CallTIRRewrite, StaticPlanBlockMemory, ToNonDataflow
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T
from mlckit.tir import PrimFunc
from mlckit.tir.buffer import decl_buffer
from mlckit.tir.expr import IntImm
from mlckit.tir.expr import Var as TVar
from mlckit.tir.stmt import BufferStore, stmt_seq

N = 8


def _add_kernel(arity: int) -> PrimFunc:
    """out[i] = sum of the inputs + 1 (element-wise), over N float32 elements."""
    handles = [TVar(f"h{i}", "handle") for i in range(arity + 1)]
    bufs = [decl_buffer([IntImm("int64", N)], "float32", f"B{i}") for i in range(arity + 1)]
    stores = []
    for j in range(N):
        idx = [IntImm("int64", j)]
        value = bufs[0][idx]
        for b in bufs[1:arity]:
            value = value + b[idx]
        stores.append(BufferStore(bufs[-1], value + mlckit.tir.const(1.0, "float32"), idx))
    return PrimFunc(handles, stmt_seq(*stores), None, dict(zip(handles, bufs)))


def build_graph(edges: list[list[int]], outputs: list[int]):
    """main(x): t_k = kernel(inputs of t_k) for k in order; returns the tuple of ``outputs``
    (an index -1 is x).  Returns (module, numpy reference function)."""
    sinfo = TensorStructInfo([N], "float32")
    x = Var("x", sinfo)
    funcs = {}
    gvs = {}
    values = []
    bindings = []
    for k, ins in enumerate(edges):
        arity = len(ins)
        if arity not in gvs:
            gvs[arity] = GlobalVar(f"add{arity}")
            funcs[gvs[arity]] = _add_kernel(arity).with_attr("global_symbol", f"add{arity}")
        args = [x if i < 0 else values[i] for i in ins]
        v = DataflowVar(f"t{k}", sinfo) if k not in outputs else Var(f"t{k}", sinfo)
        bindings.append(VarBinding(v, call_tir(gvs[arity], args, sinfo)))
        values.append(v)
    result = [values[i] for i in outputs]
    body = Tuple(result) if len(result) > 1 else result[0]
    main = Function([x], SeqExpr([DataflowBlock(bindings)], body)).with_attr("global_symbol",
                                                                                 "main")
    funcs[GlobalVar("main")] = main

    def reference(xv):
        vals = []
        for ins in edges:
            vals.append(sum(xv if i < 0 else vals[i] for i in ins) + 1)
        out = [vals[i] for i in outputs]
        return out if len(out) > 1 else out[0]

    return IRModule(funcs), reference


def plan(mod):
    return StaticPlanBlockMemory()(CallTIRRewrite()(ToNonDataflow()(mod)))


def storages(mod) -> list:
    """(storage var, [alloc_tensor vars placed in it]) in binding order."""
    out = {}
    for block in mod["main"].body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, Call) and getattr(v.op, "name", "") == "relax.memory.alloc_storage":
                out[id(b.var)] = (b.var, [])
            if isinstance(v, Call) and getattr(v.op, "name", "") == "relax.memory.alloc_tensor":
                out[id(v.args[0])][1].append(b.var)
    return list(out.values())


def test_chain_uses_at_most_two_storages_and_results_are_unchanged():
    n = 12
    mod, ref = build_graph([[-1]] + [[k] for k in range(n - 1)], [n - 1])
    planned = plan(mod)
    assert len(storages(planned)) <= 2
    x = np.arange(N, dtype="float32")
    vm = relax.VirtualMachine(relax.build(mod, target="lnumpy"), mlckit.cpu())
    np.testing.assert_allclose(vm["main"](x).numpy(), ref(x))
    vm2 = relax.VirtualMachine(relax.build(planned, pipeline=_tail_pipeline(), target="lnumpy"),
                               mlckit.cpu())
    np.testing.assert_allclose(vm2["main"](x).numpy(), ref(x))


def _tail_pipeline():
    return mlckit.transform.Sequential([relax.transform.LowerAllocTensor(),
                                        relax.transform.VMShapeLower()])


def test_storage_sizes_are_bytes_and_grow_to_the_largest_user():
    @I.ir_module
    class Module:
        @T.prim_func
        def k8(a: T.Buffer((T.int64(8),), "float32"), b: T.Buffer((T.int64(8),), "float32")):
            T.evaluate(0)

        @T.prim_func
        def k10(a: T.Buffer((T.int64(8),), "float32"), b: T.Buffer((T.int64(10),), "float32")):
            T.evaluate(0)

        @T.prim_func
        def k1010(a: T.Buffer((T.int64(10),), "float32"),
                  b: T.Buffer((T.int64(10),), "float32")):
            T.evaluate(0)

        @R.function
        def main(x: R.Tensor((8,), "float32")):
            cls = Module
            with R.dataflow():
                a = R.call_tir(cls.k8, (x,), R.Tensor((8,), "float32"))
                b = R.call_tir(cls.k8, (a,), R.Tensor((8,), "float32"))
                c = R.call_tir(cls.k10, (b,), R.Tensor((10,), "float32"))
                d = R.call_tir(cls.k1010, (c,), R.Tensor((10,), "float32"))
                R.output(d)
            return d

    planned = plan(Module)
    text = planned["main"].script()
    # a: storage (32 bytes); b: storage_1; c reuses storage (released after b), enlarged to 40
    assert 'R.memory.alloc_storage(R.shape([40]), R.prim_value(0), R.str("global"), ' \
           'R.dtype("float32"))' in text
    assert 'R.memory.alloc_storage(R.shape([32])' in text
    assert text.count("R.memory.alloc_storage") == 2
    # the returned tensor is not planned
    assert text.count("R.builtin.alloc_tensor") == 1


def test_upper_bound_sizes_symbolic_tensors():
    @I.ir_module
    class Module:
        @T.prim_func
        def k(a: T.handle, b: T.handle):
            T.evaluate(0)

        @R.function
        def main(x: R.Tensor(("n", 4), "float32")):
            n = T.int64()
            R.func_attr({"tir_var_upper_bound": {"n": 16}})
            cls = Module
            with R.dataflow():
                a = R.call_tir(cls.k, (x,), R.Tensor((n, 4), "float32"))
                b = R.call_tir(cls.k, (a,), R.Tensor((n, 4), "float32"))
                c = R.call_tir(cls.k, (b,), R.Tensor((n, 4), "float32"))
                d = R.call_tir(cls.k, (c,), R.Tensor((n, 4), "float32"))
                R.output(d)
            return d

    text = plan(Module)["main"].script()
    assert text.count("R.memory.alloc_storage(R.shape([256])") == 2   # 16 * 4 * 4 bytes
    assert "R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4])" in text


def test_symbolic_without_bound_reuses_only_equal_sizes():
    @I.ir_module
    class Module:
        @T.prim_func
        def k(a: T.handle, b: T.handle):
            T.evaluate(0)

        @R.function
        def main(x: R.Tensor(("n",), "float32")):
            n = T.int64()
            cls = Module
            with R.dataflow():
                a = R.call_tir(cls.k, (x,), R.Tensor((n,), "float32"))
                b = R.call_tir(cls.k, (a,), R.Tensor((n,), "float32"))
                c = R.call_tir(cls.k, (b,), R.Tensor((n * 2,), "float32"))
                d = R.call_tir(cls.k, (c,), R.Tensor((n,), "float32"))
                e = R.call_tir(cls.k, (d,), R.Tensor((n,), "float32"))
                R.output(e)
            return e

    planned = plan(Module)
    groups = storages(planned)
    names = [[v.name_hint for v in users] for _, users in groups]
    # a and d share (size n*4), b has its own, c (n*8) cannot reuse an n*4 storage
    assert len(groups) == 3
    assert sorted(len(u) for u in names) == [1, 1, 2]


def test_tensor_passed_to_a_relax_function_is_not_planned():
    @I.ir_module
    class Module:
        @T.prim_func
        def k(a: T.Buffer((T.int64(4),), "float32"), b: T.Buffer((T.int64(4),), "float32")):
            T.evaluate(0)

        @R.function
        def keep(y: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return y

        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Module
            a = R.call_tir(cls.k, (x,), R.Tensor((4,), "float32"))
            b = cls.keep(a)
            c = R.call_tir(cls.k, (b,), R.Tensor((4,), "float32"))
            return c

    text = plan(Module)["main"].script()
    assert "R.memory.alloc_storage" not in text


# -- property test: no live tensor's storage is reused -----------------------------------------
@st.composite
def dags(draw):
    n = draw(st.integers(2, 9))
    edges = []
    for k in range(n):
        ins = draw(st.lists(st.integers(-1, k - 1), min_size=1, max_size=3))
        edges.append(ins)
    outputs = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=2, unique=True))
    if n - 1 not in outputs:
        outputs.append(n - 1)
    return edges, sorted(outputs)


def live_ranges(func):
    """For each tensor var: (index of its allocation, index of its last use)."""
    bindings = [b for block in func.body.blocks for b in block.bindings]
    alias = {}
    start = {}
    for i, b in enumerate(bindings):
        v = b.value
        if isinstance(v, Call) and getattr(v.op, "name", "") in (
                "relax.memory.alloc_tensor", "relax.builtin.alloc_tensor"):
            alias[id(b.var)] = b.var
            start[id(b.var)] = i
        elif isinstance(v, Var) and id(v) in alias:
            alias[id(b.var)] = alias[id(v)]
    end = dict(start)

    def uses(expr):
        if isinstance(expr, Var):
            return [expr]
        if isinstance(expr, Tuple):
            return [u for f in expr.fields for u in uses(f)]
        if isinstance(expr, Call):
            return [u for a in expr.args for u in uses(a)]
        return []

    for i, b in enumerate(bindings):
        for u in uses(b.value):
            if id(u) in alias:
                root = alias[id(u)]
                end[id(root)] = max(end[id(root)], i)
    for u in uses(func.body.body):
        if id(u) in alias:
            end[id(alias[id(u)])] = len(bindings)
    return start, end


@settings(max_examples=60, deadline=None)
@given(dags())
def test_no_live_tensor_storage_is_reused(graph):
    edges, outputs = graph
    mod, _ = build_graph(edges, outputs)
    planned = plan(mod)
    func = planned["main"]
    start, end = live_ranges(func)
    for _, users in storages(planned):
        spans = sorted((start[id(u)], end[id(u)]) for u in users)
        for (_s0, e0), (s1, _e1) in zip(spans, spans[1:]):
            # the next tensor in this storage is allocated only after the previous one's
            # last use (the allocation comes before the call that produces it)
            assert s1 > e0, (edges, outputs, planned["main"].script())
        for u in users:
            assert not any(u is o for o in _outputs(func)), "a returned tensor was planned"


def _outputs(func):
    body = func.body.body
    return body.fields if isinstance(body, Tuple) else [body]


@settings(max_examples=15, deadline=None)
@given(dags())
def test_planned_graphs_compute_the_same_results(graph):
    edges, outputs = graph
    mod, ref = build_graph(edges, outputs)
    vm = relax.VirtualMachine(relax.build(mod, target="lnumpy"), mlckit.cpu())
    x = np.linspace(-1, 1, N).astype("float32")
    got = vm["main"](x)
    want = ref(x)
    if isinstance(want, list):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5)
    else:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)

