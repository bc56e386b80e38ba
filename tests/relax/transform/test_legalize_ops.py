"""LegalizeOps: high-level operator calls become R.call_tir of TVM's PrimFuncs, chosen by the
operator strategy (logged on ``mlckit.strategy``)."""

import logging

import numpy as np

import mlckit
from mlckit import relax
from mlckit.ir import assert_structural_equal
from mlckit.relax.transform import LegalizeOps
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


def run(mod, *args, target="llvm"):
    ex = relax.build(mod, target)
    vm = relax.VirtualMachine(ex, mlckit.cpu())
    return vm["main"](*[mlckit.nd.array(a) for a in args]).numpy()


@I.ir_module
class Add:
    @R.function
    def main(x: R.Tensor((1, 2, 3), "float32"), y: R.Tensor((4, 3, 2, 1), "float32")):
        gv: R.Tensor((4, 3, 2, 3), "float32") = R.add(x, y)
        return gv


def test_add_becomes_call_tir_of_topi_add():
    @I.ir_module
    class Expected:
        @R.function
        def main(x: R.Tensor((1, 2, 3), "float32"), y: R.Tensor((4, 3, 2, 1), "float32")):
            gv = R.call_tir(Expected.add, (x, y), R.Tensor((4, 3, 2, 3), dtype="float32"))
            return gv

        @T.prim_func(private=True)
        def add(rxplaceholder: T.Buffer((T.int64(1), T.int64(2), T.int64(3)), "float32"),
                rxplaceholder_1: T.Buffer((T.int64(4), T.int64(3), T.int64(2), T.int64(1)), "float32"),
                T_add: T.Buffer((T.int64(4), T.int64(3), T.int64(2), T.int64(3)), "float32")):
            T.func_attr({"tir.noalias": True})
            for i0, i1, i2, i3 in T.grid(T.int64(4), T.int64(3), T.int64(2), T.int64(3)):
                with T.block("T_add"):
                    ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                    T.reads(rxplaceholder[T.int64(0), ax2, ax3], rxplaceholder_1[ax0, ax1, ax2, T.int64(0)])
                    T.writes(T_add[ax0, ax1, ax2, ax3])
                    T_add[ax0, ax1, ax2, ax3] = rxplaceholder[T.int64(0), ax2, ax3] + rxplaceholder_1[ax0, ax1, ax2, T.int64(0)]

    assert_structural_equal(LegalizeOps()(Add), Expected)


def test_unlegalized_module_builds_and_runs():
    a = np.random.rand(1, 2, 3).astype("float32")
    b = np.random.rand(4, 3, 2, 1).astype("float32")
    np.testing.assert_allclose(run(Add, a, b), a + b, rtol=1e-6)
    np.testing.assert_allclose(run(Add, a, b, target="lnumpy"), a + b, rtol=1e-6)


def test_the_choice_is_logged(caplog):
    with caplog.at_level(logging.INFO, logger="mlckit.strategy"):
        LegalizeOps()(Add)
    assert "relax.add -> add.generic (level 10) for target llvm" in caplog.text
