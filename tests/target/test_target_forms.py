"""Target as TVM 0.27 takes it: dicts, JSON strings, tags, a present device; attribute types
checked; TVM v0.23's strings with options still read."""

import pytest

import mlckit as tvm
from mlckit.target import Target, list_tags, register_tag


def test_a_dict_a_json_string_and_a_v023_string_are_the_same_target():
    forms = [{"kind": "llvm", "num-cores": 1}, '{"kind": "llvm", "num-cores": 1}',
             "llvm -num-cores=1", "llvm --num-cores=1"]
    targets = [Target(f) for f in forms]
    assert all(t == targets[0] for t in targets)
    assert targets[0].attrs == {"num-cores": 1}


def test_list_and_boolean_attributes_from_a_string_and_a_dict():
    t = Target("llvm -mattr=+avx2,+fma -fast-math")
    assert t.attrs == {"mattr": ["+avx2", "+fma"], "fast-math": True}
    assert str(t) == "llvm -mattr=+avx2,+fma -fast-math"
    assert Target({"kind": "llvm", "mattr": ["+avx2", "+fma"], "fast-math": 1}) == t
    assert Target({"kind": "llvm", "keys": ["arm_cpu", "cpu"]}).keys == ("arm_cpu", "cpu")


def test_the_tags_the_tutorials_use():
    t = Target("nvidia/geforce-rtx-3090")
    assert (t.kind.name, t.arch, t.max_num_threads, t.thread_warp_size) == ("cuda", "sm_86",
                                                                            1024, 32)
    assert Target({"tag": "nvidia/nvidia-a100"}).attrs["l2_cache_size_bytes"] == 41943040
    assert Target("apple/m2-gpu").kind.name == "metal"
    tags = list_tags()
    assert {"nvidia/tesla-p100", "nvidia/nvidia-a100", "nvidia/geforce-rtx-3090-ti"} <= set(tags)
    assert tags["nvidia/nvidia-h100"].arch == "sm_90a"


def test_a_registered_tag_is_a_target():
    made = register_tag("test/my-gpu", {"kind": "cuda", "arch": "sm_75"}, override=True)
    assert Target("test/my-gpu").arch == "sm_75" and made.arch == "sm_75"
    with pytest.raises(tvm.TVMError, match="the tag 'test/my-gpu' exists; pass override=True"):
        register_tag("test/my-gpu", {"kind": "cuda"})
    with pytest.raises(tvm.TVMError, match="needs a 'kind' entry"):
        register_tag("test/no-kind", {"arch": "sm_75"})
    assert "test/no-kind" not in list_tags()


def test_from_device_the_cpu_is_llvm_for_this_host():
    t = Target.from_device(tvm.cpu())
    assert t.kind.name == "llvm" and t.mcpu != ""
    assert Target.from_device("cpu") == t


def test_from_device_a_device_that_is_not_here_is_refused():
    if tvm.cuda(0).exist:
        t = Target.from_device(tvm.cuda(0))
        assert t.kind.name == "cuda" and t.arch.startswith("sm_")
        return
    with pytest.raises(tvm.TVMError, match=r"cuda\(0\) is not present on this machine.*"
                                           r"Target\(\"cuda\"\)"):
        Target.from_device(tvm.cuda(0))


@pytest.mark.parametrize("given, message", [
    ("llvm -num-cores=abc", r"attribute 'num-cores' of target kind 'llvm' is an integer, "
                            r"got 'abc'"),
    ({"kind": "llvm", "num-cores": 1.5}, r"'num-cores' .* is an integer, got 1.5"),
    ({"kind": "llvm", "mcpu": 3}, r"'mcpu' .* is a string, got 3"),
    ({"kind": "llvm", "mattr": "+avx2"}, r"'mattr' .* is a list of strings, got '\+avx2'"),
    ("llvm -fast-math=yes", r"'fast-math' .* is a boolean \(true/false\), got 'yes'"),
    ({"kind": "cuda", "max_threads_per_block": "x"}, r"'max_threads_per_block' .* integer"),
    ('{"kind": "llvm",', r"cannot read the JSON target: .* line 1 column 17"),
    ('{"kind": "llvm"} x', r"cannot read the JSON target: Extra data at line 1 column 18"),
    ({"kind": "lvm"}, r"unknown target kind 'lvm' \(did you mean 'llvm'\?\)"),
    ({"kind": "llvm", "bogus": 1}, r"target kind 'llvm' has no attribute 'bogus'"),
])
def test_bad_targets_name_the_bad_part(given, message):
    with pytest.raises(tvm.TVMError, match=message):
        Target(given)


def test_a_registered_detector_gives_the_target_of_its_devices(monkeypatch):
    from mlckit.target import detect

    class RocmDevice:  # a present device of a type mlckit has no runtime for
        device_type, device_id, exist = 10, 0, True

    monkeypatch.setitem(detect.SUPPORTED_DEVICE, "rocm", lambda dev: {"kind": "rocm"})
    assert Target.from_device(RocmDevice()) == Target("rocm")
    monkeypatch.delitem(detect.SUPPORTED_DEVICE, "rocm")
    with pytest.raises(tvm.TVMError, match="supported for the devices cpu, cuda"):
        Target.from_device(RocmDevice())
