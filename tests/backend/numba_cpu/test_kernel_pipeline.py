"""Generated kernels compile through Numba's pipeline less the passes that find nothing in
them (closures, array expressions), their ``range`` loops counted (test_counted_range.py),
typing a call on numbers once per process: the same machine code as Numba's pipeline with
counted loops, a shorter compile; a kernel of parallel loops through Numba's own pipeline."""

from __future__ import annotations

import re

import numpy as np
from numba import float32, njit, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.untyped_passes import IRProcessing

from mlckit import tir
from mlckit.backend import numba_cpu
from mlckit.backend.numba_cpu.counted_range import CountedRangeLoops
from mlckit.backend.numba_cpu.kernel_pipeline import KernelCompiler, call_types

from ...kernels import make_matmul, mm_relu, tile_matmul

LEFT_OUT = {"inline_closure_likes", "nopython_rewrites", "dump_parfor_diagnostics"}


def _passes_run(f) -> set:
    """The names of the Numba passes that compiled ``f``'s version for C-contiguous arrays."""
    (cres,) = f.dispatcher.overloads.values()
    (times,) = cres.metadata["pipeline_times"].values()
    return {name.split("_", 1)[1] for name in times}


def _mm_relu_reference(a, b):
    return np.maximum(a @ b, 0)


def test_a_kernel_compiles_without_the_passes_for_closures_and_array_expressions():
    f = numba_cpu.build(mm_relu, cache=False)
    assert f.dispatcher._compiler.pipeline_class is KernelCompiler
    passes = _passes_run(f)
    assert not passes & LEFT_OUT
    assert {"nopython_type_inference_reusing_call_types", "native_lowering"} <= passes
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((128, 128)).astype("float32") for _ in range(2))
    c = np.empty((128, 128), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, _mm_relu_reference(a, b), rtol=1e-4, atol=1e-4)


def test_a_call_on_numbers_is_typed_once_and_reused_by_the_next_kernels(monkeypatch):
    numba_cpu.build(tile_matmul(make_matmul(32), 8, 8, 4).mod["main"], cache=False)
    from numba.core import types as nbtypes
    from numba.core.registry import cpu_target
    from numba.core.typing.context import BaseContext

    known = call_types(cpu_target.typing_context)
    assert known
    key = next(k for k in known if "mul" in str(k[0]) and len(k[1]) == 2)
    signature = known[key]
    before = set(known)
    # the questions about calls on numbers that reach Numba's own typing from now on
    asked = set()
    numbas = BaseContext.resolve_function_type

    def counting(self, func, args, kws):
        if isinstance(func, nbtypes.Function) and not kws:
            asked.add((func, tuple(args)))
        return numbas(self, func, args, kws)

    monkeypatch.setattr(BaseContext, "resolve_function_type", counting)
    # another schedule of the same kernel: the questions asked before are answered from
    # what was found then (the same answer object), only new ones reach Numba
    f = numba_cpu.build(tile_matmul(make_matmul(32), 4, 16, 2).mod["main"], cache=False)
    assert known[key] is signature
    assert not asked & before
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((32, 32)).astype("float32") for _ in range(2))
    c = np.zeros((32, 32), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    # outside a kernel's compile, Numba types calls as it always does
    assert "resolve_function_type" not in vars(cpu_target.typing_context)


def test_the_generated_module_names_the_pipeline():
    source = numba_cpu.build(mm_relu, cache=False).source
    assert f"# {numba_cpu.NUMBA_PASSES}\n" in source


def _optimized_llvm(source: str, pipeline_class) -> str:
    """The optimized LLVM module of ``main`` in ``source``, compiled uncached by a plain
    ``njit`` with ``pipeline_class``; Numba's mangled names and counters left out."""
    namespace = {"__name__": "kernel_pipeline_test"}
    exec(compile(source.replace("cache=True", "cache=False"), "<kernel>", "exec"),  # noqa: S102
         namespace)
    dispatcher = njit(pipeline_class=pipeline_class)(namespace["main"].py_func)
    sig = (types.Array(float32, 2, "C"),) * 3
    dispatcher.compile(sig)
    (cres,) = dispatcher.overloads.values()
    llvm = re.sub(r"_ZN\w+|\$\w+|\.\d+\b", "N", cres.library.get_llvm_str())
    # the message naming the function's environment is as long as its mangled name
    return re.sub(r"\[\d+ x i8\] c\"missing Environment", "c\"missing Environment", llvm)


class NumbasPipelineCountingLoops(CompilerBase):
    """All of Numba's nopython pipeline, plus the counted ``range`` loops."""

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(CountedRangeLoops, IRProcessing)
        pipeline.finalize()
        return [pipeline]


def test_the_passes_left_out_change_nothing_in_the_machine_code():
    # a tiled, vectorized, unrolled matmul: loops, ramps, broadcasts, an init loop; built
    # first, so that its calls' types are known when it is compiled again below
    sch = tile_matmul(make_matmul(64), 8, 16, 4, vectorize=True, unroll=True)
    source = numba_cpu.build(sch.mod["main"], name="main", cache=False).source
    assert "ramp(" in source
    assert _optimized_llvm(source, KernelCompiler) == _optimized_llvm(source,
                                                                      NumbasPipelineCountingLoops)


def test_a_kernel_of_parallel_loops_compiles_through_numbas_own_pipeline():
    sch = tir.Schedule(make_matmul(32))
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)
    f = numba_cpu.build(sch.mod["main"], cache=False)
    assert "prange(" in f.source
    assert {"inline_closure_likes", "nopython_rewrites"} <= _passes_run(f)
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((32, 32)).astype("float32") for _ in range(2))
    c = np.zeros((32, 32), "float32")
    f(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
