"""Executable.as_text() (golden file, TVM's format) and stats()."""

from pathlib import Path

import numpy as np

import mlckit
from mlckit import relax
from mlckit.runtime.vm import ExecBuilder, VirtualMachine
from mlckit.runtime.vm.bytecode import VM_REGISTER, Arg

from .mlp_modules import MyModule

GOLDEN = Path(__file__).parent / "golden" / "mlp_as_text.txt"


def test_as_text_golden():
    ex = relax.build(MyModule, target="lnumpy")
    text = ex.as_text()
    if not GOLDEN.exists():  # first run writes it; review and commit the file
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_as_text_format_details():
    ex = relax.build(MyModule, target="lnumpy")
    lines = ex.as_text().splitlines()
    assert lines[0] == "@main:"
    assert lines[1].startswith("  call  vm.builtin.alloc_shape_heap in: %vm, i3, c[0]")
    assert any(line.startswith("  call  linear0          in: %0, %1, %2, %") for line in lines)
    assert any(line.startswith("  ret   %") for line in lines)
    assert "@linear0 packed_func;" in lines


def test_stats():
    ex = relax.build(MyModule, target="lnumpy")
    stats = ex.stats()
    assert stats.startswith("Relax VM executable statistics:\n  Constant pool (# ")
    assert "Globals (#" in stats and "main, " in stats and "linear0" in stats


def test_exec_builder_by_hand_goto_and_if():
    """Bytecode written directly: if %0 then 10 else 20 (If / Goto offsets as TVM)."""
    eb = ExecBuilder()
    eb.emit_function("pick", 1, ["c"])
    eb.emit_call("vm.builtin.read_if_cond", [Arg.register(0)], 1)
    eb.emit_if(1, 3)
    eb.emit_call("vm.builtin.copy", [Arg.immediate(10)], 2)
    eb.emit_goto(2)
    eb.emit_call("vm.builtin.copy", [Arg.immediate(20)], 2)
    eb.emit_ret(2)
    eb.end_function("pick", 3)
    ex = eb.get()
    vm = VirtualMachine(ex, mlckit.cpu())
    assert vm["pick"](True) == 10 and vm["pick"](False) == 20
    text = ex.as_text()
    assert "  If    %1, 3\n" in text and "  goto  2\n" in text
    assert VM_REGISTER == -2


def test_constants_in_pool():
    ex = relax.build(relax.transform.BindParams("main", {"w1": np.ones((10, 128), "float32")})(
        MyModule), target="lnumpy")
    assert any(isinstance(c, np.ndarray) and c.shape == (10, 128) for c in ex.constants)
