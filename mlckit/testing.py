"""``mlckit.testing``: the checks TVM's ``tvm.testing`` offers learners.

Example::

    import mlckit as tvm
    tvm.testing.assert_allclose(c_nd.numpy(), a_np @ b_np, rtol=1e-5)

    class TestLowerInit(tvm.testing.CompareBeforeAfter):   # a pass test, as TVM writes them
        transform = tvm.tir.transform.LowerInitBlock()
        def before(...): ...
        def expected(...): ...
"""

from __future__ import annotations

import inspect
import textwrap

import numpy as np

__all__ = ["CompareBeforeAfter", "assert_allclose", "fixture", "main", "parameter"]


def assert_allclose(actual, desired, rtol: float = 1e-7, atol: float = 1e-7, verbose: bool = True):
    """Check that two arrays (NumPy arrays, ``tvm.runtime.tensor``s or nested lists) are equal
    within ``atol + rtol * |desired|``, as ``np.testing.assert_allclose`` — but, as in TVM,
    with an absolute tolerance too (1e-7 by default) and the shapes compared first.

    >>> import numpy as np
    >>> import mlckit as tvm
    >>> tvm.testing.assert_allclose(tvm.nd.array(np.ones(3, "float32")), [1, 1, 1.0000001], rtol=1e-5)
    >>> try:
    ...     tvm.testing.assert_allclose(np.ones(3), np.ones(4))
    ... except AssertionError:
    ...     print("shapes differ")
    shapes differ
    """
    actual, desired = np.asanyarray(actual), np.asanyarray(desired)
    if actual.shape != desired.shape:
        raise AssertionError(f"assert_allclose: the shapes differ: actual {actual.shape}, "
                             f"desired {desired.shape}")
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=verbose)


class CompareBeforeAfter:
    """The base of a pass test as TVM's own are written (``tvm.testing.CompareBeforeAfter``):
    a subclass names ``transform`` (a Pass, or a method returning one), ``before`` and
    ``expected``, and pytest collects its ``test_compare``, which checks that
    ``transform(before)`` is structurally equal to ``expected`` — or raises ``expected``
    when that is an exception class.

    ``before`` / ``expected`` may be a PrimFunc or IRModule, a method returning one, a class
    of functions (an IRModule), or — the usual way — an undecorated TVMScript function,
    parsed as ``@T.prim_func`` when the test runs (so a script error fails that test alone).
    Each may also be a pytest fixture.  A PrimFunc is transformed as the module's ``"main"``,
    and ``global_symbol`` is left out of the comparison.

    Example::

        class TestRemoveInit(tvm.testing.CompareBeforeAfter):
            transform = tvm.tir.transform.LowerInitBlock()

            def before(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
                for k in range(4):
                    with T.block("S"):
                        vk = T.axis.reduce(4, k)
                        with T.init():
                            s[0] = T.float32(0)
                        s[0] = s[0] + a[vk]

            def expected(a: T.Buffer((4,), "float32"), s: T.Buffer((1,), "float32")):
                ...
    """

    check_well_formed: bool = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for lower, upper, normalize in (("before", "Before", cls._ir_fixture),
                                        ("expected", "Expected", cls._expected_fixture)):
            given = [getattr(cls, n) for n in (lower, upper) if n in cls.__dict__]
            if len(given) > 1:
                raise TypeError(f"{cls.__name__} defines both {lower!r} and {upper!r}")
            if given:
                setattr(cls, lower, normalize(given[0]))
        if "transform" in cls.__dict__:
            cls.transform = cls._transform_fixture(cls.__dict__["transform"])

    # -- the fixtures ---------------------------------------------------------------------
    @staticmethod
    def _is_fixture(obj) -> bool:
        return hasattr(obj, "_pytestfixturefunction") or type(obj).__name__ == \
            "FixtureFunctionDefinition"

    @staticmethod
    def _is_method(obj) -> bool:
        return callable(obj) and "self" in inspect.signature(obj).parameters

    @classmethod
    def _ir_fixture(cls, obj):
        import pytest

        from mlckit.ir.module import IRModule
        from mlckit.tir.function import PrimFunc

        if cls._is_fixture(obj):
            return obj
        if isinstance(obj, (PrimFunc, IRModule)):
            def make(self):
                return obj
        elif cls._is_method(obj):
            def make(self):
                return obj(self)
        elif inspect.isclass(obj):
            def make(self):
                funcs = {}
                for name, member in obj.__dict__.items():
                    if name.startswith("_"):
                        continue
                    func = member if isinstance(member, PrimFunc) else _parse_prim_func(
                        member, self.check_well_formed)
                    funcs[name] = func.with_attr("global_symbol", name)
                return IRModule(funcs)
        else:
            def make(self):
                return _parse_prim_func(obj, self.check_well_formed)
        return pytest.fixture(make)

    @classmethod
    def _expected_fixture(cls, obj):
        import pytest

        if inspect.isclass(obj) and issubclass(obj, Exception):
            def make(self):
                return obj
            return pytest.fixture(make)
        return cls._ir_fixture(obj)

    @classmethod
    def _transform_fixture(cls, transform):
        import pytest

        from mlckit.ir.transform import Pass

        if cls._is_fixture(transform):
            cls._transform_orig = transform

            def make(self, _transform_orig):
                return _on_module(_transform_orig)
        elif isinstance(transform, Pass):
            def make(self):
                return _on_module(transform)
        elif cls._is_method(transform):
            def make(self):
                return _on_module(transform(self))
        else:
            from mlckit.error import TVMTypeError

            raise TVMTypeError(f"{cls.__name__}.transform must be a Pass or a method returning "
                               f"one, got {type(transform).__name__}")
        return pytest.fixture(make)

    # -- the test -------------------------------------------------------------------------
    def test_compare(self, before, expected, transform):
        """``transform(before)`` equals ``expected`` (or raises it)."""
        import pytest

        from mlckit.ir.module import IRModule
        from mlckit.ir.structural import assert_structural_equal
        from mlckit.tir.function import PrimFunc

        if inspect.isclass(expected) and issubclass(expected, Exception):
            with pytest.raises(expected):
                after = transform(before)
                pytest.fail(f"expected the transform to raise {expected.__name__}, but it "
                            f"returned:\n{after.script()}")
            return
        if not isinstance(expected, (PrimFunc, IRModule)):
            raise TypeError(f"CompareBeforeAfter: `expected` must give a PrimFunc, an IRModule "
                            f"or an exception class, got {type(expected).__name__}")
        after = transform(before)
        if isinstance(after, PrimFunc):  # the names are not what is tested
            after = after.with_attr("global_symbol", "main")
            expected = expected.with_attr("global_symbol", "main")
        try:
            assert_structural_equal(after, expected)
        except ValueError as err:
            raise AssertionError(f"the transformed TIR differs from the expected TIR ({err})\n"
                                 f"before:\n{before.script()}\nafter:\n{after.script()}\n"
                                 f"expected:\n{expected.script()}") from None


