"""The explorer's table of primitives: targets, defaults, and parameters typed as text."""

import inspect

import pytest

from mlckit import TVMError
from mlckit.notebook.explorer_primitives import (
    PRIMITIVES,
    TARGETS,
    Selection,
    format_param,
    parse_param,
)
from mlckit.tir.schedule import Schedule


def param(primitive, name):
    return next(p for p in PRIMITIVES[primitive].params if p.name == name)


def test_every_entry_is_a_schedule_method_with_its_parameters():
    for name, spec in PRIMITIVES.items():
        assert callable(getattr(Schedule, name)), name
        assert spec.target in TARGETS
        assert spec.help
        method_params = inspect.signature(getattr(Schedule, name)).parameters
        for p in spec.params:
            assert p.name == "loops" or p.name in method_params, (name, p.name)


def test_fuse_and_reorder_default_to_the_picked_loop_and_the_one_inside_it():
    sel = Selection("Y", "j", ("i", "j", "k"))
    assert PRIMITIVES["fuse"].defaults(sel) == {"loops": ["j", "k"]}
    assert PRIMITIVES["reorder"].defaults(sel) == {"loops": ["k", "j"]}
    assert PRIMITIVES["split"].defaults(sel) == {"factors": [None, 4]}


def test_the_innermost_loop_cannot_be_fused_with_a_loop_inside_it():
    sel = Selection("Y", "k", ("i", "j", "k"))
    assert PRIMITIVES["fuse"].needs(sel) == (
        "loop `k` is the innermost above block `Y`: pick an outer one")
    assert PRIMITIVES["fuse"].defaults(sel) == {"loops": None}


def test_a_loop_of_another_nest_is_not_an_own_loop():
    sel = Selection("Y", ("C", "j"), ("i", "j", "k"))
    assert sel.own_loop is None
    assert Selection("Y", "j", ("i", "j", "k")).own_loop == "j"


@pytest.mark.parametrize("primitive, name, text, value", [
    ("split", "factors", "None, 8", [None, 8]),
    ("split", "factors", "[4, 32]", [4, 32]),
    ("split", "factors", "-1, 2, 4", [-1, 2, 4]),
    ("reorder", "loops", "j_0, k, j_1", ["j_0", "k", "j_1"]),
    ("reorder", "loops", "['k', 'j']", ["k", "j"]),
    ("rfactor", "factor_axis", " 1 ", 1),
    ("cache_read", "storage_scope", "shared", "shared"),
    ("compute_at", "preserve_unit_loops", True, True),
])
def test_a_parameter_typed_as_text_becomes_its_value(primitive, name, text, value):
    assert parse_param(param(primitive, name), text) == value


@pytest.mark.parametrize("primitive, name, text, message", [
    ("split", "factors", "8 16", "factors: expected integers separated by commas"),
    ("split", "factors", "", "factors: expected integers separated by commas"),
    ("split", "factors", "None, 'a'", "factors: expected integers separated by commas"),
    ("reorder", "loops", "j 0, k", "loops: expected loop names separated by commas"),
    ("rfactor", "factor_axis", "x", "factor_axis: expected an integer, got 'x'"),
    ("cache_read", "storage_scope", "texture", "storage_scope: 'texture' is not one of global"),
])
def test_a_malformed_parameter_is_a_tvm_error_naming_it(primitive, name, text, message):
    with pytest.raises(TVMError, match=message.replace("(", r"\(")):
        parse_param(param(primitive, name), text)


def test_format_param_is_the_inverse_of_parse_param():
    for primitive, name, value in [("split", "factors", [None, 8]),
                                   ("reorder", "loops", ["k", "j"]),
                                   ("rfactor", "factor_axis", 0)]:
        p = param(primitive, name)
        assert parse_param(p, format_param(p, value)) == value
    assert format_param(param("fuse", "loops"), None) == ""
