"""Make ``mlckit.s_tir.meta_schedule`` and ``mlckit.s_tir.dlight`` *be* ``mlckit.meta_schedule``
and ``mlckit.dlight``, submodules included, for every way of importing them.

``import mlckit.s_tir.dlight as dl`` and ``from mlckit.s_tir.meta_schedule.database import
JSONDatabase`` must give the very objects of ``mlckit.dlight`` / ``mlckit.meta_schedule``: a
second copy of a module would carry second copies of its classes (``isinstance`` would fail
between them).  A finder on ``sys.meta_path`` answers for the aliased names by importing the
real module and handing back that same object.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

ALIASES = {"mlckit.s_tir.meta_schedule": "mlckit.meta_schedule",
           "mlckit.s_tir.dlight": "mlckit.dlight"}


def real_name(fullname: str) -> str | None:
    """The module that the aliased ``fullname`` stands for (None: not an alias)."""
    for alias, real in ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias):]
    return None


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the aliased names; loading one returns the already imported real module."""

    def find_spec(self, fullname, path=None, target=None):
        real = real_name(fullname)
        if real is None:
            return None
        module = importlib.import_module(real)  # an unknown name fails here, naming `real`
        spec = importlib.util.spec_from_loader(fullname, self,
                                               is_package=hasattr(module, "__path__"))
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        # importlib has set the alias's spec on the real module: give it back its own
        module.__spec__ = module.__spec__.loader_state[1]


def install() -> None:
    if not any(isinstance(f, AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
