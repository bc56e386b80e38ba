"""VM dispatch overhead and end-to-end MLP time against NumPy.

1. A chain of 1,000 ``call_tir``s on 1-element tensors: the VM's cost per ``call_tir``
   (µs), next to the cost of calling the same compiled kernel directly from Python, with its
   argument check and without (``unchecked_entry``: how the VM calls a kernel on tensors it
   allocated).
2. The course's MLP (784-128-10, symbolic batch) at batch 1 and 64, as a ratio to the
   NumPy reference ``relu(x @ w0.T + b0) @ w1.T + b1``.

Usage::

    python benchmarks/vm_overhead.py [--target llvm] [--chain 1000] [--tvm /path/to/python]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import mlckit
from mlckit import relax
from mlckit.ir import GlobalVar, IRModule
from mlckit.relax import (
    DataflowBlock,
    DataflowVar,
    Function,
    SeqExpr,
    TensorStructInfo,
    Var,
    VarBinding,
)
from mlckit.relax.op import call_tir
from mlckit.script import tir as T

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@T.prim_func
def add_one(a: T.Buffer((T.int64(1),), "float32"), b: T.Buffer((T.int64(1),), "float32")):
    for i in T.serial(T.int64(1)):
        with T.block("b"):
            vi = T.axis.spatial(T.int64(1), i)
            b[vi] = a[vi] + T.float32(1)


def chain_module(length: int) -> IRModule:
    sinfo = TensorStructInfo([1], "float32")
    gv = GlobalVar("add_one")
    x = Var("x", sinfo)
    prev, bindings = x, []
    for k in range(length):
        v = (Var if k == length - 1 else DataflowVar)(f"t{k}", sinfo)
        bindings.append(VarBinding(v, call_tir(gv, [prev], sinfo)))
        prev = v
    main = Function([x], SeqExpr([DataflowBlock(bindings)], prev)).with_attr("global_symbol",
                                                                              "main")
    return IRModule({gv: add_one.with_attr("global_symbol", "add_one"), "main": main})


# TVM 0.27 in its own environment: the same chain (its TVMScript, in TVM 0.27's names) run by
# its VM; prints the best seconds of one run
TVM_SNIPPET = """
import json, sys, time
import numpy as np
import tvm
from tvm import relax
text, chain = json.load(sys.stdin)
ex = tvm.compile(tvm.script.from_source(text),
                 target=tvm.target.Target({"kind": "llvm", "num-cores": 1}))
f = relax.VirtualMachine(ex, tvm.cpu())["main"]
x = tvm.runtime.tensor(np.zeros(1, "float32"))
assert float(f(x).numpy()[0]) == chain
best = float("inf")
for _ in range(5):
    start = time.perf_counter()
    f(x)
    best = min(best, time.perf_counter() - start)
print(best)
"""


def tvm_chain_seconds(python: str, length: int) -> float:
    """One run of the chain on TVM 0.27's VM (``python``: its environment's interpreter)."""
    text = chain_module(length).script()
    text = (text.replace("out_sinfo=", "out_ty=").replace("T.block(", "T.sblock(")
            .replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n"))
    out = subprocess.run([python, "-c", TVM_SNIPPET], input=json.dumps([text, length]),
                         capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def calls(f, a, b, n: int) -> None:
    """``f(a, b)`` ``n`` times in a plain loop."""
    for _ in range(n):
        f(a, b)


def best_of(f, repeat: int = 5, number: int = 1) -> float:
    f()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="llvm")
    parser.add_argument("--chain", type=int, default=1000)
    parser.add_argument("--tvm", help="python of an environment with apache-tvm 0.27")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating turns of mlckit and TVM on the chain (best kept)")
    args = parser.parse_args()

    ex = relax.build(chain_module(args.chain), target=args.target)
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    x = np.zeros(1, "float32")
    assert float(vm["main"](x).numpy()[0]) == args.chain
    # this host's speed drifts within seconds: mlckit and TVM (in its own process) are timed
    # in --rounds alternating turns, the best of each kept
    per_run, theirs = float("inf"), float("inf")
    for _ in range(args.rounds):
        per_run = min(per_run, best_of(lambda: vm["main"](x)))
        if args.tvm:
            theirs = min(theirs, tvm_chain_seconds(args.tvm, args.chain))
    kernel = ex.kernels["add_one"]
    a, b = np.zeros(1, "float32"), np.zeros(1, "float32")
    checked = best_of(lambda: calls(kernel, a, b, args.chain)) / args.chain
    # what the VM calls for tensors it allocated: Numba's dispatcher, no argument check
    entry = kernel.unchecked_entry([((1,), np.dtype("float32"))] * 2)
    direct = best_of(lambda: calls(entry, a, b, args.chain)) / args.chain
    n_instr = ex.func_table[ex.func_map["main"]].end_instr - ex.func_table[ex.func_map[
        "main"]].start_instr
    print(f"VM dispatch ({args.target}): chain of {args.chain} call_tir on 1-element tensors, "
          f"{n_instr} instructions")
    print(f"  per call_tir through the VM : {per_run / args.chain * 1e6:8.2f} us")
    print(f"  per instruction             : {per_run / n_instr * 1e6:8.2f} us")
    print(f"  the kernel called directly  : {checked * 1e6:8.2f} us (its arguments checked), "
          f"{direct * 1e6:.2f} us (unchecked, as the VM calls it)")
    print(f"  VM overhead per call_tir    : {(per_run / args.chain - direct) * 1e6:8.2f} us "
          "(allocating the result, the copies; the direct figure includes a Python loop's "
          "step, the VM's straight-line code has none)")
    if args.tvm:
        print(f"  TVM 0.27, per call_tir      : {theirs / args.chain * 1e6:8.2f} us (kernel "
              f"included)   mlckit / TVM {per_run / theirs:5.2f}x")

    from mlckit.models import fashion_mlp
    from tests.runtime.vm.mlp_modules import MyModule, numpy_mlp

    params = fashion_mlp()
    ex = relax.build(MyModule, target=args.target)
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    weights = [params[k] for k in ("w0", "b0", "w1", "b1")]
    print(f"MLP 784-128-10 ({args.target}), best of 5:")
    for batch in (1, 64):
        xb = np.random.default_rng(0).random((batch, 784), dtype=np.float32)
        t_vm = best_of(lambda xb=xb: vm["main"](xb, *weights), number=20)
        t_np = best_of(lambda xb=xb: numpy_mlp(xb, params), number=20)
        print(f"  batch {batch:>3}: VM {t_vm * 1e6:9.1f} us, NumPy {t_np * 1e6:8.1f} us, "
              f"ratio VM/NumPy {t_vm / t_np:6.2f}")


if __name__ == "__main__":
    main()
