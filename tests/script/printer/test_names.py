"""``script_and_names``: the text, and the name each variable printed as."""

from mlckit import tir
from mlckit.script.printer import script, script_and_names
from tests.kernels import mm_relu


def test_script_and_names_gives_the_same_text_as_script():
    text, _ = script_and_names(mm_relu)
    assert text == script(mm_relu)


def test_each_loop_variable_maps_to_its_printed_name():
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops(sch.get_block("Y"))
    sch.split(j, factors=[None, 4])
    _, names = script_and_names(sch.mod)
    printed = [names[id(sch.get(lp).loop_var)] for lp in sch.get_loops(sch.get_block("Y"))]
    assert printed == ["i", "j_0", "j_1", "k"]


def test_a_clashing_name_is_given_as_printed():
    sch = tir.Schedule(mm_relu)
    block = sch.get_block("Y")
    sch.add_unit_loop(block)
    sch.add_unit_loop(block)  # two loops named `u` in one nest: the printer renames one
    text, names = script_and_names(sch.mod)
    printed = [names[id(sch.get(lp).loop_var)] for lp in sch.get_loops(block)]
    assert printed == ["i", "j", "k", "u", "u_1"]
    assert "for i, j, k, u, u_1 in T.grid(128, 128, 128, 1, 1):" in text
