"""End-to-end Relax with call_tir, te and the BlockBuilder: wrong answers and feedback."""

from mlckit import exercises, relax, te, topi


def test_a_missing_relu_call_shows_the_first_wrong_element_and_the_count_of_calls():
    ex = exercises.get("relax.call_tir")
    answer = ex.solution.replace(
        '            lv0 = R.call_tir(cls.linear, (x, w, b), out_sinfo=R.Tensor((1, 3), "float32"))\n'
        '            out = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((1, 3), "float32"))',
        '            out = R.call_tir(cls.linear, (x, w, b), out_sinfo=R.Tensor((1, 3), "float32"))')
    fb = ex.check(answer)
    assert "output `out` differs at index (0, 0): expected 0, got -0.121721" in str(fb)
    assert "`main` calls relax.call_tir 1 time, expected 2" in str(fb)


def test_a_transposed_te_read_is_an_out_of_range_read():
    def matmul(A, B):
        k = te.reduce_axis((0, A.shape[1]), name="k")
        return te.compute((A.shape[0], B.shape[1]),
                          lambda i, j: te.sum(A[i, k] * B[j, k], axis=k))

    fb = exercises.get("relax.te_matmul").check(matmul)
    assert "out-of-bounds read of buffer B: B[0, 5] but B has shape (6, 5)" in str(fb)


def test_a_python_if_on_a_tir_expression_is_explained():
    def relu(A):
        return te.compute(A.shape, lambda i, j: A[i, j] if A[i, j] > 0 else 0)

    fb = exercises.get("relax.te_relu").check(relu)
    assert fb.status == "error"
    assert "cannot use the truth value of the TIR expression" in str(fb)


def test_a_builder_that_returns_nothing_is_told_to_return_the_module():
    def build():
        bb = relax.BlockBuilder()
        x = relax.Var("x", relax.TensorStructInfo((2, 4), "float32"))
        w = relax.Var("w", relax.TensorStructInfo((3, 4), "float32"))
        with bb.function("main", [x, w]):
            with bb.dataflow():
                gv = bb.emit_output(bb.emit_te(topi.nn.dense, x, w))
            bb.emit_func_output(gv)

    fb = exercises.get("relax.blockbuilder").check(build)
    assert "build() returned nothing: return the IRModule (bb.get())" in str(fb)
