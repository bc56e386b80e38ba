"""Thread-bound TIR -> a readable Python module of ``numba.cuda`` kernels plus a host part.

The shared generator of ``mlckit.backend.codegen`` writes the statements of the lowered TIR
(``numba_cuda.lower``: no blocks are left); this module's flavour changes only what differs
on a GPU:

- a loop bound to a thread axis is no loop: ``i_1 = cuda.threadIdx.x`` (under
  ``if i_1 < 100:`` when its extent is smaller than the launch's);
- ``"shared"`` buffers are ``cuda.shared.array`` and ``"local"`` ones ``cuda.local.array``,
  declared at the top of the kernel (NVVM keeps a local array indexed by constants in
  registers);
- ``T.tvm_storage_sync("shared")`` is ``cuda.syncthreads()``;
- float intrinsics use ``math`` (``math.exp``), which Numba's CUDA target maps to CUDA's
  ``expf``/``exp``; integer helpers are ``@cuda.jit(device=True)`` functions.

The host part is a plain Python function that launches each kernel with its grid and block
(``main_kernel[8, 128](A, B)``), looping where the TIR loops outside the kernels.

Example::

    print(cuda_source(lowered, kernels, "main"))
"""

from __future__ import annotations

from mlckit.ir import structural_equal
from mlckit.tir import stmt as S
from mlckit.tir.expr import IntImm, IterVar, Range, Var
from mlckit.tir.transform.flatten_buffer import declare_buffer_views

from ..codegen import _Generator
from ..codegen_common import HELPERS, P_ATOM, P_MUL, P_UNARY, CodegenError, Flavour, np_scalar
from .kernels import Kernel, allocated_buffer, covers_launch, storage_sync_name, thread_scope

__all__ = ["CUDA", "cuda_source"]

# a T.unroll loop UnrollLoop leaves (an explicit pragma of 0, a symbolic extent) is printed
# as a loop, which NVVM unrolls
CUDA = Flavour("numba_cuda", typed_float_consts=True, flat_params=True, nd_param_views=True)

# float intrinsics with a ``math`` function of the same meaning (CUDA's libdevice behind it)
_MATH = {
    "exp": "exp", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
    "sqrt": "sqrt", "tanh": "tanh", "fabs": "fabs", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "isnan": "isnan", "isinf": "isinf",
    "isfinite": "isfinite", "erf": "erf", "pow": "pow", "atan2": "atan2", "fmod": "fmod",
    "copysign": "copysign", "hypot": "hypot",
}

# intrinsics a kernel writes with ``math`` (the shared generator's forms call NumPy's ufuncs,
# np.sqrt, which numba.cuda does not compile in a kernel; its simulator runs them): the
# value is the base of the two powers
_MATH_COMPOSED = {"rsqrt": None, "sigmoid": None, "exp2": 2.0, "exp10": 10.0}


