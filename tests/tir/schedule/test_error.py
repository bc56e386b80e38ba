"""A refused primitive shows where: the function as it was, with the loops and blocks it was
given underlined (TVM's "IR with diagnostic"), after the one-line reason."""

from __future__ import annotations

import pytest

from mlckit import tir
from mlckit.tir.schedule import ScheduleError
from tests.kernels import mm_relu


def refusal(action) -> ScheduleError:
    with pytest.raises(ScheduleError) as info:
        action()
    return info.value


def marked_lines(message: str) -> list[str]:
    """The lines a ``^^^^`` line underlines."""
    lines = message.splitlines()
    return [lines[n - 1].strip() for n, line in enumerate(lines)
            if line.strip() and set(line.strip()) == {"^"}]


def test_the_first_line_is_the_reason_and_the_ir_follows():
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops("Y")
    err = refusal(lambda: sch.split(j, [3, 4]))
    first, second = str(err).splitlines()[:2]
    assert first == err.short == ("ScheduleError: split: the product of the factors "
                                  "(3 * 4 = 12) is smaller than the extent 128 of loop `j`")
    assert second == "The IR, with the loop or block marked:"
    assert "def mm_relu(" in str(err)


def test_the_loop_given_to_the_primitive_is_underlined_to_its_line_end():
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops("Y")
    sch.split(j, [None, 8])
    i, j0, j1, k = sch.get_loops("Y")
    err = refusal(lambda: sch.split(j1, [2, 3]))
    grid = "for i, j_0, j_1, k in T.grid(128, 16, 8, 128):"  # j_1 prints in this T.grid
    assert marked_lines(str(err)) == [grid]
    lines = str(err).splitlines()
    loop_line = next(n for n, line in enumerate(lines) if grid in line)
    assert lines[loop_line + 1] == lines[loop_line].replace(grid, "^" * len(grid))


def test_a_block_given_by_name_and_a_loop_are_both_underlined():
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops("Y")
    err = refusal(lambda: sch.compute_at("C", k))
    assert marked_lines(str(err)) == ["for i, j, k in T.grid(128, 128, 128):",
                                      'with T.block("C"):']


def test_the_ir_shown_is_the_unchanged_function():
    sch = tir.Schedule(mm_relu)
    i, j, k = sch.get_loops("Y")
    before = sch.mod["main"].script()
    err = refusal(lambda: sch.compute_at("C", k))
    assert sch.mod["main"].script() == before
    shown = str(err).split("The IR, with the loop or block marked:\n", 1)[1]
    assert [line for line in shown.splitlines() if set(line.strip()) != {"^"}] == \
        before.splitlines()


def test_an_error_with_no_loop_or_block_stays_one_line():
    err = ScheduleError("split", "a reason")
    assert str(err) == "ScheduleError: split: a reason"
