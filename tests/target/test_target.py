"""tvm.target.Target: TVM's string and dict forms, the current target, and located errors."""

import pytest

import mlckit as tvm
from mlckit.target import Target


def test_a_kind_alone():
    t = Target("llvm")
    assert t.kind.name == "llvm"
    assert t.attrs == {}
    assert t.keys == ("cpu",)
    assert str(t) == "llvm"


def test_options_with_one_or_two_dashes_are_typed_attributes():
    t = Target("llvm -mcpu=skylake --num-cores=1")
    assert t.attrs == {"mcpu": "skylake", "num-cores": 1}
    assert t.mcpu == "skylake"


def test_host_is_a_target_too():
    t = Target("cuda", host="llvm")
    assert t.kind.name == "cuda" and t.host.kind.name == "llvm"
    assert Target(t).host == Target("llvm")


def test_dict_form_and_export_round_trip():
    t = Target({"kind": "cuda", "arch": "sm_80", "max_threads_per_block": 1024})
    assert t.arch == "sm_80"
    assert Target(t.export()) == t


def test_a_tag_names_a_device_of_a_kind():
    t = Target("nvidia/tesla-p100")
    assert t.kind.name == "cuda" and t.arch == "sm_60" and t.tag == "nvidia/tesla-p100"


def test_with_target_makes_it_current():
    assert Target.current() is None
    with Target("llvm --num-cores=2") as t:
        assert Target.current() is t
        with Target("cuda"):
            assert Target.current().kind.name == "cuda"
        assert Target.current() is t
    assert Target.current() is None


def test_the_current_target_is_what_build_compiles_for():
    from tests.kernels import mm_relu

    with Target("lnumpy"):
        ex = tvm.compile(mm_relu)
    assert ex.mod.backend == "lnumpy"


@pytest.mark.parametrize("text, message", [
    ("lvm", r"unknown target kind 'lvm' \(did you mean 'llvm'\?\)"),
    ("llvm -num_cores=2", r"target kind 'llvm' has no attribute 'num_cores' \(did you mean 'num-cores'\?\)"),
    ("llvm mcpu=skylake", r"cannot read 'mcpu=skylake'; options are written -key=value"),
    ("", r"a target string needs a kind"),
    ({"arch": "sm_80"}, r"a target dict needs a 'kind' entry"),
    (42, r"expected a string, a dict or a Target, got int"),
])
def test_bad_targets_are_refused_with_the_reason(text, message):
    with pytest.raises(tvm.TVMError, match=message):
        Target(text)


def test_current_without_a_target_in_scope_can_raise():
    with pytest.raises(tvm.TVMError, match="no target is in scope"):
        Target.current(allow_none=False)