class _KernelGenerator(_Generator):
    """One kernel's ``def``: thread indices instead of bound loops, GPU memory scopes."""

    def __init__(self, func, name, flavour, extents=None):
        super().__init__(func, name, flavour)
        self.extents = extents or {}
        self.thread_ranges: list = []  # (Var, Range) of the thread indices in scope

    def index_ranges(self):
        yield from super().index_ranges()
        yield from self.thread_ranges

    def index_conditions(self):
        """A guard bounds the indices under it (``if i_1 < 300:``: ``B[f, i_1]``, not
        ``B[i_1 // 300 + f, i_1 % 300]``)."""
        return self.guards

    def stmt_For(self, s: S.For):
        if s.kind != S.ForKind.THREAD_BINDING:
            super().stmt_For(s)
            return
        self.thread_index(s)

    def stmt_AttrStmt(self, s: S.AttrStmt):
        if s.attr_key == "thread_extent" and isinstance(s.node, IterVar):
            self.thread_index(s)  # lowered TIR: T.launch_thread
            return
        super().stmt_AttrStmt(s)

    def thread_index(self, s):
        """A thread scope is no loop: ``i_1 = cuda.threadIdx.x`` (under ``if i_1 < 100:``
        when it is shorter than the launch)."""
        loop_var, tag, lo, extent = thread_scope(s)
        self.push_scope()
        var = self.bind(loop_var, loop_var.name_hint, "int64")
        self.emit(f"{var} = cuda.{tag}", s)
        self.ctx_loops.append(var)
        self.thread_ranges.append((loop_var, Range(lo, extent)))
        if covers_launch(s, self.extents.get(tag)):
            self.stmt(s.body)
        else:
            end = self.expr_text(lo + extent)
            low = "" if isinstance(lo, IntImm) and lo.value == 0 else f"{self.expr_text(lo)} <= "
            self.emit(f"if {low}{var} < {end}:  # {tag} beyond the loop's extent idles", s)
            self.body(s.body)
        self.thread_ranges.pop()
        self.ctx_loops.pop()
        self.pop_scope()

    def stmt_Allocate(self, s: S.Allocate):
        """Lowered TIR's ``T.allocate`` of shared or local memory, declared at the top."""
        buf = allocated_buffer(s)
        if id(s.buffer_var) not in self.names:  # an unrolled copy declares it once
            name = self.bind(s.buffer_var, buf.name, f"buffer:{buf.dtype}:{buf.ndim}",
                             scoped=False)
            kind = "shared" if buf.scope == "shared" else "local"
            shape = ", ".join(self.expr_text(e) for e in s.extents) + (
                "," if len(s.extents) == 1 else "")
            self.emit(f"{name} = cuda.{kind}.array(({shape}), {np_scalar(buf.dtype)})", s,
                      indent=1, into=self.top_pre)
        self.alloc_extents[id(s.buffer_var)] = s.extents
        self.stmt(s.body)

    def stmt_DeclBuffer(self, s: S.DeclBuffer):
        """A buffer over an array the kernel has in its own shape (an allocation's, or a
        parameter's: a global buffer the host allocated flat): the same name."""
        buf = s.buffer
        data = self.names.get(id(buf.data))
        extents = self.alloc_extents.get(id(buf.data))
        owner = self.data_owner.get(id(buf.data))
        if extents is None and owner is not None and owner is not buf \
                and owner.dtype == buf.dtype:
            extents = owner.shape
        if data is not None and extents is not None and len(extents) == len(buf.shape) and all(
                structural_equal(a, b) for a, b in zip(extents, buf.shape)):
            self.names[id(buf)] = data
            self.stmt(s.body)
            return
        super().stmt_DeclBuffer(s)

    def stmt_BlockRealize(self, s: S.BlockRealize):
        raise CodegenError(f"{self.name}: block {s.block.name_hint!r} was not lowered: a kernel "
                           "is printed from numba_cuda.lower's output, which has no blocks")

    def call(self, e, weak):
        if storage_sync_name(e) is not None:
            return "cuda.syncthreads()", P_ATOM
        op = getattr(e.op, "name", str(e.op))
        short = op[4:] if op.startswith("tir.") else op
        if short in _MATH:
            self.uses_math = True
            args = ", ".join(self.expr(a, 0) for a in e.args)
            return f"math.{_MATH[short]}({args})", P_ATOM
        if short in _MATH_COMPOSED:  # NumPy's ufuncs do not compile in a kernel
            self.uses_math = True
            one = self.fconst(1.0, e.dtype, False)[0]
            x = e.args[0]
            if short == "rsqrt":
                return f"{one} / math.sqrt({self.expr(x, 0)})", P_MUL
            if short == "sigmoid":
                return f"{one} / ({one} + math.exp(-{self.expr(x, P_UNARY)}))", P_MUL
            base = self.fconst(_MATH_COMPOSED[short], e.dtype, False)[0]
            return f"math.pow({base}, {self.expr(x, 0)})", P_ATOM
        return super().call(e, weak)