def _on_module(module_pass):
    """``module_pass`` applied to an IRModule, or to a PrimFunc as the module's "main"."""
    from mlckit.ir.module import IRModule
    from mlckit.tir.function import PrimFunc

    def apply(obj):
        if isinstance(obj, IRModule):
            return module_pass(obj)
        if isinstance(obj, PrimFunc):
            return module_pass(IRModule({"main": obj}))["main"]
        raise TypeError(f"CompareBeforeAfter transforms an IRModule or a PrimFunc, got "
                        f"{type(obj).__name__}")

    return apply


def _parse_prim_func(func, check_well_formed: bool = True):
    """An undecorated TVMScript function parsed as ``@T.prim_func``, seeing its globals
    (not checked for well-formedness when the test says ``check_well_formed = False``)."""
    from mlckit.script import tir as T
    from mlckit.script.parser.entry import from_source

    decorator = "@T.prim_func" if check_well_formed else "@T.prim_func(check_well_formed=False)"
    source = decorator + "\n" + textwrap.dedent(inspect.getsource(func))
    extra = dict(getattr(func, "__globals__", {}))
    extra.setdefault("T", T)
    return from_source(source, extra)


def parameter(*values, ids=None, by_dict=None):
    """A parametrized pytest fixture (``tvm.testing.parameter``): every test that takes it
    runs once per value.  ``by_dict={"name": value}`` gives the values with their test ids.

    Example::

        size = tvm.testing.parameter(1, 10, 100)

        def test_size_is_positive(size):
            assert size > 0
    """
    import pytest

    if by_dict is not None:
        if values or ids:
            raise TypeError("tvm.testing.parameter: give the values either positionally or "
                            "by_dict, not both")
        ids, values = tuple(by_dict), tuple(by_dict.values())

    # *_cls: the fixture may be a class attribute, when pytest passes the test's instance
    @pytest.fixture(params=values, ids=ids)
    def as_fixture(*_cls, request):
        return request.param

    return as_fixture


def fixture(func=None, *, cache_return_value: bool = False):
    """A pytest fixture (``tvm.testing.fixture``), with or without arguments.
    ``cache_return_value`` is accepted for TVM's signature; the value is computed per test.

    Example::

        @tvm.testing.fixture
        def before():
            return make_kernel()
    """
    import pytest

    del cache_return_value  # nothing here is expensive enough to cache across tests

    def wrap(f):
        return pytest.fixture(f)

    return wrap if func is None else wrap(func)


def main():
    """Run the calling test file under pytest and exit with its status (TVM's
    ``if __name__ == "__main__": tvm.testing.main()``).

    Example::

        # at the end of tests/test_my_pass.py, run as `python tests/test_my_pass.py -q`
        if __name__ == "__main__":
            tvm.testing.main()
    """
    import sys

    import pytest

    sys.exit(pytest.main([sys.argv[0], *sys.argv[1:]]))
