"""Pass infrastructure: Pass, Sequential, PassContext, instruments."""

import pytest

import mlckit
from mlckit import relax
from mlckit.instrument import PassInstrument, PassTimingInstrument, PrintAfterAll, pass_instrument
from mlckit.ir import IRModule
from mlckit.transform import (
    PassContext,
    PassInfo,
    Sequential,
    function_pass,
    module_pass,
)


def _mod():
    from mlckit.script import relax as R

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        with R.dataflow():
            y = R.call_dps_packed("f", (x,), R.Tensor((2,), "float32"))
            R.output(y)
        return y

    return IRModule({"main": main})


def test_module_pass_decorator_and_info():
    @module_pass(opt_level=1, name="Tag")
    def tag(mod, ctx):
        return mod.with_attr("tag", ctx.opt_level)

    assert tag.info == PassInfo(1, "Tag")
    out = tag(_mod())
    assert out.attrs["tag"] == 2


def test_module_pass_class():
    @module_pass(opt_level=0)
    class AddAttr:
        def __init__(self, value):
            self.value = value

        def transform_module(self, mod, ctx):
            return mod.with_attr("v", self.value)

    p = AddAttr(7)
    assert p.info.name == "AddAttr" and p.value == 7
    assert p(_mod()).attrs["v"] == 7


def test_function_pass():
    @function_pass(opt_level=0)
    def mark(func, mod, ctx):
        return func.with_attr("marked", True)

    assert mark(_mod())["main"].attrs["marked"] is True


def test_sequential_respects_opt_level_required_and_disabled():
    ran = []

    def make(name, level):
        return module_pass(lambda mod, ctx: (ran.append(name), mod)[1], opt_level=level,
                           name=name)

    seq = Sequential([make("A", 0), make("B", 3), make("C", 1)])
    seq(_mod())
    assert ran == ["A", "C"]
    ran.clear()
    with PassContext(opt_level=3, disabled_pass=["A"]):
        seq(_mod())
    assert ran == ["B", "C"]
    ran.clear()
    with PassContext(opt_level=0, required_pass=["B"]):
        seq(_mod())
    assert ran == ["A", "B"]


def test_pass_context_current_and_nesting():
    assert PassContext.current().opt_level == 2
    with PassContext(opt_level=3, config={"k": 1}) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=0):
            assert PassContext.current().opt_level == 0
        assert PassContext.current().config == {"k": 1}
    assert PassContext.current().opt_level == 2


def test_instruments_see_each_pass_before_and_after():
    events = []

    class Recorder(PassInstrument):
        def enter_pass_ctx(self):
            events.append("enter")

        def exit_pass_ctx(self):
            events.append("exit")

        def run_before_pass(self, mod, info):
            events.append(("before", info.name, "with R.dataflow" in mod["main"].script()))

        def run_after_pass(self, mod, info):
            events.append(("after", info.name, "with R.dataflow" in mod["main"].script()))

    seq = Sequential([relax.transform.ToNonDataflow(), relax.transform.CallTIRRewrite()],
                     name="lower")
    with PassContext(instruments=[Recorder()]):
        seq(_mod())
    assert events == [
        "enter",
        ("before", "lower", True),
        ("before", "ToNonDataflow", True), ("after", "ToNonDataflow", False),
        ("before", "CallTIRRewrite", False), ("after", "CallTIRRewrite", False),
        ("after", "lower", False),
        "exit",
    ]


def test_should_run_skips_a_pass():
    @pass_instrument
    class Skip:
        def should_run(self, mod, info):
            return info.name != "ToNonDataflow"

    with PassContext(instruments=[Skip()]):
        out = relax.transform.ToNonDataflow()(_mod())
    assert "with R.dataflow" in out["main"].script()


def test_timing_and_printing_instruments(capsys):
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing, PrintAfterAll()]):
        relax.transform.ToNonDataflow()(_mod())
    assert "ToNonDataflow" in timing.render()
    assert "After Running Pass: ToNonDataflow" in capsys.readouterr().out


def test_relax_build_runs_under_the_context_instruments():
    names = []

    class Names(PassInstrument):
        def run_after_pass(self, mod, info):
            names.append(info.name)

    with PassContext(instruments=[Names()]):
        relax.build(_mod())
    assert names[:6] == ["LegalizeOps", "ToNonDataflow", "CallTIRRewrite",
                         "StaticPlanBlockMemory", "LowerAllocTensor", "VMShapeLower"]


def test_pass_rejects_non_modules():
    with pytest.raises(TypeError, match="expects an IRModule"):
        relax.transform.ToNonDataflow()(_mod()["main"])
    assert mlckit.transform.Sequential is Sequential