class _HostGenerator(_Generator):
    """The host function: loops outside the kernels and one launch per kernel."""

    def __init__(self, func, name, flavour, kernels: list, kernel_params: dict):
        super().__init__(func, name, flavour)
        self.kernels = {id(k.stmt): k for k in kernels}
        self.kernel_params = kernel_params  # kernel name -> [Buffer or Var]

    def stmt_For(self, s: S.For):
        if id(s) not in self.kernels:
            super().stmt_For(s)
            return
        self.launch(s)

    def stmt_AttrStmt(self, s: S.AttrStmt):
        if id(s) not in self.kernels:
            super().stmt_AttrStmt(s)
            return
        self.launch(s)

    def launch(self, s):
        kernel = self.kernels[id(s)]
        grid = _dims_text(self, kernel.grid)
        block = _dims_text(self, kernel.block)
        args = ", ".join(self.names.get(id(p)) or self.names[id(p.data)]
                         for p in self.kernel_params[kernel.name])
        self.emit(f"{kernel.name}[{grid}, {block}]({args})", s)

    def alloc(self, buf, stmt):
        if id(buf) in self.names:
            return
        name = self.bind(buf, buf.name, f"buffer:{buf.dtype}:{buf.ndim}", scoped=False)
        shape = ", ".join(self.expr_text(e) for e in buf.shape) + ("," if buf.ndim == 1 else "")
        self.emit(f'{name} = empty(({shape}), "{buf.dtype}")  # device memory', stmt)

    def stmt_Allocate(self, s: S.Allocate):
        """Lowered TIR's global ``T.allocate`` on the host: device memory."""
        buf = allocated_buffer(s)
        self.alloc(buf, s)
        self.names[id(s.buffer_var)] = self.names[id(buf)]
        self.alloc_extents[id(s.buffer_var)] = s.extents
        self.stmt(s.body)


def _dims_text(gen, dims) -> str:
    texts = [gen.expr_text(d) for d in dims]
    return texts[0] if len(texts) == 1 else f"({', '.join(texts)})"


def kernel_func(func, kernel: Kernel, host_buffers: list):
    """A PrimFunc whose body is the kernel and whose parameters are what it is given: the
    function's own, then the host-allocated global buffers, then the host loop variables it
    reads."""
    params = list(func.params)
    buffer_map = dict(func.buffer_map)
    for buf in host_buffers:
        handle = Var(buf.name, "handle")
        params.append(handle)
        buffer_map[handle] = buf
    params += kernel.host_vars
    # lowered TIR indexes flat views of the arrays it never declares: declared at the top
    return declare_buffer_views(func.replace(params=params, buffer_map=buffer_map,
                                             body=kernel.stmt))


def cuda_source(func, kernels: list, name: str, host_buffers: list,
                fastmath: bool = False) -> str:
    """The Python module of the lowered ``func``: helpers, one ``@cuda.jit`` kernel per
    :class:`Kernel`, the host (``fastmath``: the kernels are ``@cuda.jit(fastmath=True)``)."""
    flavour = CUDA
    parts, helpers, uses_math = [], set(), False
    kernel_params = {}
    for k in kernels:
        kf = kernel_func(func, k, host_buffers)
        kernel_params[k.name] = [kf.buffer_map.get(p, p) for p in kf.params]
        src = _KernelGenerator(kf, k.name, flavour, extents=k.extents).run()
        helpers |= set(src.helpers)
        uses_math = uses_math or src.uses_math
        lines = str(src).splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {src.func_name}("))
        launch = " x ".join(f"{e}" for e in k.grid), " x ".join(f"{e}" for e in k.block)
        parts.append("\n".join([
            f"@cuda.jit{'(fastmath=True)' if fastmath else ''}  # launched as grid {launch[0]}, block {launch[1]}"
            + (f"; {k.shared_bytes} bytes of shared memory" if k.shared else ""),
            *lines[start:]]))
    host = _HostGenerator(func, name, flavour, kernels, kernel_params).run()
    host_lines = str(host).splitlines()
    start = next(i for i, ln in enumerate(host_lines) if ln.startswith("def "))
    host_text = "\n".join([host_lines[start],
                           '    """Host part: launches the kernels on arrays in device memory."""',
                           *host_lines[start + 1:]])
    header = [
        f'"""PrimFunc {name!r} for CUDA, generated by mlckit.backend.numba_cuda."""',
        "",
        *(["import math", ""] if uses_math else []),
        "import numpy as np",
        "from numba import cuda",
        "",
        "",
    ]
    helper_text = []
    for h in HELPERS:
        if h in helpers or (h == "truncdiv" and "truncmod" in helpers):
            helper_text += ["@cuda.jit(device=True)", HELPERS[h].rstrip("\n"), "", ""]
    return "\n".join(header + helper_text + ["\n\n\n".join(parts), "", "", host_text]) + "\n"
