"""The global function registry."""

import pytest

import mlckit
from mlckit.ffi import GlobalFuncError, get_global_func, list_global_func_names, remove_global_func


def test_register_decorator_and_lookup():
    @mlckit.register_func("test.reg.add_one", override=True)
    def add_one(x):
        return x + 1

    assert mlckit.get_global_func("test.reg.add_one")(1) == 2
    assert "test.reg.add_one" in list_global_func_names()


def test_register_direct_and_override():
    mlckit.register_func("test.reg.f", lambda: 1, override=True)
    with pytest.raises(GlobalFuncError, match=r"'test.reg.f' is already registered.*override=True"):
        mlckit.register_func("test.reg.f", lambda: 2)
    mlckit.register_func("test.reg.f", lambda: 3, override=True)
    assert get_global_func("test.reg.f")() == 3


def test_missing_name():
    assert get_global_func("test.reg.nope", allow_missing=True) is None
    mlckit.register_func("test.reg.close_name", lambda: 0, override=True)
    with pytest.raises(GlobalFuncError, match=r"'test.reg.close_nam' is not registered.*"
                                              r"Did you mean 'test.reg.close_name'"):
        get_global_func("test.reg.close_nam")


def test_remove_and_name_from_function():
    @mlckit.register_func
    def test_reg_named():
        return 5

    assert get_global_func("test_reg_named")() == 5
    remove_global_func("test_reg_named")
    assert get_global_func("test_reg_named", allow_missing=True) is None


def test_bad_arguments():
    with pytest.raises(TypeError):
        mlckit.register_func("", lambda: 0)
    with pytest.raises(TypeError):
        mlckit.register_func("test.reg.not_callable", 3)
