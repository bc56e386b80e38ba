"""mlckit: machine-learning compilation for learners, in readable Python.

    import mlckit as tvm
    from mlckit.script import ir as I, tir as T, relax as R

Numba is imported only when a kernel is compiled, and the TVMScript parser only when
``mlckit.script`` is used, so ``import mlckit`` stays light.
"""

import importlib

from . import (
    error,
    ffi,
    ir,
    nd,
    runtime,
    target,
    tir,
    tirx,  # TVM >= 0.24's name for the TensorIR classes (above the driver)
)
from .driver import build, compile, lower
from .error import TVMError
from .ffi import get_global_func, register_func, register_global_func
from .ffi.registry import add_registry_loader as _add_registry_loader
from .ffi.views import add_view_loader as _add_view_loader
from .ir import (
    DiagnosticError,
    IRModule,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from .runtime import Device, cpu, cuda, device, gpu

# TVM v0.23's ``tvm.tir.build``: tir sits below the driver, so the top level hands it down.
tir.build = tirx.build
# Target.from_device("cuda") makes its Device through this (target sits below the runtime).
register_func("runtime.device", device, override=True)


def _install_printer() -> None:
    # IR nodes' .script(), .show() and HTML: the IR asks mlckit.ffi.views and never names the
    # printer, which is imported at the first question (as the parser: `import mlckit` stays light)
    from mlckit.script import printer  # noqa: F401


def _install_notebook_views() -> None:
    # the HTML forms and graph views of the other core objects, likewise from the notebook layer
    from mlckit.notebook import views  # noqa: F401


_add_view_loader(_install_printer, kinds=("script", "show", "script_html"))
_add_view_loader(_install_notebook_views, kinds=("html", "graph"))

__version__ = "0.1.0"

# Submodules imported on first use: Relax and the packages above it are half of `import
# mlckit`; the parser (script), test helpers (testing), the low-level NumPy twin (lnumpy) and
# the notebook tools pull in more than most programs need.  The first group registers global
# functions and ops, which must be found before their first import, as in TVM.
_REGISTERING = ("relax", "te", "topi", "transform", "instrument")
_LAZY = (*_REGISTERING, "script", "testing", "lnumpy", "notebook", "meta_schedule", "dlight",
         "s_tir")


def _import_registering_packages() -> None:
    for name in _REGISTERING:
        importlib.import_module(f"mlckit.{name}")


_add_registry_loader(_import_registering_packages)


def load_ipython_extension(ipython) -> None:
    """``%load_ext mlckit``: register the ``%%relax`` and ``%%tir`` cell magics.

    IPython is imported only now, by ``mlckit.notebook.magics``: ``import mlckit`` stays free
    of notebook machinery.

    Example (in a notebook)::

        %load_ext mlckit
    """
    from mlckit.notebook.magics import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f"mlckit.{name}")
    raise AttributeError(f"module 'mlckit' has no attribute {name!r}")
