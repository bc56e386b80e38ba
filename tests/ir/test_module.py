"""IRModule's lookups as TVM's."""

from mlckit import relax
from mlckit.ir import IRModule
from mlckit.script import ir as I
from mlckit.script import relax as R
from mlckit.script import tir as T


@I.ir_module
class Module:
    @T.prim_func
    def relu(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("y"):
                vi = T.axis.spatial(4, i)
                y[vi] = T.max(x[vi], T.float32(0))

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        cls = Module
        y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((4,), "float32"))
        return y

    @T.prim_func
    def add_one(x: T.Buffer((4,), "float32"), y: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("y"):
                vi = T.axis.spatial(4, i)
                y[vi] = x[vi] + T.float32(1)


def test_functions_items_lists_the_functions_in_alphabetical_order():
    items = Module.functions_items()
    assert [gv.name_hint for gv, _ in items] == ["add_one", "main", "relu"]
    assert all(Module[gv] is func for gv, func in items)
    assert isinstance(dict(items)[Module.get_global_var("main")], relax.Function)


def test_functions_items_of_an_empty_module_is_empty():
    assert IRModule({}).functions_items() == []
