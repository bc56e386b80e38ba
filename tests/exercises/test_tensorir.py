"""TensorIR by hand: answers a learner gets wrong, and the feedback that names the mistake."""

from mlckit import exercises
from mlckit.script import tir as T


def test_transposed_read_is_named_with_the_first_wrong_element():
    ex = exercises.get("tensorir.transpose")

    def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
        for i, j in T.grid(8, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vj, vi] * T.float32(2)

    fb = ex.check(transpose)
    assert fb.status == "wrong"
    text = str(fb)
    assert "output `B` differs at index (0, 0)" in text
    assert "inputs: A (4, 8), float32, random seed 0" in text
    assert ("block `B` computes `B[vi, vj] = A[vj, vi] * T.float32(2.0)`, expected "
            "`B[vi, vj] = A[vj, vi]`") in text


def test_broadcast_with_the_wrong_axis_names_the_read():
    ex = exercises.get("tensorir.broadcast_add")

    def broadcast_add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"),
                      C: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi]

    fb = ex.check(broadcast_add)
    assert fb.status == "wrong"
    assert "block `C` reads `B[vi]`, expected `B[vj]`" in str(fb)


def test_a_missing_init_is_named():
    ex = exercises.get("tensorir.mm_relu")

    def mm_relu(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
                C: T.Buffer((8, 8), "float32")):
        Y = T.alloc_buffer((8, 8), "float32")
        for i, j, k in T.grid(8, 8, 8):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    fb = ex.check(mm_relu)
    assert "block `Y` has no `T.init()`: the expected one starts with " \
           "`Y[vi, vj] = T.float32(0.0)`" in str(fb)


def test_an_out_of_range_read_is_feedback_not_an_exception():
    ex = exercises.get("tensorir.transpose")

    def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
        for i, j in T.grid(8, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    fb = ex.check(transpose)
    assert fb.status == "error"
    assert "out-of-bounds read of buffer A: A[4, 0] but A has shape (4, 8)" in str(fb)


def test_a_parse_error_is_feedback_with_its_line():
    ex = exercises.get("tensorir.add")

    def add(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"),
            C: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, k]  # noqa: F821 - the mistake checked

    fb = ex.check(add)
    assert fb.status == "error"
    assert "error: undefined variable 'k'" in str(fb)
    assert "C[vi, vj] = A[vi, vj] + B[vi, k]" in str(fb)


def test_a_wrong_signature_is_named():
    ex = exercises.get("tensorir.add")

    @T.prim_func
    def add(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj]

    assert "the function takes 2 buffers, the exercise passes 3 (A, B, C)" in str(ex.check(add))


def test_feedback_has_a_notebook_form_with_the_same_words():
    ex = exercises.get("tensorir.add")
    fb = ex.check(ex.solution_object())
    assert "mlckit-feedback-correct" in fb._repr_html_()
    assert "equal to the NumPy spec on 2 random inputs" in fb._repr_html_()
