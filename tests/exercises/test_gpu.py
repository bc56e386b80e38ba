"""GPU binding and shared memory: wrong answers and the feedback naming them."""

from mlckit import exercises


def test_swapped_block_and_thread_bindings_are_named():
    def schedule(sch):
        b = sch.get_block("C")
        i, = sch.get_loops(b)
        i0, i1 = sch.split(i, factors=[None, 32])
        sch.bind(i0, "threadIdx.x")
        sch.bind(i1, "blockIdx.x")

    fb = exercises.get("gpu.vector_add").check(schedule)
    assert ("block `C` sits in the loops (i_0: 4 bound to threadIdx.x, i_1: 32 bound to "
            "blockIdx.x), expected (i_0: 4 bound to blockIdx.x, i_1: 32 bound to "
            "threadIdx.x)") in str(fb)


def test_a_shared_copy_left_to_one_thread_is_named():
    def schedule(sch):
        block_C = sch.get_block("C")
        i, = sch.get_loops(block_C)
        i0, i1 = sch.split(i, factors=[None, 32])
        sch.bind(i0, "blockIdx.x")
        sch.bind(i1, "threadIdx.x")
        A_shared = sch.cache_read(block_C, 0, "shared")
        sch.compute_at(A_shared, i0)

    fb = exercises.get("gpu.window_sum_shared").check(schedule)
    assert fb.sections[0].ok  # right numbers, but every thread copies the whole window
    assert ("block `A_shared` sits in the loops (i_0: 4 bound to blockIdx.x, ax0: 34), "
            "expected (i_0: 4 bound to blockIdx.x, ax0_0: 2, ax0_1: 32 bound to "
            "threadIdx.x)") in str(fb)


def test_no_shared_memory_at_all_is_named():
    def schedule(sch):
        block_C = sch.get_block("C")
        i, = sch.get_loops(block_C)
        i0, i1 = sch.split(i, factors=[None, 32])
        sch.bind(i0, "blockIdx.x")
        sch.bind(i1, "threadIdx.x")

    fb = exercises.get("gpu.window_sum_shared").check(schedule)
    assert "no buffer lives in shared memory" in str(fb)
    assert "there is no block `A_shared`" in str(fb)


def test_binding_before_reordering_leaves_the_loops_out_of_order():
    def schedule(sch):
        b = sch.get_block("C")
        i, j, k = sch.get_loops(b)
        i0, i1 = sch.split(i, factors=[None, 8])
        j0, j1 = sch.split(j, factors=[None, 8])
        for loop, tag in ((i0, "blockIdx.x"), (i1, "threadIdx.x"), (j0, "blockIdx.y"),
                          (j1, "threadIdx.y")):
            sch.bind(loop, tag)

    fb = exercises.get("gpu.matmul_tiles").check(schedule)
    assert "block `C` sits in the loops (i_0: 4 bound to blockIdx.x, i_1: 8 bound to " \
           "threadIdx.x, j_0: 4 bound to blockIdx.y" in str(fb)


def test_gpu_feedback_shows_the_gpu_access_view_in_notebooks(monkeypatch):
    """The hook for mlckit.notebook.gpu_view: called with the answer and the arrays it
    ran on, its HTML goes into the correctness section (not into the text form)."""
    import sys
    import types

    seen = []

    class View:
        def _repr_html_(self):
            return "<div class='gpu-view'>threads</div>"

    def gpu_view(func, *arrays):
        seen.append((func, [a.shape for a in arrays]))
        return View()

    monkeypatch.setitem(sys.modules, "mlckit.notebook.gpu_view",
                        types.SimpleNamespace(gpu_view=gpu_view))
    ex = exercises.get("gpu.window_sum_shared")
    fb = ex.check(ex.solution_object())
    assert fb.status == "correct"
    assert seen[0][1] == [(130,), (128,)]
    assert "threadIdx.x" in seen[0][0].script()
    assert "<div class='gpu-view'>threads</div>" in fb._repr_html_()
    assert "gpu-view" not in str(fb)


def test_gpu_feedback_draws_the_real_gpu_access_view_of_the_answer():
    """The reference answer's feedback carries mlckit.notebook.gpu_view's picture: the
    shared buffer the answer stages, and no race, since the answer keeps its barrier."""
    ex = exercises.get("gpu.window_sum_shared")
    fb = ex.check(ex.solution_object())
    html = fb._repr_html_()
    assert fb.status == "correct"
    assert "<b>A_shared</b> (shared, float32[34])" in html
    assert "<b>races: none</b>" in html
    assert "A_shared" not in str(fb)
