"""numba_cpu.cache_load: a kernel loaded from Numba's disk cache types and lowers nothing,
so Numba's registries wait for the next compile; the kernels loaded, and the one compiled
after them, compute NumPy's numbers."""

import os
import subprocess
import sys
import textwrap

import numpy as np
from numba.core.registry import cpu_target

from mlckit.backend import numba_cpu
from mlckit.backend.numba_cpu.cache_load import load_without_registries, registries_deferred
from mlckit.script import tir as T

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

# builds the kernels named on the command line, checks them against NumPy, and prints per
# kernel how many versions came from Numba's disk cache, whether Numba's registries were
# refreshed (its target or typing context's refresh called) while it was built and called,
# and, after it, whether Numba's runtime is initialized and numba.np.arrayobj imported
SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    from numba.core.registry import cpu_target
    from numba.core.runtime import rtsys
    from mlckit.backend import numba_cpu
    from tests.backend import kernels as K

    refreshed = []

    def counted(refresh):
        def refresh_counted(self):
            refreshed.append(1)
            return refresh(self)
        return refresh_counted

    for ctx in (cpu_target.target_context, cpu_target.typing_context):
        type(ctx).refresh = counted(type(ctx).refresh)
    rng = np.random.default_rng(0)
    for name in sys.argv[1:]:
        refreshed.clear()
        f = numba_cpu.build(getattr(K, name))
        if name == "relu":
            a, b = rng.standard_normal(1024).astype("float32"), np.zeros(1024, "float32")
            f(a, b)
            np.testing.assert_array_equal(b, np.maximum(a, 0))
        else:  # mm_relu_small, mm_relu_tiled (parallel loops)
            m, k = f.signature.params[0][1].shape
            n = f.signature.params[1][1].shape[1]
            a = rng.standard_normal((m, k)).astype("float32")
            b = rng.standard_normal((k, n)).astype("float32")
            c = np.zeros((m, n), "float32")
            f(a, b, c)
            np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
        print(name, sum(f.dispatcher.stats.cache_hits.values()), bool(refreshed),
              "runtime" if rtsys._init else "-",
              "arrayobj" if "numba.np.arrayobj" in sys.modules else "-")
''')


def run(cache, *names) -> list[str]:
    env = {**os.environ, "MLCKIT_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", SCRIPT, *names], env=env, cwd=ROOT,
                         check=True, capture_output=True, text=True)
    return out.stdout.split("\n")[:-1]


def test_a_second_process_loads_kernels_without_refreshing_the_registries(tmp_path):
    # the first process compiles both (a compile refreshes the registries)
    assert run(tmp_path, "mm_relu_small", "mm_relu_tiled") == [
        "mm_relu_small 0 True runtime arrayobj", "mm_relu_tiled 0 True runtime arrayobj"]
    # the second loads them, a parallel kernel too, and types nothing; the kernel it then
    # compiles has the registries refreshed by Numba's compile, and computes NumPy's numbers.
    # mm_relu_small allocates a workspace (numba_cpu.workspace): loading it starts no runtime
    # and imports no numba.np.arrayobj; the parallel kernel's np.empty needs both
    assert run(tmp_path, "mm_relu_small", "mm_relu_tiled", "relu") == [
        "mm_relu_small 1 False - -", "mm_relu_tiled 1 False runtime arrayobj",
        "relu 0 True runtime arrayobj"]


# a kernel of this file's own, built with cache=False: a shared one could come from
# numba_cpu's in-process cache with another test's settings (an entry, no wrapper)
@T.prim_func
def halve(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = A[vi] * T.float32(0.5)


def test_the_registries_are_skipped_only_while_a_version_is_loaded():
    target = cpu_target.target_context
    with registries_deferred(target):
        assert target.refresh() is None and target.typing_context.refresh() is None
        assert "refresh" in vars(target) and "refresh" in vars(target.typing_context)
    # the classes' methods again
    assert "refresh" not in vars(target) and "refresh" not in vars(target.typing_context)
    f = numba_cpu.build(halve, cache=False)
    load = f.dispatcher._cache.load_overload
    load_without_registries(f.dispatcher)  # done when built: idempotent
    assert f.dispatcher._cache.load_overload is load and load._mlckit_deferred
    a = np.linspace(-1, 1, 256, dtype="float32")
    b = np.zeros(256, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a * np.float32(0.5))
