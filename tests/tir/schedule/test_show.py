"""Schedule.show prints what TVM's does: the scheduled module, then the trace."""

from mlckit import tir
from tests.kernels import mm_relu


def test_show_prints_the_module_then_the_trace(capsys):
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops("Y")
    sch.split(j, [None, 8])
    sch.show()
    out = capsys.readouterr().out
    assert "for i, j_0, j_1, k in T.grid(128, 16, 8, 128):" in out
    assert str(sch.trace) in out
    assert out.index("def main(") < out.index("def apply_trace(")
