"""A misspelt name in a script is refused at its line with the close names that exist."""

import pytest

from tests.bad_input.common import refused_script, script

CASES = [
    ("relax_op", script('''
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.ad(x, x)  # <-
            return y
    '''), ["has no attribute 'ad'", "did you mean R.add?"]),
    ("relax_nn_op", script('''
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.nn.rleu(x)  # <-
            return y
    '''), ["has no attribute 'rleu'", "did you mean R.nn.relu?"]),
    ("tir_loop_kind", script('''
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serail(4):  # <-
                A[i] = A[i] + T.float32(1)
    '''), ["has no attribute 'serail'", "T.serial"]),
]


@pytest.mark.parametrize("text, phrases", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_typo_is_refused_with_the_names_it_is_close_to(text, phrases):
    refused_script(text, *phrases)


def test_a_name_close_to_nothing_gets_no_suggestion():
    err = refused_script(script('''
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.qqqqqq(x)  # <-
            return y
    '''), "has no attribute 'qqqqqq'")
    assert "did you mean" not in str(err)
